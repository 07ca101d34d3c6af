"""Lazy reader of a Realtime-Venus / MiniCPM-o checkpoint directory (layout in docs/checkpoint.md).

Nothing is loaded up front: each tensor is read from its safetensors shard when
asked for, and shard handles are closed again right away, so mapped pages do
not pile up in the process while a whole model streams through.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors import safe_open

from export.errors import ExportError

# safetensors dtype names numpy understands directly; BF16 is read as uint16 and upcast.
NUMPY_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype(np.float64),
    "F32": np.dtype(np.float32),
    "F16": np.dtype(np.float16),
    "I64": np.dtype(np.int64),
    "I32": np.dtype(np.int32),
    "I16": np.dtype(np.int16),
    "I8": np.dtype(np.int8),
    "U8": np.dtype(np.uint8),
    "BOOL": np.dtype(np.bool_),
}
ITEM_SIZES: dict[str, int] = {**{k: v.itemsize for k, v in NUMPY_DTYPES.items()}, "BF16": 2}

# Every tensor of a checkpoint lives under one of these prefixes.
KNOWN_PREFIXES: tuple[str, ...] = ("llm.", "vpm.", "resampler.", "apm.", "audio_projection_layer.", "tts.")
VISION_PREFIXES: tuple[str, ...] = ("vpm.", "resampler.")
INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
MAX_HEADER_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lives: its shard, dtype, shape and absolute byte offset."""

    name: str
    shard: Path
    dtype: str
    shape: tuple[int, ...]
    offset: int
    nbytes: int


def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """Upcast bfloat16 bit patterns (uint16) to float32 exactly."""
    out = raw.astype(np.uint32)
    out <<= 16
    return out.view(np.float32)


