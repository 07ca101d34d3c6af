"""`venus-edge bench asr` through the real command line, and the WER it reports."""
from __future__ import annotations

import re

from edge.bench.wer import Tally, normalise
from edge.cli import main

LINE = re.compile(r"asr (\S+): wer ([\d.]+)% \(numbers ([\d.]+)%, names ([\d.]+)%\) rtf ([\d.]+)")


def test_number_words_and_digits_score_the_same():
    assert normalise("What is three plus four?") == normalise("what is 3 + 4")
    assert normalise("Wake me at seven thirty a.m.") == normalise("Wake me at 7:30 AM.")
    assert normalise("one hundred and twenty five") == ["125"]
    assert normalise("the twenty first of May") == normalise("the 21st of may")


def test_errors_are_counted_on_the_words_they_hit():
    t = Tally()
    assert t.add("Hey Tom, what is three plus four?", "hey time what is B plus 4", frozenset({"tom"})) == 2
    assert t.words == 7 and round(t.rate(), 1) == 28.6
    assert t.rate("names") == 100.0 and t.rate("numbers") == 50.0
    assert Tally().add("turn off the light", "turn off the kitchen light") == 1  # an insertion


def test_the_bench_scores_a_small_set_with_tiny_en(capsys):
    assert main(["bench", "asr", "--utterances", "12", "--models", "tiny.en"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("12 utterances (3 held out)")
    last = LINE.fullmatch(out[-1])
    assert last and last[1] == "tiny.en", out[-1]
    wer, numbers, names, rtf = (float(g) for g in last.groups()[1:])
    assert wer < 70 and 0 < rtf < 5  # loose: the set is hard (noise, reverberation, fast voices) and small


def test_an_unknown_recognizer_is_one_sentence(capsys):
    assert main(["bench", "asr", "--models", "large"]) == 2
    err = capsys.readouterr().err
    assert "unknown recognizer" in err and "tiny.en,base" in err and "Traceback" not in err


def test_an_unknown_setting_names_the_known_ones(capsys):
    assert main(["bench", "asr", "--models", "tiny.en:beam0"]) == 2
    err = capsys.readouterr().err
    assert "unknown setting 'beam0'" in err and "beamN" in err and "Traceback" not in err
