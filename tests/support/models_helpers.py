"""Helpers for the embedded-default tests: sessions through the real graph on the virtual clock, text checks."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from edge.graph.supervisor import SupervisorSettings
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

DIGITS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven",
          "8": "eight", "9": "nine"}


def normalize(text: str) -> str:
    """Lower case, digits spelled out (the recognizer writes "4" for "four")."""
    text = re.sub(r"\d", lambda d: f" {DIGITS[d.group()]} ", text.lower())
    return re.sub(r"[^a-z ]", " ", text)


@dataclass
class Session:
    journal: Journal
    reply: np.ndarray  # the speaker WAV, time-aligned, at `rate`
    rate: int
    report: object

    def all(self, *types):
        return [msg for _, msg in self.journal.messages(*types)]

    def stamped(self, *types):
        return [(rec.env.t_ns, msg) for rec, msg in self.journal.messages(*types)]


def run_file(mic: Path, out_dir: Path, inprocess: bool = False) -> Session:
    cfg = SessionConfig(mic=str(mic), speaker=str(out_dir / "reply.wav"), journal=str(out_dir / "s.journal"),
                        realtime=False, frontend="default", voice="piper", threads=1, speaker_rate=16000)
    # A shared 2-core machine can stall a step for seconds: do not mistake that for a hung node.
    report = run_session(cfg, inprocess=inprocess, settings=SupervisorSettings(hang_s=60.0))
    assert report.ok, report.reason
    reply, rate = sf.read(str(out_dir / "reply.wav"), dtype="float32")
    return Session(Journal(out_dir / "s.journal"), reply, rate, report)
