"""Is a bundle file what its suffix says, whole and self-consistent? GGUF, ONNX, npz and npy, read cheaply.

A hash proves a file is the one the manifest names; it says nothing about a
file whose manifest was rewritten to match (a truncated GGUF, re-hashed). These
checks read only headers and tables, never weights, and need neither the `gguf`
nor the `onnx` package (a device may have neither):

- GGUF: magic, version, the metadata table, the tensor table (at most four
  dimensions, a known type, whole blocks), and every tensor's data aligned and
  inside the file, none overlapping.
- ONNX: the protobuf framing of the model and its graph (every field inside the
  file, a graph with nodes, an IR version), and every external-data reference
  relative, inside the bundle and inside its data file.
- npz / npy: numpy's own header reader; the data the header describes fills the
  file (or the archive member) exactly.

Each function returns None or one sentence saying what is wrong.
"""
from __future__ import annotations

import mmap
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import numpy as np

# ggml type id -> (elements per block, bytes per block); ids the format retired are absent.
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110), 22: (256, 82),
    23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8), 29: (256, 56), 30: (1, 2),
    34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18),
}
# GGUF metadata value types: fixed sizes; 8 is a string, 9 an array.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class Malformed(Exception):
    """Raised inside a reader; the caller turns it into the file's sentence."""


class _Cursor:
    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf, self.pos = buf, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise Malformed(f"it ends inside a field at byte {self.pos}")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise Malformed(f"a field of {n} bytes at byte {self.pos} runs past the end")
        self.pos += n

    def string(self) -> bytes:
        return self.take(self.u64())


def _mapped(path: Path, check: Callable[[mmap.mmap | bytes], None]) -> None:
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size == 0:
            raise Malformed("it is empty")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            check(buf)


def _skip_value(c: _Cursor, kind: int, depth: int = 0) -> None:
    if kind in _FIXED:
        c.skip(_FIXED[kind])
    elif kind == _STRING:
        c.skip(c.u64())
    elif kind == _ARRAY and depth == 0:
        inner, count = c.u32(), c.u64()
        if inner in _FIXED:
            c.skip(_FIXED[inner] * count)
        elif count > len(c.buf) - c.pos:  # each item takes at least one byte
            raise Malformed(f"an array claims {count} items, more than the file holds")
        else:
            for _ in range(count):
                _skip_value(c, inner, depth + 1)
    else:
        raise Malformed(f"a metadata value has unknown type {kind}")


