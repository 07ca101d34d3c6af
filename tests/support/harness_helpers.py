"""Scripted capabilities and a harness on a virtual clock, for the harness tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from edge import messages as m
from edge.clock import VirtualClock
from edge.harness.capability import CapabilityError, Outcome, Registry, RunContext, TransientError
from edge.harness.core import Harness
from edge.harness.gate import GateSettings
from edge.harness.router import ScriptedRouter
from edge.harness.settings import HarnessSettings
from edge.harness.store import WorkStore
from edge.protocol.spans import DelegateParser, Span

S = 1_000_000_000


def feed_all(parser: DelegateParser, token_ids: list[int], t_ns: int) -> tuple[bytes, list[Span], list[str]]:
    """Ids through `parser.feed` one at a time, as the frontend decodes them: visible bytes, spans, voided notes."""
    visible, spans, voided = bytearray(), [], []
    for tok in token_ids:
        step = parser.feed(tok, t_ns)
        visible += step.visible
        spans += [step.span] if step.span else []
        voided += [step.voided] if step.voided else []
    return bytes(visible), spans, voided


class ScriptedCapability:
    """Takes `duration_s` of session time, then answers `text` (or fails as told)."""

    def __init__(self, name: str = "lookup", text: str = "It is sunny in Paris.", duration_s: float = 1.0,
                 transient_failures: int = 0, error: str | None = None, timeout_s: float = 30.0,
                 ttl_s: float | None = None, schema: dict | None = None) -> None:
        self.name, self.text, self.duration_s = name, text, duration_s
        self.description = f"The {name} test capability."
        self.instructions = ""
        self.schema = schema or {"type": "object", "properties": {"request": {"type": "string"}},
                                 "required": ["request"]}
        self.timeout_s, self.ttl_s = timeout_s, ttl_s
        self.transient_failures, self.error = transient_failures, error
        self.calls: list[dict[str, Any]] = []

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        self.calls.append(arguments)
        ctx.sleep(self.duration_s)
        if self.transient_failures > 0:
            self.transient_failures -= 1
            raise TransientError("the service is busy")
        if self.error:
            raise CapabilityError(self.error)
        return Outcome(self.text, self.ttl_s)


class Emitted(list):
    def __call__(self, msg: m.Message) -> None:
        self.append(msg)

    def states(self, work_id: str) -> list[str]:
        return [e.state for e in self if isinstance(e, m.WorkEvent) and e.work_id == work_id
                and not e.detail.startswith("routed")]

    def results(self) -> list[m.BackendResult]:
        return [e for e in self if isinstance(e, m.BackendResult)]


def make_harness(tmp: Path, caps: list, rules: list[dict] | None = None, clock: VirtualClock | None = None,
                 emit: Emitted | None = None, **settings: Any) -> tuple[Harness, VirtualClock, Emitted]:
    registry = Registry()
    for c in caps:
        registry.add(c)
    clock = clock or VirtualClock()
    emit = emit if emit is not None else Emitted()
    router = ScriptedRouter(rules or [], default=caps[0].name if caps else None)
    settings.setdefault("gate", GateSettings(release_awaited=0))  # the gate's own rules; awaited release apart
    h = Harness(WorkStore(tmp / "work.sqlite"), registry, router, clock, emit, HarnessSettings(**settings),
                tmp / "evidence")
    return h, clock, emit


def advance(h: Harness, clock: VirtualClock, seconds: float, step: float = 0.1) -> None:
    """Move session time forward in steps, letting workers catch up at each step."""
    h.settle()  # tasks started before now begin waiting from now, not from a later step
    target = clock.now_ns() + int(seconds * S)
    while clock.now_ns() < target:
        clock.advance_to(min(target, clock.now_ns() + int(step * S)))
        h.poll()
        h.settle()
        h.poll()


def listen_boundaries(h: Harness, clock: VirtualClock, seconds: float, chunk_s: float = 1.0) -> list:
    """Idle listen boundaries every chunk for `seconds`; returns what was released."""
    out = []
    for _ in range(int(seconds / chunk_s)):
        advance(h, clock, chunk_s)
        c = h.boundary(idle=True)
        if c is not None:
            out.append(c)
    return out
