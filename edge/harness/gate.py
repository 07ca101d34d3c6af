"""Delivery gating: when a ready result may go to the frontend.

Only at an idle listen boundary, never while the user speaks (RMS over a
threshold, held 250 ms) or while playback runs, and only after a silence gap
of max(250, 800 - 0.05 x wait) ms. Ready results are ordered by laxity
(expiry - now - estimated speaking time); one that has waited 8 s goes
first; progress notices rank below results and failures.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MS = 1_000_000


@dataclass
class GateSettings:
    gap_base_ms: float = 800.0
    gap_min_ms: float = 250.0
    gap_slope: float = 0.05  # ms of gap removed per ms waited
    priority_after_ms: float = 8000.0
    chars_per_s: float = 4.0  # speaking-time estimate of the reference
    margin_ms: float = 1000.0  # release only if it can still be spoken this long before expiry
    rms_threshold: float = 500 / 32768  # the reference: RMS 500 on 16-bit samples
    hold_ms: float = 250.0
    frame_ms: float = 20.0
    inflight_hold_ms: float = 10000.0  # wait for a released reply to start before releasing the next; after
    # that it is offered again (or fails once tried max_releases times)
    playback_wait_ms: float = 60000.0  # a reply started but never confirmed played ends after this (reference)
    # 1: the answer asked for since the user last spoke leaves as soon as it is ready (ReturnSide.release_awaited),
    # not at the next gated boundary; 0: it waits for the gate like any other result.
    release_awaited: int = 1


@dataclass
class Candidate:
    work_id: str
    release_id: str
    text: str
    kind: str  # result | failure | progress
    ready_ns: int
    expires_ns: int


class VoiceActivity:
    """Tracks when the user last spoke, from the audio chunks' RMS in short frames."""

    def __init__(self, s: GateSettings) -> None:
        self.s = s
        self.voice_until_ns = -1  # end of the last voiced frame plus the hold

    def add(self, t_start_ns: int, audio: np.ndarray, rate: int = 16000) -> None:
        n = max(1, int(rate * self.s.frame_ms / 1000))
        frames = len(audio) // n
        if frames == 0:
            return
        rms = np.sqrt(np.mean(audio[:frames * n].reshape(frames, n).astype(np.float64) ** 2, axis=1))
        voiced = np.flatnonzero(rms > self.s.rms_threshold)
        if len(voiced):
            end = t_start_ns + int((voiced[-1] + 1) * n * 1e9 / rate)
            self.voice_until_ns = max(self.voice_until_ns, end + int(self.s.hold_ms * MS))

    def speaking(self, now_ns: int) -> bool:
        return self.voice_until_ns > now_ns


class DeliveryGate:
    def __init__(self, s: GateSettings | None = None) -> None:
        self.s = s or GateSettings()
        self.voice = VoiceActivity(self.s)
        self.playback_active = False
        self.playback_end_ns = -1

    def on_playback(self, active: bool, t_ns: int) -> None:
        if self.playback_active and not active:
            self.playback_end_ns = t_ns
        self.playback_active = active

    def speak_ns(self, text: str) -> int:
        return int(len(text) / self.s.chars_per_s * 1e9)

    def laxity_ns(self, c: Candidate, now_ns: int) -> int:
        return c.expires_ns - now_ns - self.speak_ns(c.text)

    def fresh_enough(self, c: Candidate, now_ns: int) -> bool:
        """It can still be spoken in full before it expires."""
        return self.laxity_ns(c, now_ns) > self.s.margin_ms * MS

    def required_gap_ms(self, wait_ms: float) -> float:
        return max(self.s.gap_min_ms, self.s.gap_base_ms - self.s.gap_slope * wait_ms)

    def order(self, cands: list[Candidate], now_ns: int) -> list[Candidate]:
        prio = self.s.priority_after_ms * MS

        def key(c: Candidate) -> tuple:
            waited = now_ns - c.ready_ns
            return (c.kind == "progress", waited < prio, -waited if waited >= prio else self.laxity_ns(c, now_ns))
        return sorted(cands, key=key)

    def silence_ms(self, now_ns: int) -> float:
        last = max(self.voice.voice_until_ns - int(self.s.hold_ms * MS), self.playback_end_ns)
        return (now_ns - last) / MS if last >= 0 else float("inf")

    def why_not(self, now_ns: int, idle_boundary: bool, inflight_since_ns: int | None) -> str | None:
        """None when a release may happen now; else the reason it waits."""
        if not idle_boundary:
            return "not an idle listen boundary"
        if self.voice.speaking(now_ns):
            return "the user is speaking"
        if self.playback_active:
            return "playback is running"
        if inflight_since_ns is not None and now_ns - inflight_since_ns < self.s.inflight_hold_ms * MS:
            return "a released reply has not been spoken yet"
        return None

    def select(self, cands: list[Candidate], now_ns: int, idle_boundary: bool,
               inflight_since_ns: int | None = None) -> Candidate | None:
        if not cands or self.why_not(now_ns, idle_boundary, inflight_since_ns) is not None:
            return None
        top = self.order(cands, now_ns)[0]
        wait_ms = (now_ns - top.ready_ns) / MS
        if self.silence_ms(now_ns) < self.required_gap_ms(wait_ms):
            return None
        return top
