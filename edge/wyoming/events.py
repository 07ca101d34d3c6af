"""Reading one Wyoming event from a client, within bounds.

The `wyoming` package's reader trusts its peer: a header that is not JSON, not
an object, or that announces a 1 TB payload ends the connection with a
traceback, or waits for bytes that never come. Here every way an event can be
malformed is one sentence (`BadEvent`), so the server answers with an `error`
event and a log line, and no client can make it hold more than the bounds below.
"""
from __future__ import annotations

import asyncio
import json

from wyoming.event import Event

MAX_HEADER = 64 * 1024  # one JSON line; the package's own stream limit
MAX_DATA = 64 * 1024  # the data block that may follow the header
MAX_PAYLOAD = 1024 * 1024  # one audio chunk: Home Assistant sends a few kB at a time


class BadEvent(ValueError):
    """An event that cannot be read; the stream's framing is lost after it, so the connection ends."""


def _length(header: dict, key: str, limit: int) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadEvent(f"the event header's {key} must be a non-negative whole number, not {value!r}")
    if value > limit:
        raise BadEvent(f"the event header's {key} is {value} bytes; this server takes at most {limit}")
    return value


async def read_event(reader: asyncio.StreamReader) -> Event | None:
    """The next event, None at the end of the stream; `BadEvent` when it is malformed or too large."""
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadEvent("the connection ended in the middle of an event header") from None
    except asyncio.LimitOverrunError:
        raise BadEvent(f"an event header line is longer than {MAX_HEADER} bytes") from None
    except ValueError:  # the StreamReader's own limit, on some Python versions
        raise BadEvent(f"an event header line is longer than {MAX_HEADER} bytes") from None
    try:
        header = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadEvent("an event header is not JSON; send one JSON object per line") from None
    if not isinstance(header, dict):
        raise BadEvent(f"an event header must be a JSON object, not {type(header).__name__}")
    kind = header.get("type")
    if not isinstance(kind, str) or not kind:
        raise BadEvent("an event header has no type; every event needs a \"type\" string")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise BadEvent(f"the {kind} event's data must be a JSON object")
    data_length = _length(header, "data_length", MAX_DATA)
    payload_length = _length(header, "payload_length", MAX_PAYLOAD)
    try:
        if data_length:
            extra = json.loads(await reader.readexactly(data_length))
            if not isinstance(extra, dict):
                raise BadEvent(f"the {kind} event's data block must be a JSON object")
            data = {**data, **extra}
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError:
        raise BadEvent(f"the connection ended inside the {kind} event's data or payload") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BadEvent(f"the {kind} event's data block is not JSON") from None
    return Event(type=kind, data=data, payload=payload)
