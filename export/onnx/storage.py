"""Saving graphs of any size: protobuf stops at 2 GB, so big weights go to a side file.

The real vision tower plus resampler is close to 2 GB in FP32; such a graph is
written as `<name>.onnx` plus `<name>.onnx.data` (one external-data file next to
it, which onnxruntime and TensorRT's parser find on their own).
"""

from __future__ import annotations

import pathlib

import onnx

LIMIT = 1_800_000_000  # bytes of weights above which a graph keeps them in a side file


def weight_bytes(model: onnx.ModelProto) -> int:
    total = 0
    for tensor in model.graph.initializer:
        if tensor.raw_data:
            total += len(tensor.raw_data)
        else:
            count = 1
            for d in tensor.dims:
                count *= d
            total += count * onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    return total


def data_file(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(path.name + ".data")


def save(model: onnx.ModelProto, path: pathlib.Path, limit: int | None = None) -> list[pathlib.Path]:
    """Write `model` to `path`, externalising weights above `limit`; returns the files written."""
    limit = LIMIT if limit is None else limit
    side = data_file(path)
    side.unlink(missing_ok=True)
    if weight_bytes(model) > limit:
        onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=side.name, size_threshold=1024)
        return [path, side]
    onnx.save(model, str(path))
    return [path]


def load(path: pathlib.Path) -> onnx.ModelProto:
    """A graph with its weights, wherever they are stored."""
    return onnx.load(str(path), load_external_data=True)


def files_of(path: pathlib.Path) -> list[pathlib.Path]:
    side = data_file(path)
    return [path, side] if side.is_file() else [path]
