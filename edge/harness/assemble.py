"""Assembling a harness from the session config's `harness` section (the kinds of its parts: edge/harness/specs.py).

    "harness": {
      "dir": "state/harness",                      # work-item store and frozen evidence
      "router": "general-only" | "embedded" | {"gguf": PATH} | {"scripted": {"rules": [...], "default": ...}}
                | {"fast": ROUTER},                  # rules first when one capability clearly matches
                                                   # ("embedded" and {"gguf"} have it unless "fast": false)
      "chat": {"url": "http://127.0.0.1:8080/v1", "model": "..."} | {"gguf": PATH} | "embedded",
      "skills": "skills/",
      "mcp": [{"name": "files", "command": "python3", "args": ["server.py"]},
              {"name": "home", "url": "http://127.0.0.1:8123/api/mcp", "token_env": "HA_TOKEN"}],
      "multimodal": {"transcriber": "embedded" | "module:factory",   # either or both
                     "describer": "embedded" | "module:factory"},   # frames: the text the vision node reads
      "memory": "PATH",                            # the vision node's memory archive (JOURNAL.memory);
                                                   # set by itself when the session runs the vision node
      "max_running": 8, "ttl_s": 600, ...           # HarnessSettings
    }
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from edge.clock import Clock
from edge.harness.capability import Registry
from edge.harness.chat import build_chat
from edge.harness.core import Harness
from edge.harness.general import GeneralCapability
from edge.harness.mcp_tools import McpHub
from edge.harness.memory import MemoryCapability
from edge.harness.multimodal import MultimodalCapability, embedded_describer, embedded_transcriber, load_factory
from edge.harness.builtin import builtin_capabilities
from edge.harness.fast_route import ClaimFirst, FastRouter
from edge.harness.router import GeneralOnlyRouter, ModelRouter, Router, ScriptedRouter
from edge.harness.settings import HarnessSettings
from edge.harness.specs import GgufRouter, HarnessParts, RouterSpec, RulesFirst, ScriptedRules, router_spec
from edge.harness.skills import load_skills
from edge.harness.store import WorkStore
from edge.wire import Message

log = logging.getLogger(__name__)


@dataclass
class Built:
    harness: Harness
    problems: list[str] = field(default_factory=list)  # one sentence per part that could not be loaded
    hub: McpHub | None = None

    def close(self) -> None:
        self.harness.close()
        if self.hub is not None:
            self.hub.close()
        self.harness.store.close()


def build_router(spec: Any, threads: int = 1) -> Router:
    """The router the `router` setting names (edge/harness/specs.py); `threads`: the session's."""
    return _router(router_spec(spec), threads)


def _router(spec: RouterSpec, threads: int) -> Router:
    if spec in (None, "general-only", "general"):
        return ClaimFirst(GeneralOnlyRouter())  # the calculator and the clock still take what is theirs
    if spec == "embedded":
        from edge.backends.locate import QWEN_GGUF, assemble
        return FastRouter(ModelRouter.from_gguf(str(assemble(QWEN_GGUF)), threads=threads))
    if isinstance(spec, GgufRouter):
        model = ModelRouter.from_gguf(spec.gguf, threads=threads if spec.threads is None else spec.threads)
        return FastRouter(model) if spec.fast else model
    if isinstance(spec, RulesFirst):  # rules first, then any other router
        return FastRouter(_router(spec.then, threads))
    assert isinstance(spec, ScriptedRules)
    return ScriptedRouter(spec.rules, spec.default)


def with_vision(cfg: dict[str, Any], archive: str | None, reader: Callable[[], Any] | None = None
                ) -> dict[str, Any]:
    """The config of a session whose vision node keeps `archive`: the memory capability reads that archive and
    the multimodal capability describes the frozen frames as the vision node does (a session with no
    multimodal setting gets one that only looks), unless the config says otherwise. `reader` opens an Omni
    bundle's frame reader: the archive then holds vision tokens, which the bundle's model reads itself."""
    if not archive:
        return cfg
    out = dict(cfg)
    out.setdefault("memory", archive)
    if reader is not None:
        out["memory_reader"] = reader
        return out
    mm = out.get("multimodal")
    if mm is None:
        out["multimodal"] = {"describer": "embedded"}
    elif isinstance(mm, dict) and "describer" not in mm:
        out["multimodal"] = {**mm, "describer": "embedded"}
    return out


def build_registry(cfg: dict[str, Any], settings: HarnessSettings, threads: int = 1) -> tuple[Registry, list[str],
                                                                                             McpHub | None]:
    registry, problems = Registry(), []
    parts = HarnessParts.read(cfg)
    chat = build_chat(cfg.get("chat"), threads)
    if chat is not None:
        registry.add(GeneralCapability(chat, settings.timeout_for("general")))
    hear, see = parts.multimodal.transcriber, parts.multimodal.describer
    if hear or see:
        try:
            transcriber = ((embedded_transcriber if hear == "embedded" else load_factory(hear))(threads)
                           if hear else None)
            describer = (embedded_describer if see == "embedded" else load_factory(see))(threads) if see else None
            seconds = settings.timeout_for(MultimodalCapability.name, MultimodalCapability.timeout_s)
            registry.add(MultimodalCapability(transcriber, chat, describer, timeout_s=seconds))
        except Exception as exc:  # noqa: BLE001  (a missing model: the rest of the harness still works)
            problems.append(f"the multimodal capability is off: {exc}")
    if parts.memory:
        seconds = settings.timeout_for(MemoryCapability.name, MemoryCapability.timeout_s)
        registry.add(MemoryCapability(parts.memory, seconds, reader=parts.memory_reader))
    if parts.skills:
        skills, skill_problems = load_skills(parts.skills, settings.default_timeout_s)
        problems += skill_problems
        for sk in skills:
            try:
                registry.add(sk)
            except ValueError as exc:
                problems.append(str(exc))
    for cap in builtin_capabilities():  # a skill or tool of the same name takes the place of a built-in one
        if registry.get(cap.name) is None:
            registry.add(cap)
    hub = None
    if parts.mcp:
        def late(tools: list) -> None:  # an HTTP server that was down at start, or came back with new tools
            for tool in tools:
                if registry.get(tool.name) is None:
                    registry.add(tool)

        hub = McpHub(list(parts.mcp), on_tools=late)
        problems += hub.problems
        for tool in hub.tools():
            try:
                registry.add(tool)
            except ValueError as exc:
                problems.append(str(exc))
    return registry, problems, hub


def build_harness(cfg: dict[str, Any], state_dir: str | Path, clock: Clock, emit: Callable[[Message], None],
                  threads: int = 1, guard: Callable[[Router, Registry], Router] | None = None) -> Built:
    """`guard` wraps the configured router (and may add to the registry): the understanding path, edge/understand/."""
    settings = HarnessSettings.from_dict(cfg)
    root = Path(state_dir)
    store = WorkStore(root / "work.sqlite")  # first: a folder that cannot be written is known before models load
    hub = None
    try:
        registry, problems, hub = build_registry(cfg, settings, threads)
        router = build_router(cfg.get("router"), threads)
        router = guard(router, registry) if guard is not None else router
    except BaseException:
        if hub is not None:
            hub.close()
        store.close()
        raise
    harness = Harness(store, registry, router, clock, emit, settings, root / "evidence")
    for p in problems:
        log.warning("harness: %s", p)
    return Built(harness, problems, hub)
