"""A bundle session without harness settings still answers general requests: the packaged small LLM when
installed, else the bundle's own LLM in a context of its own, else none with one sentence saying why.
Over a tiny Audio bundle exactly as the exporter writes it."""
from __future__ import annotations

from pathlib import Path

import pytest

from edge.clock import VirtualClock
from edge.harness import general_model, states as S
from edge.harness.assemble import build_harness
from edge.harness.general_model import general_chat, with_general_chat


@pytest.fixture(scope="module")
def bundle(tiny_bundles) -> Path:
    """The session's one Audio export (tests/conftest.py): `venus-export tiny` + `venus-export build`."""
    return tiny_bundles["audio"]


def session(bundle: Path) -> dict:
    return {"frontend": f"bundle:{bundle}", "threads": 1}


def test_which_model_answers_general_requests(bundle, monkeypatch):
    assert general_chat({"frontend": "default"})[0] == "embedded"
    assert general_chat({"frontend": "scripted:x.txt"}) == (None, "")
    monkeypatch.setattr(general_model, "small_model_installed", lambda: True)
    assert general_chat(session(bundle))[0] == "embedded"
    monkeypatch.setattr(general_model, "small_model_installed", lambda: False)
    chat, why = general_chat(session(bundle))
    assert chat == {"gguf": str(bundle / "llm" / "llm-F16.gguf"), "n_ctx": 2048, "threads": 1}
    assert "bundle's own LLM" in why
    monkeypatch.setattr(general_model, "available_memory", lambda: 100 << 20)
    chat, why = general_chat(session(bundle))
    assert chat is None and "GB are free" in why and "pip install" in why
    assert with_general_chat({"chat": {"url": "http://x"}}, session(bundle)) == {"chat": {"url": "http://x"}}


def test_a_bundle_session_answers_a_delegate_with_the_bundles_own_llm(bundle, tmp_path, monkeypatch):
    monkeypatch.setattr(general_model, "small_model_installed", lambda: False)
    emitted = []
    built = build_harness(with_general_chat({}, session(bundle)), tmp_path, VirtualClock(), emitted.append)
    h = built.harness
    try:
        assert h.registry.names() == ["general", "timer", "calculator", "clock"]  # every harness has the last three
        h.accept("w", "What should I pack for a trip to Paris?", 0, 0)
        for _ in range(600):
            h.settle()
            h.poll()
            if h.store.get("w").state != S.RUNNING and h.store.get("w").state != S.QUEUED:
                break
        item = h.store.get("w")
        assert item.state in (S.COMPLETED, S.DELIVERING), (item.state, item.reason)  # answered, not an apology
        assert item.result and item.capability == "general"
    finally:
        built.close()
