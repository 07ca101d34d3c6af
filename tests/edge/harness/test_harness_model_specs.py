"""The harness's model specs (its chat and router) are read once when the session starts: a value of the wrong
kind is one sentence naming the setting and where it is, from the command line and from a session's builder,
and valid values reach the model they configure."""
from __future__ import annotations

import json

import pytest

from edge.clock import VirtualClock
from edge.graph.endpoints import remove_runtime_dir
from edge.graph.plain import from_plain
from edge.harness.assemble import build_harness
from edge.harness.chat import LocalChat
from edge.session import SessionConfig, make_supervisor, nodes_for
from edge.settings import HarnessNodeSettings

from harness_refusals import refused_by_the_session, refused_on_the_command_line

WRONG = [
    ({"chat": {"gguf": "model.gguf", "n_ctx": "big"}}, "the harness chat's n_ctx is 'big'; it must be a whole number."),
    ({"chat": {"gguf": "model.gguf", "threads": "two"}},
     "the harness chat's threads is 'two'; it must be a whole number."),
    ({"chat": {"url": "http://127.0.0.1:8080/v1", "model": 7}}, "the harness chat's model is 7; it must be text."),
    ({"router": {"gguf": "router.gguf", "threads": "two"}},
     "the harness router's threads is 'two'; it must be a whole number."),
    ({"router": {"gguf": "router.gguf", "fast": "yes"}},
     "the harness router's fast is 'yes'; it must be true or false."),
    ({"router": {"fast": {"gguf": "router.gguf", "threads": 1.5}}},
     "the harness router's threads is 1.5; it must be a whole number."),
    ({"router": {"scripted": {"rules": [], "default": 3}}},
     "the harness scripted router's default is 3; it must be text."),
    ({"router": {"scripted": {"rules": "timer"}}},
     "the harness scripted router's rules is 'timer'; it must be a list."),
    ({"router": {"scripted": "timer"}}, "the harness router's scripted is 'timer'; it must be a mapping."),
    ({"multimodal": {"describer": 5}}, "the harness multimodal capability's describer is 5; it must be text."),
]
IDS = [json.dumps(c) for c, _ in WRONG]


@pytest.mark.parametrize("harness,sentence", WRONG[:3] + WRONG[4:5], ids=IDS[:3] + IDS[4:5])
def test_a_wrong_kind_is_one_sentence_from_the_command_line(tmp_path, harness, sentence):
    assert refused_on_the_command_line(tmp_path, harness) == f"venus-edge: {sentence}"


@pytest.mark.parametrize("harness,sentence", WRONG, ids=IDS)
def test_a_wrong_kind_stops_the_session_before_any_node_starts(harness, sentence):
    assert refused_by_the_session(harness) == sentence



def harness_section(extra: dict) -> dict:
    """The harness section as the harness node's process receives it from the session's builder."""
    cfg = SessionConfig(mic="in.wav", voice="null", extra={"harness": extra})
    sup = make_supervisor(cfg, nodes_for(cfg))
    try:
        return dict(from_plain(HarnessNodeSettings, sup.configs["harness"]).harness)
    finally:
        sup.ctx.destroy(linger=0)
        remove_runtime_dir(sup.ep)


def test_a_local_chat_gets_its_context_and_threads(tmp_path):
    gguf = tmp_path / "chat.gguf"
    gguf.write_bytes(b"GGUF")  # loaded on first use only
    section = harness_section({"dir": str(tmp_path / "h"), "chat": {"gguf": str(gguf), "n_ctx": 4096, "threads": 3}})
    built = build_harness(section, tmp_path / "h", VirtualClock(), lambda msg: None)
    try:
        chat = built.harness.registry.get("general").chat
        assert isinstance(chat, LocalChat) and (chat.model_path, chat.n_ctx, chat.n_threads) == (str(gguf), 4096, 3)
    finally:
        built.close()
    built = build_harness({"chat": {"gguf": str(gguf)}}, tmp_path / "d", VirtualClock(), lambda msg: None)
    try:
        chat = built.harness.registry.get("general").chat
        assert (chat.n_ctx, chat.n_threads) == (2048, 1)  # the defaults
    finally:
        built.close()


@pytest.mark.parametrize("router,threads,fast", [({"threads": 2, "fast": False}, 2, False), ({}, 3, True)],
                         ids=["its-own", "the-sessions"])
def test_a_model_router_gets_its_threads_and_rules_first(tmp_path, monkeypatch, router, threads, fast):
    import llama_cpp

    from edge.harness.fast_route import FastRouter

    opened = []

    class Opened:  # stands where llama.cpp opens the file: what it was asked for is the point here
        def __init__(self, path, n_ctx, n_threads, verbose):
            opened.append((path, n_threads))

    monkeypatch.setattr(llama_cpp, "Llama", Opened)
    gguf = str(tmp_path / "router.gguf")
    section = harness_section({"router": {"gguf": gguf, **router}})
    built = build_harness(section, tmp_path / "h", VirtualClock(), lambda msg: None, threads=3)
    try:
        assert opened == [(gguf, threads)]
        assert isinstance(built.harness.router, FastRouter) == fast
    finally:
        built.close()


def test_a_scripted_routers_null_default_still_declines_and_an_absent_one_is_general():
    from edge.harness.assemble import build_router

    assert build_router({"scripted": {"rules": []}}).default == "general"
    assert build_router({"scripted": {"rules": [], "default": None}}).default is None  # null is a value
    assert build_router({"fast": {"scripted": {"rules": [], "default": None}}}).fallback.default is None
