"""A soak of the harness core on a virtual clock: many items, random restarts, a simulated chunk loop.

The simulated frontend behaves like the scripted one: it speaks a released
result at its next listen chunk, plays it for its length, and confirms it;
the user talks in random episodes and sometimes barges in. A restart drops
the harness object without letting it touch the store again (as a killed
process would) and starts a new one on the same store. Counted: items lost
(accepted, never settled, or a failure never told), stale results spoken (speech started after the
result's expiry), and results delivered or played in full more than once.
"""
from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edge import messages as m
from edge.clock import VirtualClock
from edge.harness import states as S
from edge.harness.capability import CapabilityError, Outcome, Registry, RunContext, TransientError
from edge.harness.core import Harness
from edge.harness.router import ScriptedRouter
from edge.harness.settings import HarnessSettings
from edge.harness.store import WorkStore

SEC = 1_000_000_000


class SoakCapability:
    """Takes a random time, then answers, fails for a while, fails for good, or overruns its timeout."""

    name = "soak"
    description = "A capability with random duration and failures."
    instructions = ""
    schema: dict[str, Any] = {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]}
    timeout_s = 20.0

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        rng = random.Random(f"{self.seed}:{ctx.work_id}:{ctx.attempt}")  # deterministic per attempt
        roll = rng.random()
        ctx.sleep(25.0 if roll < 0.03 else rng.uniform(0.1, 12.0))  # 3 % overrun the 20 s timeout
        if roll < 0.13:
            raise TransientError("the service is busy")
        if roll < 0.18:
            raise CapabilityError("the service does not know")
        ttl = rng.choice([None, None, 15.0, 40.0])
        return Outcome(f"Result for {ctx.work_id}: " + "word " * rng.randint(2, 10), ttl)


@dataclass
class SoakReport:
    items: int
    restarts: int
    virtual_s: float
    lost: int
    stale_spoken: int
    double_delivered: int
    spoken_results: int
    states: dict[str, int] = field(default_factory=dict)
    interrupts: int = 0


class Sink(list):
    def __call__(self, msg: m.Message) -> None:
        self.append(msg)


def run_soak(items: int = 1000, seed: int = 1, restart_p: float = 0.01, arrival_p: float = 0.12,
             chunk_s: float = 1.0, workdir: str | Path | None = None, max_chunks: int = 20000) -> SoakReport:
    rng = random.Random(seed)
    root = Path(workdir or tempfile.mkdtemp(prefix="venus-soak-"))
    clock = VirtualClock()
    registry = Registry()
    registry.add(SoakCapability(seed))
    settings = HarnessSettings(ttl_s=120.0, backoff_s=0.5)
    out = Sink()

    def new_harness() -> Harness:
        return Harness(WorkStore(root / "work.sqlite"), registry, ScriptedRouter([], "soak"), clock, out, settings,
                       root / "evidence")

    h = new_harness()
    h.resume()
    pending: list[m.BackendResult] = []
    seen_ids: set[str] = set()  # the frontend's de-duplication of re-sent results
    speaking: m.BackendResult | None = None
    speak_end = 0
    user_left = 0
    accepted = restarts = stale = interrupts = 0
    played_full: dict[str, int] = {}
    n = 0
    quiet = np.zeros(int(16000 * chunk_s), np.float32)
    loud = np.full(int(16000 * chunk_s), 0.2, np.float32)
    for k in range(max_chunks):
        t0 = int(k * chunk_s * SEC)
        user_left = user_left - 1 if user_left > 0 else (rng.randint(1, 4) if rng.random() < 0.04 else 0)
        voiced = user_left > 0
        h.on_audio(t0, loud if voiced else quiet)
        clock.advance_to(t0 + int(chunk_s * SEC))
        h.poll()
        h.settle()
        h.poll()
        now = clock.now_ns()
        for msg in out:
            if isinstance(msg, m.BackendResult) and msg.id not in seen_ids:
                seen_ids.add(msg.id)
                pending.append(msg)
        out.clear()
        idle = True
        if speaking is not None:
            if voiced and rng.random() < 0.3:  # barge-in: the reply is cut
                interrupts += 1
                h.on_playback(False, now)
                h.on_interrupt()
                speaking, idle = None, False
            elif speak_end <= now:
                played_full[speaking.id] = played_full.get(speaking.id, 0) + 1
                h.on_playback(False, speak_end)
                h.on_delivered(speaking.work_id, speaking.id)
                speaking = None
            else:
                idle = False
        if speaking is None and idle and pending:
            speaking = pending.pop(0)
            if now > speaking.expires_ns > 0 and speaking.kind != "progress":
                stale += 1
            h.on_speak(speaking.id)
            h.on_playback(True, now)
            speak_end = now + int(len(speaking.text) / 15.0 * SEC)
            idle = False
        h.boundary(idle=idle)
        if n < items and rng.random() < arrival_p:
            h.accept(f"soak-{n:05d}", f"request {n}", now, k)
            accepted += 1
            n += 1
        if rng.random() < restart_p:  # the process dies: its threads may finish, but never write again
            h.close()
            restarts += 1
            h = new_harness()
            h.resume()
        if n >= items and speaking is None and not pending:
            if all(i.terminal and i.notice_state not in ("pending", "released") for i in h.store.all()) \
                    and not h.progress:
                break
    h.close()
    store = WorkStore(root / "work.sqlite")
    all_items = store.all()
    delivered_events: dict[str, int] = {}
    for wid, state, _, _ in store.events():
        if state == S.DELIVERED:
            delivered_events[wid] = delivered_events.get(wid, 0) + 1
    # Lost: accepted but missing, never settled, or failed without the failure ever being told.
    lost = (accepted - len(all_items)) + sum(1 for i in all_items if not i.terminal
                                             or i.notice_state in ("pending", "released"))
    full_by_work: dict[str, int] = {}
    for rid, c in played_full.items():
        if ":r" in rid:
            wid = rid.rsplit(":r", 1)[0]
            full_by_work[wid] = full_by_work.get(wid, 0) + c
    double = sum(1 for c in delivered_events.values() if c > 1) + sum(1 for c in full_by_work.values() if c > 1)
    counts: dict[str, int] = {}
    for i in all_items:
        key = i.state if i.state != S.FAILED else f"failed({i.reason.split(':')[0]})"
        counts[key] = counts.get(key, 0) + 1
    store.close()
    return SoakReport(accepted, restarts, clock.now_ns() / SEC, lost, stale, double, len(full_by_work), counts,
                      interrupts)
