"""Harness settings, read from the session config's `harness` section; every default is a setting."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import jsonschema

from edge.harness.gate import GateSettings
from edge.harness.specs import HarnessParts, chat_spec, router_spec

_AT_LEAST_ONE = {"max_running", "max_releases", "max_frames", "select_frames"}
# Sections read by the harness's builders; their inner shape is checked there.
_SECTIONS: dict[str, dict] = {
    "dir": {"type": "string", "minLength": 1},
    "router": {"type": ["string", "object"]},
    "chat": {"type": ["string", "object", "null"]},
    "skills": {"type": ["string", "null"], "description": "a folder of skills"},
    # each MCP server entry: edge/harness/specs.py McpStdio | McpHttp, read by check_harness
    "mcp": {"type": "array", "items": {"type": "object"}},
    "multimodal": {"type": ["object", "null"]},
    "general": {},
    "memory": {"type": "string", "minLength": 1, "description": "the vision node's memory archive folder"},
}


MOST = 10**9  # any count or number of seconds past this is a typo, and 10**20 overflows the journal's integers


def _number_schema(name: str, kind: str) -> dict:
    if kind == "int":
        return {"type": "integer", "minimum": 1 if name in _AT_LEAST_ONE else 0, "maximum": MOST}
    return {"type": "number", "minimum": 0, "maximum": MOST}


def _schema() -> dict:
    """The harness section as JSON Schema, built from the settings dataclasses so the two never drift."""
    props: dict[str, dict] = dict(_SECTIONS)
    for f in fields(HarnessSettings):
        if f.type in ("int", "float"):
            props[f.name] = _number_schema(f.name, f.type)
        elif f.type == "str":
            props[f.name] = {"type": "string"}
    props["timeouts"] = {"type": "object", "additionalProperties": {"type": "number", "exclusiveMinimum": 0,
                                                                   "maximum": MOST},
                         "description": "seconds per capability, e.g. {\"general\": 20}"}
    props["stale_after_turn"] = {"type": "array", "items": {"type": "string"},
                                 "description": "capabilities whose unfinished work a new user question drops"}
    props["gate"] = {"type": "object", "additionalProperties": False,
                     "properties": {f.name: _number_schema(f.name, f.type) for f in fields(GateSettings)}}
    return {"type": "object", "properties": props}


def _sentence(err: jsonschema.ValidationError) -> str:
    """One sentence for the first thing wrong: which setting, what it holds, what it must be."""
    where = ".".join(str(p) for p in err.absolute_path) or "the harness section"
    got = json_repr(err.instance)
    if err.validator == "type":
        want = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        kinds = {"integer": "a whole number", "number": "a number", "string": "a string", "object": "a JSON object",
                 "array": "a list", "null": "null"}
        what = " or ".join(kinds.get(w, w) for w in want)
        hint = f" ({err.schema['description']})" if err.schema.get("description") else ""
        return f"the harness setting {where} is {got}; it must be {what}{hint}"
    if err.validator in ("minimum", "exclusiveMinimum", "maximum"):
        rel = {"minimum": "at least", "exclusiveMinimum": "more than", "maximum": "at most"}[err.validator]
        return f"the harness setting {where} is {got}; it must be {rel} {err.validator_value}"
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        return (f"unknown harness setting(s) {', '.join(f'{where}.{k}' for k in extra)}; known: "
                f"{', '.join(sorted(err.schema.get('properties', {})))}")
    return f"the harness setting {where} is wrong: {err.message}"


def json_repr(value: Any) -> str:
    import json
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
    # Capabilities whose unfinished work a new user question drops: a late open-ended answer to an earlier
    # (often misheard) question would be spoken in the new question's place. Tool lookups are still wanted.
    stale_after_turn: list[str] = field(default_factory=lambda: ["general"])
    gate: GateSettings = field(default_factory=GateSettings)

    def timeout_for(self, capability: str, declared: float | None = None) -> float:
        """The seconds `capability` may run, read here and only here: the `timeouts` setting for it, else the
        default it declares (a tool's server's timeout_s, a skill's manifest, `timeout_s` on its class), else
        `default_timeout_s`."""
        return float(self.timeouts.get(capability, self.default_timeout_s if declared is None else declared))

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "HarnessSettings":
        if d is not None and not isinstance(d, dict):
            raise ValueError(f"the harness settings must be a JSON object, not {json_repr(d)}")
        d = dict(d or {})
        known = {f.name for f in fields(cls)}
        gate_known = {f.name for f in fields(GateSettings)}
        gate_in = d.pop("gate", None) or {}
        gate = GateSettings(**{k: v for k, v in gate_in.items() if k in gate_known}) if isinstance(gate_in, dict) \
            else GateSettings()
        unknown = set(d) - known - {"dir", "router", "chat", "skills", "mcp", "multimodal", "general", "memory",
                                     "memory_reader"}
        if unknown:
            raise ValueError(f"unknown harness setting(s) {', '.join(sorted(unknown))}; known: "
                             f"{', '.join(sorted(known))}")
        err = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors({**d, "gate": gate_in}))
        if err is not None:
            raise ValueError(_sentence(err))
        return cls(**{k: v for k, v in d.items() if k in known and k != "gate"}, gate=gate)


def load_harness_config(path: str) -> dict[str, Any]:
    """The `harness` section from a JSON file, checked for unknown settings; one sentence when it is wrong."""
    import json
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"the harness config {p} does not exist")
    try:
        cfg = json.loads(p.read_bytes().decode("utf-8"), parse_constant=_no_constant)
    except OSError as exc:
        raise ValueError(f"the harness config {p} cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"the harness config {p} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"the harness config {p} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except _NotJson as exc:
        raise ValueError(f"the harness config {p} holds {exc}, which is not a JSON number; give a finite number") \
            from None
    if not isinstance(cfg, dict):
        raise ValueError(f"the harness config {p} must be a JSON object")
    check_harness(cfg)
    return cfg


def check_harness(cfg: dict[str, Any] | None) -> HarnessSettings:
    """The harness section read once when the session starts, nothing loaded: its settings, the router's rules,
    and the kinds of what its chat, router and other parts name (edge/harness/specs.py); one sentence (a
    ValueError) for the first thing wrong."""
    settings = HarnessSettings.from_dict(cfg)
    cfg = cfg or {}
    _check_rules(cfg.get("router"))
    chat_spec(cfg.get("chat"))
    router_spec(cfg.get("router"))
    HarnessParts.read(cfg)
    return settings


class _NotJson(ValueError):
    pass


def _no_constant(name: str) -> float:
    raise _NotJson(name)  # NaN, Infinity: Python's json reads them, every comparison with a bound passes


def _check_rules(router: Any) -> None:
    """A scripted router's patterns compiled here, so a bad one is a sentence before any node starts."""
    import re

    scripted = router.get("scripted") if isinstance(router, dict) else None
    rules = scripted.get("rules", []) if isinstance(scripted, dict) else []
    for i, rule in enumerate(rules if isinstance(rules, list) else []):
        pattern = rule.get("match") if isinstance(rule, dict) else None
        if not isinstance(pattern, str):
            raise ValueError(f"the harness setting router.scripted.rules.{i}.match must be a regular expression "
                             f"as a string, not {json_repr(pattern)}")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"the harness setting router.scripted.rules.{i}.match {json_repr(pattern)} is not a "
                             f"regular expression ({exc})") from None


_VALIDATOR = jsonschema.Draft202012Validator(_schema())
