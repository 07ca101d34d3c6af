"""Loading (and, for tests, writing) the token2wav assets: flow.yaml, flow.pt, hift.pt.

The modules themselves come from the `stepaudio2-minicpmo` package (installed
without its heavy dependencies): the flow decoder is built from flow.yaml with
hyperpyyaml exactly as the reference does, and the HiFT vocoder is sized from
the tensors in hift.pt (the reference builds it with fixed defaults).

The reference modules allocate fixed streaming buffers in their constructors
(about 2 GB for the estimator's attention cache). They are built on the meta
device here and those buffers are re-created at the sizes a stream needs.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
import types
from typing import Any

import numpy as np
import torch
from torch import nn

from export.errors import ExportError

NOISE_FRAMES = 50 * 600  # the reference keeps 600 s of fixed noise for the flow sampler


def _bare_package() -> None:
    """Make `stepaudio2` importable without running its __init__, which needs torchaudio and s3tokenizer."""
    if "stepaudio2" in sys.modules:
        return
    spec = importlib.util.find_spec("stepaudio2")
    if spec is None or not spec.submodule_search_locations:
        raise ExportError("The stepaudio2-minicpmo package is not installed; install it with --no-deps.")
    package = types.ModuleType("stepaudio2")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["stepaudio2"] = package


def _alias_cosyvoice2() -> None:
    """flow.yaml names classes under `cosyvoice2.*`; point those names at the packaged modules."""
    if "cosyvoice2.flow.flow" in sys.modules:
        return
    _bare_package()
    try:
        import stepaudio2.cosyvoice2.flow.decoder_dit as dit
        import stepaudio2.cosyvoice2.flow.flow as flow
        import stepaudio2.cosyvoice2.flow.flow_matching as matching
        import stepaudio2.cosyvoice2.transformer.upsample_encoder_v2 as upsample
    except ImportError as exc:
        raise ExportError(f"The token2wav modules are not importable ({exc}); install the 'export' extra "
                          "and stepaudio2-minicpmo with --no-deps.") from exc
    root, flow_pkg, tr_pkg = (types.ModuleType(n) for n in ("cosyvoice2", "cosyvoice2.flow", "cosyvoice2.transformer"))
    root.flow, root.transformer = flow_pkg, tr_pkg
    flow_pkg.flow, flow_pkg.flow_matching, flow_pkg.decoder_dit = flow, matching, dit
    tr_pkg.upsample_encoder_v2 = upsample
    sys.modules.update({
        "cosyvoice2": root, "cosyvoice2.flow": flow_pkg, "cosyvoice2.transformer": tr_pkg,
        "cosyvoice2.flow.flow": flow, "cosyvoice2.flow.flow_matching": matching,
        "cosyvoice2.flow.decoder_dit": dit, "cosyvoice2.transformer.upsample_encoder_v2": upsample,
    })


def _package_import(path: str) -> Any:
    if path.startswith("stepaudio2."):
        _bare_package()
    try:
        return importlib.import_module(path)
    except ImportError as exc:
        raise ExportError(f"Cannot import {path} ({exc}); install stepaudio2-minicpmo with --no-deps "
                          "and the 'export' extra (einops, scipy, hyperpyyaml).") from exc


def flow_yaml_text(cfg: dict[str, Any]) -> str:
    """A flow.yaml in the reference's hyperpyyaml form for the given sizes."""
    return f"""# token2wav flow matching decoder (CausalMaskedDiffWithXvec)
flow: !new:cosyvoice2.flow.flow.CausalMaskedDiffWithXvec
    input_size: {cfg['width']}
    output_size: 80
    spk_embed_dim: 192
    output_type: 'mel'
    vocab_size: {cfg['vocab_size']}
    encoder: !new:cosyvoice2.transformer.upsample_encoder_v2.UpsampleConformerEncoderV2
        input_size: {cfg['width']}
        output_size: {cfg['width']}
        input_layer: 'linear'
        pre_lookahead_len: 3
        num_blocks: {cfg['encoder_blocks']}
        num_up_blocks: {cfg['up_blocks']}
        up_stride: 2
        up_scale_factor: 2
        attention_heads: {cfg['encoder_heads']}
        pos_enc_layer_type: 'rel_pos_espnet'
        selfattention_layer_type: 'rel_selfattn'
        key_bias: true
        linear_units: {cfg['encoder_units']}
        dropout_rate: 0.1
        positional_dropout_rate: 0.1
        attention_dropout_rate: 0.1
        normalize_before: true
        activation_type: 'swish'
    decoder: !new:cosyvoice2.flow.flow_matching.CausalConditionalCFM
        inference_cfg_rate: 0.7
        estimator: !new:cosyvoice2.flow.decoder_dit.DiT
            in_channels: 320
            out_channels: 80
            mlp_ratio: {cfg['dit_mlp_ratio']}
            depth: {cfg['dit_depth']}
            num_heads: {cfg['dit_heads']}
            head_dim: {cfg['dit_head_dim']}
            hidden_size: {cfg['dit_hidden']}
"""


