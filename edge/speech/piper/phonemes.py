"""Text to Piper phoneme ids, with phonemes from Debian's espeak-ng run as a separate program.

espeak-ng prints IPA per clause and drops punctuation; Piper voices were
trained on IPA with the clause punctuation kept, so each clause is
phonemized on its own and its punctuation put back. Ids follow the voice's
`phoneme_id_map`: BOS, then every phoneme followed by the pad id, then EOS.
"""
from __future__ import annotations

import re
import subprocess
import unicodedata

from edge.backends.locate import espeak_binary

BOS, EOS, PAD = "^", "$", "_"
_CLAUSE = re.compile(r"([^,.;:!?]+)([,.;:!?]*)")


class Phonemizer:
    def __init__(self, voice: str = "en-us") -> None:
        self.binary = espeak_binary()
        self.voice = voice

    def ipa(self, clause: str) -> str:
        out = subprocess.run([self.binary, "-q", "--ipa", "-v", self.voice, "--", clause],
                             check=True, capture_output=True, timeout=30).stdout.decode("utf-8", "replace")
        return " ".join(line.strip() for line in out.splitlines() if line.strip())

    def phonemes(self, sentence: str) -> str:
        """IPA of a sentence with its clause punctuation kept (as Piper's training data)."""
        pieces = []
        for words, punct in _CLAUSE.findall(sentence):
            if not words.strip():
                continue
            ipa = self.ipa(words.strip())
            if ipa:
                pieces.append(ipa + punct[:1] if punct else ipa)
        return " ".join(pieces)


def phoneme_ids(phonemes: str, id_map: dict[str, list[int]]) -> list[int]:
    ids = list(id_map[BOS]) + list(id_map[PAD])
    for ch in unicodedata.normalize("NFD", phonemes):
        if ch in id_map:  # phonemes the voice never saw are skipped, as Piper does
            ids += id_map[ch] + id_map[PAD]
    return ids + list(id_map[EOS])
