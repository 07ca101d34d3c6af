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
from edge.bargein.options import BargeInOptions
from edge.bargein.worker import CueWorker
from edge.detect.asr import Transcriber, model_dir

log = logging.getLogger(__name__)


def unavailable(model: str) -> str | None:
    """Why the recognizer cannot run here (one sentence with the fix), or None when it can."""
    if importlib.util.find_spec("faster_whisper") is None:
        return "faster-whisper is not installed; install it with `pip install faster-whisper`"
    try:
        model_dir(model)
    except (ModelMissing, ValueError) as exc:
        return str(exc)
    return None


REREAD_BEAM = 5


class OverlapTranscriber(CueWorker):
    def __init__(self, threads: int = 1, model: str = "tiny.en", preload: bool = False, beam_size: int = 1,
                 without: str = "from its level and length only") -> None:
        super().__init__("overlap-asr", "recognizer", without)
        self.threads, self.model, self.beam_size = threads, model, beam_size
        self._asr: Transcriber | None = None
        if preload:  # during the node's set-up, before the session starts: never while chunks arrive
            self._load()

    @classmethod
    def load(cls, config: dict, preload: bool = False) -> "OverlapTranscriber | None":
        """One for the session's recognizer (`asr`), or None (logged) when it is not installed."""
        options = BargeInOptions.from_config(config)
        model = options.asr
        why = unavailable(model)
        if why is not None:
            log.warning("barge-in: speech over the reply is judged from its level and length only: %s", why)
            return None
        return cls(options.threads, model, preload)

    @classmethod
    def rereader(cls, config: dict, first: str | None, preload: bool = False) -> "OverlapTranscriber | None":
        """A larger recognizer that reads the overlap a second time (`overlap_reread`, default base, "off" for
        none), or None: turned off, the same model as the first reading (`first`), or not installed (logged)."""
        options = BargeInOptions.from_config(config)
        model = options.overlap_reread
        if model in ("off", "false", "none") or model == first:
            return None
        why = unavailable(model)
        if why is not None:
            log.warning("barge-in: speech over the reply is read once, by %s: %s", first, why)
            return None
        return cls(options.threads, model, preload, REREAD_BEAM,
                   "from the first reading only")

    def read(self, audio: np.ndarray) -> tuple[str, float] | None:
        """Transcribe and wait: (text, milliseconds spent), or None once the model failed."""
        return None if self.failed is not None else self.result(self.start(audio))

    def _load(self) -> Transcriber:
        if self._asr is None:
            self._asr = Transcriber(self.threads, self.model, beam_size=self.beam_size)
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
