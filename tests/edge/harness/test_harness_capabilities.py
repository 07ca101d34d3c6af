"""Capabilities end to end through the harness: skills, the general one over HTTP, MCP tools, multimodal."""
from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from edge.clock import VirtualClock
from edge.harness import states as S
from edge.harness.assemble import build_harness
from edge.harness.capability import Registry
from edge.harness.chat import OpenAIChat
from edge.harness.multimodal import MultimodalCapability
from edge.harness.router import choice_schema
from edge.harness.skills import load_skills
from fake_openai import FakeOpenAI
from harness_helpers import Emitted, advance
from repo_paths import SUPPORT
from waiting import until



def write_skill(root: Path, name: str, manifest: dict, files: dict[str, str]) -> None:
    d = root / name
    d.mkdir(parents=True)
    (d / "skill.json").write_text(json.dumps(manifest))
    for fname, body in files.items():
        (d / fname).write_text(textwrap.dedent(body))


def skills_dir(tmp: Path) -> Path:
    root = tmp / "skills"
    args = {"type": "object", "properties": {"value": {"type": "number"}, "unit": {"enum": ["km", "mi"]}},
            "required": ["value", "unit"], "additionalProperties": False}
    write_skill(root, "convert", {"name": "convert", "version": "1.0.0", "description": "Converts distances.",
                                  "instructions": "Use for km/mile questions.", "arguments": args,
                                  "entry": {"python": "skill.py:run"}},
                {"skill.py": """
                    def run(arguments, context):
                        v = arguments["value"]
                        return f"{v} km is {v * 0.621371:.1f} mi." if arguments["unit"] == "km" else f"{v} mi"
                 """})
    write_skill(root, "flaky", {"name": "flaky", "version": "0.1", "description": "Fails once, then answers.",
                                "arguments": {"type": "object"}, "entry": {"command": [sys.executable, "run.py"]}},
                {"run.py": """
                    import json, pathlib, sys
                    req = json.load(sys.stdin)
                    mark = pathlib.Path("tried")
                    if not mark.exists():
                        mark.write_text("1")
                        sys.exit(75)
                    print(json.dumps({"text": "Attempt " + str(req["attempt"]) + " worked.", "ttl_s": 30}))
                 """})
    write_skill(root, "badjson", {}, {})
    (root / "badjson" / "skill.json").write_text("{nope")
    write_skill(root, "noentry", {"name": "noentry", "version": "1", "description": "x", "arguments": {},
                                  "entry": {"python": "missing.py:run"}}, {})
    write_skill(root, "badschema", {"name": "badschema", "version": "1", "description": "x",
                                    "arguments": {"type": "nonsense"}, "entry": {"command": ["true"]}}, {})
    write_skill(root, "noversion", {"name": "noversion", "description": "x", "arguments": {},
                                    "entry": {"command": ["true"]}}, {})
    return root


def test_skills_load_and_bad_manifests_get_one_sentence_each(tmp_path):
    skills, problems = load_skills(skills_dir(tmp_path))
    assert sorted(s.name for s in skills) == ["convert", "flaky"]
    assert len(problems) == 4 and all(p.startswith("skill ") and "\n" not in p for p in problems)
    joined = " | ".join(problems)
    assert "not valid JSON" in joined and "missing.py" in joined and "argument schema is invalid" in joined
    assert "'version' is a required property" in joined


def run_one(built, clock, emit, instruction, seconds=3.0):
    h = built.harness
    h.accept("w", instruction, 0, 0)
    advance(h, clock, seconds)
    return h.store.get("w")


