"""Sentences of a reply: the unit speech is made in and the unit a delegated result is counted in.

A sentence ends at `.`, `!` or `?` followed by space and a capital, a digit or a quote, so
"e.g. this" and "3 p.m. today" stay whole. Speech also passes `max_chars`: a longer sentence
is cut at clause punctuation, so its first words play before the rest is synthesized.
"""
from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+")
SPEECH_PIECE = 80  # characters: speech cuts a longer sentence at its clauses
MIN_PIECE = 30  # characters: a piece shorter than this is joined to its neighbour (a few words at least)


def split_sentences(text: str, max_chars: int | None = None) -> list[str]:
    """The sentences of `text`, stripped; with `max_chars`, longer ones cut at clause punctuation."""
    out: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE_END.split(text.strip())):
        if not sentence:
            continue
        if max_chars is None or len(sentence) <= max_chars:
            out.append(sentence)
            continue
        piece = ""
        for clause in _CLAUSE_BREAK.split(sentence):
            piece = f"{piece} {clause}".strip()
            if len(piece) >= MIN_PIECE:
                out.append(piece)
                piece = ""
        if piece:
            if out and len(piece) < MIN_PIECE:
                out[-1] = f"{out[-1]} {piece}"
            else:
                out.append(piece)
    return out
