"""FP16 and INT8 variants of an FP32 ONNX graph (onnxruntime's own converters)."""

from __future__ import annotations

import logging
import pathlib
from collections.abc import Iterable

import numpy as np
import onnx

from edge.formats import ONNX_PRECISIONS, listed
from export.errors import ExportError
from export.onnx import storage

PRECISIONS = ONNX_PRECISIONS  # build order: most precise first

# Ops kept in FP32 inside an FP16 graph: onnxruntime has no FP16 CPU kernel for them, or they carry
# values (positions, phases, noise schedules) where FP16 rounding is an error rather than noise.
FP16_KEEP_FP32 = ["Range", "CumSum", "Sin", "Cos", "Exp", "Floor", "Mod", "Resize", "Softmax",
                  "ReduceMean", "Pow", "Sqrt", "Div", "LayerNormalization", "Erf", "Tanh"]


def normalise_precisions(precisions: Iterable[str]) -> list[str]:
    """['FP16', 'fp32'] -> ['fp32', 'fp16'] (build order), refusing unknown names in one sentence."""
    asked = [str(p).lower() for p in precisions]
    unknown = sorted(set(asked) - set(PRECISIONS))
    if unknown:
        raise ExportError(f"Unknown ONNX precision {', '.join(unknown)}: use {listed(PRECISIONS)}.")
    if not asked:
        raise ExportError(f"No ONNX precision was asked for: give at least one of {', '.join(PRECISIONS)}.")
    return [p for p in PRECISIONS if p in asked]


def to_fp16(src: pathlib.Path, dst: pathlib.Path, only_prefixes: tuple[str, ...] | None = None) -> None:
    """FP16 weights and activations, FP32 inputs/outputs, numerically touchy ops kept in FP32.

    With `only_prefixes`, only nodes whose names start with one of them become FP16 (the
    vocoder's F0 and phase path must stay FP32: a 0.1 Hz F0 error is a large phase error).
    """
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = storage.load(src)
    blocked = None
    if only_prefixes is not None:
        blocked = [n.name for n in model.graph.node if not n.name.startswith(only_prefixes)]
    converted = convert_float_to_float16(model, keep_io_types=True, op_block_list=FP16_KEEP_FP32,
                                         node_block_list=blocked)
    _topological_sort(converted.graph)  # the converter appends its input casts at the end
    storage.save(converted, dst)
    onnx.checker.check_model(str(dst))


def _topological_sort(graph: onnx.GraphProto) -> None:
    """Reorder nodes so each comes after the producers of its inputs (ONNX requires it)."""
    ready = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    pending, ordered = list(graph.node), []
    while pending:
        left = []
        for node in pending:
            if all(name in ready for name in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                left.append(node)
        if len(left) == len(pending):
            raise ExportError(f"The FP16 graph has a cycle or a dangling input at node {left[0].name}.")
        pending = left
    del graph.node[:]
    graph.node.extend(ordered)


def to_int8_dynamic(src: pathlib.Path, dst: pathlib.Path) -> None:
    """INT8 weights of MatMul/Gemm, activations quantised on the fly (no calibration needed)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet():
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"])


def to_int8_static(src: pathlib.Path, dst: pathlib.Path, samples: list[dict[str, np.ndarray]],
                   op_types: list[str] | None = None) -> None:
    """INT8 QDQ graph calibrated on `samples` (MinMax), weights per channel: what TensorRT reads. `op_types`: the
    operators quantized (default MatMul, Gemm and Conv)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    if not samples:
        raise ExportError(f"Static INT8 quantisation of {src.name} needs at least one calibration sample.")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter(samples)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.items, None)

    with _quiet():
        quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True,
                        op_types_to_quantize=op_types or ["MatMul", "Gemm", "Conv"],
                        extra_options={"ActivationSymmetric": True})


class _quiet:
    """onnxruntime's quantiser logs a warning per tensor it skips; keep the build output readable."""

    def __enter__(self) -> None:
        self.logger = logging.getLogger()
        self.level = self.logger.level
        self.logger.setLevel(logging.ERROR)

    def __exit__(self, *exc: object) -> None:
        self.logger.setLevel(self.level)
