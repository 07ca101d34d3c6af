"""Session settings: what a user sets (`SessionConfig`), checked once, then one typed settings object per node.

The CLI (or replay, a benchmark, a test) fills a `SessionConfig`;
`node_settings` checks every value and builds each node's own frozen
settings before any process starts. A bad value is one sentence
(`SettingsError`); no node reads raw keys with defaults of its own.
"""
from __future__ import annotations

import os
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Callable, Iterable, Mapping

from edge.capture.audio import mic_is_file
from edge.capture.room import RoomSettings
from edge.detect.wake import WAKE_WORDS, WakeWordError, wake_name
from edge.formats import KV_TYPES, listed
from edge.options import SettingsError, typed  # noqa: F401  (SettingsError is raised and caught by that name)


def default_threads() -> int:
    """Model threads: 1 on a machine with 2 cores or fewer (the rest of the graph needs the other), else 4."""
    return 1 if (os.cpu_count() or 1) <= 2 else 4


Rule = tuple[Callable[[Any], bool], str]  # (test, what a good value is)
POSITIVE: Rule = (lambda v: v > 0, "greater than 0")


def setting(default: Any = MISSING, *, factory: Any = MISSING, must: Rule | None = None) -> Any:
    """A SessionConfig field with an optional rule its value must follow."""
    return field(default=default, default_factory=factory, metadata={"must": must} if must else {})


def _is_wake_word(name: str) -> bool:
    try:
        wake_name(name)
    except WakeWordError:
        return False
    return True


@dataclass
class SessionConfig:
    """Everything a session is run with. The journal records it (flattened) and replay rebuilds it from there.

    To add a setting, add a field here: its type, its default, a comment, and `must=` where some values are
    wrong. That is the whole change: `check` tests it, the journal records it, replay restores it, the model
    builders (frontends, voices, see `models`) receive it under its name, and a node that reads it itself
    gets it by declaring a field of the same name in its settings class below (filled from here by name).
    """

    mic: str | None = None  # file path, device index/name, or None for the default microphone
    camera: str | None = None  # camera index, video file, image folder, gst:PIPELINE or picamera
    speaker: str | None = None  # file path (time-aligned WAV), device, or "null"
    speaker_rate: int = setting(24000, must=POSITIVE)
    journal: str | None = None
    chunk_ms: int = setting(1000, must=(lambda v: 10 <= v <= 10_000, "from 10 to 10000 ms (the model hears whole chunks)"))
    realtime: bool = True  # file input paced in real time; False: as fast as the graph allows (virtual clock)
    pace: float = setting(1.0, must=POSITIVE)  # >1 feeds a file faster than real time (benchmarks)
    frontend: str = "default"
    voice: str = "espeak"
    threads: int = setting(factory=default_threads, must=(lambda v: v >= 1, "at least 1"))
    video_fps: float = setting(1.0, must=(lambda v: 0 <= v <= 120, "from 0 to 120"))  # 0: the camera is not read
    # A camera frame's longer side on the bus and in the journal (0: as captured), and its JPEG quality (0: raw
    # rgb24 at the captured size, about 5 GB an hour at 1280x720); see edge/capture/frame_codec.py.
    frame_side: int = setting(640, must=(lambda v: v == 0 or 16 <= v <= 16384, "0 or from 16 to 16384 pixels"))
    frame_quality: int = setting(80, must=(lambda v: 0 <= v <= 100, "from 0 (raw frames) to 100"))
    context: int | None = setting(None, must=(lambda v: v is None or v >= 256, "at least 256 tokens"))  # None: the frontend's own
    kv_type: str | None = setting(None, must=(lambda v: v is None or v in KV_TYPES, listed(KV_TYPES)))  # None: f16
    echo_cancel: str | bool = "auto"  # auto: on for a live microphone; false where the device cancels echo itself
    room_echo: dict | bool | None = None  # tests and benchmarks: mix the assistant's output back into the microphone
    barge_in: bool = True  # duck on speech onset over playback, then the barge-in policy decides
    duck_gain: float = setting(0.3, must=(lambda v: 0.0 <= v <= 1.0, "between 0 and 1"))
    # The wake word (a model shipped in pymicro-wakeword); None: the frontend hears everything, always.
    wake: str | None = setting(None, must=(lambda v: v is None or _is_wake_word(v), f"one of {', '.join(WAKE_WORDS)}"))
    wake_idle_s: float = setting(10.0, must=POSITIVE)  # with a wake word: idle this long, the conversation ends
    # A file input: after its last chunk, wait at most this long (session time) for delegated work still owed an
    # answer, listening to a quiet room meanwhile; 0 ends the input at the file's end (edge/nodes/capture_tail.py).
    answer_wait_s: float = setting(30.0, must=(lambda v: 0 <= v <= 3600, "from 0 to 3600 seconds"))
    extra: dict = field(default_factory=dict)  # options without a field of their own (asr, harness, venus, ...)

    def as_dict(self) -> dict:
        """The flat form: every field, extras merged in (what the journal records)."""
        d = asdict(self)
        d.update(d.pop("extra"))
        return d

    @classmethod
    def from_dict(cls, flat: Mapping[str, Any]) -> "SessionConfig":
        """The inverse of `as_dict`: known names become fields, the rest goes to `extra`."""
        names = {f.name for f in fields(cls)} - {"extra"}
        extra = {**(flat.get("extra") or {}), **{k: v for k, v in flat.items() if k not in names and k != "extra"}}
        return cls(**{k: v for k, v in flat.items() if k in names}, extra=extra)

    def check(self) -> None:
        """Raise SettingsError on the first value of the wrong type or outside its rule."""
        hints = typing.get_type_hints(type(self))
        for f in fields(self):
            value = typed(f.name, getattr(self, f.name), hints[f.name])
            setattr(self, f.name, value)
            rule = f.metadata.get("must")
            if rule is not None and not rule[0](value):
                raise SettingsError(f"{f.name} is {value!r}; it must be {rule[1]}.")


