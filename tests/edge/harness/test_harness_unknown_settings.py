"""A name the harness's chat, router or multimodal capability has no setting for (a typo such as "modle" or
"n_cxt") is refused in one sentence that names it and the known ones, from the command line and from a session's
builder, before any node starts; it used to be passed over and the default taken in its place."""
from __future__ import annotations

import json

import pytest

from harness_refusals import refused_by_the_session, refused_on_the_command_line

UNKNOWN = [
    ({"chat": {"url": "http://127.0.0.1:8080/v1", "modle": "qwen2.5"}},
     "the harness chat has no setting 'modle'; known: api_key_env, model, url."),
    ({"chat": {"url": "http://127.0.0.1:8080/v1", "api_key": "sk-123"}},
     "the harness chat has no setting 'api_key'; known: api_key_env, model, url."),
    ({"chat": {"gguf": "model.gguf", "n_cxt": 4096}},
     "the harness chat has no setting 'n_cxt'; known: gguf, n_ctx, threads."),
    ({"router": {"gguf": "router.gguf", "thread": 2}},
     "the harness router has no setting 'thread'; known: fast, gguf, threads."),
    ({"router": {"fast": {"gguf": "router.gguf", "fats": False}}},
     "the harness router has no setting 'fats'; known: fast, gguf, threads."),
    ({"router": {"fast": "embedded", "rules": []}}, "the harness router has no setting 'rules'; known: fast."),
    ({"router": {"scripted": {"rules": []}, "default": None}},
     "the harness router has no setting 'default'; known: scripted."),
    ({"router": {"scripted": {"rules": [], "defualt": None}}},
     "the harness scripted router has no setting 'defualt'; known: default, rules."),
    ({"multimodal": {"transcribr": "embedded"}},
     "the harness multimodal capability has no setting 'transcribr'; known: describer, transcriber."),
]
IDS = [json.dumps(c) for c, _ in UNKNOWN]


@pytest.mark.parametrize("harness,sentence", [UNKNOWN[0], UNKNOWN[2], UNKNOWN[7]], ids=[IDS[0], IDS[2], IDS[7]])
def test_an_unknown_name_is_one_sentence_from_the_command_line(tmp_path, harness, sentence):
    assert refused_on_the_command_line(tmp_path, harness) == f"venus-edge: {sentence}"


@pytest.mark.parametrize("harness,sentence", UNKNOWN, ids=IDS)
def test_an_unknown_name_stops_the_session_before_any_node_starts(harness, sentence):
    assert refused_by_the_session(harness) == sentence
