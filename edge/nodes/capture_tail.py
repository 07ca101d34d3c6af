"""After a file's last chunk: capture listens on to a quiet room while delegated work is still owed an answer.

A question at the very end of a file is delegated at the file's last chunk
boundary; its answer comes back later and is spoken at a boundary after
that; and a reply that opens a span says "Okay." and decodes the span over
the next chunks. So a file session does not end at the file's end while a
delegated request is open or the assistant's reply is unfinished: capture
cuts silent chunks on (the frontend steps them, the harness releases the
result at one, the voice says it) until the reply's turn has ended and every
request seen is delivered (its speech played), cancelled, or failed with
nothing left to say (the ring of a timer it set is owed too), or until
`answer_wait_s` of session time has passed; then the end-of-input marker names in one sentence what was left
unanswered. An answer the frontend has begun to say by then is not: the
voice plays out all it was given after the input ends. A live microphone
never ends, so none of this applies to it.

On the virtual clock the silent chunks go as fast as the graph allows once
every open answer is ready (releasing and speaking it depend on session time
alone), but no faster than the real clock while some work still runs: that
work takes wall time, and the wait is meant to give it `answer_wait_s` of it.
A timer waiting to ring waits on session time alone, so it does not slow them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from edge import messages as m
from edge.messages import work_states as W

GO, WAIT, END = "go", "wait", "end"
DECISION_WAIT_S = 60.0  # how long the file's last decisions may take before the wait goes on without them
NOT_ACCEPTED = ""  # a request's state until the harness accepts it (not a work state)
DONE = frozenset({W.DELIVERED, W.CANCELLED})
WORKING = W.WORKING | {NOT_ACCEPTED}  # wall time passes in these
STATE_WORDS = {NOT_ACCEPTED: "it never reached the harness", W.QUEUED: "it was still queued",
               W.RUNNING: "it was still being worked on", W.CANCELLING: "it was being cancelled",
               W.COMPLETED: "it was ready but not yet spoken",
               W.DELIVERING: "it was handed to the frontend but not yet spoken",
               W.FAILED: "it failed and the notice was not yet spoken"}


@dataclass
class _Request:
    instruction: str
    state: str = NOT_ACCEPTED  # the newest work state heard
    notice: bool = True  # failed: whether a failure notice is still to be spoken
    speaking: bool = False  # the frontend has handed its answer to the voice (which plays it out)
    later: bool = False  # words the harness says by itself when due (a timer's ring), owed to this request

    @property
    def due_later(self) -> bool:
        """A timer's ring not yet due: it waits on session time, not on work that takes wall time."""
        return self.later and self.state == W.QUEUED


def _state_words(r: _Request) -> str:
    return "the timer it set was not yet due" if r.due_later else STATE_WORDS.get(r.state, r.state)


class AnswerWait:
    """Which delegated requests are still open, and whether a file session goes on after its last chunk."""

    def __init__(self, limit_s: float, chunk_ns: int) -> None:
        self.limit_ns = int(limit_s * 1e9)
        self.chunk_ns = chunk_ns
        self.requests: dict[str, _Request] = {}
        self.announced: dict[int, int] = {}  # chunk index -> delegates its decision made (a restart decides again)
        self.decided = -1  # the newest chunk decided
        self.replying = False  # the newest decisions said words of a reply whose turn has not ended
        self.file_chunks: int | None = None  # chunks the file itself filled (set when it ends)
        self.decision_wait_since: float | None = None
        self.last_go = 0.0  # monotonic time of the last silent chunk
        self.unanswered = ""  # the sentence said when the wait ran out

    # --- what the session says ----------------------------------------------------------------
    def hear(self, msg: m.Message) -> None:
        if isinstance(msg, m.ChunkDecision):
            if msg.index >= self.decided:  # a restarted frontend decides some chunks again: the newest counts
                if msg.turn_end or msg.interrupt:
                    self.replying = False
                elif msg.text:
                    self.replying = True
            self.decided = max(self.decided, msg.index)
            self.announced[msg.index] = msg.delegates
            if msg.info.get("speaks_work") in self.requests:
                self.requests[msg.info["speaks_work"]].speaking = True
        elif isinstance(msg, m.DelegateRequest):
            self.requests.setdefault(msg.id, _Request(msg.instruction))
        elif isinstance(msg, m.WorkEvent) and msg.info.get("later_of") in self.requests \
                and msg.work_id not in self.requests:  # a timer the request set: its ring is owed too
            self.requests[msg.work_id] = _Request(self.requests[msg.info["later_of"]].instruction, msg.state,
                                                  later=True)
        elif isinstance(msg, m.WorkEvent) and msg.work_id in self.requests:
            req = self.requests[msg.work_id]
            req.state = msg.state
            if msg.state == W.COMPLETED:
                req.speaking = False  # cut by an interrupt: offered again
            if msg.state == W.FAILED:
                req.notice = bool(msg.info.get("notice", False))
        elif isinstance(msg, m.Delivered) and msg.work_id in self.requests and msg.result_id.endswith(":f"):
            self.requests[msg.work_id].notice = False  # the failure was told

    def open(self) -> dict[str, _Request]:
        return {wid: r for wid, r in self.requests.items()
                if r.state not in DONE and not (r.state == W.FAILED and not r.notice)}

    # --- after the file -------------------------------------------------------------------------
    def after_file(self, cut: int, virtual: bool) -> str:
        """The file is read and `cut` chunks are out: GO (cut one more, silent), WAIT (look again soon) or END."""
        if self.file_chunks is None:
            self.file_chunks = cut
        if self.limit_ns <= 0:
            return END
        if self.decided < cut - 1 and not self._decisions_overdue():
            return WAIT  # what the last chunks delegated is not known yet
        self.decision_wait_since = None
        still = self.open()
        heard = sum(not r.later for r in self.requests.values())
        missing = sum(self.announced.values()) - heard  # decided on, request not heard yet
        if not still and missing <= 0 and not self.replying:
            return END
        if (cut - self.file_chunks) * self.chunk_ns >= self.limit_ns:
            unsaid = {wid: r for wid, r in still.items() if not r.speaking}
            if unsaid or missing > 0 or self.replying:
                self.unanswered = self._sentence(unsaid, missing, self.replying)
            return END
        if virtual and any(r.state in WORKING and not r.due_later for r in still.values()) and \
                time.monotonic() - self.last_go < self.chunk_ns / 1e9:
            return WAIT  # work runs on the real clock: give it real time
        self.last_go = time.monotonic()
        return GO

    def _decisions_overdue(self) -> bool:
        now = time.monotonic()
        self.decision_wait_since = self.decision_wait_since or now
        return now - self.decision_wait_since > DECISION_WAIT_S

    def _sentence(self, still: dict[str, _Request], missing: int, replying: bool) -> str:
        parts = [f'"{r.instruction}" ({_state_words(r)})' for r in still.values()]
        if missing > 0:
            parts.append(f"{missing} more the harness never heard of")
        if not parts:  # only a reply still being said
            what, verb = "the assistant's reply", "was not finished"
        elif len(parts) == 1 and missing <= 0:
            what, verb = f"the answer to {parts[0]}", "was not spoken"
        else:
            what, verb = f"the answers to {', '.join(parts[:-1])} and {parts[-1]}", "were not spoken"
        cut = ", and the reply under way was left unfinished" if parts and replying else ""
        return (f"{what} {verb} within {self.limit_ns / 1e9:g} s of the input file's end{cut}; --answer-wait "
                f"SECONDS sets how long a file session waits.")