def _fix_meta_state(flow: nn.Module) -> None:
    """Re-create what the constructors computed on the meta device (position tables)."""
    from stepaudio2.cosyvoice2.transformer.embedding import EspnetRelPositionalEncoding

    for module in flow.modules():
        if isinstance(module, EspnetRelPositionalEncoding):
            max_len = (module.pe.shape[1] + 1) // 2
            module.pe = None
            module.extend_pe(torch.tensor(0.0).expand(1, max_len))


def size_stream_buffers(flow: nn.Module, n_timesteps: int, max_cache: int, noise: torch.Tensor) -> None:
    """Give the reference sampler buffers that fit this model and stream (its defaults are fixed)."""
    cfm, dit = flow.decoder, flow.decoder.estimator
    depth, block = len(dit.blocks), dit.blocks[0]
    heads, head_dim, hidden = block.attn.num_heads, block.attn.head_dim, dit.in_proj.out_features
    cfm.register_buffer("rand_noise", noise, persistent=False)
    cfm.register_buffer("cnn_cache_buffer", torch.zeros(n_timesteps, depth, 2, 2 * hidden, 2), persistent=False)
    cfm.register_buffer("att_cache_buffer", torch.zeros(n_timesteps, depth, 2, heads, max_cache, 2 * head_dim),
                        persistent=False)
    dit.register_buffer("cnn_cache_buffer", torch.zeros(depth, 2, 2 * hidden, 2), persistent=False)
    dit.register_buffer("att_cache_buffer", torch.zeros(depth, 2, heads, max_cache, 2 * head_dim), persistent=False)


def flow_noise(seed: int, frames: int = NOISE_FRAMES) -> torch.Tensor:
    """The fixed sampler noise (1, 80, frames); the bundle ships it so ONNX and torch agree."""
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((1, 80, frames)).astype(np.float32))


def build_flow(yaml_text: str) -> nn.Module:
    """Instantiate flow.yaml's `flow` on the meta device (no weights yet)."""
    _alias_cosyvoice2()
    hyperpyyaml = _package_import("hyperpyyaml")
    with torch.device("meta"):
        try:
            flow = hyperpyyaml.load_hyperpyyaml(yaml_text)["flow"]
        except KeyError as exc:
            raise ExportError("flow.yaml has no top-level 'flow' entry.") from exc
    return flow


