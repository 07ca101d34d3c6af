"""`venus-edge trace`: a real session's journal as trace-event JSON that follows the format's rules."""
from __future__ import annotations

import copy
import json

from trace_rules import check_trace

from edge.bench.graph import run_case
from edge.cli import main
from edge.session import SessionConfig, run_session

HOUR_LIMIT_MB = 50.0


def _trace(journal, out, capsys) -> dict:
    assert main(["trace", str(journal), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    return json.loads(out.read_text())


def _tracks(trace: dict) -> dict[int, str]:
    return {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}


def test_a_bench_session_traces_within_the_format_and_an_hour_stays_small(tmp_path, capsys):
    seconds = 8.0
    run_case(tmp_path, 1000, seconds, 4.0, inprocess=False)  # what `venus-edge bench graph` runs
    out = tmp_path / "trace.json"
    trace = _trace(tmp_path / "1000ms-proc.journal", out, capsys)
    assert check_trace(trace) == []
    tracks = {name: tid for tid, name in _tracks(trace).items()}
    assert {"capture", "frontend", "speech", "harness", "supervisor", "recorder"} <= set(tracks)
    ev = trace["traceEvents"]
    steps = [e for e in ev if e["ph"] == "X" and e["tid"] == tracks["frontend"] and e["name"].startswith("chunk ")]
    assert len(steps) == int(seconds) and all(e["name"].endswith(": speak") for e in steps)
    # Microseconds: a 1000 ms chunk's window is a million units long.
    windows = [e for e in ev if e["ph"] == "X" and e["tid"] == tracks["capture"] and e["name"].startswith("chunk")]
    assert windows and all(e["dur"] == 1_000_000 for e in windows)
    played = [e for e in ev if e["ph"] == "X" and e["tid"] == tracks["speech"] and e["name"] == "play: ok."]
    assert len(played) == int(seconds)
    # Every speak request is an arrow from the frontend to speech.
    starts = {e["id"]: e for e in ev if e["ph"] == "s" and e["name"] == "speak_text"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f" and e["name"] == "speak_text"}
    assert len(starts) == int(seconds) and starts.keys() == ends.keys()
    assert all(starts[i]["tid"] == tracks["frontend"] and ends[i]["tid"] == tracks["speech"] for i in starts)
    per_hour_mb = out.stat().st_size / seconds * 3600 / 1e6
    print(f"trace of a bench session (1000 ms chunks, speaking every chunk): {out.stat().st_size} bytes for "
          f"{seconds:.0f} s, about {per_hour_mb:.1f} MB an hour")
    assert per_hour_mb < HOUR_LIMIT_MB


def test_a_trace_shows_work_items_interrupts_and_folds_silence(tmp_path, speech_wav, marks_script, capsys):
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{marks_script}", voice="espeak", realtime=False)
    assert run_session(cfg, inprocess=True).ok
    trace = _trace(tmp_path / "s.journal", tmp_path / "t.json", capsys)
    assert check_trace(trace) == []
    ev = trace["traceEvents"]
    names = [e["name"] for e in ev if e["ph"] == "X"]
    assert "chunk 1: speak" in names and "chunk 5: listen (interrupt)" in names
    assert any(n.startswith("listening: chunk") for n in names)  # silent chunks folded
    assert any(e["ph"] == "i" and e["name"] == "interrupt" for e in ev)
    work = [e for e in ev if e.get("cat") == "work" and e["ph"] == "b"]
    assert work[0]["name"] == "work: What is the weather in Paris?"
    assert {e["id"] for e in work} == {work[0]["id"]}  # keyed by the work item's id
    assert [e["name"] for e in work[1:]][:2] == ["queued", "running"]


def test_the_checker_catches_what_a_viewer_would_draw_wrongly(tmp_path, speech_wav, marks_script, capsys):
    cfg = SessionConfig(mic=str(speech_wav), speaker="null", journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{marks_script}", voice="espeak", realtime=False)
    assert run_session(cfg, inprocess=True).ok
    good = _trace(tmp_path / "s.journal", tmp_path / "t.json", capsys)
    assert check_trace(good) == []

    def broken(change) -> list[str]:
        t = copy.deepcopy(good)
        change(t["traceEvents"])
        return check_trace(t)

    def first(evs, **kv):
        return next(e for e in evs if all(e.get(k) == v for k, v in kv.items()))

    assert any("no begin" in p or "never end" in p for p in broken(lambda evs: evs.remove(first(evs, ph="e"))))
    assert any("exactly one start" in p for p in broken(lambda evs: evs.remove(first(evs, ph="f"))))
    assert any("dur" in p for p in broken(lambda evs: first(evs, ph="X").pop("dur")))
    assert any("unknown phase" in p for p in broken(lambda evs: first(evs, ph="X").update(ph="Q")))
    assert any("microseconds" in p for p in broken(lambda evs: first(evs, ph="X").update(ts="1.0")))
    def straddle(evs):  # starts inside the step of chunk 1 and ends after it
        step = first(evs, ph="X", name="chunk 1: speak")
        evs.append({**step, "name": "late", "ts": step["ts"] + step["dur"] / 2, "dur": step["dur"]})
    assert any("without nesting" in p for p in broken(straddle))
    assert any("bind" in p for p in broken(lambda evs: first(evs, ph="s").update(ts=1e12)))
    assert broken(lambda evs: evs.append({"ph": "B", "name": "x", "pid": 1, "tid": 9, "ts": 0}))
