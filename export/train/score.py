"""Scoring a session run against its plan: what the model did per chunk versus what the session asked for.

Windows are in chunks. A question is answered when the model starts a turn
between the chunk where the question ended and two chunks after the planned
answer. Talk-over counts chunks at whose end the user is still mid-question
(a pause inside a question included) in which the model says words; the
chunk of a barge-in and the next are left out (the model may be yielding).
A barge-in is honoured when the model's turn ends in the chunk of
the barge-in or the next; a backchannel is talked through when the model
neither yields there nor falls silent before its reply is done. Delegation
is read from the delegate spans the runtime reported; a result prefilled
after a chunk must be spoken in a turn starting within two chunks; a frame
answer must name the colour on camera.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from export.train import script
from export.train.session import CHUNK_S, Session, response_chunk


@dataclass
class Decision:
    """What the runtime decided for one chunk."""

    index: int
    control: str = "listen"
    text: str = ""
    turn_end: bool = False
    delegates: list[str] = field(default_factory=list)
    injected: str = ""  # a harness result prefilled after this chunk


@dataclass
class Tally:
    hits: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.hits += int(ok)
        self.total += 1

    def pct(self) -> str:
        return f"{100.0 * self.hits / self.total:.0f}" if self.total else "n/a"


METRICS = ("speak-after-turn", "talk-over", "interruption", "backchannel", "delegate", "local kept",
           "frame-answer", "reply words", "instruction", "result spoken", "result words", "uninvited turns")


@dataclass
class Score:
    tallies: dict[str, Tally] = field(default_factory=lambda: {m: Tally() for m in METRICS})

    def merge(self, other: "Score") -> None:
        for k, t in other.tallies.items():
            self.tallies[k].hits += t.hits
            self.tallies[k].total += t.total

    def line(self, variant: str, precision: str = "") -> str:
        t = self.tallies
        frame = t["frame-answer"].pct() if variant == "omni" else "n/a"
        label = f"{variant} {precision}" if precision else variant
        return (f"trained tiny {label}: speak-after-turn {t['speak-after-turn'].pct()}% "
                f"talk-over {t['talk-over'].pct()}% interruption {t['interruption'].pct()}% "
                f"backchannel {t['backchannel'].pct()}% delegate {t['delegate'].pct()}% "
                f"(local kept {t['local kept'].pct()}%) frame-answer {frame}%")

    def detail(self) -> str:
        return "  ".join(f"{k} {t.hits}/{t.total}" for k, t in self.tallies.items())


def _turns(decisions: list[Decision]) -> tuple[list[bool], list[int]]:
    """Per chunk: whether the model was in a turn when the chunk began; and the chunks where a turn started."""
    before, starts, in_turn = [], [], False
    for d in decisions:
        before.append(in_turn)
        if d.control == "speak":
            if not in_turn:
                starts.append(d.index)
            in_turn = not d.turn_end
    return before, starts


def _turn_text(decisions: list[Decision], start: int) -> tuple[str, list[str], int]:
    """Words, delegate instructions and last chunk of the turn starting at `start`."""
    words, spans, k = [], [], start
    for d in decisions[start:]:
        k = d.index
        if d.control != "speak":
            break
        words.append(d.text)
        spans += d.delegates
        if d.turn_end:
            break
    return "".join(words), spans, k


def score_session(session: Session, decisions: list[Decision]) -> Score:
    sc = Score()
    t = sc.tallies
    n = len(decisions)
    before, starts = _turns(decisions)
    qs = script.by_key(session.variant)
    yielded = lambda k: 0 <= k < n and decisions[k].turn_end and decisions[k].control == "speak"  # noqa: E731

    invited: set[int] = set()
    for d in decisions:  # a prefilled result is spoken in the next turn, starting within two chunks
        if d.injected:
            start = next((s for s in starts if d.index < s <= d.index + 2), None)
            invited.add(start if start is not None else -1)
            t["result spoken"].add(start is not None)
            if start is not None:
                t["result words"].add(" ".join(_turn_text(decisions, start)[0].split()) == d.injected)
    for turn in session.turns:
        if turn.kind == "result":
            continue
        ev = session.events[turn.question]
        q = qs[ev.key]
        k_end = int(ev.end_s // CHUNK_S)
        r = response_chunk(ev.end_s)
        answer = next((s for s in starts if k_end <= s <= r + 2), None)
        invited.add(answer if answer is not None else -1)
        t["speak-after-turn"].add(answer is not None)
        text, spans, _ = _turn_text(decisions, answer) if answer is not None else ("", [], -1)
        if q.delegate:
            t["delegate"].add(bool(spans))
            if spans:
                t["instruction"].add(spans[0].strip() == q.delegate)
        else:
            t["local kept"].add(answer is not None and not spans)
            if answer is not None and turn.interrupted_at < 0:
                want = script.reply_text(q, *(turn.frame or ("", "")))
                t["reply words"].add(" ".join(text.split()) == want)
        if q.frame and turn.frame is not None:
            colour = turn.frame[0]
            words = text.lower().replace(".", " ").split()
            t["frame-answer"].add(colour in words)
        if turn.interrupted_at >= 0:
            onset = min((e for e in session.events if e.kind == "interrupt" and e.start_s >= turn.first),
                        key=lambda e: e.start_s)
            k_on = int(onset.start_s // CHUNK_S)
            if 0 <= k_on < n and before[k_on]:
                t["interruption"].add(yielded(k_on) or yielded(k_on + 1))

    for ev in session.events:
        if ev.kind == "backchannel":
            k_on = int(ev.start_s // CHUNK_S)
            if not (0 <= k_on < n and before[k_on]):
                continue
            turn = next((tr for tr in session.turns if tr.first <= k_on <= tr.last), None)
            silent_yield = any(yielded(k) and not decisions[k].text for k in (k_on, k_on + 1) if k < n)
            unfinished = turn is not None and turn.last > k_on
            goes_on = k_on + 1 < n and decisions[k_on + 1].control == "speak" and bool(decisions[k_on + 1].text)
            t["backchannel"].add(not silent_yield and (not unfinished or goes_on or decisions[k_on].turn_end))

    for s_ in starts:  # turns nobody asked for: after an "okay", in silence, or a second answer
        t["uninvited turns"].add(s_ not in invited)
    grace = {k for e in session.events if e.kind == "interrupt"
             for k in (int(e.start_s // CHUNK_S), int(e.start_s // CHUNK_S) + 1)}  # the model may still be yielding
    for k in range(n):
        mid = any(e.kind in ("question", "interrupt") and e.start_s < (k + 1) * CHUNK_S < e.end_s
                  for e in session.events)
        if mid and k not in grace:
            d = decisions[k]
            t["talk-over"].add(d.control == "speak" and bool(d.text or d.delegates))
    return sc
