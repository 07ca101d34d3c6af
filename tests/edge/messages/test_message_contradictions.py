"""Every message type checks its payload against its header before a handler sees it.

A contradicting message (odd-length PCM, a frame of the wrong size, an absurd
sample rate, an integer past 64 bits, a negative length) is a WireError with
reason "contradicts", which the node's receive path counts and drops; any other
exception out of `decode` would reach a node's loop and restart it.
"""
from __future__ import annotations

import dataclasses

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import edge.messages  # noqa: F401  (registers every type)
from edge import messages as m
from edge.wire import WireError, decode, encode
from edge.wire.envelope import Rejects
from edge.wire.registry import all_types

TYPES = sorted(all_types())
ANY = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 64 - 1), st.floats(allow_nan=True),
                st.text(max_size=8), st.binary(max_size=8), st.lists(st.integers(-2 ** 63, 2 ** 64 - 1), max_size=4),
                st.dictionaries(st.text(max_size=4), st.integers(-2 ** 63, 2 ** 64 - 1), max_size=2))
BIG = st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1), st.sampled_from([0, 1, -1, 2 ** 62, 2 ** 63, 2 ** 64 - 1, 16000, 24000]))


def typed(ann: str):
    """Mostly the declared type (so the checks beyond types are reached), sometimes anything."""
    base = ann.replace("| None", "").strip().split("[")[0]
    own = {"int": BIG, "float": st.floats(allow_nan=True), "str": st.sampled_from(["onset", "offset", "rgb24", "jpeg",
                                                                                   "x", ""]),
           "bool": st.booleans(), "list": st.lists(BIG, max_size=4), "dict": st.dictionaries(st.text(max_size=3),
                                                                                             st.integers(-2 ** 63, 2 ** 64 - 1))}
    return st.one_of(own.get(base, ANY), ANY) if base in own else ANY


def body_of(cls) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({f.name: typed(f.type if isinstance(f.type, str) else f.type.__name__)
                                  for f in dataclasses.fields(cls)})


def frames(type_name: str, body: dict, payload: list[bytes], seq: int = 1) -> list[bytes]:
    header = {"v": 1, "type": type_name, "seq": seq, "epoch": 0, "t_ns": 0, "src": "test", "body": body}
    return [all_types()[type_name].TOPIC.encode(), msgpack.packb(header, use_bin_type=True), *payload]


@pytest.mark.parametrize("type_name", TYPES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decode_accepts_only_consistent_messages(type_name, data):
    cls = all_types()[type_name]
    body = data.draw(body_of(cls))
    payload = data.draw(st.lists(st.binary(max_size=64), max_size=3))
    try:
        env = decode(frames(type_name, body, payload))
    except WireError as exc:
        assert exc.reason in ("malformed", "contradicts") and str(exc)
        return
    # What gets through is consistent: numbers fit 64 bits, and the type's own check holds.
    for f in dataclasses.fields(env.msg):
        value = getattr(env.msg, f.name)
        if isinstance(value, int) and not isinstance(value, bool):
            assert -2 ** 63 <= value < 2 ** 63
    assert env.msg.contradiction(env.payload) is None


def good_chunk(**over) -> dict:
    return {"index": 3, "t_start_ns": 3_000_000_000, "t_end_ns": 4_000_000_000, "sample_rate": 16000,
            "n_samples": 4, **over}


@pytest.mark.parametrize("type_name, body, payload, phrase", [
    ("audio_chunk", good_chunk(), [b"\0" * 7], "holds 7 bytes, not the 8"),  # odd-length PCM
    ("audio_chunk", good_chunk(sample_rate=2 ** 62), [b"\0" * 8], "sample_rate 4611686018427387904 is outside"),
    ("audio_chunk", good_chunk(n_samples=-4), [b""], "n_samples is -4"),
    ("audio_chunk", good_chunk(index=2 ** 63), [b"\0" * 8], "does not fit 64 bits"),
    ("audio_chunk", good_chunk(t_end_ns=0), [b"\0" * 8], "not a span of session time"),
    ("video_frame", {"index": 0, "t_ns": 0, "width": 4, "height": 4, "encoding": "rgb24"}, [b"\0" * 47],
     "not the 48 of a 4x4 rgb24 frame"),
    ("video_frame", {"index": 0, "t_ns": 0, "width": 2 ** 40, "height": 1, "encoding": "rgb24"}, [b""],
     "outside 1..16384 pixels"),
    ("playback_ref", {"t_ns": 0, "sample_rate": 24000, "n_samples": 3}, [b"\0" * 5], "holds 5 bytes, not the 6"),
    ("speak_text", {"id": "a", "utterance": 0, "index": 0, "text": "hi", "token_ids": [1, 2], "hidden_dim": 4},
     [b"\0" * 15], "not the 16 of 2 float16 rows of 4"),
    ("speech_activity", {"kind": "boom", "onset_ns": 0, "t_ns": 0}, [], "neither onset nor offset"),
    ("audio_so_far", {"index": 3, "t_start_ns": 3_000_000_000, "t_from_ns": 2_000_000_000, "t_end_ns": 3_100_000_000,
                      "n_samples": 4}, [b"\0" * 8], "does not lie after the chunk's start"),
    ("audio_so_far", {"index": 3, "t_start_ns": 0, "t_from_ns": 0, "t_end_ns": 1, "n_samples": 4}, [b"\0" * 6],
     "holds 6 bytes, not the 8"),
    ("draft_ahead", {"index": 2, "t_ns": 5, "text": "  "}, [], "carries no words"),
    ("delegate_request", None, [], "does not fit 64 bits"),
])
def test_each_contradiction_is_one_counted_sentence(type_name, body, payload, phrase):
    if body is None:  # a reliable harness message with an integer past 64 bits
        cls = all_types()[type_name]
        body = {f.name: (2 ** 63 if "int" in str(f.type) else "x") for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    rejects = Rejects("test")
    with pytest.raises(WireError) as err:
        decode(frames(type_name, body, payload))
    assert err.value.reason == "contradicts" and phrase in str(err.value) and "\n" not in str(err.value)
    rejects.add(err.value)
    assert rejects.as_dict() == {"contradicts": 1}


def test_what_the_nodes_send_still_decodes():
    pcm = b"\1\0" * 160
    for msg, payload in [(m.AudioChunk(0, 0, 10_000_000, 16000, 160), [pcm]),
                         (m.PlaybackReference(5, 24000, 160), [pcm]), (m.PlaybackReference(5, 0, 0), [b""]),
                         (m.VideoFrame(0, 0, 2, 2, "rgb24"), [b"\0" * 12]),
                         (m.SpeakText("x", 0, 0, "hi", 0, "", [5, 6], 2), [b"\0" * 8])]:
        env = decode(encode(msg, seq=0, epoch=0, t_ns=0, src="t", payload=payload))
        assert env.msg == msg and env.payload == payload
