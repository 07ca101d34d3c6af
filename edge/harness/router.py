"""Dispatch: one choice among registered capabilities, as `{capability, arguments, continuation_of}`.

The model router never sees raw media: only the instruction, the capability
list and recent work. Its output is constrained by a JSON-schema grammar;
arguments are validated against the capability's schema afterwards anyway.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from edge.harness.capability import CapabilityError, Registry


@dataclass
class Choice:
    capability: str
    arguments: dict[str, Any]
    continuation_of: str = ""
    path: str = ""  # how it was chosen: "rules", "model", "scripted", ... (kept in the work item's record)
    why: str = ""


@dataclass
class Recent:
    """A recent work item the router may continue."""

    id: str
    instruction: str
    result: str


class Router(Protocol):
    name: str

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice: ...


class GeneralOnlyRouter:
    """The cheap mode: no model, everything goes to the general capability."""

    name = "general-only"

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        if registry.get("general") is None:
            raise CapabilityError("no general capability is configured, so I cannot handle that")
        return Choice("general", {"request": instruction}, path=self.name, why="everything goes to general")


class ScriptedRouter:
    """Rules in order: the first whose regex matches the instruction wins; `{1}` in arguments is group 1."""

    name = "scripted"

    def __init__(self, rules: list[dict[str, Any]], default: str | None = "general") -> None:
        self.rules = [(re.compile(r["match"], re.IGNORECASE), r["capability"], r.get("arguments", {})) for r in rules]
        self.default = default

    @staticmethod
    def _fill(value: Any, m: re.Match) -> Any:
        if isinstance(value, str):
            return re.sub(r"\{(\d+)\}", lambda g: m.group(int(g.group(1))) or "", value)
        if isinstance(value, dict):
            return {k: ScriptedRouter._fill(v, m) for k, v in value.items()}
        if isinstance(value, list):
            return [ScriptedRouter._fill(v, m) for v in value]
        return value

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        for rx, cap, args in self.rules:
            m = rx.search(instruction)
            if m:
                return Choice(cap, self._fill(args, m), path=self.name, why=f"rule {rx.pattern!r} matched")
        if self.default is None:
            raise CapabilityError("no capability fits that request")
        return Choice(self.default, {"request": instruction}, path=self.name, why="no rule matched")


# Keywords the grammar keeps. Length limits and patterns are left to validation afterwards: a
# `maxLength: 4000` unrolls into more grammar rules than llama.cpp accepts.
_GRAMMAR_KEYS = {"type", "properties", "required", "enum", "const", "items", "anyOf", "oneOf",
                 "additionalProperties"}


def grammar_schema(schema: Any) -> Any:
    """The part of a JSON Schema that constrains decoding; the rest is checked by jsonschema."""
    if isinstance(schema, list):
        return [grammar_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k not in _GRAMMAR_KEYS:
            continue
        if k == "properties":
            out[k] = {name: grammar_schema(sub) for name, sub in v.items()}
        elif k == "additionalProperties":
            out[k] = v if isinstance(v, bool) else grammar_schema(v)
        else:
            out[k] = grammar_schema(v)
    return out


def choice_schema(registry: Registry, recent: list[Recent], per_capability: bool = True) -> dict[str, Any]:
    """The JSON Schema the router's output must satisfy; per capability, its own argument schema."""
    cont = {"type": "string", "enum": [""] + [r.id for r in recent]}
    if per_capability:
        return {"anyOf": [{"type": "object",
                           "properties": {"capability": {"const": c.name}, "arguments": grammar_schema(c.schema),
                                          "continuation_of": cont},
                           "required": ["capability", "arguments", "continuation_of"]} for c in registry]}
    return {"type": "object",
            "properties": {"capability": {"type": "string", "enum": registry.names()},
                           "arguments": {"type": "object"}, "continuation_of": cont},
            "required": ["capability", "arguments", "continuation_of"]}


def router_prompt(instruction: str, registry: Registry, recent: list[Recent]) -> list[dict[str, str]]:
    lines = ["Choose exactly one capability for the request and fill in its arguments. Reply with JSON only.",
             "Capabilities:"]
    for c in registry:
        lines.append(f"- {c.name}: {c.description} {c.instructions}".rstrip()
                     + f" Arguments schema: {json.dumps(c.schema, separators=(',', ':'))}")
    if recent:
        lines.append("Recent work (set continuation_of to its id if the request follows up on it, else \"\"):")
        lines += [f"- {r.id}: {r.instruction[:160]} -> {r.result[:160]}" for r in recent]
    return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": instruction}]


class ModelRouter:
    """A local GGUF model (llama.cpp) makes the choice under a JSON-schema grammar."""

    name = "model"

    def __init__(self, llm: Any, max_tokens: int = 256) -> None:
        self.llm = llm  # a llama_cpp.Llama (or anything with create_chat_completion(grammar=...))
        self.max_tokens = max_tokens
        self._lock = threading.Lock()

    @classmethod
    def from_gguf(cls, path: str, n_ctx: int = 4096, threads: int = 1) -> "ModelRouter":
        from llama_cpp import Llama
        return cls(Llama(path, n_ctx=n_ctx, n_threads=threads, verbose=False))

    def grammar(self, registry: Registry, recent: list[Recent]) -> Any:
        from llama_cpp import LlamaGrammar
        try:
            return LlamaGrammar.from_json_schema(json.dumps(choice_schema(registry, recent)), verbose=False)
        except Exception:  # a tool schema the grammar converter cannot express: constrain the frame only
            return LlamaGrammar.from_json_schema(json.dumps(choice_schema(registry, recent, False)), verbose=False)

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        if not len(registry):
            raise CapabilityError("no capabilities are configured")
        with self._lock:
            out = self.llm.create_chat_completion(messages=router_prompt(instruction, registry, recent),
                                                  grammar=self.grammar(registry, recent),
                                                  max_tokens=self.max_tokens, temperature=0.0)
        text = out["choices"][0]["message"]["content"] or ""
        try:
            data = json.loads(text)
            return Choice(str(data["capability"]), data["arguments"], str(data.get("continuation_of") or ""),
                          path=self.name, why="the model chose under the capabilities' grammar")
        except (json.JSONDecodeError, KeyError, TypeError):
            raise CapabilityError("I could not work out which tool to use for that") from None
