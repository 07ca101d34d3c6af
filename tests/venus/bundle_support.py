"""Tiny Venus bundles for the tests: `venus-export tiny` + `venus-export build`, cached per test session.

Where the exporter does not yet write the ONNX media graphs and the token2wav
voice file, they are added here from the exporter's own graph specs and
registered in the manifest with their hashes, so the runtime opens the bundle
through exactly the same checks as a complete one.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FLOW_STEPS = 5


def run_export(*args: str) -> None:
    cmd = [sys.executable, "-c", "import sys; from export.cli import main; sys.exit(main(sys.argv[1:]))", *args]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"venus-export {' '.join(args)} failed: {done.stderr[-2000:]}")


def _hash(path: Path) -> dict:
    import hashlib

    st = path.stat()
    return {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def complete_bundle(ckpt: Path, bundle: Path) -> None:
    """Add ONNX graphs and the voice file where the build left them out."""
    from export.checkpoint import CheckpointReader
    from export.onnx.graphs import audio_spec, export_graph, flow_specs, vision_spec
    from export.onnx.probes import stream_inputs
    from export.torch_ref.token2wav_assets import flow_noise, load_flow, load_hift
    from export.torch_ref.token2wav_ref import t_span

    manifest = json.loads((bundle / "manifest.json").read_text())
    roles = {str(p.get("role", p.get("name"))).replace("-", "_") for p in manifest["parts"]}
    reader = CheckpointReader(ckpt)
    specs = []
    if "audio" not in roles:
        specs.append(audio_spec(reader.get, reader.config))
    if "vision" not in roles and manifest["variant"] == "omni":
        specs.append(vision_spec(reader.get, reader.config))
    assets = ckpt / "assets" / "token2wav"
    if "token2wav_encoder" not in roles and (assets / "flow.pt").is_file():
        specs += flow_specs(load_flow(assets, n_timesteps=FLOW_STEPS), load_hift(assets))
    for spec in specs:
        rel = f"onnx/{spec.name}.fp32.onnx"
        export_graph(spec, bundle / rel)
        manifest["parts"].append({"name": f"{spec.name}-fp32", "kind": "onnx", "role": spec.name.replace("_", "-"),
                                  "precision": "fp32", "files": [rel], "shapes": {"contract": spec.contract}})
    if "token2wav_voice" not in roles and (assets / "flow.pt").is_file():
        prompt, _ = stream_inputs(7)
        rel = "onnx/token2wav_voice.npz"
        extra = {} if "token2wav_noise" in roles else {"noise": flow_noise(0, 50 * 120).numpy(),
                                                       "t_span": t_span(FLOW_STEPS).numpy()}
        np.savez(bundle / rel, prompt_tokens=np.asarray(prompt.prompt_tokens, np.int64),
                 prompt_mel=prompt.prompt_mel, spk_embedding=prompt.spk_embedding, **extra)
        manifest["parts"].append({"name": "token2wav-voice", "kind": "npz", "role": "token2wav-voice",
                                  "precision": "fp32", "files": [rel], "shapes": {}})
    for part in manifest["parts"]:
        for rel in part["files"]:
            manifest["files"][rel] = _hash(bundle / rel)
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def export_bundle(base: Path, variant: str, name: str) -> tuple[Path, Path]:
    """A tiny checkpoint and its bundle, as `venus-export tiny` and `venus-export build` write them."""
    ckpt, bundle = base / f"ckpt-{variant}", base / name
    if not (bundle / "manifest.json").is_file():
        if not (ckpt / "config.json").is_file():
            run_export("tiny", "--variant", variant, str(ckpt))
        run_export("build", str(ckpt), "-o", str(bundle), "--types", "F16", "--encoders", "fp32", "--device", "cpu")
    return ckpt, bundle


def make_bundle(base: Path, variant: str) -> Path:
    """The exporter's bundle, completed with what it does not write yet (see the module docstring)."""
    bundle = base / f"bundle-{variant}"
    if not (bundle / "manifest.json").is_file():
        ckpt, bundle = export_bundle(base, variant, f"bundle-{variant}")
        complete_bundle(ckpt, bundle)
    return bundle
