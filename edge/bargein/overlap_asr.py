"""A transcript of speech over the reply, for a frontend that has none of its own (a Venus bundle, a script).

Without words the policy can only weigh level and length: it waits for 2.4 s
of voiced speech before calling anything an interruption, and cannot tell a
short "stop" from a cough or a "mm-hm" from a question. So the judge runs
the embedded recognizer (edge/detect/asr.py: whisper tiny.en, or base as
`asr` says) on the overlapping audio only, from its onset to the boundary.

It runs on a worker thread of its own: the frontend node starts it when the
chunk arrives, it runs while the frontend steps (whisper and llama.cpp both
leave Python's lock while they compute), and the judge waits for it at the
boundary. A live session loads the model while the node sets up, before the
session starts (loading it while chunks arrive delayed them by up to 150 ms);
a virtual-clock session loads it on the worker at the first speech over the
reply. When the recognizer is not installed, the judge keeps deciding from
level and length and the log says why, once.
"""
from __future__ import annotations

import importlib.util
import logging
import time
from concurrent.futures import Future

import numpy as np

from edge.backends.locate import ModelMissing
from edge.bargein.worker import CueWorker
from edge.detect.asr import Transcriber, model_dir

log = logging.getLogger("edge.bargein")


def unavailable(model: str) -> str | None:
    """Why the recognizer cannot run here (one sentence with the fix), or None when it can."""
    if importlib.util.find_spec("faster_whisper") is None:
        return "faster-whisper is not installed; install it with `pip install faster-whisper`"
    try:
        model_dir(model)
    except (ModelMissing, ValueError) as exc:
        return str(exc)
    return None


class OverlapTranscriber(CueWorker):
    def __init__(self, threads: int = 1, model: str = "tiny.en", preload: bool = False) -> None:
        super().__init__("overlap-asr", "recognizer", "from its level and length only")
        self.threads, self.model = threads, model
        self._asr: Transcriber | None = None
        if preload:  # during the node's set-up, before the session starts: never while chunks arrive
            self._load()

    @classmethod
    def load(cls, config: dict, preload: bool = False) -> "OverlapTranscriber | None":
        """One for the session's recognizer (`asr`), or None (logged) when it is not installed."""
        model = str(config.get("asr") or "tiny.en")
        why = unavailable(model)
        if why is not None:
            log.warning("barge-in: speech over the reply is judged from its level and length only: %s", why)
            return None
        return cls(max(1, int(config.get("threads", 1) or 1)), model, preload)

    def _load(self) -> Transcriber:
        if self._asr is None:
            self._asr = Transcriber(self.threads, self.model)
        return self._asr

    def warm(self) -> None:
        """Load the model now, on the worker, if it is not loaded yet (speech over the reply has started)."""
        if self._asr is None:
            self.pool.submit(self._load)

    def start(self, audio: np.ndarray) -> Future[tuple[str, float]]:
        """Transcribe on the worker: (text, milliseconds spent)."""
        return self.pool.submit(self._run, np.array(audio, np.float32))

    def _run(self, audio: np.ndarray) -> tuple[str, float]:
        asr = self._load()
        t0 = time.perf_counter()
        return asr.transcribe(audio), (time.perf_counter() - t0) * 1e3
