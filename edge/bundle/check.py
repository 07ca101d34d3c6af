"""The one bundle check: `venus-export verify` and every node that opens a bundle run this, before loading anything.

A bundle is what the exporter wrote, nothing more, nothing less:
- the manifest's shape: `files` a non-empty mapping of relative paths to {sha256, size}, `parts` a non-empty list
  whose files are all listed, a known variant and target device;
- every listed path relative, normalised, outside dot-directories, and inside the bundle with no symlink on the
  way; the file there regular, of the listed size and sha256;
- no other file: nothing unlisted and no symlink, wherever it is (dot-directories and engines/ too), except what
  the build lists as its cache (`cache_files`, under .cache) and what the device itself adds beside the build
  (`engines/`, whose stamps engines.py checks against the ONNX hashes, with the one link engines/current to a
  folder beside it; onnxruntime's cache in .cache/trt; the site's `venus.json`, which is settings, never bundle
  content: nothing in it can turn this check off);
- each file's structure (structure.py): a re-hashed truncated GGUF is still refused.

No setting disables any of it. Hashes are computed at every start: a cache keyed by file metadata would let a
changed file that kept its size and times (a bad disk, a restored mtime) through, and a cache kept in the bundle
can be rewritten by whoever can rewrite the bundle.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from edge.bundle.manifest import MANIFEST, sha256_file
from edge.bundle.structure import structure_problem
from edge.formats import BOARDS, VARIANTS

DEVICES = tuple(BOARDS)  # the boards venus-export can fit a bundle to
SITE_FILES = ("venus.json",)  # the site's settings beside the bundle (edge/bundle/settings.py)
DEVICE_DIRS = ("engines",)  # built on the device after the bundle (edge/bundle/engines.py checks them)
DEVICE_CACHE = ".cache/trt/"  # onnxruntime's TensorRT engine cache, written on the device (edge/backends/onnx.py)
_SHA256 = re.compile(r"[0-9a-f]{64}")
REBUILD = "copy the bundle again or rebuild it with venus-export build"


@dataclass(frozen=True)
class Problem:
    where: str  # a bundle-relative path, or "manifest"
    sentence: str  # what is wrong and how to fix it, one sentence


def _shape(manifest: dict) -> list[Problem]:
    """The manifest's own form; when it is wrong nothing else is read (the paths in it cannot be trusted)."""
    def bad(text: str) -> list[Problem]:
        return [Problem("manifest", f"the manifest {text}; {REBUILD}.")]

    files, parts = manifest.get("files"), manifest.get("parts")
    if not isinstance(files, dict) or not files:
        return bad("lists no files with their hashes (`files` is missing, empty or not a mapping)")
    for rel, meta in files.items():
        if not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str) or \
                not _SHA256.fullmatch(meta["sha256"]):
            return bad(f"gives no sha256 for {rel!r}")
        size = meta.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return bad(f"gives no size in bytes for {rel!r}")
        if not _inside(rel):
            return bad(f"names {rel!r}, which is not a plain relative path inside the bundle")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        return bad("lists no parts (`parts` is missing, empty or not a list of entries)")
    for part in parts:
        names = part.get("files")
        if not isinstance(names, list) or not names or not all(isinstance(f, str) for f in names):
            return bad(f"gives part {part.get('name')!r} no list of files")
        for key in ("name", "kind", "role", "precision"):  # read as words by the runtime: a list is no precision
            if key in part and not isinstance(part[key], str):
                return bad(f"gives part {part.get('name')!r} a {key} that is {type(part[key]).__name__}, not text")
        unlisted = [f for f in names if f not in files]
        if unlisted:
            return bad(f"gives part {part.get('name')!r} the file {unlisted[0]!r}, which it does not hash")
    variant = manifest.get("variant")
    if variant not in VARIANTS:
        return bad(f"names variant {variant!r}; a Venus bundle is {' or '.join(VARIANTS)}")
    target = manifest.get("target")
    device = target.get("device") if isinstance(target, dict) else None
    if device not in DEVICES:
        return bad(f"names target device {device!r}, which venus-export does not know "
                   f"(one of {', '.join(DEVICES)})")
    return []


