"""The envelope: round trips, and every kind of bad input rejected with a reason, never a crash."""
from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from edge import messages as m
from edge.wire import Rejects, WireError, all_types, decode, encode


def frames_of(msg, payload=()):
    return encode(msg, seq=7, epoch=2, t_ns=123456789, src="capture", payload=payload)


def test_round_trip_keeps_fields_and_payload():
    pcm = bytes(range(256)) * 10
    env = decode(frames_of(m.AudioChunk(3, 1_000, 2_000, 16000, 1280), [pcm]))
    assert env.type == "audio_chunk" and env.topic == "media.audio"
    assert (env.seq, env.epoch, env.t_ns, env.src) == (7, 2, 123456789, "capture")
    assert env.msg == m.AudioChunk(3, 1_000, 2_000, 16000, 1280)
    assert env.payload == [pcm]


def test_every_registered_type_names_sender_and_receiver():
    for name, cls in all_types().items():
        assert cls.SENDERS and cls.RECEIVERS, name
        assert "->" in (cls.__doc__ or ""), f"{name} docstring must say who sends it to whom"


def test_unknown_fields_are_ignored_missing_fields_rejected():
    header = msgpack.unpackb(frames_of(m.Duck(0.3))[1])
    header["body"]["future_field"] = 1
    env = decode([b"dlg.duck", msgpack.packb(header)])
    assert env.msg.gain == 0.3
    del header["body"]["gain"]
    with pytest.raises(WireError, match="missing field"):
        decode([b"dlg.duck", msgpack.packb(header)])


@pytest.mark.parametrize("frames, reason", [
    ([b"x"], "short"),
    ([b"t", b"\xc1\xc1"], "malformed"),
    ([b"t", msgpack.packb([1, 2])], "malformed"),
    ([b"t", msgpack.packb({"v": 99, "type": "duck"})], "version"),
    ([b"t", msgpack.packb({"v": 1, "type": "no_such", "seq": 0, "epoch": 0, "t_ns": 0, "src": "a", "body": {}})],
     "unknown"),
    ([b"t", msgpack.packb({"v": 1, "type": "duck", "seq": "x", "epoch": 0, "t_ns": 0, "src": "a", "body": {}})],
     "malformed"),
    ([b"t", msgpack.packb({"v": 1, "type": "duck", "seq": 0, "epoch": 0, "t_ns": 0, "src": "a",
                           "body": {"gain": "loud"}})], "malformed"),
    ([b"t", b"x" * 70_000], "oversized"),
    ([b"t", b"h"] + [b""] * 20, "oversized"),
    ([b"\xff\xfe", msgpack.packb({})], "malformed"),
])
def test_bad_messages_rejected_with_reason(frames, reason):
    with pytest.raises(WireError) as err:
        decode(frames)
    assert err.value.reason == reason
    assert str(err.value)  # one sentence for the log


def test_fuzz_random_and_mutated_messages_are_counted_never_crash():
    rng = random.Random(1234)
    valid = [frames_of(m.AudioChunk(1, 0, 10, 16000, 4), [b"\x00" * 8]), frames_of(m.Duck(0.5, "x")),
             frames_of(m.SpeakText("id1", 1, 2, "hello", 0)), frames_of(m.Heartbeat("speech", {"a": 1}))]
    rejects = Rejects("fuzz")
    accepted = 0
    n = 3000
    for i in range(n):
        if i % 3 == 0:
            frames = [rng.randbytes(rng.randint(0, 40)) for _ in range(rng.randint(0, 5))]
        else:
            frames = [bytearray(f) for f in rng.choice(valid)]
            for _ in range(rng.randint(1, 4)):
                f = rng.choice(frames)
                if f:
                    f[rng.randrange(len(f))] = rng.randrange(256)
            frames = [bytes(f) for f in frames]
        try:
            decode(frames)
            accepted += 1
        except WireError as err:
            rejects.add(err)
    assert accepted + rejects.total == n
    assert rejects.total > n // 2
    assert set(rejects.counts) <= {"short", "malformed", "version", "unknown", "oversized", "contradicts"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=6))
def test_any_bytes_either_decode_or_raise_wire_error(frames):
    try:
        decode(frames)
    except WireError:
        pass
