"""Media messages: audio chunks and video frames from capture, stamped once, and the playback reference."""
from __future__ import annotations

import numpy as np

from edge.audio_format import RATE
from edge.wire.registry import Message, message

RATES = range(8000, 192001)  # sample rates any capture or output device uses
MAX_SIDE = 16384  # pixels


def _pcm(n_samples: int, payload: list[bytes]) -> str | None:
    """PCM s16le in payload frame 0 holding exactly n_samples (none at all when n_samples is 0)."""
    if n_samples < 0:
        return f"n_samples is {n_samples}, below 0"
    have = len(payload[0]) if payload else 0
    if have != 2 * n_samples:
        return f"payload frame 0 holds {have} bytes, not the {2 * n_samples} of {n_samples} 16-bit samples"
    return None

def _silent(n_samples: int, payload: list[bytes]) -> str | None:
    """A silent chunk: its samples are zeros by definition, so payload frame 0 is empty."""
    if n_samples < 0:
        return f"n_samples is {n_samples}, below 0"
    if payload and payload[0]:
        return f"a silent chunk carries {len(payload[0])} bytes in payload frame 0, not none"
    return None


def _frame(width: int, height: int, encoding: str, data: bytes) -> str | None:
    """A frame's bytes agree with its header: rgb24 of exactly its size, or a JPEG image."""
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        return f"a {width}x{height} frame is outside 1..{MAX_SIDE} pixels a side"
    if encoding == "rgb24":
        if len(data) != width * height * 3:
            return f"the frame holds {len(data)} bytes, not the {width * height * 3} of a {width}x{height} rgb24 frame"
    elif encoding == "jpeg":
        if not data.startswith(b"\xff\xd8"):
            return "the frame is not a JPEG image"
    else:
        return f"encoding {encoding!r} is neither rgb24 nor jpeg"
    return None


def frame_rgb(width: int, height: int, encoding: str, data: bytes) -> np.ndarray | None:
    """A frame as height x width x 3 RGB uint8, decoded as its `encoding` says; None when the bytes are no image
    of that size (a JPEG's header is checked on the wire, its content only here)."""
    if encoding == "rgb24":
        return np.frombuffer(data, np.uint8).reshape(height, width, 3) if len(data) == width * height * 3 else None
    if encoding != "jpeg":
        return None
    import cv2  # the capture extra: a JPEG frame comes only from a camera, which needs it

    bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if bgr is None or bgr.shape[:2] != (height, width):
        return None
    return np.ascontiguousarray(bgr[:, :, ::-1])


def chunk_samples(msg: "AudioChunk | ResentChunk", payload: list[bytes]) -> np.ndarray:
    """A chunk's samples as float32 in [-1, 1): zeros for a silent one."""
    if msg.silent:
        return np.zeros(msg.n_samples, np.float32)
    if not payload:
        return np.zeros(0, np.float32)
    return np.frombuffer(payload[0], "<i2").astype(np.float32) / 32768.0


__all__ = ["AudioChunk", "AudioSoFar", "VideoFrame", "SceneDescription", "EndOfInput", "PlaybackReference", "SpeechActivity", "ResendChunks",
           "ResentChunk", "WakeWord"]


