"""The parts a harness section names, typed: each a dataclass with its defaults here and nowhere else.

    "chat":       {"url": URL, "model": NAME, "api_key_env": VAR} | {"gguf": PATH, "n_ctx": N, "threads": N}
                  | "embedded"
    "router":     "general-only" | "embedded" | {"gguf": PATH, "threads": N, "fast": BOOL} | {"fast": ROUTER}
                  | {"scripted": {"rules": [...], "default": CAPABILITY | null}}
    "multimodal": {"transcriber": "embedded" | "module:factory", "describer": ...}
    "memory", "skills", "mcp": see HarnessParts

Each is read with edge/options.py `given` (a name present is its value, an absent one the default here), so a value
of the wrong kind is one sentence naming the setting and where it is ("the harness chat's n_ctx is 'big'; it must be
a whole number."). `check_harness` (edge/harness/settings.py) reads them all when the session starts; the builders
read them again when they build.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

from edge.options import given, typed


@dataclass(frozen=True)
class EndpointChat:
    """An OpenAI-compatible endpoint (llama.cpp server, Ollama, vLLM, a hosted API)."""
    url: str
    model: str = "default"
    api_key_env: str | None = None  # the environment variable that holds the API key


@dataclass(frozen=True)
class GgufChat:
    """A GGUF chat model run here by llama.cpp."""
    gguf: str
    n_ctx: int = 2048
    threads: int = 1


@dataclass(frozen=True)
class GgufRouter:
    """A GGUF model that picks the capability."""
    gguf: str
    threads: int | None = None  # None: the session's
    fast: bool = True  # rules first when one capability clearly matches (edge/harness/fast_route.py)


@dataclass(frozen=True)
class ScriptedRules:
    """Rules in order, then the default (edge/harness/router.py ScriptedRouter)."""
    rules: list = field(default_factory=list)
    default: str | None = "general"  # None: a request no rule matches is declined


@dataclass(frozen=True)
class RulesFirst:
    """Rules first, then any other router."""
    then: RouterSpec


NAMED_ROUTERS = (None, "general-only", "general", "embedded")
ChatSpec = Union[EndpointChat, GgufChat, str, None]  # str: "embedded"
RouterSpec = Union[GgufRouter, RulesFirst, ScriptedRules, str, None]  # str: one of NAMED_ROUTERS


def chat_spec(spec: Any) -> ChatSpec:
    """The `chat` setting read: None when it is not set."""
    if not spec:
        return None
    if spec == "embedded":
        return "embedded"
    if not isinstance(spec, Mapping):
        raise ValueError(f"unknown chat backend {spec!r}; use {{'url': ...}}, {{'gguf': PATH}} or 'embedded'")
    if "url" in spec:
        return EndpointChat(**given(EndpointChat, spec, "the harness chat's"))
    if "gguf" in spec:
        return GgufChat(**given(GgufChat, spec, "the harness chat's"))
    raise ValueError("the chat backend needs either 'url' (an OpenAI-compatible endpoint) or 'gguf' (a model file)")


def router_spec(spec: Any, where: str = "the harness router's") -> RouterSpec:
    """The `router` setting read; `where` names a router inside another ({"fast": ROUTER})."""
    if isinstance(spec, (str, type(None))) and spec in NAMED_ROUTERS:
        return spec
    if isinstance(spec, Mapping) and "gguf" in spec:
        return GgufRouter(**given(GgufRouter, spec, where))
    if isinstance(spec, Mapping) and "fast" in spec:
        return RulesFirst(router_spec(spec["fast"], where))
    if isinstance(spec, Mapping) and "scripted" in spec:
        rules = typed(f"{where} scripted", spec["scripted"], dict)
        return ScriptedRules(**given(ScriptedRules, rules, "the harness scripted router's"))
    raise ValueError(f"unknown router {spec!r}; use 'general-only', 'embedded', {{'gguf': PATH}}, "
                     "{'scripted': {...}} or {'fast': ROUTER}")


@dataclass(frozen=True)
class MultimodalSpec:
    transcriber: str | None = None  # "embedded" or "module:factory"
    describer: str | None = None  # the same, for frames: the text the vision node reads


@dataclass(frozen=True)
class HarnessParts:
    """The capabilities a harness section adds beside its chat and router."""
    multimodal: MultimodalSpec = field(default_factory=MultimodalSpec)
    memory: str | None = None  # the vision node's memory archive folder
    memory_reader: Callable[[], Any] | None = None  # opens an Omni bundle's frame reader (set by the session)
    skills: str | None = None  # a folder of skills
    mcp: list = field(default_factory=list)  # MCP servers (their shape is checked by the harness's schema)

    @classmethod
    def read(cls, cfg: Mapping[str, Any]) -> "HarnessParts":
        present = {k: v for k, v in cfg.items() if v is not None and k != "multimodal"}
        parts = given(cls, present, "the harness's")
        mm = cfg.get("multimodal") or {}
        return cls(**parts, multimodal=MultimodalSpec(**given(MultimodalSpec, mm,
                                                              "the harness multimodal capability's")))
