"""What the manifest says about TensorRT: engines are tied to a GPU and a TensorRT version."""

from __future__ import annotations

from importlib import metadata

NO_ENGINES = ("the bundle keeps ONNX graphs; the runtime can let onnxruntime's TensorRT provider "
              "build and cache engines on the device")


def _cuda_gpu() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def tensorrt_status() -> dict:
    """{"status": "absent", "reason": ...} unless TensorRT and a CUDA GPU are both here."""
    try:
        version = metadata.version("tensorrt")
    except metadata.PackageNotFoundError:
        return {"status": "absent", "reason": f"TensorRT is not installed where the bundle was built, so {NO_ENGINES}."}
    gpu = _cuda_gpu()
    if gpu is None:
        return {"status": "absent", "tensorrt": version,
                "reason": f"TensorRT {version} is installed but no CUDA GPU is visible, so {NO_ENGINES}."}
    return {"status": "available", "tensorrt": version, "gpu": gpu,
            "reason": "engines are built on the target device by export.trt (they are tied to its GPU and TensorRT)."}
