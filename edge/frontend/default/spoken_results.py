"""Harness results in the default frontend: delivered, withdrawn, and spoken at a boundary or in place of
the holding phrase that followed their delegate span."""
from __future__ import annotations

import collections

from edge.bargein import words as barge_in
from edge.frontend.base import Chunk, ChunkOutput, ResultToSay
from edge.frontend.default import grammar as protocol
from edge.frontend.default.turn import is_progress

CHARS_PER_S = 14.0  # the voice's speaking rate: estimates when a reply stops playing


class SpokenResults:
    """The default frontend's results (a mixin: the state is the frontend's own)."""

    def deliver(self, result: ResultToSay) -> None:
        if result.id not in self.seen_results:  # a repeated result id is ignored
            self.seen_results.add(result.id)
            self.results.append(result)
            self.arrival[result.id] = self.delivered
            self.delivered += 1

    def withdraw(self, result_id: str) -> bool:
        kept = collections.deque(r for r in self.results if r.id != result_id)
        dropped, self.results = len(kept) < len(self.results), kept
        self.arrival.pop(result_id, None)
        return dropped

    def result_ahead(self, result: ResultToSay) -> str:
        """The result's words when the next boundary says it unless the user speaks first: it answers the
        holding phrase, or it is the first waiting and no reply or turn of the user's stands before it."""
        if self.utt is not None:
            return ""  # the user is talking: the boundary hears them out first
        to_say = self._answer_to_holding()
        if to_say is None and self.reply is None and self.results:
            to_say = self.results[0]
        return self._words_of(result) if to_say is not None and to_say.id == result.id else ""

    @staticmethod
    def _words_of(result: ResultToSay) -> str:
        return protocol.strip_protocol(result.text)

    def _answer_to_holding(self) -> ResultToSay | None:
        """The first result delivered after the holding phrase's delegate span went out, if one waits."""
        if self.holding_at is None:
            return None
        return next((r for r in self.results if self.arrival.get(r.id, -1) >= self.holding_at), None)

    def _stop_holding(self, chunk: Chunk, out: ChunkOutput, playing: bool) -> None:
        """The answer is back: what is left of the holding phrase is skipped, and its playback stopped."""
        if self.reply is not None:
            self._remember_reply()
            self.reply.close()
            self.reply = None
        if playing:
            out.cut_playback = True
            self.speak_until_ns = chunk.t_end_ns
        out.info["holding_cut"] = playing

    def _speak_result(self, out: ChunkOutput, now_ns: int, result: ResultToSay | None = None) -> None:
        self.holding_at = None
        if result is None:
            result = self.results[0]
        self.results.remove(result)
        self.arrival.pop(result.id, None)
        text = self._words_of(result)
        out.control, out.text, out.turn_end, out.backend_id = "speak", text, True, result.id
        if not is_progress(result):  # in the history, the 0.5B model says "I'm still checking" to anything
            self.history.append(("assistant", text))
        self.warm = False
        self.spoken_words.extend(barge_in.words(text))
        self.speak_until_ns = max(self.speak_until_ns, now_ns) + int(len(text) / CHARS_PER_S * 1e9)