# --- full duplex: read the same way by capture and speech ------------------------------------------------------
@dataclass(frozen=True)
class DuplexSettings:
    cancel: bool  # cancel the echo of our own playback in capture
    room: RoomSettings | None  # simulated room echo mixed into the microphone (tests, benchmarks)
    reference: bool  # the speech node publishes what it plays
    detect: bool  # sub-chunk onset detection in capture, ducking, and the barge-in policy
    duck_gain: float


def duplex_settings(config: SessionConfig | Mapping[str, Any]) -> DuplexSettings:
    """`echo_cancel`: "auto" (on for a live microphone or a simulated room, off for a file, which holds no echo
    of this session), true, or false (the device already cancels echo)."""
    cfg = config if isinstance(config, SessionConfig) else SessionConfig.from_dict(config)
    cfg.check()
    try:
        room = RoomSettings.from_config(cfg.room_echo) if cfg.room_echo not in (None, False) else None
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    mode = cfg.echo_cancel
    if isinstance(mode, str) and mode.lower() in ("true", "on", "1", "yes"):
        mode = True
    elif isinstance(mode, str) and mode.lower() in ("false", "off", "0", "no"):
        mode = False
    if mode not in (True, False, "auto"):
        raise SettingsError(f"echo_cancel must be auto, true or false, not {mode!r}.")
    cancel = (room is not None or not mic_is_file(cfg.mic)) if mode == "auto" else bool(mode)
    if (cancel or room is not None) and cfg.chunk_ms % 10:
        raise SettingsError(f"echo cancellation works on 10 ms frames: chunk_ms must be a multiple of 10, "
                            f"not {cfg.chunk_ms}.")
    # Ducking needs to know when the assistant is audible, so the reference flows whenever any of it is on.
    return DuplexSettings(cancel, room, cancel or room is not None or cfg.barge_in, cfg.barge_in, cfg.duck_gain)


# --- one settings object per node -------------------------------------------------------------------------------
# A field named like a SessionConfig field (or an `extra` option) is filled from it; a default here serves only
# options that SessionConfig has no field for. `models` is the session's flat mapping: the model builders
# (edge/frontend, edge/speech) take their own options from it by name.
@dataclass(frozen=True)
class CaptureSettings:
    mic: str | None
    camera: str | None
    chunk_ms: int
    pace: float
    video_fps: float
    threads: int
    duplex: DuplexSettings
    frame_side: int = 640  # see SessionConfig
    frame_quality: int = 80
    # A chunk quieter than this (RMS, dB below full scale) is a quiet room: sent as silence, header only, so
    # nothing downstream runs models on it and the journal does not grow with it.
    quiet_dbfs: float = -60.0
    wake: str | None = None  # the wake word; None: the frontend hears everything
    wake_idle_s: float = 10.0
    answer_wait_s: float = 0.0  # a file's end waits this long for delegated answers (0 without a harness)

    @property
    def chunk_ns(self) -> int:
        return self.chunk_ms * 1_000_000


