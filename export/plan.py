"""Memory and bandwidth planner: which precisions of a Realtime-Venus bundle fit a device.

Every size is computed from parameter counts (the architecture facts of the
MiniCPM-o 4.5 parts) and bits per weight; every speed from memory bandwidth,
since decode reads all weights once per token. Units: bytes internally,
decimal GB (1e9) on screen, device memory as the kernel reports it (GiB).

    python -m export.plan --device orin-nano-8 --variant audio --context 4096
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from edge.formats import BOARDS, KV_BITS, ONNX_BYTES, VARIANTS, Board
from export.gguf_types import TYPES

GB = 1e9
GIB = 2**30


# The boards, with the numbers the plan is made of (edge/formats.py: the device checks a bundle's target there).
Device = Board
DEVICES: dict[str, Device] = BOARDS

# Average bits per weight over a whole model's tensor mix (K-quants keep some tensors at higher precision):
# the GGUF type table's figures (export/gguf_types.py). PLANNED: the types a plan lists when none are named.
LLM_BITS: dict[str, float] = {name: t.bpw for name, t in TYPES.items()}
PLANNED: tuple[str, ...] = tuple(name for name, t in TYPES.items() if t.planned)


@dataclass(frozen=True)
class Params:
    """A part's parameters: matrices (quantized) and vectors (norms, biases: kept fp32)."""
    matrix: int
    vector: int = 0

    def __add__(self, other: Params) -> Params:
        return Params(self.matrix + other.matrix, self.vector + other.vector)

    def bytes(self, bytes_per_weight: float) -> float:
        return self.matrix * bytes_per_weight + self.vector * 4.0


@dataclass(frozen=True)
class Qwen3Shape:
    layers: int = 36
    hidden: int = 4096
    heads: int = 32
    kv_heads: int = 8
    head_dim: int = 128
    ffn: int = 12288
    vocab: int = 151_748

    def embedding(self) -> Params:
        return Params(self.vocab * self.hidden)

    def params(self) -> Params:
        q = self.hidden * self.heads * self.head_dim
        kv = 2 * self.hidden * self.kv_heads * self.head_dim
        layer = Params(2 * q + kv + 3 * self.hidden * self.ffn, 2 * self.hidden + 2 * self.head_dim)
        total = Params(0, self.hidden)  # final norm
        for _ in range(self.layers):
            total = total + layer
        return total + self.embedding() + self.embedding()  # token embedding and untied lm_head

    def kv_bytes_per_token(self, kv_type: str) -> float:
        return 2 * self.layers * self.kv_heads * self.head_dim * KV_BITS[kv_type] / 8


def _transformer_layer(width: int, ffn: int) -> Params:
    # attention q,k,v,out with biases, two-matrix MLP with biases, two layer norms (weight, bias)
    return Params(4 * width * width + 2 * width * ffn, 4 * width + ffn + width + 4 * width)


def vision_params(layers: int = 26, width: int = 1152, ffn: int = 4304, patch: int = 14,
                  positions: int = 70 * 70, queries: int = 64, dim: int = 4096) -> Params:
    """SigLIP tower (ffn 4304 as in SigLIP so400m) plus the one-layer resampler."""
    tower = Params(3 * patch * patch * width + positions * width, width + 2 * width)
    for _ in range(layers):
        tower = tower + _transformer_layer(width, ffn)
    resampler = Params(queries * dim + width * dim + 4 * dim * dim + dim * dim, 3 * dim + dim + 6 * dim)
    return tower + resampler


def audio_params(layers: int = 24, width: int = 1024, ffn: int = 4096, mels: int = 80,
                 positions: int = 1500, dim: int = 4096) -> Params:
    """Whisper-medium-style encoder plus the 1024 -> 4096 -> 4096 projector."""
    enc = Params(mels * width * 3 + width * width * 3 + positions * width, 2 * width + 2 * width)
    for _ in range(layers):
        enc = enc + _transformer_layer(width, ffn)
    return enc + Params(width * dim + dim * dim, 2 * dim)


