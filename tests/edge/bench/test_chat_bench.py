"""`bench chat`: its seeded conversation set, and how a reply is scored."""
from __future__ import annotations

import subprocess
import sys

from edge.bench import answers_set
from edge.bench.chat_set import MIN_WORDS, generate, score
from edge.frontend.default.rules import at_length


def test_the_set_is_seeded_has_every_kind_and_voices_no_test_uses():
    a = generate(15, 5)
    assert a == generate(15, 5) and a != generate(15, 6)
    assert {r.kind for r in a} == {"story", "explanation", "description"} and len({r.text for r in a}) == 15
    assert not {r.voice for r in a} & set(answers_set.VOICES)
    assert all(at_length(r.text) for r in a)  # each is a request the frontend keeps for the model


def test_a_reply_is_good_only_local_long_and_without_refusal():
    story = " ".join(["The keeper climbed the stairs and the cat followed him."] * 7)
    assert score(story, delegated=False).good
    assert not score(story, delegated=True).good
    assert not score("Once upon a time there was a cat.", delegated=False).good  # fewer than MIN_WORDS
    for refusal in ("I'm sorry, but I can't assist with that. " + story,
                    "As an AI language model, I don't have personal preferences. " + story):
        s = score(refusal, delegated=False)
        assert s.refused and not s.good and s.words >= MIN_WORDS


def test_bad_options_are_one_sentence():
    for args in (["--requests", "0"], ["--slot-s", "3"], ["--llm-gguf", "/nonexistent.gguf"], ["--rescore"]):
        run = subprocess.run([sys.executable, "-m", "edge.cli", "bench", "chat", *args], capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 2 and "Traceback" not in run.stderr and not run.stdout, run.stdout
        assert run.stderr.strip().startswith("venus-edge bench chat:") and run.stderr.count("\n") == 1, run.stderr