def _gguf(buf: mmap.mmap | bytes) -> None:
    c = _Cursor(buf)
    if c.take(4) != b"GGUF":
        raise Malformed("it does not start with the GGUF magic")
    version = c.u32()
    if version not in (2, 3):
        raise Malformed(f"its GGUF version is {version}, not 2 or 3")
    n_tensors, n_kv = c.u64(), c.u64()
    if n_tensors > len(buf) or n_kv > len(buf):
        raise Malformed(f"its header claims {n_tensors} tensors and {n_kv} metadata entries, more than the file holds")
    alignment = 32
    for _ in range(n_kv):
        key, kind = c.string(), c.u32()
        if key == b"general.alignment" and kind == 4:
            alignment = struct.unpack("<I", buf[c.pos:c.pos + 4])[0] if c.pos + 4 <= len(buf) else 0
            if alignment == 0 or alignment & (alignment - 1):
                raise Malformed(f"its alignment {alignment} is not a power of two")
        _skip_value(c, kind)
    tensors: list[tuple[int, int, bytes]] = []
    names: set[bytes] = set()
    for _ in range(n_tensors):
        name, n_dims = c.string(), c.u32()
        if not 1 <= n_dims <= 4:
            raise Malformed(f"tensor {name.decode(errors='replace')} has {n_dims} dimensions (1 to 4 allowed)")
        dims = [c.u64() for _ in range(n_dims)]
        kind, offset = c.u32(), c.u64()
        label = name.decode(errors="replace")
        if name in names:
            raise Malformed(f"tensor {label} is listed twice")
        names.add(name)
        if kind not in GGML_BLOCKS:
            raise Malformed(f"tensor {label} has unknown type {kind}")
        block, nbytes = GGML_BLOCKS[kind]
        count = 1
        for d in dims:
            count *= d
        if dims[0] % block:
            raise Malformed(f"tensor {label} has a row of {dims[0]} values, not whole blocks of {block}")
        if offset % alignment:
            raise Malformed(f"tensor {label} starts at an unaligned offset {offset}")
        tensors.append((offset, count // block * nbytes, name))
    data = -(-c.pos // alignment) * alignment
    end = data
    for offset, nbytes, name in sorted(tensors):
        if data + offset < end:
            raise Malformed(f"tensor {name.decode(errors='replace')} overlaps the one before it")
        end = data + offset + nbytes
        if end > len(buf):
            raise Malformed(f"tensor {name.decode(errors='replace')} runs past the end of the file "
                            f"({end} of {len(buf)} bytes)")


def gguf_problem(path: Path) -> str | None:
    try:
        _mapped(path, _gguf)
    except Malformed as exc:
        return f"is not a whole GGUF file: {exc}"
    return None


# --- ONNX: protobuf framing, read by hand (a device may not have the onnx package) --------------------------------
def _varint(c: _Cursor) -> int:
    out = shift = 0
    while True:
        byte = c.take(1)[0]
        out |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return out
        shift += 7
        if shift > 63:
            raise Malformed(f"a number at byte {c.pos} is longer than 10 bytes")


def _fields(buf: mmap.mmap | bytes, start: int, end: int):
    """(field number, wire type, value or (start, end) of a length-delimited field) within buf[start:end]."""
    c = _Cursor(buf)
    c.pos = start
    while c.pos < end:
        tag = _varint(c)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise Malformed(f"a field at byte {c.pos} has number 0")
        if wire == 0:
            yield number, wire, _varint(c)
        elif wire == 1:
            c.skip(8)
            yield number, wire, None
        elif wire == 5:
            c.skip(4)
            yield number, wire, None
        elif wire == 2:
            n = _varint(c)
            if c.pos + n > end:
                raise Malformed(f"a field of {n} bytes at byte {c.pos} runs past its message")
            yield number, wire, (c.pos, c.pos + n)
            c.pos += n
        else:
            raise Malformed(f"a field at byte {c.pos} has wire type {wire}, which ONNX never writes")
    if c.pos != end:
        raise Malformed("the last field runs past its message")


def _external(buf, span: tuple[int, int]) -> dict[str, str]:
    """An initializer's external-data entries (TensorProto field 13: key 1, value 2), when it has any."""
    out: dict[str, str] = {}
    for number, wire, value in _fields(buf, *span):
        if number == 13 and wire == 2:
            entry = {n: bytes(buf[v[0]:v[1]]).decode(errors="replace") for n, w, v in _fields(buf, *value) if w == 2}
            out[entry.get(1, "")] = entry.get(2, "")
    return out


def onnx_problem(path: Path, root: Path, listed: dict[str, int]) -> str | None:
    """`listed`: the bundle's listed files and their sizes (external data must be one of them)."""
    rel_dir = PurePosixPath(path.relative_to(root).as_posix()).parent
    externals: list[dict[str, str]] = []

    def check(buf) -> None:
        top = list(_fields(buf, 0, len(buf)))
        if not any(n == 1 and w == 0 for n, w, _ in top):
            raise Malformed("it has no IR version")
        graphs = [v for n, w, v in top if n == 7 and w == 2]
        if len(graphs) != 1:
            raise Malformed(f"it has {len(graphs)} graphs, not one")
        graph = list(_fields(buf, *graphs[0]))
        if not any(n == 1 and w == 2 for n, w, _ in graph):
            raise Malformed("its graph has no nodes")
        for n, w, v in graph:
            if n == 5 and w == 2:
                ext = _external(buf, v)
                if ext:
                    externals.append(ext)

    try:
        _mapped(path, check)
    except Malformed as exc:
        return f"is not a whole ONNX model: {exc}"
    for ext in externals:
        where = PurePosixPath(ext.get("location", ""))
        rel = (rel_dir / where).as_posix()
        if where.is_absolute() or ".." in where.parts or rel not in listed:
            return f"keeps weights in {ext.get('location')!r}, which is not a listed file beside it in the bundle"
        try:
            start, length = int(ext.get("offset", "0")), int(ext.get("length", "-1"))
        except ValueError:
            return f"gives a weight offset or length in {rel} that is not a number"
        if start < 0 or (length >= 0 and start + length > listed[rel]):
            return f"reads weights past the end of {rel}"
    return None


# --- numpy ---------------------------------------------------------------------------------------------------------
def _npy_fits(f, size: int) -> None:
    try:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(f)
    except (ValueError, SyntaxError, EOFError, OSError) as exc:
        raise Malformed(f"its array header cannot be read ({exc})") from None
    if dtype.hasobject:
        raise Malformed("it holds Python objects, which a bundle never does")
    want = f.tell() + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if want != size:
        raise Malformed(f"its header describes {want} bytes but it has {size}")


def npy_problem(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            _npy_fits(f, path.stat().st_size)
    except Malformed as exc:
        return f"is not a whole .npy array: {exc}"
    return None


def npz_problem(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
            if not members:
                raise Malformed("it holds no arrays")
            for info in members:
                if not info.filename.endswith(".npy"):
                    raise Malformed(f"it holds {info.filename}, which is not an array")
                with z.open(info) as f:
                    _npy_fits(f, info.file_size)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError) as exc:
        return f"is not a whole .npz archive ({exc})"
    except Malformed as exc:
        return f"is not a whole .npz archive: {exc}"
    return None


def structure_problem(path: Path, root: Path, listed: dict[str, int]) -> str | None:
    """The suffix's check, or None for a file whose format is not read here (a WAV, a JSON)."""
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        return gguf_problem(path)
    if suffix == ".onnx":
        return onnx_problem(path, root, listed)
    if suffix == ".npz":
        return npz_problem(path)
    if suffix == ".npy":
        return npy_problem(path)
    return None