@message
class AudioChunk(Message):
    """capture -> frontend (the chunk loop), harness (its evidence ring), vision (memory's audio): one chunk of 16 kHz mono PCM s16le."""

    TYPE = "audio_chunk"; TOPIC = "media.audio"; SENDERS = ("capture",); RECEIVERS = ("frontend", "harness", "vision")
    index: int
    """The chunk's number, from 0."""
    t_start_ns: int
    """Session time of its first sample."""
    t_end_ns: int
    """Session time just after its last sample."""
    sample_rate: int = RATE
    """Samples per second of the PCM in payload frame 0."""
    n_samples: int = 0
    """How many samples payload frame 0 holds."""
    silent: bool = False
    """Under capture's noise gate: `n_samples` zeros, payload frame 0 empty (silence summarized, not sent)."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.index < 0 or self.t_start_ns < 0 or self.t_end_ns < self.t_start_ns:
            return f"chunk {self.index} from {self.t_start_ns} to {self.t_end_ns} ns is not a span of session time"
        if self.sample_rate not in RATES:
            return f"sample_rate {self.sample_rate} is outside {RATES.start}..{RATES.stop - 1}"
        return _silent(self.n_samples, payload) if self.silent else _pcm(self.n_samples, payload)


@message
class AudioSoFar(Message):
    """capture -> frontend: the next samples of the chunk being cut, before its boundary (real time).

    The pieces of one chunk follow each other from its first sample; the chunk itself follows as an
    AudioChunk holding them all. A frontend that hears the user stop inside the chunk starts the turn's work
    on them, so that its boundary finds the reply ready.
    """

    TYPE = "audio_so_far"; TOPIC = "media.sofar"; SENDERS = ("capture",); RECEIVERS = ("frontend",)
    index: int
    """The chunk being cut."""
    t_start_ns: int
    """Session time of that chunk's first sample."""
    t_from_ns: int
    """Session time of this piece's first sample."""
    t_end_ns: int
    """Session time just after this piece's last sample."""
    sample_rate: int = RATE
    """Samples per second of the PCM in payload frame 0."""
    n_samples: int = 0
    """How many samples payload frame 0 holds."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.index < 0 or not 0 <= self.t_start_ns <= self.t_from_ns <= self.t_end_ns:
            return f"a piece of chunk {self.index} from {self.t_from_ns} to {self.t_end_ns} ns does not lie " \
                   f"after the chunk's start at {self.t_start_ns} ns"
        if self.sample_rate not in RATES:
            return f"sample_rate {self.sample_rate} is outside {RATES.start}..{RATES.stop - 1}"
        return _pcm(self.n_samples, payload)


@message
class VideoFrame(Message):
    """capture -> frontend, harness (its evidence ring), vision (scene descriptions, memory): one RGB frame, raw rgb24 or jpeg in payload[0]."""

    TYPE = "video_frame"; TOPIC = "media.video"; SENDERS = ("capture",); RECEIVERS = ("frontend", "harness", "vision")
    index: int
    """The frame's number, from 0."""
    t_ns: int
    """Session time the frame shows."""
    width: int
    """Width in pixels."""
    height: int
    """Height in pixels."""
    encoding: str = "rgb24"
    """rgb24 (height x width x 3 bytes) or jpeg."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.index < 0 or self.t_ns < 0:
            return f"frame {self.index} at {self.t_ns} ns is before the session"
        return _frame(self.width, self.height, self.encoding, payload[0] if payload else b"")


@message
class SceneDescription(Message):
    """vision -> frontend: what the newest sampled frame shows, read off the chunk loop (text read by OCR).

    One per frame the vision node looked at: a frame the memory gate dropped as a repeat carries the
    description of the scene it repeats, so the frontend always knows how far vision has caught up.
    """

    TYPE = "scene_description"; TOPIC = "media.scene"; SENDERS = ("vision",); RECEIVERS = ("frontend",)
    frame_index: int
    """The VideoFrame this describes."""
    t_ns: int
    """Session time the frame shows."""
    text: str
    """The description ("text: " and the words read, top to bottom), empty when the frame shows no text."""
    t_described_ns: int
    """Session time of the frame the description was read from (an earlier one when this frame repeats it)."""
    kept: bool = False
    """The memory gate kept this frame (it is in the archive, described)."""
    read_ms: float = 0.0
    """Wall time spent reading this frame (0 when the gate dropped it)."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.frame_index < 0 or self.t_ns < 0 or self.t_described_ns > self.t_ns:
            return f"frame {self.frame_index} at {self.t_ns} ns is described from a later frame or before the session"
        return None


@message
class EndOfInput(Message):
    """capture -> frontend: the input (a file, and the quiet room after it) is exhausted after chunk `last_index`."""

    TYPE = "end_of_input"; TOPIC = "media.end"; SENDERS = ("capture",); RECEIVERS = ("frontend",)
    last_index: int
    """The last chunk published."""
    t_end_ns: int
    """Session time the input ends."""
    unanswered: str = ""
    """One sentence naming the delegated requests whose answers were not spoken when the wait ran out."""


@message
class ResendChunks(Message):
    """frontend -> capture: a restarted frontend asks again for every chunk from `from_index` on.

    Capture keeps a short ring of the chunks the frontend has not yet decided (see the capture node).
    """

    TYPE = "resend_chunks"; TOPIC = "media.want"; SENDERS = ("frontend",); RECEIVERS = ("capture",)
    from_index: int
    """The first chunk the frontend has not decided."""


