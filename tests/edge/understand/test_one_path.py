"""The failures met through Wyoming and the voice session's harness, with a router that errs as the 0.5B model did."""
from __future__ import annotations

import socket
from typing import Any

import pytest

from edge.harness import assemble
from edge.harness.router import ModelRouter, Recent
from edge.wyoming.converse import Conversation


class _ErringModel:
    """Chooses as the embedded model was seen to: a recent request's sum copied into the calculator when there is
    recent work, the calculator for a question, a timer for a light."""

    def create_chat_completion(self, messages: list[dict[str, str]], **_: Any) -> dict:
        system, said = messages[0]["content"], messages[-1]["content"]
        if "Recent work" in system:
            copied = system.split("Recent work", 1)[1].split("- ", 1)[1].split(": ", 1)[1].split(" -> ")[0]
            out = {"capability": "calculator", "arguments": {"question": copied}, "continuation_of": ""}
        elif "light" in said.lower():
            out = {"capability": "timer", "arguments": {"request": said}, "continuation_of": ""}
        else:
            out = {"capability": "calculator", "arguments": {"question": said}, "continuation_of": ""}
        import json
        return {"choices": [{"message": {"content": json.dumps(out)}}]}


class _Model(ModelRouter):
    def grammar(self, registry, recent: list[Recent]) -> None:
        return None


class _Chat:
    def complete(self, messages, timeout_s: float, max_tokens: int = 200) -> str:
        said = messages[-1]["content"].lower()
        if "france" in said:
            return "The capital of France is Paris."
        return "Here is one: why did the scarecrow win an award? Because he was outstanding in his field."


class _Tool:
    name = "shopping_list"
    description = "Adds an item to the shopping list."
    instructions = ""
    schema: dict[str, Any] = {"type": "object", "properties": {"item": {"type": "string"}}}

    def run(self, arguments, ctx):
        from edge.harness.capability import Outcome
        return Outcome("Added.")


@pytest.fixture
def erring(monkeypatch):
    inner = assemble.build_router
    monkeypatch.setattr(assemble, "build_router",
                        lambda spec, threads=1: _Model(_ErringModel()) if spec == "erring" else inner(spec, threads))
    real_registry = assemble.build_registry

    def with_tool(cfg, settings, threads=1):
        registry, problems, hub = real_registry(cfg, settings, threads)
        if str(cfg.get("dir", "")).endswith("with-tool"):
            registry.add(_Tool())  # a tool beyond the built-ins: the model router is asked
        return registry, problems, hub

    monkeypatch.setattr(assemble, "build_registry", with_tool)
    real_chat = assemble.build_chat
    monkeypatch.setattr(assemble, "build_chat", lambda spec, threads=1: _Chat() if spec == "fake" else
                        real_chat(spec, threads))


def _ask(cfg: dict, text: str) -> tuple[bool, str]:
    conv = Conversation(cfg, timeout_s=20)
    try:
        return conv.answer(text)
    finally:
        conv.close()


def test_a_second_server_run_never_answers_from_the_first_runs_request(erring, tmp_path):
    cfg = {"dir": str(tmp_path / "with-tool"), "router": "erring", "chat": "fake"}
    ok, said = _ask(cfg, "What is twelve times eight?")
    assert ok and "96" in said
    for question in ("Tell me a joke.", "Is the kitchen light on?"):
        _, said = _ask(cfg, question)  # a new server run over the same state folder
        assert "96" not in said and "twelve" not in said.lower(), said


def test_the_capital_of_france_is_not_answered_with_the_sum_fallback(erring, tmp_path):
    ok, said = _ask({"dir": str(tmp_path / "w"), "router": "erring", "chat": "fake"},
                    "What is the capital of France?")
    assert "sum" not in said.lower() and "Paris" in said, said


def test_the_weather_is_declined_plainly_not_as_a_sum(erring, tmp_path):
    _, said = _ask({"dir": str(tmp_path / "w"), "router": "erring", "chat": "fake"}, "What's the weather like?")
    assert "sum" not in said.lower() and "can't check the weather" in said, said


def test_with_home_assistant_down_a_light_is_not_taken_for_a_timer(erring, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    cfg = {"dir": str(tmp_path / "w"), "router": "erring", "chat": "fake",
           "mcp": [{"name": "home", "url": f"http://127.0.0.1:{port}/api/mcp"}]}
    ok, said = _ask(cfg, "Turn off the kitchen light")
    assert said == "I can't reach Home Assistant right now." and not ok


def test_a_sum_that_did_not_come_through_is_asked_back(erring, tmp_path):
    _, said = _ask({"dir": str(tmp_path / "w"), "router": "erring", "chat": "fake"}, "What is sixth times made?")
    assert said.startswith("Sorry, I didn't catch that"), said