def load_flow(asset_dir: pathlib.Path, n_timesteps: int = 10, max_cache: int = 1000,
              noise_seed: int = 0) -> nn.Module:
    """flow.yaml + flow.pt -> the reference CausalMaskedDiffWithXvec in eval mode, on CPU."""
    yaml_path, weights = asset_dir / "flow.yaml", asset_dir / "flow.pt"
    for path in (yaml_path, weights):
        if not path.is_file():
            raise ExportError(f"The token2wav asset {path} is missing.")
    flow = build_flow(yaml_path.read_text())
    state = torch.load(weights, map_location="cpu", weights_only=True)
    try:
        flow.load_state_dict(state, strict=True, assign=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        raise ExportError(f"flow.pt does not match flow.yaml: {first}.") from exc
    _fix_meta_state(flow)
    size_stream_buffers(flow, n_timesteps, max_cache, flow_noise(noise_seed))
    return flow.float().eval()


def _weight_shape(state: dict[str, torch.Tensor], stem: str) -> tuple[int, ...]:
    for suffix in (".parametrizations.weight.original1", ".weight_v", ".weight"):
        if stem + suffix in state:
            return tuple(state[stem + suffix].shape)
    raise ExportError(f"hift.pt has no weight for {stem}.")


def build_hift(base_channels: int, cond_channels: int, nb_harmonics: int = 8, n_fft: int = 16,
               resblock_kernels: tuple[int, ...] = (3, 7, 11)) -> nn.Module:
    """HiFTGenerator at these widths; everything else (rates 8*5*3, hop 4, 24 kHz) as the reference."""
    hifigan = _package_import("stepaudio2.flashcosyvoice.modules.hifigan")
    return hifigan.HiFTGenerator(
        base_channels=base_channels, nb_harmonics=nb_harmonics, istft_params={"n_fft": n_fft, "hop_len": 4},
        resblock_kernel_sizes=list(resblock_kernels), resblock_dilation_sizes=[[1, 3, 5]] * len(resblock_kernels),
        f0_predictor=hifigan.ConvRNNF0Predictor(cond_channels=cond_channels))


def load_hift(asset_dir: pathlib.Path) -> nn.Module:
    """hift.pt -> the reference HiFTGenerator, its widths read from the tensors."""
    path = asset_dir / "hift.pt"
    if not path.is_file():
        raise ExportError(f"The token2wav asset {path} is missing.")
    raw = torch.load(path, map_location="cpu", weights_only=True)
    state = {k.removeprefix("generator."): v for k, v in raw.items()}
    base = _weight_shape(state, "conv_pre")[0]
    cond = _weight_shape(state, "f0_predictor.condnet.0")[0]
    harmonics = tuple(state["m_source.l_linear.weight"].shape)[1] - 1
    n_fft = _weight_shape(state, "conv_post")[0] - 2
    stages = len({k.split(".")[1] for k in state if k.startswith("ups.")})
    blocks = len({k.split(".")[1] for k in state if k.startswith("resblocks.")})
    kernels = tuple(_weight_shape(state, f"resblocks.{j}.convs1.0")[2] for j in range(blocks // max(stages, 1)))
    hift = build_hift(base, cond, harmonics, n_fft, kernels)
    try:
        hift.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise ExportError(f"hift.pt does not match the HiFT structure: {str(exc).splitlines()[0]}.") from exc
    return hift.float().eval()


def _randomise(module: nn.Module, gen: torch.Generator) -> None:
    """Seeded weights that keep activations O(1) (the reference init zeroes whole layers)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("alpha") or (p.dim() == 1 and "norm" in name):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            elif p.dim() == 1:
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))
            else:
                fan_in = int(np.prod(p.shape[1:]))
                p.copy_(torch.randn(p.shape, generator=gen) * fan_in**-0.5)
        for name, p in module.named_parameters():
            if name.endswith("original0"):  # weight-norm gain: make the effective weight equal v
                v = dict(module.named_parameters())[name[:-1] + "1"]
                p.copy_(v.norm(dim=tuple(range(1, v.dim())), keepdim=True))


def write_tiny_assets(out_dir: pathlib.Path, seed: int, flow_cfg: dict[str, Any], hift_cfg: dict[str, Any]) -> None:
    """Tiny flow.yaml / flow.pt / hift.pt with the real structure and seeded weights."""
    out_dir.mkdir(parents=True, exist_ok=True)
    text = flow_yaml_text(flow_cfg)
    flow = build_flow(text).to_empty(device="cpu")
    gen = torch.Generator().manual_seed(seed)
    _randomise(flow, gen)
    (out_dir / "flow.yaml").write_text(text)
    torch.save(flow.state_dict(), out_dir / "flow.pt")
    hift = build_hift(hift_cfg["base_channels"], hift_cfg["cond_channels"],
                      resblock_kernels=tuple(hift_cfg.get("resblock_kernels", (3, 7, 11))))
    _randomise(hift, gen)
    with torch.no_grad():  # a voiced F0 (about 150 Hz) so the sine source path is exercised too
        hift.f0_predictor.classifier.bias.fill_(150.0)
        hift.f0_predictor.classifier.weight.mul_(5.0)
        # Speech-like spectra: log-magnitudes around -3 rather than O(1), so the output is not clipped.
        hift.conv_post.parametrizations.weight.original0.mul_(0.1)
        hift.conv_post.bias[: hift.istft_params["n_fft"] // 2 + 1] = -3.0
    torch.save(hift.state_dict(), out_dir / "hift.pt")
