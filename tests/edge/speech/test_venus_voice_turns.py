"""The Venus voice keeps one TTS context and one token2wav stream across a turn's chunks.

"The turn synthesized whole" is its chunks' conditions fed, in order, into one TTS context (each chunk's
codes decoded after it; greedy here, so the reference needs no sampler) and all its codes streamed through
token2wav at once. Tolerances: codes identical; audio within 1e-5 (max abs; the same graphs on the same
inputs, measured 0.0); at every chunk seam the sample step and the 20 ms energy change are no larger than
the largest anywhere in the whole-turn audio.
"""
from __future__ import annotations

import time
import uuid

import numpy as np
import pytest
import soundfile as sf
import zmq

from edge import messages as m
from edge.backends.llama import LlamaModel
from edge.bundle.settings import VenusSettings
from edge.clock import VirtualClock
from edge.graph.node import NodeIO
from edge.graph.reliable import Outbox
from edge.nodes.speech import SpeechNode
from edge.settings import SessionConfig, node_settings
from edge.speech.venus.voice import VenusVoice
from edge.wire.envelope import Envelope, decode

from venus_support import BASE

GREEDY = {**BASE, "tts_chunk_draws": 26, "tts_sampling": {"temperature": 0.0, "repetition_penalty": 1.0}}
SIZES = (5, 7, 4)  # spoken tokens per chunk of the turn


@pytest.fixture(scope="module")
def voice(exported_audio_bundle):
    v = VenusVoice(exported_audio_bundle, VenusSettings.from_dict(GREEDY))
    yield v
    v.close()