def test_python_skill_runs_and_invalid_arguments_are_refused(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    cfg = {"skills": str(skills_dir(tmp_path)), "router": {"scripted": {"rules": [
        {"match": r"(\d+) km", "capability": "convert", "arguments": {"value": 10, "unit": "km"}},
        {"match": r"leagues", "capability": "convert", "arguments": {"value": 3, "unit": "leagues"}}]}}}
    built = build_harness(cfg, tmp_path / "state", clock, emit)
    item = run_one(built, clock, emit, "how far is 10 km")
    assert item.state in (S.COMPLETED, S.DELIVERING) and item.result == "10 kilometers is 6.2 miles."
    built.harness.accept("w2", "three leagues in km?", 0, 1)
    built.harness.settle()
    bad = built.harness.store.get("w2")
    assert bad.state == S.FAILED and "invalid arguments" in bad.reason and "leagues" in bad.reason
    built.close()


def test_a_python_skill_that_hangs_is_killed_at_its_timeout(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "stuck", {"name": "stuck", "version": "1", "description": "Never answers.", "timeout_s": 2,
                                "arguments": {"type": "object"}, "entry": {"python": "skill.py:run"}},
                {"skill.py": """
                    import os, pathlib, time
                    def run(arguments, context):
                        pathlib.Path("pid").write_text(str(os.getpid()))
                        time.sleep(3600)
                 """})
    clock, emit = VirtualClock(), Emitted()
    cfg = {"skills": str(root), "router": {"scripted": {"rules": [{"match": ".", "capability": "stuck",
                                                                     "arguments": {}}]}}}
    built = build_harness(cfg, tmp_path / "state", clock, emit)
    h = built.harness
    h.accept("w", "anything", 0, 0)
    h.poll()
    pid_file = root / "stuck" / "pid"
    until(pid_file.exists, "the skill never started")
    pid = int(pid_file.read_text())
    clock.advance_to(clock.now_ns() + 5 * 10**9)  # past the skill's own 2 s timeout
    h.poll()
    item = h.store.get("w")
    assert item.state == S.FAILED and "took too long" in item.reason
    until(lambda: not process_alive(pid), "the hung skill's process was left running")
    built.close()


def test_a_python_skill_asks_for_a_retry_by_raising_transient_error(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "busy", {"name": "busy", "version": "1", "description": "Busy once.",
                               "arguments": {"type": "object"}, "entry": {"python": "skill.py:run"}},
                {"skill.py": """
                    import pathlib
                    from edge.harness.capability import TransientError
                    def run(arguments, context):
                        print("chatter on stdout stays out of the result")
                        if context["attempt"] == 1:
                            raise TransientError("the server is busy")
                        return {"text": "Done on attempt " + str(context["attempt"]) + "."}
                 """})
    clock, emit = VirtualClock(), Emitted()
    cfg = {"skills": str(root), "backoff_s": 0.1,
           "router": {"scripted": {"rules": [{"match": ".", "capability": "busy", "arguments": {}}]}}}
    built = build_harness(cfg, tmp_path / "state", clock, emit)
    item = run_one(built, clock, emit, "anything")
    assert item.state in (S.COMPLETED, S.DELIVERING) and item.result == "Done on attempt 2." and item.attempts == 2
    built.close()


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_subprocess_skill_exit_75_is_retried(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    cfg = {"skills": str(skills_dir(tmp_path)), "backoff_s": 0.1,
           "router": {"scripted": {"rules": [{"match": ".", "capability": "flaky", "arguments": {}}]}}}
    built = build_harness(cfg, tmp_path / "state", clock, emit)
    item = run_one(built, clock, emit, "anything")
    assert item.state in (S.COMPLETED, S.DELIVERING) and item.result == "Attempt 2 worked." and item.attempts == 2
    assert item.expires_ns <= item.ready_ns + 30 * 10**9  # the skill's own TTL
    built.close()


def test_general_capability_against_an_openai_compatible_server_with_retry(tmp_path):
    srv = FakeOpenAI(fail_first=1)
    try:
        clock, emit = VirtualClock(), Emitted()
        built = build_harness({"chat": {"url": srv.url, "model": "tiny"}, "backoff_s": 0.1}, tmp_path / "s",
                              clock, emit)
        item = run_one(built, clock, emit, "weather in Paris?")
        assert item.state in (S.COMPLETED, S.DELIVERING) and item.result == "It is 21 degrees Celsius and sunny in Paris."
        assert item.attempts == 2  # the 503 was transient
        req = srv.requests[-1]
        assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "tiny"
        assert req["body"]["messages"][-1] == {"role": "user", "content": "weather in Paris?"}
        built.close()
    finally:
        srv.close()


def test_general_capability_unreachable_fails_in_words(tmp_path):
    clock, emit = VirtualClock(), Emitted()
    built = build_harness({"chat": {"url": "http://127.0.0.1:9/v1"}, "retries": 0}, tmp_path / "s", clock, emit)
    item = run_one(built, clock, emit, "anything")
    assert item.state == S.FAILED and item.notice.startswith("Sorry, I couldn't finish that: the model server")
    built.close()


@pytest.fixture(scope="module")
def mcp_built(tmp_path_factory):
    clock, emit = VirtualClock(), Emitted()
    cfg = {"mcp": [{"name": "conv", "command": sys.executable, "args": [str(SUPPORT / "mcp_server.py")]},
                   {"name": "ghost", "command": "/nonexistent/server"}],
           "router": {"scripted": {"rules": [
               {"match": r"(\d+) celsius", "capability": "conv.celsius_to_fahrenheit",
                "arguments": {"celsius": 21}},
               {"match": "shout (.*)", "capability": "conv.shout", "arguments": {"text": "{1}"}},
               {"match": "break", "capability": "conv.broken", "arguments": {"reason": "disk on fire"}},
               {"match": "typed", "capability": "conv.celsius_to_fahrenheit", "arguments": {"celsius": "hot"}}]}}}
    built = build_harness(cfg, tmp_path_factory.mktemp("mcp"), clock, emit)
    yield built, clock, emit
    built.close()


def test_a_real_mcp_server_serves_a_tool_end_to_end(mcp_built):
    built, clock, emit = mcp_built
    h = built.harness
    assert {"conv.celsius_to_fahrenheit", "conv.shout", "conv.broken"} <= set(h.registry.names())
    assert any("ghost" in p for p in built.problems)  # a server that cannot start: one sentence, others go on
    h.accept("m1", "what is 21 celsius in fahrenheit", 0, 0)
    h.accept("m2", "shout hello", 0, 0)
    h.accept("m3", "break it", 0, 0)
    h.accept("m4", "typed wrongly", 0, 0)
    for _ in range(100):
        advance(h, clock, 0.1)
        if all(h.store.get(w).state in (S.COMPLETED, S.FAILED) for w in ("m1", "m2", "m3", "m4")):
            break
    assert h.store.get("m1").result == "21 degrees Celsius is 69.8 degrees Fahrenheit."
    assert h.store.get("m2").result == "HELLO."  # the tool's injected tokens are gone
    assert h.store.get("m3").state == S.FAILED and "disk on fire" in h.store.get("m3").reason
    assert h.store.get("m4").reason.startswith("invalid arguments")  # refused by its schema before the call


def test_multimodal_answers_from_the_frozen_transcript(tmp_path):
    heard = []

    def transcriber(audio: np.ndarray, rate: int) -> str:
        heard.append(len(audio) / rate)
        return "the blue box is on the left"

    reg = Registry()
    srv = FakeOpenAI(reply="The blue box is on the left.")
    try:
        reg.add(MultimodalCapability(transcriber, OpenAIChat(srv.url)))
        from edge.harness.core import Harness
        from edge.harness.router import ScriptedRouter
        from edge.harness.store import WorkStore
        clock, emit = VirtualClock(), Emitted()
        h = Harness(WorkStore(tmp_path / "w.sqlite"), reg, ScriptedRouter(
            [{"match": "(.*)", "capability": "multimodal", "arguments": {"question": "{1}"}}]), clock, emit,
            evidence_dir=tmp_path / "ev")
        for k in range(20):
            h.on_audio(k * 10**9, np.full(16000, 0.05, np.float32))
        h.accept("w", "where is the blue box?", 15 * 10**9, 15)
        advance(h, clock, 1)
        assert h.store.get("w").result == "The blue box is on the left."
        assert heard == [12.0]  # the context window before the cutoff, not what came after
        prompt = srv.requests[-1]["body"]["messages"][-1]["content"]
        assert "the blue box is on the left" in prompt and "where is the blue box?" in prompt
    finally:
        srv.close()


def test_router_grammar_schema_constrains_each_capabilitys_arguments(tmp_path):
    skills, _ = load_skills(skills_dir(tmp_path))
    reg = Registry()
    for s in skills:
        reg.add(s)
    schema = choice_schema(reg, [])
    conv = next(v for v in schema["anyOf"] if v["properties"]["capability"] == {"const": "convert"})
    assert conv["properties"]["arguments"]["required"] == ["value", "unit"]
    from llama_cpp import LlamaGrammar
    assert LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False) is not None


def espeak(text: str, tmp: Path) -> np.ndarray:
    import shutil
    import subprocess

    import soundfile as sf

    from kernels.resample import resample
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is needed (apt-get install espeak-ng)")
    wav = tmp / "say.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), text], check=True)
    audio, rate = sf.read(str(wav), dtype="float32")
    return resample(audio, rate, 16000).astype(np.float32)


@pytest.mark.slow
def test_multimodal_with_the_embedded_transcriber_hears_only_what_came_before(tmp_path):
    from edge.backends.locate import ModelMissing
    before = espeak("The parcel number is seven seven one.", tmp_path)
    after = espeak("Banana helicopter.", tmp_path)
    clock, emit = VirtualClock(), Emitted()
    try:
        built = build_harness({"multimodal": {"transcriber": "embedded"}, "router": {"scripted": {"rules": [
            {"match": "(.*)", "capability": "multimodal", "arguments": {"question": "{1}"}}]}}},
            tmp_path / "s", clock, emit)
    except ModelMissing as exc:
        pytest.skip(str(exc))
    if built.problems:
        pytest.skip(built.problems[0])
    h = built.harness
    audio = np.concatenate([np.zeros(8000, np.float32), before, np.zeros(8000, np.float32)])
    chunks = [audio[i:i + 16000] for i in range(0, len(audio), 16000)]
    for k, c in enumerate(chunks):
        h.on_audio(k * 10**9, np.pad(c, (0, 16000 - len(c))))
    cutoff = len(chunks) * 10**9
    h.accept("w", "what was the parcel number?", cutoff, len(chunks))
    h.on_audio(cutoff, np.pad(after[:16000], (0, max(0, 16000 - len(after)))))
    advance(h, clock, 1)
    item = h.store.get("w")
    assert item.state in (S.COMPLETED, S.DELIVERING), item.reason
    assert item.result == "I heard: The parcel number is 771."
    assert "banana" not in item.result.lower()
    built.close()


def test_the_general_capability_asks_again_after_a_refusal_and_drops_a_disclaimer(tmp_path):
    # What Qwen2.5-Coder-0.5B answered "Find a long story about a lighthouse keeper and his cat." and
    # "Describe your ideal weekend in the mountains." with.
    story = "Once upon a time, a lighthouse keeper named Jack shared his supper with a grey cat."
    disclaimer = ("As an AI language model, I don't have personal preferences or experiences. However, I can tell "
                  "you that a weekend of hiking and lakes is lovely. Bring warm socks.")
    srv = FakeOpenAI(replies=["I'm sorry, but I can't assist with that.", story, disclaimer, disclaimer])
    try:
        clock, emit = VirtualClock(), Emitted()
        built = build_harness({"chat": {"url": srv.url, "model": "tiny"}}, tmp_path / "s", clock, emit)
        item = run_one(built, clock, emit, "Find a long story about a lighthouse keeper and his cat.")
        assert item.state in (S.COMPLETED, S.DELIVERING) and item.result == story
        asked = [r["body"]["messages"][-1]["content"] for r in srv.requests]
        assert asked[1].endswith("Find a long story about a lighthouse keeper and his cat.") and asked[1] != asked[0]
        assert "Never refuse" in srv.requests[0]["body"]["messages"][0]["content"]
        built.harness.accept("w2", "Describe your ideal weekend in the mountains.", 0, 0)
        advance(built.harness, clock, 3.0)
        assert built.harness.store.get("w2").result == "I can tell you that a weekend of hiking and lakes is lovely. Bring warm socks."
        built.close()
    finally:
        srv.close()
