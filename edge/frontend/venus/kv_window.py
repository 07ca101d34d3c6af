"""The KV sliding window: when the next chunk could pass the high mark, drop the oldest whole units.

The system prompt at the start is kept; units are removed from the oldest on
until at most `low` positions remain, and what follows is shifted down so
positions stay contiguous (llama.cpp re-rotates the keys). After the chunk that
slid, the cache is compacted (LlamaModel.compact): otherwise every later decode
attends over the cells up to the old high mark. The compaction holds a copy of
the live cache in host memory for a moment, so it is skipped (and said once)
when that copy would pass `compact_mb`; 0 turns it off.
"""
from __future__ import annotations

import collections
import logging

from edge.backends.llama import LlamaModel

log = logging.getLogger(__name__)


class KVWindow:
    def __init__(self, llm: LlamaModel, high: int, low: int, compact_mb: int = 256) -> None:
        self.llm, self.high, self.low, self.compact_mb = llm, high, low, compact_mb
        self.told = False  # a skipped compaction is logged once
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
        if self.slid and self.compact_mb > 0 and not self.llm.compact(self.compact_mb << 20) and not self.told:
            self.told = True
            log.info("venus: the KV cache is larger than kv_compact_mb (%d MB), so it is not compacted after a "
                     "slide; decodes attend over the cells up to the high mark", self.compact_mb)
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
