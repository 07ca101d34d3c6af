"""Settings of the Venus chunk loop; defaults are the reference's (docs/reference.md), every one can be overridden.

`venus-edge --bundle DIR` reads overrides from `DIR/venus.json` when present and
from the session config key "venus" (a dict); unknown keys are refused. venus.json
is the site's file beside the bundle, not part of it (edge/bundle/check.py): no
setting switches the bundle check off.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


REFERENCE_SYSTEM_PROMPT = "Streaming Omni Conversation."  # the deployed duplex system prompt (docs/reference.md)


@dataclass
class Sampling:
    # The first five are positional in a few places (the TTS code sampler): keep their order.
    temperature: float = 0.7  # 0 or below: greedy
    top_k: int = 20
    top_p: float = 0.8
    repetition_penalty: float = 1.05
    repetition_window: int = 512
    listen_scale: float = 1.0  # multiplies the <|listen|> logit (the reference's listen_prob_scale)
    length_penalty: float = 1.0  # on the <|turn_eos|> logit only: divides it when positive, multiplies it otherwise
    listen_top_k: int | None = None  # listen is chosen outright when fewer than this many tokens outrank it
    seed: int = 0


@dataclass
class VenusSettings:
    n_ctx: int = 8192
    kv_type: str = "f16"  # KV cache type: f16, q8_0 or q4_0
    kv_high: int = 8000  # slide the KV cache when a chunk could pass this many positions
    kv_low: int = 6000  # ... down to this many
    # After a slide, move the cache's cells together when the live cache is at most this big (0: never);
    # see edge/frontend/venus/kv_window.py.
    kv_compact_mb: int = 256
    # The per-chunk cap: every token the model writes in a unit counts (<|speak|> too); the last place is
    # <|chunk_eos|>, appended without sampling once the model has written max_speak_tokens - 1.
    max_speak_tokens: int = 20
    backend_max_sentences: int = 3
    backend_max_chars: int = 600
    system_prompt: str = REFERENCE_SYSTEM_PROMPT  # prefilled once, kept at the start of the cache across slides
    max_slices: int | None = 1  # vision slices per frame (the reference streams 1); None: the checkpoint's
    precision: str | None = None  # LLM GGUF type to load; None: the most precise in the bundle
    encoder_precision: str | None = None  # fp32 / fp16 / int8; None: the most precise in the bundle
    device: str = "auto"  # auto | cpu | cuda
    n_gpu_layers: int | None = None  # None: every layer on the GPU when llama.cpp was built with one, else 0
    threads: int = 1
    flash_attn: bool = False
    single_batch_prefill: bool = True  # protocol tokens as embedding rows: one decode call per chunk
    sampling: Sampling = field(default_factory=Sampling)
    # Test-only: chunk index -> what to force, in order: protocol tokens ("<|speak|>") or plain text.
    # Each item is forced with a +1e4 logit bias on top of the protocol rules (a masked token stays masked).
    # Key "*" (stored as -1): chunks not listed; `forced_after_backend`: the first chunk after a result
    # was prefilled (it takes precedence over "*", not over a listed index).
    forced: dict[int, list[str]] = field(default_factory=dict)
    forced_after_backend: list[str] = field(default_factory=list)
    # Speech (the venus_speech decoder)
    tts_codes_per_token: int = 8  # code cap per spoken text token
    # Code sampling of the reference TTS (temperature 0 gives greedy codes).
    tts_sampling: Sampling = field(default_factory=lambda: Sampling(0.8, 25, 0.85, 1.05, 512))
    flow_steps: int | None = None  # None: the bundle's

    def __post_init__(self) -> None:
        if not 0 < self.kv_low < self.kv_high <= self.n_ctx:
            raise ValueError(f"KV marks must satisfy 0 < low < high <= n_ctx; got low {self.kv_low}, "
                             f"high {self.kv_high}, n_ctx {self.n_ctx}")
        if self.kv_type not in ("f16", "q8_0", "q4_0"):
            raise ValueError(f"kv_type must be f16, q8_0 or q4_0, not {self.kv_type!r}")
        if self.max_speak_tokens < 2:
            raise ValueError("max_speak_tokens must be at least 2 (one written token and <|chunk_eos|>)")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "VenusSettings":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown Venus setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        data = dict(data)
        for key in ("sampling", "tts_sampling"):
            if isinstance(data.get(key), dict):
                s_known = {f.name for f in dataclasses.fields(Sampling)}
                bad = sorted(set(data[key]) - s_known)
                if bad:
                    raise ValueError(f"unknown {key} setting(s) {', '.join(bad)}")
                base = cls().tts_sampling if key == "tts_sampling" else Sampling()
                data[key] = dataclasses.replace(base, **data[key])
        if "forced" in data:
            data["forced"] = {(-1 if k == "*" else int(k)): list(v) for k, v in data["forced"].items()}
        return cls(**data)

    @classmethod
    def load(cls, bundle: Path, config: dict[str, Any]) -> "VenusSettings":
        merged: dict[str, Any] = {}
        path = bundle / "venus.json"
        if path.is_file():  # the site's settings: never bundle content, and nothing in it weakens the bundle check
            try:
                site = json.loads(path.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ValueError(f"{path} is not valid UTF-8 JSON ({e}); fix or remove it.") from None
            except RecursionError:
                raise ValueError(f"{path} is nested too deeply to be Venus settings; fix or remove it.") from None
            if not isinstance(site, dict):
                raise ValueError(f"{path} holds {type(site).__name__}, not a mapping of Venus settings; fix it.")
            unknown = sorted(set(site) - {f.name for f in dataclasses.fields(cls)})
            if unknown:
                raise ValueError(f"{path}: unknown Venus setting(s) {', '.join(unknown)}; remove them.")
            merged.update(site)
        merged.update(config.get("venus") or {})
        if config.get("threads") and "threads" not in (config.get("venus") or {}):
            merged["threads"] = int(config["threads"])
        if config.get("kv_type"):  # --kv-type
            merged["kv_type"] = str(config["kv_type"])
        if config.get("context"):  # --context: the KV marks keep their share of it unless set
            n_ctx = int(config["context"])
            for key in ("kv_high", "kv_low"):
                if key not in merged:
                    merged[key] = getattr(cls, key) * n_ctx // cls.n_ctx
            merged["n_ctx"] = n_ctx
        return cls.from_dict(merged)

    def gpu_layers(self) -> int:
        """Layers to offload: the setting, or all of them where this llama.cpp build offloads and the device allows."""
        if self.n_gpu_layers is not None:
            return self.n_gpu_layers
        if self.device == "cpu":
            return 0
        import llama_cpp

        return 999 if llama_cpp.llama_supports_gpu_offload() else 0
