"""TensorRT optimisation profiles for the shapes the runtime feeds each graph, and graph pre-checks.

A profile gives (min, opt, max) for every dynamic input dimension. The
`opt` shapes are the steady-state runtime shapes: a 448 px slice, a 1 s audio
chunk with about 10 s of cached context, a 28-code token2wav window with
50 mel frames and a cache of prompt + 100 frames.
"""

from __future__ import annotations

import pathlib
from typing import Any

import onnx

from export.errors import ExportError

# (min, opt, max) per named dynamic dimension of the exported graphs.
DIMENSIONS: dict[str, dict[str, tuple[int, int, int]]] = {
    "vision": {"height": (14, 448, 980), "width": (14, 448, 980)},
    "audio": {"frames": (2, 100, 3000), "past": (0, 500, 1500)},
    "token2wav_encoder": {"codes": (1, 28, 600), "pad": (0, 0, 3), "cache": (0, 300, 1600)},
    "token2wav_step": {"frames": (2, 50, 1200), "cache": (0, 300, 1600)},
    "token2wav_vocoder": {"frames": (2, 58, 1200), "cached": (0, 3840, 3840), "samples": (960, 27840, 576000)},
}

# Ops TensorRT does not implement: graphs holding them stay ONNX (onnxruntime runs them).
UNSUPPORTED_OPS = {"MatMulInteger", "DynamicQuantizeLinear", "ConvInteger"}


def _dims(value: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def profile_for(part: str, model: onnx.ModelProto) -> dict[str, dict[str, list[int]]]:
    """{input: {"min": shape, "opt": shape, "max": shape}} for every graph input of `part`."""
    table = DIMENSIONS.get(part)
    if table is None:
        raise ExportError(f"No TensorRT profile is defined for the part {part!r}.")
    initializers = {t.name for t in model.graph.initializer}
    out: dict[str, dict[str, list[int]]] = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dims = _dims(value)
        shapes = {}
        for i, which in enumerate(("min", "opt", "max")):
            shapes[which] = [table[d][i] if isinstance(d, str) else int(d) for d in dims]
        out[value.name] = shapes
    return out


def unsupported_ops(path: pathlib.Path) -> list[str]:
    model = onnx.load(str(path), load_external_data=False)
    return sorted({n.op_type for n in model.graph.node} & UNSUPPORTED_OPS)


def uses_float64(path: pathlib.Path) -> bool:
    model = onnx.load(str(path), load_external_data=False)
    return any(n.op_type == "Cast" and any(a.name == "to" and a.i == onnx.TensorProto.DOUBLE for a in n.attribute)
               for n in model.graph.node)


def blockers(path: pathlib.Path) -> list[str]:
    """Why TensorRT cannot take this graph as it is (empty when it can)."""
    reasons = []
    ops = unsupported_ops(path)
    if ops:
        reasons.append(f"it uses {', '.join(ops)} (dynamic INT8), which TensorRT does not implement")
    if uses_float64(path):
        reasons.append("it computes in float64 (the vocoder's exact phase accumulation), which TensorRT lacks")
    return reasons


def describe_profile(profile: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    """The manifest form: min/opt/max shapes per input."""
    return {name: {k: list(v) for k, v in shapes.items()} for name, shapes in profile.items()}
