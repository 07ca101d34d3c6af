"""The KV sliding window: when the next chunk could pass the high mark, drop the oldest whole units.

The system prompt at the start is kept; units are removed from the oldest on
until at most `low` positions remain, and what follows is shifted down so
positions stay contiguous (llama.cpp re-rotates the keys). After the chunk that
slid, the cache is compacted (LlamaModel.compact): otherwise every later decode
attends over the cells up to the old high mark.
"""
from __future__ import annotations

import collections
import logging

from edge.backends.llama import LlamaModel

log = logging.getLogger("edge.venus")


class KVWindow:
    def __init__(self, llm: LlamaModel, high: int, low: int, compact: bool = True) -> None:
        self.llm, self.high, self.low, self.compact = llm, high, low, compact
        self.slid = False  # a slide whose hole is not compacted yet
        self.keep = 0  # positions of the system prompt, never removed
        self.units: collections.deque[int] = collections.deque()  # start position of each unit, oldest first
        self.slides = 0
        self.max_seen = 0

    def unit_start(self) -> None:
        self.units.append(self.llm.n_past)

    def note(self) -> None:
        """At the end of a chunk (its decodes have applied any shift): compact after a slide."""
        self.max_seen = max(self.max_seen, self.llm.n_past)
        if self.slid and self.compact:
            self.llm.compact()
        self.slid = False

    def make_room(self, need: int) -> None:
        """Slide before a chunk of up to `need` positions if it could pass the high mark."""
        if self.llm.n_past + need <= self.high:
            return
        target = min(self.low, self.high - need)
        if target <= self.keep:
            raise RuntimeError(f"a chunk needs {need} positions, more than the KV window leaves above the system "
                               f"prompt ({self.high} high, {self.keep} kept); raise kv_high and n_ctx")
        drop_to = self.keep + (self.llm.n_past - target)  # first position to keep
        cut = next((u for u in self.units if u >= drop_to), self.llm.n_past)
        if not self.llm.can_shift():
            raise RuntimeError("this llama.cpp context cannot shift its KV cache, so the window cannot slide")
        removed = cut - self.keep
        self.llm.remove(self.keep, cut)
        self.units = collections.deque(u - removed for u in self.units if u >= cut)
        self.slides += 1
        self.slid = True
        log.debug("venus: KV window slid, %d positions removed, %d left", removed, self.llm.n_past)
