"""`--http`: /health moves from starting (503) to ready (200) to ended; /metrics parses with prometheus_client."""
from __future__ import annotations

import pytest
from live import get, start_live

from edge.cli import main
from edge.observe.metrics import METRICS
from edge.session import SessionConfig

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is in the dev extra")


def _families(text: str) -> dict:
    return {f.name: f for f in parser.text_string_to_metric_families(text)}


def _value(fams: dict, name: str, sample: str, **labels: str) -> float:
    return next(s.value for s in fams[name].samples if s.name == sample and
                all(s.labels.get(k) == v for k, v in labels.items()))


def test_health_and_metrics_of_a_running_session(tmp_path, speech_wav, marks_script):
    cfg = SessionConfig(mic=str(speech_wav), speaker=str(tmp_path / "o.wav"), journal=str(tmp_path / "s.journal"),
                        frontend=f"scripted:{marks_script}", voice="espeak", realtime=True,
                        answer_wait_s=0.0)  # ends with the file, before the failed work's notice is said
    live = start_live(cfg)
    live.watch_health()
    report = live.finish()
    assert report.ok, report.reason
    codes = dict((status, code) for code, status in live.health)
    assert [s for _, s in live.health][:1] == ["starting"] and codes["starting"] == 503
    assert codes["ready"] == 200 and codes["ended"] == 503
    code, text = get(live.server.url + "/metrics")
    live.server.close()
    assert code == 200
    fams = _families(text)
    # Every metric the README lists is exposed, under its declared type.
    for name, kind, _ in METRICS:
        if name == "venus_capture_echo_return_loss_enhancement_db":
            continue  # only with echo cancellation on (a live microphone)
        assert name in fams, name
        assert fams[name].type == kind, name
    assert _value(fams, "venus_chunks", "venus_chunks_total", decision="speak") == 2
    assert _value(fams, "venus_chunks", "venus_chunks_total", decision="listen") == 4
    assert _value(fams, "venus_duplex_interrupts", "venus_duplex_interrupts_total") == 1
    assert _value(fams, "venus_chunk_decision_seconds", "venus_chunk_decision_seconds_count") == 6
    assert _value(fams, "venus_speech_time_to_first_audio_seconds",
                  "venus_speech_time_to_first_audio_seconds_count") >= 1  # the interrupt may cut the second
    assert _value(fams, "venus_work_transitions", "venus_work_transitions_total", state="queued") == 1
    assert _value(fams, "venus_work_transitions", "venus_work_transitions_total", state="running") == 1
    assert _value(fams, "venus_work_items", "venus_work_items", state="failed") == 1  # no capability configured
    assert {s.labels["node"] for s in fams["venus_node_restarts"].samples} == {
        "recorder", "capture", "frontend", "speech", "harness"}
    assert _value(fams, "venus_node_messages_received", "venus_node_messages_received_total", node="frontend") >= 6
    assert _value(fams, "venus_up", "venus_up") == 0  # the session is over


@pytest.mark.parametrize("address", ["0.0.0.0:8765", "192.168.1.20:8765"])
def test_a_network_address_is_refused_without_http_public(address, capsys):
    assert main(["--http", address, "--script", "none.txt"]) == 2
    err = capsys.readouterr().err
    assert "reachable from the network" in err and "--http-public" in err


def test_a_bad_http_address_is_one_sentence(capsys):
    assert main(["--http", "8765", "--script", "none.txt"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