TTS_PARAMS = Params(440_000_000)  # Llama-style, 20 layers, width 768 (reference figure, embeddings included)
TTS_KV_BYTES_PER_TOKEN_F16 = 2 * 20 * 768 * 2  # full multi-head attention assumed
TTS_CONTEXT = 1024  # codes and text of the current turn
FLOW_PARAMS = Params(int(595e6 / 4))  # token2wav flow matching: ~595 MB as fp32
HIFT_BYTES = 80e6  # HiFT vocoder, kept fp32: it writes the waveform itself
VISION_ENCODE_S_REF = 0.887  # measured per frame on Orin Nano Super (67 TOPS), same SigLIP size
DECODE_EFFICIENCY = 0.65  # measured 25 tok/s against a 38 tok/s ceiling (8B Q4_K_M, AGX Orin)
REALTIME_SHARE = 0.8  # of each chunk; the rest is left for prefill (not modelled) and the graph itself


@dataclass
class Overheads:
    ubatch: int = 128  # one chunk (64 vision + ~10 audio + markers) prefills in one pass
    onnx_arena_gb: float = 0.30  # activations of encoders and token2wav at run time
    tts_compute_gb: float = 0.05
    cuda_context_gb: float = 0.35  # per process that opens CUDA (frontend, speech)
    cuda_processes: int = 2
    process_gb: float = 0.06  # Python + numpy + zmq per node process
    processes: int = 6  # supervisor, capture, frontend, speech, harness, recorder (+ memory for Omni)
    headroom_fraction: float = 0.10
    headroom_min_gb: float = 0.5


@dataclass
class FitResult:
    device: str
    variant: str
    llm_type: str
    encoder_precision: str
    kv_type: str
    tts_type: str
    context: int
    parts_gb: dict[str, float]
    total_gb: float
    usable_gb: float
    headroom_gb: float
    free_gb: float  # usable - total - headroom; negative means it does not fit
    fits: bool
    decode_ceiling_tps: float  # bandwidth / bytes read per token, full context
    vision_fps: float
    chunk_s: float  # estimated compute per 1 s chunk (decode + TTS + vision)
    realtime: bool
    reason: str


@dataclass
class DevicePlan:
    device: Device
    variant: str
    context: int
    rows: list[FitResult] = field(default_factory=list)

    @property
    def best(self) -> FitResult | None:
        """Highest precision that fits and keeps up with real time, else highest that fits."""
        fitting = [r for r in self.rows if r.fits]
        return next((r for r in fitting if r.realtime), fitting[0] if fitting else None)


def device(name: str) -> Device:
    if name not in DEVICES:
        raise ValueError(f"unknown device {name!r}; choose from {', '.join(DEVICES)}")
    return DEVICES[name]


def _check(kind: str, value: str, table: Iterable[str]) -> str:
    if value not in table:
        raise ValueError(f"unknown {kind} {value!r}; choose from {', '.join(table)}")
    return value