def _inside(rel: object) -> bool:
    """A relative path in normal form, no `..`, no dot-directory, no backslash or NUL (one name on every system)."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\0" in rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and p.as_posix() == rel and all(part not in ("", ".", "..") and
                                                               not part.startswith(".") for part in p.parts)


def _extras(root: Path, manifest: dict) -> list[Problem]:
    """Symlinks anywhere, and files nobody listed: the manifest's `files` and `cache_files` (the build's base
    GGUFs under .cache), the device's own engines/ and .cache/trt/ (onnxruntime's engine cache), the site's
    venus.json."""
    files = manifest["files"]
    cached = manifest.get("cache_files") if isinstance(manifest.get("cache_files"), dict) else {}
    out: list[Problem] = []

    def link(rel: str) -> Problem:
        return Problem(rel, f"{rel} is a symlink, which a bundle never holds; {REBUILD}.")

    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        top = here == root
        keep = []
        for name in sorted(dirnames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() and not _engines_current(root, rel, path):
                out.append(link(rel))
            elif not path.is_symlink():
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                if not _engines_current(root, rel, path):
                    out.append(link(rel))
            elif top and name in (MANIFEST, *SITE_FILES):
                continue
            elif rel not in files and rel not in cached and not _device_made(rel):
                out.append(Problem(rel, f"{rel} is in the bundle but not in its manifest, so it was added after the "
                                        f"build; remove it or {REBUILD}."))
    return out


def _device_made(rel: str) -> bool:
    """What the device writes beside the build: TensorRT engines and their stamps, onnxruntime's engine cache."""
    return rel.split("/")[0] in DEVICE_DIRS or rel.startswith(DEVICE_CACHE)


def _engines_current(root: Path, rel: str, path: Path) -> bool:
    """engines/current, the one link a device makes: to a folder of engines/ beside it."""
    if rel != f"{DEVICE_DIRS[0]}/current":
        return False
    target = os.readlink(path)
    return "/" not in target and target not in ("", ".", "..") and (root / DEVICE_DIRS[0] / target).is_dir() \
        and not (root / DEVICE_DIRS[0] / target).is_symlink()


def _file(root: Path, real_root: str, rel: str, meta: dict, listed: dict[str, int]) -> Problem | None:
    path = root / rel
    try:
        st = os.lstat(path)
    except OSError:
        return Problem(rel, f"bundle file {rel} is missing; {REBUILD}.")
    if stat.S_ISLNK(st.st_mode) or os.path.realpath(path) != os.path.join(real_root, rel):
        return Problem(rel, f"bundle file {rel} is reached through a symlink, which a bundle never holds; {REBUILD}.")
    if not stat.S_ISREG(st.st_mode):
        return Problem(rel, f"bundle file {rel} is not a regular file; {REBUILD}.")
    if st.st_size != meta["size"]:
        return Problem(rel, f"bundle file {rel} has {st.st_size} bytes where the manifest says {meta['size']}; the "
                            f"copy is incomplete or the file was changed, so {REBUILD}.")
    if sha256_file(path) != meta["sha256"]:
        return Problem(rel, f"bundle file {rel} does not match its sha256 in the manifest; it is damaged or was "
                            f"changed after the build, so {REBUILD}.")
    problem = structure_problem(path, root, listed)
    if problem:
        return Problem(rel, f"bundle file {rel} {problem}; {REBUILD}.")
    return None


def check_bundle(root: Path, manifest: dict) -> list[Problem]:
    """Every problem found, in a stable order (manifest, then files in manifest order, then extras); [] is a
    bundle that may be loaded."""
    root = Path(root)
    shape = _shape(manifest)
    if shape:
        return shape
    files: dict[str, dict] = manifest["files"]
    listed = {rel: meta["size"] for rel, meta in files.items()}
    real_root = os.path.realpath(root)
    out = [p for rel, meta in files.items() if (p := _file(root, real_root, rel, meta, listed)) is not None]
    return out + _extras(root, manifest)
