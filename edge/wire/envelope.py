"""The envelope: multipart `[topic, header, payload...]`, header in msgpack.

Header keys: v (wire version), type, seq, epoch, t_ns, src, and `body` (the
message fields); on the direct bus also `after` ({sender: seq} of what the sending node had handled, so the
recorder can journal causes before their effects). Decoding never raises to the caller's loop: `decode`
raises `WireError` with a one-sentence reason, and `Rejects` counts them.
"""
from __future__ import annotations

import collections
import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

import msgpack

from .registry import Message, from_body, lookup

WIRE_VERSION = 1
MAX_HEADER_BYTES = 64 * 1024
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
MAX_FRAMES = 16

log = logging.getLogger(__name__)


class WireError(ValueError):
    """A message that cannot be accepted; `reason` is a short key for counters."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass
class Envelope:
    topic: str
    type: str
    seq: int
    epoch: int
    t_ns: int
    src: str
    msg: Message
    payload: list[bytes] = field(default_factory=list)
    header: bytes = b""  # the header frame as received, so a recorder stores it without re-encoding
    after: dict[str, int] = field(default_factory=dict)  # the newest seq per sender its sender had handled


def encode(msg: Message, *, seq: int, epoch: int, t_ns: int, src: str,
           payload: Sequence[bytes] = (), topic: str | None = None, after: dict[str, int] | None = None
           ) -> list[bytes]:
    header = {"v": WIRE_VERSION, "type": msg.TYPE, "seq": seq, "epoch": epoch,
              "t_ns": t_ns, "src": src, "body": msg.body()}
    if after:
        header["after"] = after
    raw = msgpack.packb(header, use_bin_type=True)
    if len(raw) > MAX_HEADER_BYTES:
        raise WireError("oversized", f"{msg.TYPE} header is {len(raw)} bytes, over the {MAX_HEADER_BYTES}-byte limit")
    return [(topic or msg.TOPIC).encode(), raw, *[bytes(p) for p in payload]]


def with_seq(frames: Sequence[bytes], seq: int) -> list[bytes]:
    """The same message under another sequence number (a re-send is a new send in its sender's order)."""
    header = msgpack.unpackb(bytes(frames[1]), raw=False)
    header["seq"] = seq
    return [bytes(frames[0]), msgpack.packb(header, use_bin_type=True), *[bytes(f) for f in frames[2:]]]


def peek(frames: Sequence[bytes]) -> tuple[str, int, str] | None:
    """(src, seq, type) from the header alone, or None where `decode` would have to say what is wrong."""
    if len(frames) < 2 or len(frames[1]) > MAX_HEADER_BYTES:
        return None
    try:
        header = msgpack.unpackb(bytes(frames[1]), raw=False, strict_map_key=True)
    except Exception:  # msgpack raises several unrelated types; decode names the problem
        return None
    if not isinstance(header, dict):
        return None
    src, seq, type_name = header.get("src"), header.get("seq"), header.get("type")
    if not isinstance(src, str) or not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(type_name, str):
        return None
    return src, seq, type_name


def decode(frames: Sequence[bytes]) -> Envelope:
    if len(frames) < 2:
        raise WireError("short", f"expected at least 2 frames (topic, header), got {len(frames)}")
    if len(frames) > MAX_FRAMES:
        raise WireError("oversized", f"{len(frames)} frames is over the limit of {MAX_FRAMES}")
    total = sum(len(f) for f in frames)
    if total > MAX_MESSAGE_BYTES:
        raise WireError("oversized", f"message of {total} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    if len(frames[1]) > MAX_HEADER_BYTES:
        raise WireError("oversized", f"header of {len(frames[1])} bytes is over the {MAX_HEADER_BYTES}-byte limit")
    try:
        topic = bytes(frames[0]).decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("malformed", "topic is not UTF-8") from None
    try:
        header = msgpack.unpackb(bytes(frames[1]), raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types
        raise WireError("malformed", f"header is not valid msgpack ({type(exc).__name__})") from None
    if not isinstance(header, dict):
        raise WireError("malformed", "header is not a map")
    if header.get("v") != WIRE_VERSION:
        raise WireError("version", f"wire version {header.get('v')!r} is not {WIRE_VERSION}")
    type_name = header.get("type")
    cls = lookup(type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise WireError("unknown", f"unknown message type {type_name!r}")
    meta = {k: header.get(k) for k in ("seq", "epoch", "t_ns")}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in meta.values()):
        raise WireError("malformed", f"{type_name}: seq, epoch and t_ns must be integers")
    if not all(0 <= v <= INT64_MAX for v in meta.values()):
        raise WireError("contradicts", f"{type_name}: seq, epoch and t_ns must be from 0 to 2**63-1")
    src = header.get("src")
    body = header.get("body")
    if not isinstance(src, str) or not isinstance(body, dict):
        raise WireError("malformed", f"{type_name}: src must be a string and body a map")
    try:
        msg = from_body(cls, body)
        _check_types(msg)
    except (TypeError, ValueError) as exc:
        raise WireError("malformed", str(exc)) from None
    after = header.get("after", {})
    if not isinstance(after, dict) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                              for k, v in after.items()):
        raise WireError("malformed", f"{type_name}: after must map sender names to sequence numbers")
    payload = [bytes(f) for f in frames[2:]]
    problem = _out_of_range(msg) or msg.contradiction(payload)
    if problem:
        raise WireError("contradicts", f"{type_name}: {problem}")
    return Envelope(topic, type_name, meta["seq"], meta["epoch"], meta["t_ns"], src, msg, payload, bytes(frames[1]),
                    after)


INT64_MAX = 2 ** 63 - 1


def _out_of_range(msg: Message) -> str | None:
    """Numbers every node stores or computes with: integers fit 64 bits (the store, numpy), floats are finite."""
    import math
    from dataclasses import fields as dc_fields

    for f in dc_fields(msg):
        value = getattr(msg, f.name)
        if isinstance(value, int) and not isinstance(value, bool) and not -INT64_MAX - 1 <= value <= INT64_MAX:
            return f"{f.name} {value} does not fit 64 bits"
        if isinstance(value, float) and math.isnan(value):
            return f"{f.name} is not a number"
    return None


_SIMPLE = {"int": int, "float": (int, float), "str": str, "bool": bool, "bytes": bytes, "dict": dict, "list": list}


def _check_types(msg: Message) -> None:
    """Reject fields whose value does not match a simple declared type (annotations are strings)."""
    from dataclasses import fields as dc_fields

    for f in dc_fields(msg):
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        value = getattr(msg, f.name)
        optional = "None" in ann
        base = ann.replace("| None", "").replace("None |", "").strip().split("[")[0]
        if value is None:
            if not optional and f.default is not None:
                raise ValueError(f"{msg.TYPE}.{f.name} must not be null")
            continue
        expected = _SIMPLE.get(base)
        if expected is None:
            continue
        if isinstance(value, bool) and base in ("int", "float"):
            raise ValueError(f"{msg.TYPE}.{f.name} must be {base}, got bool")
        if not isinstance(value, expected):
            raise ValueError(f"{msg.TYPE}.{f.name} must be {base}, got {type(value).__name__}")


class Rejects:
    """Counts rejected messages by reason and logs each with its sentence (rate-limited)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.counts: collections.Counter[str] = collections.Counter()

    def add(self, err: WireError) -> None:
        self.counts[err.reason] += 1
        n = self.counts[err.reason]
        if n <= 10 or n % 1000 == 0:
            log.warning("%s dropped a message (%s, #%d): %s", self.owner, err.reason, n, err)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return dict(self.counts)
