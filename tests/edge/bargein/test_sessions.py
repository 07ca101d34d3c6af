"""Full-duplex behaviour through the real graph on the virtual clock, with the room's echo in the microphone."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from edge import messages as m
from edge.graph.supervisor import SupervisorSettings
from edge.bargein import words as barge_in
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

from duplex_helpers import RATE

ROOM = {"delay_ms": 120.0, "gain_db": -6.0}
LONG_REPLY = ("The printing press changed Europe within a single lifetime. Books became cheap, and ideas moved "
              "faster than any ruler could follow. Scholars shared their findings with each other.")


def write(path: Path, total_s: float, *parts: tuple[float, np.ndarray]) -> Path:
    x = np.zeros(int(total_s * RATE), np.float32)
    for t, s in parts:
        i = int(t * RATE)
        x[i:i + len(s)] += s
    sf.write(str(path), x + 1e-4 * np.random.default_rng(0).standard_normal(len(x)).astype(np.float32), RATE)
    return path


def session(tmp_path: Path, mic: Path, frontend: str, voice: str, **kw) -> Journal:
    cfg = SessionConfig(mic=str(mic), speaker=str(tmp_path / "reply.wav"), journal=str(tmp_path / "s.journal"),
                        realtime=False, frontend=frontend, voice=voice, threads=1, speaker_rate=16000,
                        **{"room_echo": ROOM, **kw})
    report = run_session(cfg, settings=SupervisorSettings(hang_s=120.0))
    assert report.ok, report.reason
    return Journal(cfg.journal)


def interrupts(j: Journal) -> list[m.ChunkDecision]:
    return [msg for _, msg in j.messages(m.ChunkDecision) if msg.interrupt]


@pytest.mark.parametrize("cancel", [True, False])
def test_with_echo_and_no_user_speech_the_assistant_never_interrupts_itself(tmp_path, cancel):
    mic = write(tmp_path / "quiet.wav", 12.0)
    script = tmp_path / "script.txt"
    script.write_text(f"1 speak {LONG_REPLY}\n")
    j = session(tmp_path, mic, f"scripted:{script}", "espeak", echo_cancel=cancel)
    played = [a for _, a in j.messages(m.PlaybackAck)]
    if cancel:
        assert not interrupts(j), "the assistant's own voice interrupted it"
        assert played and played[-1].last  # the whole reply was played
        reply, _ = sf.read(tmp_path / "reply.wav", dtype="float32")
        assert np.sqrt(np.mean(reply[8 * RATE:9 * RATE] ** 2)) > 0.01  # still talking late in the reply
    else:  # the check can fail: without cancellation the echo reaches the judge as speech over the reply ...
        judged = [d.info["barge_in"] for _, d in j.messages(m.ChunkDecision) if "barge_in" in d.info]
        assert judged, "uncancelled echo should have been heard over the reply"
        # ... and only its words (the judge's own transcript: a script has none) keep it from taking the floor
        assert all(bi["decision"] == "echo" for bi in judged), judged
        assert set(barge_in.words(judged[0]["text"])) <= set(barge_in.words(LONG_REPLY))
        assert not interrupts(j)


@pytest.fixture(scope="module")
def overlaps(tmp_path_factory):
    """A request, then over the reply a backchannel, then an interruption, all in the user's voice."""
    from edge.bench.duplex_suite import Synth, Voice

    d = tmp_path_factory.mktemp("overlaps")
    synth, joe = Synth(), Voice("piper", "", 1.0)
    request = 0.25 * synth.say("Please explain in detail how the human heart pumps blood around the body.", joe)
    t_back = math.ceil(0.3 + len(request) / RATE + 3.0) + 0.3
    # Early in its chunk: even if the echo canceller holds back the first few hundred ms, the boundary
    # still has enough of the user's speech to weigh.
    t_int = t_back + 2.8
    back = 0.25 * synth.say("Yeah.", joe)
    inter = 0.25 * synth.say("Wait, stop. What is the capital of France?", joe)  # the user's own voice
    mic = write(d / "mic.wav", t_int + 9.0, (0.3, request), (t_back, back), (t_int, inter))
    j = session(d, mic, "default", "piper", echo_cancel=True)
    reply, rate = sf.read(d / "reply.wav", dtype="float32")
    return j, reply, rate, t_back, t_int


def test_a_backchannel_does_not_stop_the_reply_and_an_interruption_does_by_the_next_boundary(overlaps):
    j, reply, rate, t_back, t_int = overlaps
    decisions = [msg for _, msg in j.messages(m.ChunkDecision)]
    decided = [(d.index, d.info["barge_in"]) for d in decisions if d.info.get("barge_in", {}).get("decision")
               not in (None, "pending")]
    level = lambda t: float(np.sqrt(np.mean(reply[int(t * rate):int((t + 0.5) * rate)] ** 2)))  # noqa: E731
    assert level(t_back - 0.5) > 0.01, "the assistant was not replying when the backchannel came"
    back = [bi for _, bi in decided if t_back - 0.2 <= bi["onset_ns"] / 1e9 < t_back + 1.0]
    assert back and back[0]["decision"] in barge_in.GO_ON, decided
    assert not [d for d in interrupts(j) if d.index < int(t_int)], "something before the interruption stopped it"
    assert level(t_back + 1.5) > 0.01, "the reply stopped after the backchannel"
    stop = [d for d in interrupts(j) if d.index >= int(t_int)]
    assert stop, decided
    assert stop[0].index == int(t_int), f"decided at chunk {stop[0].index}, onset in chunk {int(t_int)}"
    assert level(math.ceil(t_int) + 0.1) < 0.003, "still talking after the boundary that decided to stop"


def test_speech_over_the_reply_ducks_playback_within_100_ms(overlaps):
    j, _, _, _, t_int = overlaps
    ducks = [(rec.env.t_ns, msg) for rec, msg in j.messages(m.Duck) if rec.env.src == "capture"]
    heard = [(t, d) for t, d in ducks if t_int - 0.1 <= d.onset_ns / 1e9 <= t_int + 0.5]
    assert heard, ducks
    t, d = heard[0]
    assert t - d.onset_ns <= 100_000_000  # from the first voiced frame to the duck
    assert t / 1e9 - t_int <= 0.3  # and close to when the user really started (the echo canceller holds some back)


def test_replaying_a_session_with_room_echo_gives_the_same_decisions(overlaps, tmp_path):
    from edge.replay import replay

    j = overlaps[0]
    result = replay(j.path, verify=True, speaker=str(tmp_path / "replay.wav"))
    assert result.ok, result.first_difference
    assert result.compared >= 10
