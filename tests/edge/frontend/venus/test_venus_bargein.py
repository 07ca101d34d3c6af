"""Barge-in with a Venus bundle exactly as the exporter writes it: the user takes the floor, the model's turn ends.

The judge (edge/bargein) decides after the frontend's step; when the model went
on speaking it forces the interrupt and tells the frontend to yield. The next
chunks may then listen: `<|listen|>` is masked only while a turn is open.
"""
from __future__ import annotations

from types import SimpleNamespace

from edge import messages as m
from edge.bargein.judge import BargeInJudge
from edge.bench import spoken
from edge.bundle.settings import VenusSettings
from edge.frontend.base import Chunk
from edge.frontend.venus.frontend import VenusFrontend
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

from venus_support import BASE, speechy

NS = 1_000_000_000
# Speaks from chunk 0 and goes on; every chunk not listed asks to listen (refused while a turn is open).
GOES_ON = {"0": ["<|speak|>", "one two", "<|chunk_eos|>"], "1": ["three four", "<|chunk_eos|>"],
           "2": ["five six", "<|chunk_eos|>"], "*": ["<|listen|>"]}


def test_a_barge_in_ends_the_models_turn_and_the_next_chunks_may_listen(exported_audio_bundle):
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": GOES_ON}))
    judge = BargeInJudge(f, {})
    try:
        # Capture hears the user start at 0.4 s over the reply, ducks and says so.
        onset = 400_000_000
        for msg in (m.Duck(0.3, "speech onset", onset), m.SpeechActivity("onset", onset, onset + 64_000_000,
                                                                          -20.0, 0.0, True)):
            judge.on_message(SimpleNamespace(msg=msg, src="capture", t_ns=onset + 64_000_000))
        outs, units = [], []
        for k in range(5):
            t0, t1 = k * NS, (k + 1) * NS
            chunk = Chunk(k, t0, t1, speechy(2.0, seed=k)[:16000], user_speech_onset_ns=judge.overlap_onset(t0, t1))
            units.append(f.llm.n_past)
            out = f.step(chunk)
            judge.decide(chunk, out)
            outs.append(out)
        decisions = [o.info.get("barge_in", {}).get("decision") for o in outs]
        # No transcript: sustained speech is pending until 2.4 s are voiced, then it takes the floor.
        assert decisions[:3] == ["pending", "pending", "interrupt"]
        assert [o.control for o in outs[:2]] == ["speak", "speak"] and outs[2].interrupt and outs[2].text == ""
        # The turn ended: the next chunks listen (on a turn left open, listen is refused and the model goes on).
        for o in outs[3:]:
            assert o.control == "listen" and not o.text and "refused" not in o.info, o.info
        # The unit the barge-in was decided in now ends the turn as the reference's forced listen does:
        # <unit> 10 audio rows <|turn_eos|> <|listen|> </unit>.
        assert units[3] - units[2] == 1 + 10 + 3 and not f.loop.in_turn
    finally:
        f.close()


def test_a_listening_model_has_no_turn_to_end(exported_audio_bundle):
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({**BASE, "forced": {"*": ["<|listen|>"]}}))
    try:
        f.step(Chunk(0, 0, NS, speechy(1.0)))
        n = f.llm.n_past
        f.yield_turn()
        assert f.llm.n_past == n  # nothing rewritten
        assert f.step(Chunk(1, NS, 2 * NS, speechy(1.0, seed=1))).control == "listen"
    finally:
        f.close()


def test_in_a_session_the_onset_capture_heard_reaches_the_interrupt_and_the_turn_ends(tmp_path,
                                                                                     exported_audio_bundle):
    # The model speaks from chunk 1 (heard from 2 s) and goes on in chunk 2; the user talks over it from 2.5 s,
    # without a pause. The judge reads the words ("Can you tell me ...") and decides at the end of chunk 2.
    mic, _ = spoken.timeline([(2.5, "Can you tell me instead what the weather will be like tomorrow morning in "
                                    "Paris and in London")], 10.0)
    spoken.write(tmp_path / "mic.wav", 0.3 * mic)
    forced = {"1": ["<|speak|>", "Here is a long answer", "<|chunk_eos|>"],
              "2": ["and it goes on", "<|chunk_eos|>"], "*": ["<|listen|>"]}
    cfg = SessionConfig(mic=str(tmp_path / "mic.wav"), speaker=str(tmp_path / "out.wav"), speaker_rate=16000,
                        journal=str(tmp_path / "s.journal"), frontend=f"bundle:{exported_audio_bundle}",
                        voice="espeak", realtime=False, extra={"venus": {**BASE, "forced": forced}})
    report = run_session(cfg)
    assert report.ok, report.reason
    j = Journal(tmp_path / "s.journal")
    activity = [a for _, a in j.messages(m.SpeechActivity) if a.kind == "onset" and a.playback]
    assert activity, "capture never heard the user over the reply"
    onset = activity[0].onset_ns
    assert abs(onset / 1e9 - 2.5) < 0.2
    [interrupt] = [i for _, i in j.messages(m.Interrupt)]
    assert interrupt.onset_ns == onset  # the onset capture measured, carried on the chunk
    decisions = [d for _, d in j.messages(m.ChunkDecision)]
    at = next(i for i, d in enumerate(decisions) if d.interrupt)
    assert decisions[at].info["barge_in"]["decision"] == "interrupt" and decisions[at].index == 2
    after = decisions[at + 1:]
    assert after and all(d.control == "listen" and "refused" not in d.info for d in after), \
        [(d.index, d.control, d.info.get("refused")) for d in after]
