"""Which model answers the general capability when the harness settings name none (`chat` unset).

- The embedded default: its packaged small LLM (Qwen2.5-Coder-0.5B), which it already runs.
- A Venus bundle: the same packaged small LLM when its packages are installed (answers in seconds on one
  CPU core, in half a gigabyte, without touching the GPU the chunk loop decodes on); otherwise the bundle's
  own LLM, opened by the harness in a context of its own on the CPU, when the machine has the memory for a
  second copy of it (the chunk loop's copy lives on the GPU, or in the same page cache on a CPU); otherwise
  none, and the harness says once why and how to give it one. The README's "General requests with a
  bundle" says why this order.
- Anything else (a scripted or null frontend): none.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from edge.harness.specs import GgufChat
from edge.options import from_settings

log = logging.getLogger(__name__)

GB = 1 << 30
HEADROOM = 1 * GB  # free memory kept beyond a second copy of the bundle's LLM (its KV cache, the OS)


@dataclass(frozen=True)
class SessionModel:
    """The session settings that decide the general model: the frontend, and the threads a second context gets."""
    frontend: str = ""
    threads: int = 1

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "SessionModel":
        return from_settings(cls, config, "the session's")


def small_model_installed() -> bool:
    """Every package of the embedded default's LLM is installed (its parts; assembling waits for first use)."""
    from edge.backends.locate import QWEN_GGUF, ModelMissing

    try:
        for part in QWEN_GGUF.parts:
            part.locate()
    except ModelMissing:
        return False
    return True


def available_memory() -> int:
    """MemAvailable from /proc/meminfo (bytes); 0 where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def bundle_llm(config: dict[str, Any]) -> Path:
    """The LLM GGUF the session's bundle frontend loads (the same precision choice)."""
    from edge.bundle.reader import open_bundle
    from edge.bundle.settings import VenusSettings

    root = Path(SessionModel.from_config(config).frontend.partition(":")[2]).expanduser()
    settings = VenusSettings.load(root, config)
    return open_bundle(root, precision=settings.precision, device="cpu").llm


def general_chat(config: dict[str, Any]) -> tuple[Any, str]:
    """(the `chat` setting to use, one sentence saying which and why); the setting is None when there is none."""
    session = SessionModel.from_config(config)
    frontend = session.frontend
    if frontend == "default":
        return "embedded", "general requests go to the embedded default's packaged small LLM"
    if not frontend.startswith("bundle:"):
        return None, ""
    if small_model_installed():
        return "embedded", "general requests go to the packaged small LLM (Qwen2.5-Coder-0.5B) on the CPU"
    try:
        gguf = bundle_llm(config)
    except (OSError, ValueError) as exc:  # a bundle that cannot be opened: the frontend says why
        return None, f"general requests cannot be answered: the bundle's LLM cannot be opened ({exc})"
    need, free = gguf.stat().st_size + HEADROOM, available_memory()
    if free >= need:
        spec = {"gguf": str(gguf), "n_ctx": GgufChat.n_ctx, "threads": session.threads}
        return spec, f"general requests go to the bundle's own LLM ({gguf.name}) in a second context on the CPU"
    from edge.backends.locate import QWEN_GGUF

    return None, (f"general requests cannot be answered: the packaged small LLM is not installed and a second copy "
                  f"of {gguf.name} needs {need / GB:.1f} GB where {free / GB:.1f} GB are free; install the small "
                  f"one with `{QWEN_GGUF.pip}`, or name a chat endpoint in the harness settings")


def with_general_chat(hcfg: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The harness section with `chat` filled in for this session when it names none (logged once)."""
    if "chat" in hcfg:
        return hcfg
    chat, why = general_chat(config)
    if why:
        (log.info if chat is not None else log.warning)("harness: %s", why)
    return {**hcfg, "chat": chat} if chat is not None else hcfg
