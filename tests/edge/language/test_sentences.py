"""Sentences: what a delegated result is counted in (harness) and what speech is made in (voices)."""
from __future__ import annotations

from edge.harness.polish import polish
from edge.language.sentences import SPEECH_PIECE, split_sentences


def test_abbreviations_and_times_do_not_end_a_sentence() -> None:
    text = "Meet at 3 p.m. today, e.g. in the hall. Bring the keys! \"Done,\" she said."
    assert split_sentences(text) == ["Meet at 3 p.m. today, e.g. in the hall.", "Bring the keys!",
                                     "\"Done,\" she said."]


def test_a_long_sentence_is_cut_at_its_clauses_for_speech_and_no_word_is_lost() -> None:
    text = ("The storm reached the coast late on Tuesday evening, flooding the lower streets of the old town, "
            "closing both bridges for the night; the ferries stopped too. It cleared by noon.")
    pieces = split_sentences(text, SPEECH_PIECE)
    assert len(pieces) == 4 and pieces[-1] == "It cleared by noon."
    assert all(len(p) <= SPEECH_PIECE for p in pieces[:-1])
    assert " ".join(pieces) == text
    assert split_sentences(text) == [text[:text.index(" It")], "It cleared by noon."]  # whole without a limit


def test_a_polished_result_keeps_at_most_three_sentences() -> None:
    text = "One is first. Two follows. Three is next. Four is dropped."
    assert polish(text) == "One is first. Two follows. Three is next."
