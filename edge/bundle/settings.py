"""Settings of the Venus chunk loop; defaults are the reference's (docs/reference.md), every one can be overridden.

`venus-edge --bundle DIR` reads overrides from `DIR/venus.json` when present and
from the session config key "venus" (a dict); unknown keys are refused. venus.json
is the site's file beside the bundle, not part of it (edge/bundle/check.py): no
setting switches the bundle check off. A value of the wrong kind is one sentence that
names the setting and where it is (edge/options.py).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from edge.backends.sampling import Sampling
from edge.formats import KV_TYPES, listed
from edge.options import SettingsError, from_settings, given, typed


REFERENCE_SYSTEM_PROMPT = "Streaming Omni Conversation."  # the deployed duplex system prompt (docs/reference.md)


@dataclass(frozen=True)
class SessionKeys:
    """The session settings a bundle takes besides its own `venus` mapping; absent, None, empty or 0: not set."""
    venus: dict | None = None  # overrides of any VenusSettings field, over venus.json's
    threads: int | None = None  # --threads, unless `venus` sets them
    kv_type: str | None = None  # --kv-type
    context: int | None = None  # --context: the KV marks keep their share of it unless set


def _forced(forced: dict, where: str) -> dict[int, list[str]]:
    """Chunk index (or "*", stored as -1) -> what to force; one sentence for a key or value of the wrong kind."""
    out = {}
    for k, v in forced.items():
        try:
            index = -1 if k == "*" else int(k)
        except (TypeError, ValueError):
            raise SettingsError(f"{where} has the key {k!r}; it must be a chunk index or \"*\".") from None
        out[index] = list(typed(f"{where} {k}", list(v) if isinstance(v, tuple) else v, list))
    return out


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
    # Codes drawn per speaking chunk; the last draw is dropped, so 25 (1 s) come out, fewer only where a turn
    # starts or ends (the reference's budget, docs/conformance.md).
    tts_chunk_draws: int = 26
    # Code sampling of the reference TTS: temperature, then the repetition penalty over the chunk's last 16
    # codes (top_k and top_p are not used; temperature 0 gives greedy codes).
    tts_sampling: Sampling = field(default_factory=lambda: Sampling(0.8, 0, 1.0, 1.05, 16))
    flow_steps: int | None = None  # None: the bundle's

    def __post_init__(self) -> None:
        if not 0 < self.kv_low < self.kv_high <= self.n_ctx:
            raise ValueError(f"KV marks must satisfy 0 < low < high <= n_ctx; got low {self.kv_low}, "
                             f"high {self.kv_high}, n_ctx {self.n_ctx}")
        if self.kv_type not in KV_TYPES:
            raise ValueError(f"kv_type must be {listed(KV_TYPES)}, not {self.kv_type!r}")
        if self.tts_chunk_draws < 1:
            raise ValueError("tts_chunk_draws must be at least 1")
        if self.max_speak_tokens < 2:
            raise ValueError("max_speak_tokens must be at least 2 (one written token and <|chunk_eos|>)")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "the Venus setting") -> "VenusSettings":
        """The settings `data` names over the defaults; an unknown name, or a value of the wrong kind, is one
        sentence that begins with `where` ("the Venus setting n_ctx is 'big'; it must be a whole number.")."""
        return cls(**cls._checked(data, where))

    @classmethod
    def _checked(cls, data: Mapping[str, Any], where: str) -> dict[str, Any]:
        """`data` as keyword arguments: each name known, each value of its field's kind (edge/options.py)."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown Venus setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        data = dict(data)
        for key in ("sampling", "tts_sampling"):
            if key in data and not isinstance(data[key], Sampling):
                part = typed(f"{where} {key}", data[key], dict)
                bad = sorted(set(part) - {f.name for f in dataclasses.fields(Sampling)})
                if bad:
                    raise ValueError(f"unknown {key} setting(s) {', '.join(bad)}")
                base = cls().tts_sampling if key == "tts_sampling" else Sampling()
                data[key] = dataclasses.replace(base, **given(Sampling, part, f"{where} {key}"))
        if "forced" in data:
            data["forced"] = _forced(typed(f"{where} forced", data["forced"], dict), f"{where} forced")
        return given(cls, data, where)

    @classmethod
    def load(cls, bundle: Path, config: Mapping[str, Any]) -> "VenusSettings":
        """venus.json beside the bundle, then the session's `venus` mapping, then the session's --threads (unless
        `venus` sets them), --kv-type and --context; a wrong kind is one sentence that says where it is."""
        merged: dict[str, Any] = {}
        session = from_settings(SessionKeys, config, "the session's")
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
            cls._checked(site, f"{path}: the Venus setting")
            merged.update(site)
        venus = session.venus or {}
        cls._checked(venus, "the session's Venus setting")
        merged.update(venus)
        if session.threads and "threads" not in venus:
            merged["threads"] = session.threads
        if session.kv_type:  # --kv-type
            merged["kv_type"] = session.kv_type
        if session.context:  # --context: the KV marks keep their share of it unless set
            n_ctx = session.context
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
