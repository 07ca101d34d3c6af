"""Recorded video frames to LLM embeddings through a bundle's ONNX vision graph (tower + resampler).

A frame is scaled to fit `MAX_SIDE` pixels (MiniCPM-o's default slice scale),
each side a multiple of the graph's patch, normalised to (x - 0.5) / 0.5, and
encoded as one slice: 64 embeddings that go between `<image>` and `</image>`.
The reference's slicing of large images into several 448-pixel slices plus an
overview is not reproduced: one frame, one slice.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

MAX_SIDE = 448


def _graph_facts(path: Path) -> tuple[int, int]:
    """(patch, largest side in patches) from the first Conv and the position table, if the graph has one."""
    import onnx

    g = onnx.load(str(path), load_external_data=False).graph
    patch = next((int(a.ints[-1]) for n in g.node if n.op_type == "Conv" for a in n.attribute
                  if a.name == "kernel_shape"), 14)
    side = next((int(round(np.sqrt(i.dims[0]))) for i in g.initializer
                 if "position_embedding" in i.name and len(i.dims) == 2), 0)
    return patch, side


def max_side(path: Path) -> int:
    """The largest frame side the graph takes: MAX_SIDE, or less if its position table is smaller."""
    patch, side = _graph_facts(path)
    return min(MAX_SIDE, side * patch) if side else MAX_SIDE


def frame_pixels(frame: np.ndarray, patch: int, max_side: int) -> np.ndarray:
    """HxWx3 uint8 -> (1, 3, h, w) float32 in [-1, 1], h and w multiples of `patch`, at most `max_side`."""
    from PIL import Image

    h, w = frame.shape[:2]
    scale = min(1.0, max_side / max(h, w))
    nh = max(patch, int(h * scale) // patch * patch)
    nw = max(patch, int(w * scale) // patch * patch)
    img = np.asarray(Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8)).resize((nw, nh), Image.BILINEAR))
    x = img.astype(np.float32) / 255.0
    return ((x - 0.5) / 0.5).transpose(2, 0, 1)[None].astype(np.float32)


class VisionEmbedder:
    def __init__(self, path: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.input = self.sess.get_inputs()[0]
        self.patch = _graph_facts(path)[0]
        self.max_side = max_side(path)

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        x = frame_pixels(frame, self.patch, self.max_side)
        if "float16" in self.input.type:
            x = x.astype(np.float16)
        out = np.asarray(self.sess.run(None, {self.input.name: x})[0], dtype=np.float32)
        return out.reshape(-1, out.shape[-1])