def padded_context(context: int) -> int:
    """llama.cpp pads the context to a multiple of 256 tokens."""
    if context < 256:
        raise ValueError(f"context {context} is too small; give at least 256 tokens")
    return -(-context // 256) * 256


def vision_fps(dev: Device, share: float = 0.25) -> float:
    """Frames per second such that vision encoding uses at most `share` of each second."""
    encode_s = VISION_ENCODE_S_REF * 67 / dev.ai_tops
    return next((1 / n for n in (1, 2, 3, 4, 5, 10) if encode_s / n <= share), 0.0)


def plan_fit(device_name: str, variant: str, llm_type: str, encoder_precision: str, context: int, *,
             kv_type: str = "f16", tts_type: str = "Q8_0", speech_precision: str = "fp16",
             tokens_per_chunk: int = 8, memory_gib: float | None = None, frames_per_s: float | None = None,
             overheads: Overheads | None = None, shape: Qwen3Shape | None = None) -> FitResult:
    """Whether one configuration fits `device_name`, with every number behind the answer."""
    dev = device(device_name)
    _check("variant", variant, VARIANTS)
    _check("GGUF type", llm_type, LLM_BITS)
    _check("GGUF type for the TTS", tts_type, LLM_BITS)
    _check("encoder precision", encoder_precision, ONNX_BYTES)
    _check("speech decoder precision", speech_precision, ONNX_BYTES)
    _check("KV cache type", kv_type, KV_BITS)
    if tokens_per_chunk < 0:
        raise ValueError(f"tokens per chunk {tokens_per_chunk} is negative; give 0 or more")
    if memory_gib is not None and memory_gib <= 0:
        raise ValueError(f"memory {memory_gib} GiB is not a size; give the device's memory in GiB")
    o, s = overheads or Overheads(), shape or Qwen3Shape()
    ctx = padded_context(context)
    enc_b = ONNX_BYTES[encoder_precision]
    llm_b = LLM_BITS[llm_type] / 8
    tts_b = LLM_BITS[tts_type] / 8
    parts = {
        "llm": s.params().bytes(llm_b),
        "vision": vision_params().bytes(enc_b) if variant == "omni" else 0.0,
        "audio": audio_params().bytes(enc_b),
        "tts": TTS_PARAMS.bytes(tts_b),
        "token2wav": FLOW_PARAMS.bytes(ONNX_BYTES[speech_precision]) + HIFT_BYTES,
        "kv_cache": s.kv_bytes_per_token(kv_type) * ctx + TTS_KV_BYTES_PER_TOKEN_F16 * TTS_CONTEXT,
        # flash attention assumed: the buffer holds ubatch rows of FFN activations and logits
        "compute": o.ubatch * (s.vocab + 4 * s.ffn) * 4 + (o.tts_compute_gb + o.onnx_arena_gb) * GB,
        "cuda": o.cuda_context_gb * o.cuda_processes * GB if dev.gpu else 0.0,
        # a discrete card holds only the models; the processes live in host memory
        "processes": (o.process_gb * (o.processes + (variant == "omni")) * GB) if dev.unified else 0.0,
    }
    total = sum(parts.values())
    usable = (memory_gib if memory_gib is not None else dev.memory_gib) * GIB - dev.os_reserve_gb * GB
    headroom = max(o.headroom_min_gb * GB, o.headroom_fraction * usable)
    free = usable - total - headroom
    # per decoded token: every weight except the token-embedding table, plus the whole KV cache
    per_token = parts["llm"] - s.embedding().bytes(llm_b) + s.kv_bytes_per_token(kv_type) * ctx
    bw = dev.bandwidth_gbs * GB
    ceiling = bw / per_token
    fps = (vision_fps(dev) if frames_per_s is None else frames_per_s) if variant == "omni" else 0.0
    if fps < 0:
        raise ValueError(f"vision frame rate {frames_per_s} is negative; give 0 or more frames per second")
    vision_s = VISION_ENCODE_S_REF * 67 / dev.ai_tops * fps
    tts_s = 25 * TTS_PARAMS.bytes(tts_b) / (bw * DECODE_EFFICIENCY)  # 25 codes per second of speech
    chunk_s = tokens_per_chunk / (ceiling * DECODE_EFFICIENCY) + tts_s + vision_s
    fits = free >= 0
    if fits:
        reason = (f"fits: {total / GB:.2f} GB of {usable / GB:.2f} GB usable, "
                  f"{free / GB:.2f} GB spare beyond {headroom / GB:.2f} GB headroom.")
    else:
        reason = (f"does not fit: needs {total / GB:.2f} GB + {headroom / GB:.2f} GB headroom "
                  f"but only {usable / GB:.2f} GB is usable ({-free / GB:.2f} GB short).")
    return FitResult(dev.name, variant, llm_type, encoder_precision, kv_type, tts_type, ctx,
                     {k: round(v / GB, 3) for k, v in parts.items()}, round(total / GB, 3),
                     round(usable / GB, 3), round(headroom / GB, 3), round(free / GB, 3), fits,
                     round(ceiling, 1), round(fps, 3), round(chunk_s, 3), chunk_s <= REALTIME_SHARE, reason)


def plan(device_name: str, variant: str, context: int, *, llm_types: list[str] | None = None,
         encoder_precisions: list[str] | None = None, **kwargs) -> DevicePlan:
    """Every LLM type x encoder precision, highest precision first; `DevicePlan.best` picks one."""
    dev = device(device_name)
    rows = [plan_fit(device_name, variant, t, e, context, **kwargs)
            for t in (llm_types or list(PLANNED))
            for e in (encoder_precisions or ["fp16", "int8"])]
    return DevicePlan(dev, variant, padded_context(context), rows)


def format_plan(p: DevicePlan) -> str:
    d = p.device
    lines = [f"{d.label} ({d.name}): {d.memory_gib:.1f} GiB, {d.bandwidth_gbs:g} GB/s; "
             f"variant {p.variant}, context {p.context} tokens (GB = 1e9 bytes)", ""]
    head = (f"{'LLM':<7} {'enc':<5} {'KV':<5} {'llm':>6} {'enc+tts':>7} {'kv':>5} {'other':>6} "
            f"{'total':>6} {'usable':>6} {'spare':>6} {'fits':<4} {'tok/s':>6} {'chunk s':>7} {'fps':>5}")
    lines += [head, "-" * len(head)]
    for r in p.rows:
        pg = r.parts_gb
        enc = pg["vision"] + pg["audio"] + pg["tts"] + pg["token2wav"]
        other = pg["compute"] + pg["cuda"] + pg["processes"]
        lines.append(f"{r.llm_type:<7} {r.encoder_precision:<5} {r.kv_type:<5} {pg['llm']:>6.2f} {enc:>7.2f} "
                     f"{pg['kv_cache']:>5.2f} {other:>6.2f} {r.total_gb:>6.2f} {r.usable_gb:>6.2f} "
                     f"{r.free_gb:>6.2f} {'yes' if r.fits else 'no':<4} {r.decode_ceiling_tps:>6.1f} "
                     f"{r.chunk_s:>7.2f} {r.vision_fps:>5.2f}")
    best = p.best
    lines.append("")
    if best is None:
        hint = "--variant audio, " if p.variant == "omni" else ""
        lines.append(f"nothing fits {d.name} for {p.variant} at {p.context} tokens: try {hint}"
                     "--kv q8_0, --tts-type Q4_K_M, --encoder int8 or a shorter --context.")
    else:
        pace = "keeps up with real time" if best.realtime else "is slower than real time"
        lines.append(f"choose {best.llm_type} + {best.encoder_precision} encoders ({best.reason[:-1]}); "
                     f"decode ceiling {best.decode_ceiling_tps} tok/s, {pace} "
                     f"({best.chunk_s:.2f} s of compute per 1 s chunk).")
        parts = ", ".join(f"{k} {v:.2f}" for k, v in best.parts_gb.items() if v)
        lines.append(f"its parts (GB): {parts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="venus-export plan", description=__doc__.split("\n")[0])
    ap.add_argument("--device", required=True, help=", ".join(DEVICES))
    ap.add_argument("--variant", default="omni", help="omni or audio")
    ap.add_argument("--context", type=int, default=4096, help="LLM context in tokens")
    ap.add_argument("--kv", default="f16", help=", ".join(KV_BITS))
    ap.add_argument("--tts-type", default="Q8_0", help="GGUF type of the TTS model")
    ap.add_argument("--llm", default="", help="comma-separated GGUF types to consider (default: "
                    + ",".join(PLANNED) + ")")
    ap.add_argument("--encoder", default="", help="comma-separated encoder precisions (default: fp16,int8)")
    ap.add_argument("--memory-gib", type=float, default=None, help="override the device's memory")
    ap.add_argument("--tokens-per-chunk", type=int, default=8, help="text tokens decoded per chunk")
    ap.add_argument("--fps", type=float, default=None, help="vision frames per second (default: the device's own)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    try:
        p = plan(a.device, a.variant, a.context, kv_type=a.kv, tts_type=a.tts_type,
                 llm_types=[t.strip() for t in a.llm.split(",") if t.strip()] or None,
                 encoder_precisions=[e.strip() for e in a.encoder.split(",") if e.strip()] or None,
                 memory_gib=a.memory_gib, tokens_per_chunk=a.tokens_per_chunk, frames_per_s=a.fps)
    except ValueError as e:
        print(f"venus-export plan: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps({"device": asdict(p.device), "rows": [asdict(r) for r in p.rows],
                          "best": asdict(p.best) if p.best else None}, indent=2))
    else:
        print(format_plan(p))
    return 0 if p.best else 1


if __name__ == "__main__":
    sys.exit(main())
