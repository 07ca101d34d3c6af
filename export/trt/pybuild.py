"""`python -m export.trt.pybuild`: build one engine with TensorRT's Python API, taking trtexec's flags.

For installs with TensorRT's Python module but no trtexec (pip's tensorrt
wheels ship none). It takes the subset of trtexec's command line that
builder.command writes: --onnx, --saveEngine, --fp16, --int8, --skipInference,
--memPoolSize=workspace:<N>M and --minShapes/--optShapes/--maxShapes=name:AxBxC,...
Exit status 0 with the engine written, 1 with the reason on stderr.
"""

from __future__ import annotations

import sys


def _shapes(text: str) -> dict[str, tuple[int, ...]]:
    out = {}
    for item in text.split(","):
        name, _, dims = item.rpartition(":")
        out[name] = tuple(int(d) for d in dims.split("x"))
    return out


def parse(argv: list[str]) -> dict:
    opts: dict = {"fp16": False, "int8": False, "workspace_mb": 4096, "shapes": {}}
    for arg in argv:
        flag, _, value = arg.partition("=")
        if flag == "--onnx":
            opts["onnx"] = value
        elif flag == "--saveEngine":
            opts["engine"] = value
        elif flag in ("--fp16", "--int8"):
            opts[flag[2:]] = True
        elif flag == "--memPoolSize" and value.startswith("workspace:"):
            opts["workspace_mb"] = int(value.split(":", 1)[1].rstrip("M"))
        elif flag in ("--minShapes", "--optShapes", "--maxShapes"):
            opts["shapes"][flag[2:5]] = _shapes(value)
        elif flag != "--skipInference":
            raise SystemExit(f"pybuild: unknown option {arg}")
    if "onnx" not in opts or "engine" not in opts:
        raise SystemExit("pybuild: --onnx=FILE and --saveEngine=FILE are required")
    return opts


def build(opts: dict) -> None:
    import tensorrt as trt

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    major = int(trt.__version__.split(".")[0])
    # TensorRT 8/9 need explicit batch asked for; 10 has it by default
    network = builder.create_network(0 if major >= 10 else 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(opts["onnx"]):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise SystemExit(f"pybuild: TensorRT's ONNX parser refused {opts['onnx']}: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, opts["workspace_mb"] << 20)
    for name in ("fp16", "int8"):
        if opts[name] and hasattr(trt.BuilderFlag, name.upper()):  # weakly typed TensorRT only
            config.set_flag(getattr(trt.BuilderFlag, name.upper()))
    shapes = opts["shapes"]
    if shapes:
        profile = builder.create_optimization_profile()
        for name in shapes.get("min", {}):
            profile.set_shape(name, shapes["min"][name], shapes["opt"][name], shapes["max"][name])
        config.add_optimization_profile(profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise SystemExit(f"pybuild: TensorRT could not build an engine for {opts['onnx']} (see its log above)")
    with open(opts["engine"], "wb") as f:
        f.write(bytes(serialized))


def main(argv: list[str] | None = None) -> int:
    build(parse(sys.argv[1:] if argv is None else argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