@message
class ResentChunk(Message):
    """capture -> frontend: chunk `index` again, from capture's ring, for a frontend that lost it in a restart.

    A type of its own, so that only the frontend hears it (the harness's evidence must not hear a chunk twice).
    Payload frame 0 is the PCM as in AudioChunk; frame 1, when `frame_t_ns` is set, the chunk's newest video
    frame, encoded as `encoding` says.
    """

    TYPE = "resent_chunk"; TOPIC = "media.again"; SENDERS = ("capture",); RECEIVERS = ("frontend",)
    index: int
    """The chunk's number."""
    t_start_ns: int
    """Session time of its first sample."""
    t_end_ns: int
    """Session time just after its last sample."""
    sample_rate: int = 16000
    """Samples per second of the PCM in payload frame 0."""
    n_samples: int = 0
    """How many samples payload frame 0 holds."""
    silent: bool = False
    """As in AudioChunk: the chunk is zeros and payload frame 0 is empty."""
    frame_t_ns: int | None = None
    """Session time of the video frame in payload frame 1, if there is one."""
    width: int = 0
    """Its width in pixels."""
    height: int = 0
    """Its height in pixels."""
    encoding: str = "rgb24"
    """The frame's encoding, as in VideoFrame."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.index < 0 or self.t_start_ns < 0 or self.t_end_ns < self.t_start_ns:
            return f"chunk {self.index} from {self.t_start_ns} to {self.t_end_ns} ns is not a span of session time"
        if self.sample_rate not in RATES:
            return f"sample_rate {self.sample_rate} is outside {RATES.start}..{RATES.stop - 1}"
        problem = _silent(self.n_samples, payload[:1]) if self.silent else _pcm(self.n_samples, payload[:1])
        if problem:
            return problem
        if self.frame_t_ns is None:
            return None if len(payload) <= 1 else f"a chunk with no frame carries {len(payload)} payload frames"
        if self.frame_t_ns < 0 or len(payload) != 2:
            return f"a chunk with a frame at {self.frame_t_ns} ns carries {len(payload)} payload frames, not 2"
        return _frame(self.width, self.height, self.encoding, payload[1])


@message
class PlaybackReference(Message):
    """speech -> capture: the exact samples handed to the output device (for echo cancellation), in payload[0]."""

    TYPE = "playback_ref"; TOPIC = "media.playref"; SENDERS = ("speech",); RECEIVERS = ("capture",)
    t_ns: int
    """Session time the first sample is played (on the virtual clock: the end of what is covered so far)."""
    sample_rate: int
    """The output device's rate."""
    n_samples: int
    """How many samples (PCM s16le) payload frame 0 holds; 0 when only the time is reported."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.sample_rate not in RATES and (self.sample_rate, self.n_samples) != (0, 0):  # 0: no output device
            return f"sample_rate {self.sample_rate} is outside {RATES.start}..{RATES.stop - 1}"
        return _pcm(self.n_samples, payload)


@message
class SpeechActivity(Message):
    """capture -> frontend: user speech started or stopped (sub-chunk VAD on echo-cancelled audio)."""

    TYPE = "speech_activity"; TOPIC = "media.activity"; SENDERS = ("capture",); RECEIVERS = ("frontend",)
    kind: str
    """Either onset or offset."""
    onset_ns: int
    """When this stretch of speech started."""
    t_ns: int
    """When the detector decided (onset) or the speech stopped (offset)."""
    level_db: float = -120.0
    """Speech level of the stretch so far, dBFS."""
    voiced_ms: float = 0.0
    """Length of the stretch so far."""
    playback: bool = False
    """The assistant's audio was playing at the onset."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        return None if self.kind in ("onset", "offset") else f"kind {self.kind!r} is neither onset nor offset"


@message
class WakeWord(Message):
    """capture -> recorder: the wake word was heard (the frontend hears the microphone from here), or the
    conversation went idle and the frontend hears silence until the next one."""

    TYPE = "wake_word"; TOPIC = "media.wake"; SENDERS = ("capture",); RECEIVERS = ("recorder",)
    kind: str
    """Either wake or sleep."""
    word: str
    """The wake word, as spoken ("Okay Nabu")."""
    t_ns: int
    """When the word was recognized (wake) or the gate closed (sleep)."""
    probability: float = 0.0
    """The detector's averaged score that passed its cut-off (wake)."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        return None if self.kind in ("wake", "sleep") else f"kind {self.kind!r} is neither wake nor sleep"
