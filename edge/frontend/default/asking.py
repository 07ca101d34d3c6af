"""Asking back: a turn whisper itself found unlikely is not answered, it is asked about in one short sentence.

Judged by the recognizer's own probabilities (edge/detect/confidence.py), a turn gets "Sorry, I didn't catch
that." when the whole transcript is unlikely, or "Did you say ...?" with the words heard when one content word is
unlikely (the word test, off unless `ask_back_word` is set); after a "Did you say ...?", a plain "yes" answers the
words asked about. Unlikely words that still make a sum the calculator works out are answered: its reply says the
sum back ("6 times 8 is 48"), so a misheard number is heard as such, and the number reading has already judged a
sum it took (edge/detect/number_reading.py).
"""
from __future__ import annotations

import re

from edge.detect.asr import Heard
from edge.detect.confidence import doubt
from edge.frontend.base import ChunkOutput
from edge.frontend.default import grammar as protocol
from edge.language.ask_back import NOT_CAUGHT, did_you_say
from edge.language.spoken_math import work_out

_YES = re.compile(r"^(yes|yeah|yep|yup|correct|exactly|right|that'?s right)\b[ ,]*(i did|please|that'?s right)?"
                  r"[.!]*$", re.I)


class AskingBack:
    """The default frontend's asking back (a mixin: the state is the frontend's own)."""

    asked_about: str | None = None  # the words last asked back with "Did you say ...?", until the next turn

    def _ask_back(self, text: str, heard: Heard | None, out: ChunkOutput) -> str | None:
        """The sentence said instead of an answer to `text`, or None to answer it. `heard`: how sure whisper was
        of these very words (None: not known, answered)."""
        if not self.s.ask_back or heard is None or heard.text != text:
            return None
        words = None
        if self.s.ask_back_word > 0 and heard.logprob >= self.s.ask_back_logprob and self.asr.heard is heard:
            words = self.asr.word_probabilities(text)  # the recognizer's last utterance is this turn's
        found = doubt(heard, self.s.ask_back_logprob, words, self.s.ask_back_word)
        if found is None:
            return None
        said = protocol.strip_protocol(text)
        if found.why == "unlikely" and work_out(said) is not None:
            out.info["unsure_sum"] = found.journal()  # answered: the calculator says the sum it worked out
            return None
        out.info["asked_back"] = found.journal() | {"heard": text}
        if found.why == "unlikely":
            return NOT_CAUGHT
        self.asked_about = text
        return did_you_say(said)

    def _not_caught(self, text: str, heard: Heard | None) -> bool:
        """Whether `text` will be asked back as not caught (the whole of it unlikely, and no sum in it): a draft
        of an answer to it (prefill, first words, their synthesis) would be thrown away."""
        return bool(self.s.ask_back and heard is not None and heard.text == text and
                    doubt(heard, self.s.ask_back_logprob) is not None and
                    work_out(protocol.strip_protocol(text)) is None)

    def _confirmed(self, text: str) -> str | None:
        """After "Did you say X?": X when the user's turn is a plain yes; the question lapses either way."""
        about, self.asked_about = self.asked_about, None
        return about if about is not None and _YES.match(text.strip()) else None
