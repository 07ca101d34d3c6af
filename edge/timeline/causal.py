"""Causes before effects in the journal, when nodes also talk to each other directly.

On the direct bus a node may act on a message before the recorder's copy of it has passed the proxy, and
its reply can reach the recorder first. Every message says what its sender had handled (`after`: the newest
seq per sender); a message is journaled once everything it names is, and held until then. A message whose
cause never comes (a recorder restarted after it was sent) is let go after `hold_s`, and counted.
"""
from __future__ import annotations

from edge.wire import Envelope

Item = tuple[int, Envelope]  # (receive stamp, message)


class CausalOrder:
    def __init__(self, hold_s: float = 2.0) -> None:
        self.hold_s = hold_s
        self.written: dict[str, int] = {}  # per sender, the newest seq journaled
        self.held: list[tuple[float, int, Envelope]] = []  # (let go at, receive stamp, message), in arrival order
        self.held_total = 0  # messages that waited for a cause
        self.let_go = 0  # messages journaled without their cause, after hold_s

    def _ready(self, env: Envelope) -> bool:
        return all(self.written.get(src, -1) >= seq for src, seq in env.after.items())

    def _mark(self, env: Envelope) -> None:
        if env.seq > self.written.get(env.src, -1):
            self.written[env.src] = env.seq

    def push(self, t_recv: int, env: Envelope, now: float) -> list[Item]:
        """What may be journaled now, in order, after this message has arrived."""
        if not self.held and self._ready(env):
            self._mark(env)
            return [(t_recv, env)]
        self.held.append((now + self.hold_s, t_recv, env))
        self.held_total += 1
        return self._drain()

    def _drain(self) -> list[Item]:
        out: list[Item] = []
        progress = True
        while progress and self.held:
            progress = False
            waiting = []
            for item in self.held:
                # A sender's later messages never overtake its earlier ones: they name at least as much.
                if self._ready(item[2]) and not any(w[2].src == item[2].src for w in waiting):
                    self._mark(item[2])
                    out.append(item[1:])
                    progress = True
                else:
                    waiting.append(item)
            self.held = waiting
        return out

    def expire(self, now: float) -> list[Item]:
        """Let go of what has waited too long (its cause will not come), then of what that frees."""
        out: list[Item] = []
        while self.held and self.held[0][0] <= now:
            _, t_recv, env = self.held.pop(0)
            self._mark(env)
            self.let_go += 1
            out.append((t_recv, env))
            out += self._drain()
        return out

    def release_all(self) -> list[Item]:
        """Everything still held, in arrival order (the session is ending)."""
        out = [(t_recv, env) for _, t_recv, env in self.held]
        for _, _, env in self.held:
            self._mark(env)
        self.let_go += len(self.held)
        self.held = []
        return out