def turn_chunks(voice, seed: int = 1) -> list[tuple[list[int], np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [([int(t) for t in rng.integers(20, 800, n)], rng.standard_normal((n, voice.tts.llm_dim)).astype(np.float32))
            for n in SIZES]


def whole_turn_codes(voice, chunks) -> list[np.ndarray]:
    """One TTS context for the whole turn, decoded greedily chunk after chunk (a model of its own)."""
    model = LlamaModel(voice.bundle.tts, 2048, 1, 0, has_vocab=False)
    try:
        out = []
        for i, (ids, hidden) in enumerate(chunks):
            logits = model.prefill_embeddings(voice.tts.condition(ids, hidden), True)
            codes: list[int] = []
            may_end = i in (0, len(chunks) - 1)  # only where the turn starts or ends
            for t in range(26):  # the reference's budget: 26 draws, the last dropped
                x = logits.astype(np.float64)
                if not may_end:
                    x[voice.tts.n_speech:] = -np.inf
                code = int(np.argmax(x))
                if code >= voice.tts.n_speech or t == 25:
                    break
                codes.append(code)
                logits, _ = model.step(code)
            out.append(np.asarray(codes, np.int64))
        return out
    finally:
        model.close()


def seam_steps(audio: np.ndarray, seams: list[int]) -> tuple[float, float]:
    """The largest sample step and 20 ms energy change (dB) at the given sample positions."""
    def db(x: np.ndarray) -> float:
        return 10 * np.log10(np.mean(x.astype(np.float64) ** 2) + 1e-12)
    step = max(abs(float(audio[s] - audio[s - 1])) for s in seams)
    energy = max(abs(db(audio[s - 480:s]) - db(audio[s:s + 480])) for s in seams)
    return step, energy


def test_a_turn_chunk_by_chunk_is_the_turn_synthesized_whole(voice):
    chunks = turn_chunks(voice)
    pieces, seams = [], []
    for i, (ids, hidden) in enumerate(chunks):
        got = list(voice.synthesize_states("words", ids, hidden, turn=(0, 1), final=i == len(chunks) - 1))
        pieces += got
        seams.append(sum(len(p) for p in pieces))
    chunked = np.concatenate(pieces)
    codes = voice.turn_codes
    ref_codes = whole_turn_codes(voice, chunks)
    assert [c.tolist() for c in codes] == [c.tolist() for c in ref_codes]  # the TTS context carried over
    whole = np.concatenate(list(voice.t2w.stream_codes(np.concatenate(codes))))
    assert len(chunked) == len(whole) == len(np.concatenate(codes)) * 960  # nothing lost or doubled at a seam
    np.testing.assert_allclose(chunked, whole, atol=1e-5)
    inner = [s for s in seams[:-1] if 480 <= s <= len(whole) - 480]
    assert inner  # the chunks' audio ends inside the turn
    step, energy = seam_steps(chunked, inner)
    whole_step = float(np.abs(np.diff(whole)).max())
    whole_energy = max(seam_steps(whole, list(range(480, len(whole) - 480, 480))))
    assert step <= whole_step and energy <= whole_energy


def test_the_next_turn_and_an_interrupt_start_afresh(voice):
    chunks = turn_chunks(voice, seed=2)
    fresh = list(voice.synthesize_states("w", *chunks[1], turn=(0, 7), final=False))
    fresh_codes = voice.turn_codes[0].copy()
    list(voice.synthesize_states("w", *chunks[0], turn=(0, 8), final=False))
    list(voice.synthesize_states("w", *chunks[1], turn=(0, 8), final=False))
    assert not np.array_equal(voice.turn_codes[1], fresh_codes)  # inside a turn, a chunk follows the last
    # A new epoch (an interrupt) is a new turn: the same words start from scratch.
    again = list(voice.synthesize_states("w", *chunks[1], turn=(1, 8), final=False))
    np.testing.assert_array_equal(voice.turn_codes[0], fresh_codes)
    assert sum(map(len, again)) == sum(map(len, fresh))


def test_the_speech_node_lets_out_a_turn_that_ends_without_words(exported_audio_bundle, tmp_path):
    """Chunks 1-2 speak, chunk 3 ends the turn with no words: the tail held for the next window still plays."""
    out = tmp_path / "out.wav"
    # The node's real NodeIO over in-process sockets; what it publishes is read back from a subscriber.
    ctx = zmq.Context.instance()
    tag = uuid.uuid4().hex[:8]
    pub, sub = ctx.socket(zmq.PUB), ctx.socket(zmq.SUB)
    ctl, supervisor = ctx.socket(zmq.DEALER), ctx.socket(zmq.ROUTER)
    pub.bind(f"inproc://pub-{tag}")
    sub.connect(f"inproc://pub-{tag}")
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    supervisor.bind(f"inproc://ctl-{tag}")
    ctl.connect(f"inproc://ctl-{tag}")
    time.sleep(0.1)  # let the subscription reach the publisher
    io = NodeIO("speech", pub, ctl, VirtualClock(), Outbox())
    cfg = SessionConfig(voice=f"bundle:{exported_audio_bundle}", speaker=str(out), realtime=False,
                        extra={"venus": GREEDY})
    node = SpeechNode(io, node_settings(cfg, ["speech"])["speech"], {})
    node.setup()
    voice = node.decoder
    chunks = turn_chunks(voice, seed=3)[:2]
    t = 10**9

    def deliver(msg, payload=()):
        node.on_message(Envelope(msg.TOPIC, msg.TYPE, 0, 0, t, "frontend", msg, list(payload)))

    for k, (ids_, hidden) in enumerate(chunks, start=1):
        deliver(m.ChunkDecision(k, "speak", "words"))
        deliver(m.SpeakText(f"s{k}", 1, k, "words", 0, "", ids_, hidden.shape[1]),
                [hidden.astype(np.float16).tobytes()])
    assert len(voice.t2w.held)  # the turn goes on: its last codes wait for a window or the turn's end
    deliver(m.ChunkDecision(3, "speak", "", turn_end=True))
    assert not len(voice.t2w.held)
    deliver(m.FrontendDone(3, 4 * 10**9))
    while not node.done:
        node.tick()
    node.close()
    audio, rate = sf.read(str(out), dtype="float32")
    codes = np.concatenate(voice.turn_codes)
    whole = np.concatenate(list(voice.t2w.stream_codes(codes)))
    start = t * rate // 10**9
    np.testing.assert_allclose(audio[start:start + len(whole)], whole, atol=1e-4)  # 16-bit file
    assert not np.any(audio[start + len(whole):])
    published = []
    while sub.poll(100):
        published.append(decode(sub.recv_multipart()).msg)
    for sock in (pub, sub, ctl, supervisor):
        sock.close(linger=0)
    acks = [p for p in published if isinstance(p, m.PlaybackAck)]
    assert sum(a.samples for a in acks) == len(whole) == len(codes) * 960
