"""Sessions through the real process graph on tiny bundles: every chunk through llama.cpp and onnxruntime."""
from __future__ import annotations


import numpy as np
import soundfile as sf

from edge import messages as m
from edge.session import SessionConfig, run_session
from edge.timeline.journal import Journal

from skill_files import returning, route_all_to, write_skill
from venus_support import BASE

DELEGATE_AT = 1
FORCED = {
    "*": ["<|listen|>"],
    "1": ["<|speak|>", "Let me check", "<delegate>", "What is the weather in Paris?", "</delegate>",
          "<|turn_eos|>"],
    "2": ["<|speak|>", "one moment", "<|chunk_eos|>"],
    "3": ["<|listen|>", "still talking", "<|turn_eos|>"],  # listen is refused: the turn is still open
}


def harness_config(tmp_path) -> dict:
    write_skill(tmp_path / "skills", "weather", returning("It is sunny in Paris. <backend>twenty degrees</backend>"),
                "Weather now.")
    return {"dir": str(tmp_path / "harness"), "skills": str(tmp_path / "skills"), "router": route_all_to("weather")}


def run(tmp_path, bundle, wav, camera=None):
    # The cap counts every written token, <|speak|> and the span included: room for chunk 1's whole span.
    venus = {**BASE, "max_speak_tokens": 24, "forced": FORCED,
             "forced_after_backend": ["<|speak|>", "It is sunny", "<|turn_eos|>"]}
    cfg = SessionConfig(mic=str(wav), camera=str(camera) if camera else None, speaker=str(tmp_path / "out.wav"),
                        journal=str(tmp_path / "s.journal"), frontend=f"bundle:{bundle}", voice=f"bundle:{bundle}",
                        realtime=True, extra={"venus": venus, "harness": harness_config(tmp_path)})
    report = run_session(cfg)
    assert report.ok, report.reason
    return Journal(tmp_path / "s.journal")


def check_protocol(journal: Journal) -> list[m.ChunkDecision]:
    decisions = [msg for _, msg in journal.messages(m.ChunkDecision)]
    assert len(decisions) == 12
    assert all(d.info["prefill"] >= 11 for d in decisions)  # <unit> + 10 audio embeddings at least, every chunk
    assert decisions[0].control == "listen" and not decisions[0].text
    assert decisions[1].control == "speak" and decisions[1].turn_end and decisions[1].delegates == 1
    assert decisions[1].text.strip() == "Let me check"  # the span's words are never spoken
    assert decisions[2].control == "speak" and not decisions[2].turn_end
    assert decisions[3].control == "speak" and decisions[3].info["refused"] == ["<|listen|>"]
    assert decisions[3].turn_end
    # The delegate span reached the harness, which ran it.
    [req] = [msg for _, msg in journal.messages(m.DelegateRequest)]
    assert req.instruction == "What is the weather in Paris?" and req.index == DELEGATE_AT
    # The result was prefilled at an idle listen boundary, never mid-speech, then spoken with its id.
    injected = [d for d in decisions if d.info.get("injected")]
    assert len(injected) == 1
    at = decisions.index(injected[0])
    assert injected[0].control == "listen" and not decisions[at].info["in_turn"] and at >= 4
    reply = decisions[at + 1]
    assert reply.control == "speak" and reply.text.strip() == "It is sunny" and reply.turn_end
    spoken = [msg for _, msg in journal.messages(m.SpeakText)]
    assert [s.index for s in spoken] == [1, 2, 3, at + 1]
    assert spoken[-1].backend_id == injected[0].info["injected"][0]
    assert all(s.hidden_dim == 256 and s.token_ids for s in spoken)  # hidden states travelled with the words
    assert [msg for _, msg in journal.messages(m.Delivered)], "playback never confirmed the reply"
    return decisions, at + 1


def check_audio(path, first_spoken: int, reply_at: int) -> None:
    audio, rate = sf.read(str(path), dtype="float32")
    assert rate == 24000 and len(audio) >= 12 * rate
    start = (first_spoken + 1) * rate  # speech is placed after the chunk that produced it
    assert np.sqrt(np.mean(audio[:start] ** 2)) < 1e-4  # silent while listening
    assert np.sqrt(np.mean(audio[start:start + 4 * rate] ** 2)) > 1e-3
    assert np.sqrt(np.mean(audio[(reply_at + 1) * rate:] ** 2)) > 1e-4  # the reply is heard


def test_omni_session_from_wav_and_video(tmp_path, omni_bundle, input_wav, input_video):
    journal = run(tmp_path, omni_bundle, input_wav, input_video)
    decisions, reply_at = check_protocol(journal)
    # 64 vision tokens per slice inside <image>...</image> whenever a frame came with the chunk.
    with_image = [d for d in decisions if d.info["vision_ms"] > 0]
    assert len(with_image) >= 8
    assert all((d.info["prefill"] - 1 - 10 - 2) % 64 == 0 for d in with_image)
    check_audio(tmp_path / "out.wav", 1, reply_at)


def test_audio_session_from_wav(tmp_path, audio_bundle, input_wav):
    journal = run(tmp_path, audio_bundle, input_wav)
    decisions, reply_at = check_protocol(journal)
    assert all(d.info["prefill"] == 11 for d in decisions)  # <unit> + 10 audio embeddings, no image
    check_audio(tmp_path / "out.wav", 1, reply_at)
