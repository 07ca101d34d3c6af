"""Scoring a duplex session the way Full-Duplex-Bench v1.5 does: from time-aligned audio, by VAD segments.

Speech segments come from Silero VAD (32 ms frames), merged across short
gaps: the user's up to 0.6 s, the assistant's up to 0.5 s. For an overlap
event [u0, u1] (the user's merged segment there):

- the assistant was *talking* if one of its segments spans the onset u0;
- it *stopped* if that segment ends before u1 + `continue_s`; stop latency
  is its end minus u0;
- it *responded* if it stopped and a new segment starts after the stop,
  within `respond_s` of u1; response latency is that onset minus u1.

Interruption response rate = responded / interruption cases; continuation
rate of a category = cases not stopped / cases of that category.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np

from edge.audio_format import RATE
from kernels.resample import resample

USER_GAP_S, ASSISTANT_GAP_S = 0.6, 0.5


@dataclass
class Segment:
    start: float
    end: float


def speech_frames(audio: np.ndarray, rate: int, threshold: float = 0.5) -> np.ndarray:
    """Silero VAD speech/no-speech per 32 ms frame of the whole signal."""
    from edge.detect.vad import FRAME, SileroVad

    x = resample(np.asarray(audio, np.float32), rate, RATE)
    vad = SileroVad(1)
    return np.array([vad.frame_prob(x[i:i + FRAME]) >= threshold for i in range(0, len(x) - FRAME + 1, FRAME)])


def frames_to_segments(voiced: np.ndarray, frame_s: float = 512 / RATE) -> list[Segment]:
    segs, start = [], None
    for i, v in enumerate(list(voiced) + [False]):
        if v and start is None:
            start = i
        elif not v and start is not None:
            segs.append(Segment(start * frame_s, i * frame_s))
            start = None
    return segs


def merge(segs: list[Segment], gap_s: float, min_s: float = 0.0) -> list[Segment]:
    """Join segments separated by at most `gap_s`; drop what is shorter than `min_s` afterwards."""
    out: list[Segment] = []
    for s in sorted(segs, key=lambda s: s.start):
        if out and s.start - out[-1].end <= gap_s:
            out[-1].end = max(out[-1].end, s.end)
        else:
            out.append(Segment(s.start, s.end))
    return [s for s in out if s.end - s.start >= min_s]


def segments(audio: np.ndarray, rate: int, gap_s: float, min_s: float = 0.1) -> list[Segment]:
    return merge(frames_to_segments(speech_frames(audio, rate)), gap_s, min_s)


@dataclass
class CaseScore:
    category: str
    talking: bool  # the assistant was speaking when the event began
    stopped: bool = False
    responded: bool = False
    stop_latency_s: float | None = None
    response_latency_s: float | None = None
    event: Segment | None = None
    self_interruptions: int = 0


def score_case(category: str, assistant: list[Segment], event: Segment, continue_s: float = 1.0,
               respond_s: float = 6.0) -> CaseScore:
    talking = [s for s in assistant if s.start <= event.start < s.end]
    if not talking:
        return CaseScore(category, False, event=event)
    seg = talking[0]
    stopped = seg.end < event.end + continue_s
    score = CaseScore(category, True, stopped, event=event)
    if stopped:
        score.stop_latency_s = max(0.0, seg.end - event.start)
        later = [s for s in assistant if s.start >= seg.end and s.start <= event.end + respond_s]
        if later:
            score.responded = True
            score.response_latency_s = max(0.0, later[0].start - event.end)
    return score


def event_segment(user: list[Segment], start_s: float, end_s: float) -> Segment:
    """The user's merged segment that holds the scheduled event (the schedule itself if VAD missed it)."""
    hits = [s for s in user if s.end > start_s and s.start < end_s]
    if not hits:
        return Segment(start_s, end_s)
    return Segment(min(s.start for s in hits), max(s.end for s in hits))


@dataclass
class Summary:
    counts: dict[str, int] = field(default_factory=dict)
    talking: dict[str, int] = field(default_factory=dict)
    interruption_response: float = 0.0  # share of interruption cases answered
    continuation: dict[str, float] = field(default_factory=dict)  # per other category
    stop_ms: float | None = None  # median over interruptions that stopped
    response_ms: float | None = None  # median over interruptions answered
    self_interruptions: int = 0


def summarize(scores: list[CaseScore]) -> Summary:
    """Rates over every case of a category (a case where the assistant was not talking counts as a miss)."""
    out = Summary()
    for cat in sorted({s.category for s in scores}):
        group = [s for s in scores if s.category == cat]
        out.counts[cat] = len(group)
        out.talking[cat] = sum(s.talking for s in group)
        if cat == "interruption":
            out.interruption_response = sum(s.responded for s in group) / len(group)
            stops = [s.stop_latency_s for s in group if s.stop_latency_s is not None]
            resp = [s.response_latency_s for s in group if s.response_latency_s is not None]
            out.stop_ms = statistics.median(stops) * 1000 if stops else None
            out.response_ms = statistics.median(resp) * 1000 if resp else None
        else:
            out.continuation[cat] = sum(s.talking and not s.stopped for s in group) / len(group)
    out.self_interruptions = sum(s.self_interruptions for s in scores)
    return out
