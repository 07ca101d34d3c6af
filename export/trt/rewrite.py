"""Graph rewrites that let TensorRT take a graph it otherwise refuses.

The vocoder computes its phase ramp in float64 so that onnxruntime matches the
PyTorch reference bit for bit. TensorRT has no float64; demoting those few casts
and constants to float32 gives a graph TensorRT accepts, at the cost of the
float32 rounding the reference itself would have without its fused multiply-adds
(about 1e-4 of phase, checked in the tests).
"""

from __future__ import annotations

import pathlib

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

# Not export.onnx.storage: importing export.onnx pulls in torch, which a device building its engines lacks.
SIDE_FILE_ABOVE = 1_800_000_000  # bytes of weights past which a graph keeps them in a side file (protobuf: 2 GB)


def _demote_tensor(tensor: TensorProto) -> bool:
    if tensor.data_type != TensorProto.DOUBLE:
        return False
    tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float32), tensor.name))
    return True


def demote_float64(src: pathlib.Path, dst: pathlib.Path) -> int:
    """Write `src` with every float64 cast, constant and initializer made float32; returns how many."""
    model = onnx.load(str(src), load_external_data=True)
    changed = 0
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.name == "to" and node.op_type == "Cast" and attr.i == TensorProto.DOUBLE:
                attr.i = TensorProto.FLOAT
                changed += 1
            elif attr.type == onnx.AttributeProto.TENSOR:
                changed += _demote_tensor(attr.t)
    for tensor in model.graph.initializer:
        changed += _demote_tensor(tensor)
    for value in list(model.graph.value_info):
        if value.type.tensor_type.elem_type == TensorProto.DOUBLE:
            value.type.tensor_type.elem_type = TensorProto.FLOAT
    if sum(t.ByteSize() for t in model.graph.initializer) > SIDE_FILE_ABOVE:
        onnx.save_model(model, str(dst), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=dst.name + ".data", size_threshold=1024)
    else:
        onnx.save(model, str(dst))
    return changed
