"""The session settings for full-duplex behaviour, read the same way by capture, speech and frontend."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edge.capture.room import RoomSettings


@dataclass
class DuplexSettings:
    cancel: bool  # cancel the echo of our own playback in capture
    room: RoomSettings | None  # simulated room echo mixed into the microphone (tests, benchmarks)
    reference: bool  # the speech node publishes what it plays
    detect: bool  # sub-chunk onset detection in capture, ducking, and the barge-in policy
    duck_gain: float


def is_file_input(mic: str | None) -> bool:
    return bool(mic) and (Path(str(mic)).suffix.lower() in (".wav", ".flac", ".ogg") or Path(str(mic)).exists())


def duplex_settings(config: dict) -> DuplexSettings:
    """`echo_cancel`: "auto" (default: on for a live microphone or a simulated room, off for a file, which holds
    no echo of this session), true, or false (the device already cancels echo)."""
    room_cfg = config.get("room_echo")
    room = RoomSettings.from_config(room_cfg) if room_cfg not in (None, False) else None
    mode = config.get("echo_cancel", "auto")
    if isinstance(mode, str) and mode.lower() in ("true", "on", "1", "yes"):
        mode = True
    elif isinstance(mode, str) and mode.lower() in ("false", "off", "0", "no"):
        mode = False
    if mode not in (True, False, "auto"):
        raise ValueError(f"echo_cancel must be auto, true or false, not {mode!r}")
    cancel = (room is not None or not is_file_input(config.get("mic"))) if mode == "auto" else bool(mode)
    gain = float(config.get("duck_gain", 0.3))
    if not 0.0 <= gain <= 1.0:
        raise ValueError(f"duck_gain must be between 0 and 1, not {gain}")
    chunk_ms = int(config.get("chunk_ms", 1000))
    if (cancel or room is not None) and chunk_ms % 10:
        raise ValueError(f"echo cancellation works on 10 ms frames: chunk_ms must be a multiple of 10, not {chunk_ms}")
    detect = bool(config.get("barge_in", True))
    # Ducking needs to know when the assistant is audible, so the reference flows whenever any of it is on.
    return DuplexSettings(cancel, room, cancel or room is not None or detect, detect, gain)
