"""Harness settings, read from the session config's `harness` section; every default is a setting."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from edge.harness.gate import GateSettings


@dataclass
class HarnessSettings:
    max_running: int = 8
    default_timeout_s: float = 30.0
    timeouts: dict[str, float] = field(default_factory=dict)  # per capability
    retries: int = 2  # extra attempts after a transient failure
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    ttl_s: float = 600.0
    progress_after_s: float = 6.0
    progress_text: str = "I'm still checking on that."
    cancel_grace_s: float = 2.0
    max_releases: int = 2  # a reply cut by an interrupt is offered again at most this many times in all
    recent: int = 5  # recent items the router may continue
    retention_s: float = 60.0
    context_s: float = 12.0
    max_frames: int = 48
    select_frames: int = 12
    gate: GateSettings = field(default_factory=GateSettings)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "HarnessSettings":
        d = dict(d or {})
        known = {f.name for f in fields(cls)}
        gate_known = {f.name for f in fields(GateSettings)}
        gate = GateSettings(**{k: v for k, v in dict(d.pop("gate", {}) or {}).items() if k in gate_known})
        unknown = set(d) - known - {"dir", "router", "chat", "skills", "mcp", "multimodal", "general", "memory"}
        if unknown:
            raise ValueError(f"unknown harness setting(s) {', '.join(sorted(unknown))}; known: "
                             f"{', '.join(sorted(known))}")
        return cls(**{k: v for k, v in d.items() if k in known and k != "gate"}, gate=gate)


def load_harness_config(path: str) -> dict[str, Any]:
    """The `harness` section from a JSON file, checked for unknown settings; one sentence when it is wrong."""
    import json
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"the harness config {p} does not exist")
    try:
        cfg = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"the harness config {p} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"the harness config {p} must be a JSON object")
    HarnessSettings.from_dict(cfg)
    return cfg
