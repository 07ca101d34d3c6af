"""Importance matrices: computed in Python through llama.cpp's graph-evaluation callback.

For every matrix multiplication by a layer weight (`blk.*`), llama.cpp hands
the callback the activations going in; the importance of each input column is
the mean of its squared activations over the calibration tokens. This is the
statistic llama.cpp's `llama-imatrix` tool collects; the quantizer takes it
through `llama_model_quantize_params.imatrix`. Mixture-of-experts layers
(MUL_MAT_ID) are not collected: the Realtime-Venus LLM is dense.
"""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import llama_cpp as ll
import numpy as np
from tqdm import tqdm

from edge.backends.llama import LlamaModel

_MAX_DIMS, _MAX_SRC, _MAX_OP_PARAMS, _MAX_NAME = 4, 10, 64, 64
_GGML_TYPE_F32 = 0


class _GgmlTensor(ctypes.Structure):
    """The head of ggml.h's `struct ggml_tensor`, checked against the library before use."""

    _fields_ = [
        ("type", ctypes.c_int), ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * _MAX_DIMS), ("nb", ctypes.c_size_t * _MAX_DIMS),
        ("op", ctypes.c_int), ("op_params", ctypes.c_int32 * (_MAX_OP_PARAMS // 4)), ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * _MAX_SRC), ("view_src", ctypes.c_void_p), ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p), ("name", ctypes.c_char * _MAX_NAME),
    ]


def _ggml_lib() -> ctypes.CDLL:
    libdir = Path(ll.__file__).parent / "lib"
    for name in ("libggml-base.so", "libggml-base.dylib", "ggml-base.dll", "libggml.so"):
        if (libdir / name).exists():
            lib = ctypes.CDLL(str(libdir / name))
            break
    else:
        raise RuntimeError(f"no ggml library found in {libdir}; cannot compute an importance matrix")
    lib.ggml_op_name.restype = ctypes.c_char_p
    lib.ggml_op_name.argtypes = [ctypes.c_int]
    lib.ggml_get_name.restype = ctypes.c_char_p
    lib.ggml_get_name.argtypes = [ctypes.c_void_p]
    lib.ggml_nelements.restype = ctypes.c_int64
    lib.ggml_nelements.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_buffer_is_host.restype = ctypes.c_bool
    lib.ggml_backend_buffer_is_host.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
    return lib


class _Collector:
    def __init__(self) -> None:
        self.lib = _ggml_lib()
        self.mul_mat = next(i for i in range(128) if self.lib.ggml_op_name(i) == b"MUL_MAT")
        self.sums: dict[str, np.ndarray] = {}
        self.counts: dict[str, int] = {}
        self.error: Exception | None = None
        self.checked = False
        self.callback = ll.ggml_backend_sched_eval_callback(self._on_tensor)

    def _check_layout(self, ptr: int, t: _GgmlTensor) -> None:
        # A wrong struct layout would read garbage: compare with the library's own accessors once.
        if self.lib.ggml_get_name(ptr) != t.name or self.lib.ggml_nelements(ptr) != int(np.prod(list(t.ne))):
            raise RuntimeError("this llama.cpp build lays out ggml tensors differently; compute the importance "
                               "matrix with llama.cpp's llama-imatrix tool and pass the file with --imatrix")
        self.checked = True

    def _on_tensor(self, ptr, ask, _user) -> bool:
        try:
            t = _GgmlTensor.from_address(ptr)
            if not self.checked:
                self._check_layout(ptr, t)
            if t.op != self.mul_mat or not t.src[0] or not t.src[1]:
                return False if ask else True
            w = _GgmlTensor.from_address(t.src[0])
            x = _GgmlTensor.from_address(t.src[1])
            name = w.name.decode(errors="replace")
            if ask:
                return name.startswith("blk.") and x.type == _GGML_TYPE_F32
            self._collect(name, t.src[1], x)
        except Exception as e:  # an exception must not cross into C; keep the first and report it after the decode
            self.error = self.error or e
        return True

    def _collect(self, name: str, xptr: int, x: _GgmlTensor) -> None:
        ne, nb = list(x.ne), list(x.nb)
        extent = sum((n - 1) * s for n, s in zip(ne, nb)) + 4
        if self.lib.ggml_backend_buffer_is_host(x.buffer):
            buf = (ctypes.c_char * extent).from_address(x.data)
        else:
            buf = (ctypes.c_char * extent)()
            self.lib.ggml_backend_tensor_get(xptr, buf, 0, extent)
        arr = np.ndarray(shape=ne[::-1], dtype=np.float32, buffer=buf, strides=nb[::-1]).reshape(-1, ne[0])
        sq = np.square(arr, dtype=np.float64).sum(axis=0)
        if name in self.sums and self.sums[name].shape != sq.shape:
            raise RuntimeError(f"activations of {name} changed width ({self.sums[name].size} vs {sq.size})")
        self.sums[name] = self.sums.get(name, 0) + sq
        self.counts[name] = self.counts.get(name, 0) + arr.shape[0]


def compute_imatrix(model: str | Path, text: str, chunk: int = 128, max_tokens: int = 2048,
                    n_threads: int = 1, n_gpu_layers: int = 0, progress: bool = False) -> dict[str, np.ndarray]:
    """Mean squared input activation per column of every layer weight, over the calibration text."""
    collector = _Collector()
    if not Path(model).is_file():
        raise FileNotFoundError(f"model file {model} does not exist")
    with LlamaModel(Path(model), max(chunk, 64), n_threads, n_gpu_layers, n_batch=chunk,
                    eval_callback=collector.callback) as s:
        tokens = s.tokenize(text)[:max_tokens]
        if len(tokens) < 16:
            raise ValueError(f"the calibration text gives only {len(tokens)} tokens; give at least 16")
        for start in tqdm(range(0, len(tokens), chunk), desc="imatrix", unit="chunk", disable=not progress,
                          file=sys.stderr, leave=False):
            s.clear()
            s.prefill_tokens(tokens[start:start + chunk])
            if collector.error:
                raise collector.error
    if not collector.sums:
        raise RuntimeError("llama.cpp reported no weight multiplications; nothing to build an importance matrix from")
    return {k: (v / collector.counts[k]).astype(np.float32) for k, v in collector.sums.items()}


def save_imatrix(path: Path, imatrix: dict[str, np.ndarray]) -> None:
    tmp = path.with_name(path.name + ".part.npz")
    np.savez(tmp, **imatrix)
    tmp.replace(path)


def load_imatrix(path: str | Path) -> dict[str, np.ndarray]:
    """Read an importance matrix: our .npz, or a GGUF written by llama.cpp's llama-imatrix."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"importance matrix {path} does not exist")
    if path.suffix == ".npz":
        with np.load(path) as z:
            return {k: z[k].astype(np.float32) for k in z.files}
    if path.suffix == ".gguf":
        from gguf import GGUFReader

        tensors = {t.name: np.asarray(t.data, dtype=np.float64) for t in GGUFReader(str(path)).tensors}
        out = {}
        for name, sums in tensors.items():
            if name.endswith(".in_sum2"):
                base = name[: -len(".in_sum2")]
                counts = tensors.get(base + ".counts")
                if counts is None:
                    raise ValueError(f"{path} has {name} but no {base}.counts; is it an imatrix GGUF?")
                n_mat = counts.size
                mean = sums.reshape(n_mat, -1) / np.maximum(counts.reshape(n_mat, 1), 1)
                out[base] = mean.reshape(-1).astype(np.float32)
        if not out:
            raise ValueError(f"{path} holds no importance-matrix tensors (*.in_sum2)")
        return out
    raise ValueError(f"importance matrix {path} must be a .npz (from venus-quant) or a .gguf (from llama-imatrix)")