@dataclass(frozen=True)
class FrontendSettings:
    frontend: str
    barge_in: bool
    models: dict
    frontend_busy_s: float = 60.0  # one step runs models and sends no heartbeat meanwhile; a loaded CPU is slow
    sees: bool = False  # a vision node describes the frames: on the virtual clock a chunk waits for its frames' descriptions
    realtime: bool = True  # SessionConfig's own default: a flat mapping from before the field had none


@dataclass(frozen=True)
class SpeechSettings:
    voice: str
    speaker: str | None
    speaker_rate: int
    chunk_ms: int
    reference: bool  # publish what is played (for echo cancellation and ducking in capture)
    models: dict

    @property
    def chunk_ns(self) -> int:
        return self.chunk_ms * 1_000_000


@dataclass(frozen=True)
class HarnessNodeSettings:
    frontend: str
    journal: str | None
    threads: int
    harness: dict = field(default_factory=dict)  # skills, MCP servers, chat endpoint, router, store folder
    memory_dir: str | None = None  # the vision node's archive, when the session has one (the harness reads it)


@dataclass(frozen=True)
class VisionSettings:
    threads: int
    realtime: bool
    memory_dir: str  # the memory archive's folder (next to the journal unless set)
    frontend: str = "default"  # bundle:DIR (an Omni bundle): kept frames are stored with its vision tokens
    memory_mb: float = 512.0  # its disk budget; the oldest frames go first
    stale_s: float = 1.5  # real time: a frame that waited longer than this is skipped for a newer one


@dataclass(frozen=True)
class RecorderSettings:
    journal: str | None
    session: dict  # the flat session configuration, written into the journal header for replay


def _fill(cls: type, flat: Mapping[str, Any], **derived: Any) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs = dict(derived)
    for f in fields(cls):
        if f.name not in derived and f.name in flat:
            kwargs[f.name] = typed(f.name, flat[f.name], hints[f.name])
    return cls(**kwargs)


def memory_dir(flat: Mapping[str, Any]) -> str:
    """The memory archive's folder: `memory_dir` when set, else beside the journal (or a temporary folder)."""
    if flat.get("memory_dir"):
        return str(typed("memory_dir", flat["memory_dir"], str))
    if flat.get("journal"):
        return f"{flat['journal']}.memory"
    import tempfile
    return tempfile.mkdtemp(prefix="venus-memory-")


def node_settings(cfg: SessionConfig, names: Iterable[str]) -> dict[str, Any]:
    """Each named node's settings, built once from the checked session configuration."""
    names = list(names)
    cfg.check()
    flat = cfg.as_dict()
    duplex = duplex_settings(cfg)
    echo_reference = typed("echo_reference", flat.get("echo_reference", False), bool)  # tests: always publish it
    # One archive folder for the vision node that writes it and the harness that answers from it.
    archive = memory_dir(flat) if "vision" in names else None
    build: dict[str, Callable[[], Any]] = {
        # Only a graph with a frontend and a harness has delegated answers a file's end could wait for.
        # At most one frame a chunk: the frontend sees each chunk's newest frame, so more would only fill the
        # journal and the vision node's queue with frames nobody looks at.
        "capture": lambda: _fill(CaptureSettings, {**flat, **({} if {"frontend", "harness"} <= set(names)
                                                             else {"answer_wait_s": 0.0})}, duplex=duplex,
                                 video_fps=min(cfg.video_fps, 1000 / cfg.chunk_ms)),
        "frontend": lambda: _fill(FrontendSettings, flat, models=flat, sees="vision" in names),
        "speech": lambda: _fill(SpeechSettings, flat, reference=echo_reference or duplex.reference, models=flat),
        "harness": lambda: _fill(HarnessNodeSettings, flat, memory_dir=archive),
        "recorder": lambda: _fill(RecorderSettings, flat, session=flat),
        "vision": lambda: _fill(VisionSettings, flat, memory_dir=archive),
    }
    return {n: build[n]() for n in names if n in build}
