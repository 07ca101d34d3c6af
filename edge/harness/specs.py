"""The parts a harness section names, typed: each a dataclass with its defaults here and nowhere else.

    "chat":       {"url": URL, "model": NAME, "api_key_env": VAR} | {"gguf": PATH, "n_ctx": N, "threads": N}
                  | "embedded"
    "router":     "general-only" | "embedded" | {"gguf": PATH, "threads": N, "fast": BOOL} | {"fast": ROUTER}
                  | {"scripted": {"rules": [...], "default": CAPABILITY | null}}
    "multimodal": {"transcriber": "embedded" | "module:factory", "describer": ...}
    "mcp":        [{"name": NAME, "command": CMD, "args": [...], "env": {...}, "cwd": DIR, "timeout_s": S}
                   | {"name": NAME, "url": URL, "token_env": VAR | "token_file": PATH, "transport": "sse",
                      "timeout_s": S, "retry_s": S}, ...]           McpStdio | McpHttp
    "memory", "skills": see HarnessParts

Each is read with edge/options.py `given` (a name present is its value, an absent one the default here), so a value
of the wrong kind is one sentence naming the setting and where it is ("the harness chat's n_ctx is 'big'; it must be
a whole number."), and a name the part has no field for is refused (`known_only`: "the harness chat has no setting
'modle'; known: api_key_env, model, url."). `check_harness` (edge/harness/settings.py) reads them all when the
session starts; the builders read them again when they build.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

from edge.options import SettingsError, given, known_only, typed


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
    """Rules first, then any other router: `{"fast": ROUTER}` (its one setting, named `fast` in the file)."""
    then: RouterSpec


@dataclass(frozen=True)
class _Fast:  # the names of a {"fast": ROUTER} mapping
    fast: Any


@dataclass(frozen=True)
class _Scripted:  # the names of a {"scripted": {...}} mapping
    scripted: dict


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
        return _read(EndpointChat, spec, "the harness chat")
    if "gguf" in spec:
        return _read(GgufChat, spec, "the harness chat")
    raise ValueError("the chat backend needs either 'url' (an OpenAI-compatible endpoint) or 'gguf' (a model file)")


def router_spec(spec: Any) -> RouterSpec:
    """The `router` setting read."""
    owner = "the harness router"
    if isinstance(spec, (str, type(None))) and spec in NAMED_ROUTERS:
        return spec
    if isinstance(spec, Mapping) and "gguf" in spec:
        return _read(GgufRouter, spec, owner)
    if isinstance(spec, Mapping) and "fast" in spec:
        known_only(_Fast, spec, owner)
        return RulesFirst(router_spec(spec["fast"]))
    if isinstance(spec, Mapping) and "scripted" in spec:
        known_only(_Scripted, spec, owner)
        rules = typed(f"{owner}'s scripted", spec["scripted"], dict)
        return _read(ScriptedRules, rules, "the harness scripted router")
    raise ValueError(f"unknown router {spec!r}; use 'general-only', 'embedded', {{'gguf': PATH}}, "
                     "{'scripted': {...}} or {'fast': ROUTER}")


@dataclass(frozen=True)
class MultimodalSpec:
    transcriber: str | None = None  # "embedded" or "module:factory"
    describer: str | None = None  # the same, for frames: the text the vision node reads


DAY_S = 86400.0  # a wait past a day is a typo


@dataclass(frozen=True, kw_only=True)
class McpServerSpec:
    """An MCP server entry: every tool of the server becomes a capability named NAME.TOOL."""
    name: str
    timeout_s: float = 30.0  # a tool call's limit, and so its capability's (unless `timeouts` names the tool)

    def __post_init__(self) -> None:
        for key in ("timeout_s", "retry_s"):
            seconds = getattr(self, key, None)
            if seconds is not None and not 0 < seconds <= DAY_S:
                raise SettingsError(f"the MCP server {self.name}'s {key} is {seconds:g}; it must be more than 0 and "
                                    f"at most {DAY_S:.0f}.")


@dataclass(frozen=True, kw_only=True)
class McpStdio(McpServerSpec):
    """A server run here as a command, spoken to over its standard input and output."""
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None  # None: the MCP SDK's safe default environment
    cwd: str | None = None


@dataclass(frozen=True, kw_only=True)
class McpHttp(McpServerSpec):
    """A server reached at a URL (streamable HTTP, or SSE where a server still uses it; edge/harness/mcp_http.py)."""
    url: str
    transport: str = "streamable-http"  # or "sse"
    token_env: str | None = None  # the environment variable that holds the bearer token
    token_file: str | None = None  # or a file only this user can read that holds it
    retry_s: float = 10.0  # how often a server that is down or dropped the session is tried again


McpSpec = Union[McpStdio, McpHttp]
TRANSPORTS = ("streamable-http", "sse")


def mcp_specs(entries: Any) -> list[McpSpec]:
    """The `mcp` setting read: one spec per server, each named, of one kind, with no name it has no field for."""
    specs = [mcp_spec(entry, i) for i, entry in enumerate(typed("the harness setting mcp", entries, list))]
    names = [s.name for s in specs]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise SettingsError(f"two MCP servers are named {twice}; give each its own name (its tools are called "
                            f"{twice}.TOOL).")
    return specs


def mcp_spec(entry: Any, index: int = 0) -> McpSpec:
    """One MCP server entry read; `index` (from 0) names an entry that has no name of its own."""
    entry = typed(f"the harness's MCP server entry {index + 1}", entry, dict)
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        got = "no name" if name is None else f"the name {name!r}"
        raise SettingsError(f"the harness's MCP server entry {index + 1} has {got}; give each server a name as text "
                            "(its tools are called NAME.TOOL).")
    owner = f"the MCP server {name}"
    if "token" in entry:
        raise SettingsError(f"{owner} has its token written in the settings; put it in an environment variable "
                            "(\"token_env\") or a file (\"token_file\") instead.")
    if "url" in entry and "command" in entry:
        raise SettingsError(f"{owner} has both 'command' and 'url'; give 'command' to run it here or 'url' to "
                            "reach it.")
    kind: type = McpHttp if "url" in entry else McpStdio if "command" in entry else _McpAny
    known_only(kind, entry, owner)
    if kind is _McpAny:
        raise SettingsError(f"{owner} needs 'command' (a program run here) or 'url' (a server reached over HTTP).")
    spec = kind(**given(kind, entry, f"{owner}'s"))
    if isinstance(spec, McpHttp) and not spec.url.strip():
        raise SettingsError(f"{owner}'s url is empty; give the address its tools are reached at.")
    if isinstance(spec, McpStdio) and not spec.command.strip():
        raise SettingsError(f"{owner}'s command is empty; give the program to run.")
    if isinstance(spec, McpStdio):
        for arg in spec.args:
            if not isinstance(arg, str):
                raise SettingsError(f"{owner}'s args holds {arg!r}; each argument must be text.")
        for var, value in (spec.env or {}).items():
            typed(f"{owner}'s env {var}", value, str)
    elif spec.transport not in TRANSPORTS:
        raise SettingsError(f"{owner}'s transport is {spec.transport!r}; it must be "
                            f"{' or '.join(repr(t) for t in TRANSPORTS)}.")
    elif spec.token_env and spec.token_file:
        raise SettingsError(f"{owner} names its token twice (token_env and token_file); give one.")
    return spec


@dataclass(frozen=True, kw_only=True)
class _McpAny(McpStdio, McpHttp):  # the names either kind has: an entry with neither 'command' nor 'url'
    pass


@dataclass(frozen=True)
class HarnessParts:
    """The capabilities a harness section adds beside its chat and router."""
    multimodal: MultimodalSpec = field(default_factory=MultimodalSpec)
    memory: str | None = None  # the vision node's memory archive folder
    memory_reader: Callable[[], Any] | None = None  # opens an Omni bundle's frame reader (set by the session)
    skills: str | None = None  # a folder of skills
    mcp: list[McpSpec] = field(default_factory=list)  # MCP servers, each read by `mcp_specs`

    @classmethod
    def read(cls, cfg: Mapping[str, Any]) -> "HarnessParts":
        present = {k: v for k, v in cfg.items() if v is not None and k not in ("multimodal", "mcp")}
        parts = given(cls, present, "the harness's")
        mm = _read(MultimodalSpec, cfg.get("multimodal") or {}, "the harness multimodal capability")
        return cls(**parts, multimodal=mm, mcp=mcp_specs(cfg.get("mcp") or []))


def _read(cls: type, section: Mapping[str, Any], owner: str) -> Any:
    """`cls` filled from `section`: a name it has no field for refused, each value of its kind."""
    if isinstance(section, Mapping):
        known_only(cls, section, owner)
    return cls(**given(cls, section, f"{owner}'s"))
