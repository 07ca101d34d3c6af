"""Frontends by name: `scripted:FILE`, `null`, `default` (embedded small models), `bundle:DIR` (Venus)."""
from __future__ import annotations

from edge.plugins import build_plugin
from edge.frontend.base import Frontend

# Heavy frontends are imported only when chosen; each module exposes `build(config) -> Frontend`.
BUILDERS = {
    "default": "edge.frontend.default.build",
    "bundle": "edge.frontend.venus.frontend",
}


def build_frontend(spec: str, config: dict) -> Frontend:
    kind, _, arg = spec.partition(":")
    if kind == "scripted":
        from edge.frontend.scripted import ScriptedFrontend
        if not arg:
            raise ValueError("the scripted frontend needs a script file: --frontend scripted:FILE")
        return ScriptedFrontend.from_file(arg)
    if kind == "null":
        from edge.frontend.scripted import NullFrontend
        return NullFrontend()
    if kind in BUILDERS:
        return build_plugin(BUILDERS[kind], f"{kind} frontend", {**config, "frontend_arg": arg})
    raise ValueError(f"unknown frontend {spec!r}; use scripted:FILE, null, default or bundle:DIR")
