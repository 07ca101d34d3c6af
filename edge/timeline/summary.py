"""What a person sees after a session: both sides' words, delegations, restarts, where the audio went."""
from __future__ import annotations

import sys
from pathlib import Path

from edge import messages as m
from edge.graph.supervisor import SessionReport
from edge.timeline.journal import Journal, JournalError
from edge.timeline.printable import say  # every line may hold session text: no terminal controls


def print_summary(journal_path: str, report: SessionReport, speaker: str | None) -> None:
    try:
        journal = Journal(journal_path)
    except JournalError:
        say(f"session {report.reason} in {report.duration_s:.1f} s (no journal)")
        return
    say(f"session {report.reason} in {report.duration_s:.1f} s; journal: {journal_path}")
    rtfs = []
    for rec, msg in journal.messages(m.ChunkDecision, m.SpeakText, m.DelegateRequest, m.BackendResult,
                                     m.Interrupt):
        t = f"{rec.env.t_ns / 1e9:7.2f}s"
        if isinstance(msg, m.ChunkDecision):
            rtfs.append(msg.rtf)
            if msg.user_text:
                # Words judged while the assistant spoke are a few hundred ms of an overlap, not a turn of their own.
                over = "  (heard over the reply)" if "barge_in" in (msg.info or {}) else ""
                say(f"{t}  user:      {msg.user_text}{over}")
        elif isinstance(msg, m.SpeakText):
            say(f"{t}  assistant: {msg.text}")
        elif isinstance(msg, m.DelegateRequest):
            say(f"{t}  delegated: {msg.instruction}")
        elif isinstance(msg, m.BackendResult):
            say(f"{t}  harness:   {msg.text}")
        elif isinstance(msg, m.Interrupt):
            why = "interrupted by the user" if msg.reason == "barge-in" else f"playback stopped: {msg.reason}"
            say(f"{t}  ({why})")
    if rtfs:
        rtfs.sort()
        say(f"chunks: {len(rtfs)}, frontend real-time factor p50 {rtfs[len(rtfs) // 2]:.3f} max {rtfs[-1]:.3f}")
    restarts = {k: v for k, v in report.restarts.items() if v}
    if restarts:
        say(f"restarts: {restarts}")
    if speaker and speaker.lower().endswith(".wav") and Path(speaker).exists():
        say(f"reply audio: {speaker}")
    notes = {msg.unanswered for _, msg in journal.messages(m.EndOfInput) if msg.unanswered}
    for note in sorted(notes):  # the end marker is repeated: each sentence once
        say(f"venus-edge: {note}", file=sys.stderr)
