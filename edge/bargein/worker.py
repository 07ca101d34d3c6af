"""One worker thread for a model the barge-in judge waits on at the boundary (a recognizer, a voice encoder).

A model that fails (a damaged file) is logged once, and from then on the
judge decides without that cue: `failed` says why.
"""
from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class CueWorker:
    def __init__(self, name: str, model: str, without: str) -> None:
        """`model` names what runs here ("recognizer"); `without` says how speech is judged once it fails."""
        self.pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        self.failed: str | None = None  # set when loading or running failed: the judge stops asking
        self._model, self._without = model, without

    def result(self, job: Future[T]) -> T | None:
        """The job's result, waited for; None (logged once) if the model failed."""
        try:
            return job.result()
        except Exception as exc:  # a damaged model file: decide without this cue from now on
            if self.failed is None:
                self.failed = str(exc) or type(exc).__name__
                log.warning("barge-in: the %s failed (%s); speech over the reply is judged %s",
                            self._model, self.failed, self._without)
            return None

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