def read_header(path: Path) -> dict[str, TensorInfo]:
    """Parse a safetensors header (8-byte length, then JSON) into tensor locations."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ExportError(f"{path} is too short to be a safetensors file.")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES:
                raise ExportError(f"{path} has a {n}-byte header, so it is not a safetensors file.")
            header = json.loads(f.read(n))
    except OSError as e:
        raise ExportError(f"Cannot read shard {path}: {e.strerror}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ExportError(f"{path} has an unreadable header, so it is not a safetensors file.") from None
    header.pop("__metadata__", None)
    size = path.stat().st_size
    infos: dict[str, TensorInfo] = {}
    for name, meta in header.items():
        dtype = meta.get("dtype")
        if dtype not in ITEM_SIZES:
            raise ExportError(f"Tensor {name} in {path.name} has dtype {dtype}, which the exporter cannot read.")
        start, stop = meta["data_offsets"]
        if 8 + n + stop > size:
            raise ExportError(f"Tensor {name} runs past the end of {path.name}: the shard is truncated.")
        infos[name] = TensorInfo(name, path, dtype, tuple(meta["shape"]), 8 + n + start, stop - start)
    return infos


class CheckpointReader:
    """A checkpoint directory, read lazily: `.config`, `.variant`, `.names()`, `.get(name)`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise ExportError(f"Checkpoint directory {self.path} does not exist.")
        self.config = self._load_config()
        self._infos = self._load_index()
        self._check_prefixes()

    # -- loading -----------------------------------------------------------------------------
    def _load_config(self) -> dict:
        cfg = self.path / "config.json"
        if not cfg.is_file():
            raise ExportError(f"{self.path} has no config.json, so it is not a checkpoint directory.")
        try:
            config = json.loads(cfg.read_text())
        except json.JSONDecodeError as e:
            raise ExportError(f"{cfg} is not valid JSON (line {e.lineno}).") from None
        if not isinstance(config, dict) or "hidden_size" not in config:
            raise ExportError(f"{cfg} lacks the top-level Qwen3 keys (hidden_size, ...).")
        return config

    def _load_index(self) -> dict[str, TensorInfo]:
        index = self.path / INDEX_FILE
        if index.is_file():
            try:
                weight_map: dict[str, str] = json.loads(index.read_text())["weight_map"]
            except (json.JSONDecodeError, KeyError):
                raise ExportError(f"{index} is not a valid index (no weight_map).") from None
            shards = sorted(set(weight_map.values()))
        elif (self.path / SINGLE_FILE).is_file():
            weight_map, shards = {}, [SINGLE_FILE]
        else:
            raise ExportError(f"{self.path} has neither {INDEX_FILE} nor {SINGLE_FILE}.")
        infos: dict[str, TensorInfo] = {}
        for shard in shards:
            file = self.path / shard
            if not file.is_file():
                raise ExportError(f"Shard {shard} named in {INDEX_FILE} is missing from {self.path}.")
            for name, info in read_header(file).items():
                if name in infos:
                    raise ExportError(f"Tensor {name} appears in two shards ({infos[name].shard.name}, {shard}).")
                if weight_map and weight_map.get(name) != shard:
                    raise ExportError(f"Tensor {name} is in {shard} but {INDEX_FILE} does not list it there.")
                infos[name] = info
        for name, shard in weight_map.items():
            if name not in infos:
                raise ExportError(f"Tensor {name} is listed in {INDEX_FILE} but missing from shard {shard}.")
        return infos

    def _check_prefixes(self) -> None:
        for name in self._infos:
            if not name.startswith(KNOWN_PREFIXES):
                raise ExportError(f"Unexpected tensor {name}: it belongs to no known part "
                                  f"({', '.join(KNOWN_PREFIXES)}).")
            if self.variant == "audio" and name.startswith(VISION_PREFIXES):
                raise ExportError(f"Unexpected tensor {name}: the Audio variant (init_vision false) "
                                  "has no vision tower.")

    # -- queries -----------------------------------------------------------------------------
    @property
    def variant(self) -> str:
        """'omni' when the vision tower is part of the model, else 'audio'."""
        return "omni" if self.config.get("init_vision", True) else "audio"

    @property
    def shards(self) -> list[Path]:
        return sorted({i.shard for i in self._infos.values()})

    def names(self, prefix: str = "") -> list[str]:
        return sorted(n for n in self._infos if n.startswith(prefix))

    def __contains__(self, name: str) -> bool:
        return name in self._infos

    def info(self, name: str) -> TensorInfo:
        try:
            return self._infos[name]
        except KeyError:
            raise ExportError(f"Missing tensor {name}: the checkpoint at {self.path} does not hold it.") from None

    def get(self, name: str) -> np.ndarray:
        """The whole tensor in its stored dtype (bf16 is upcast to float32)."""
        info = self.info(name)
        if info.dtype == "BF16":
            return self.rows(name, 0, info.shape[0] if info.shape else 1)
        with safe_open(str(info.shard), framework="numpy") as f:
            return f.get_tensor(name)

    def rows(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows [start, stop) along the first axis, read without touching the rest of the tensor."""
        info = self.info(name)
        if info.dtype != "BF16":
            with safe_open(str(info.shard), framework="numpy") as f:
                if not info.shape:
                    return f.get_tensor(name)
                return f.get_slice(name)[start:stop]
        shape = info.shape or (1,)
        mm = np.memmap(info.shard, dtype=np.uint16, mode="r", offset=info.offset, shape=shape)
        out = bf16_to_f32(mm[start:stop])
        del mm  # unmap now, so mapped pages do not accumulate across tensors
        return out if info.shape else out.reshape(())

    def blocks(self, name: str, max_bytes: int = 4 << 20) -> Iterator[np.ndarray]:
        """The tensor as consecutive row blocks of at most about max_bytes (stored size) each."""
        info = self.info(name)
        n_rows = info.shape[0] if info.shape else 1
        row_bytes = max(1, info.nbytes // max(1, n_rows))
        step = max(1, max_bytes // row_bytes)
        for start in range(0, n_rows, step):
            yield self.rows(name, start, min(n_rows, start + step))
