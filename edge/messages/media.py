"""Media messages: audio chunks and video frames from capture, stamped once, and the playback reference."""
from __future__ import annotations

from edge.wire.registry import Message, message

__all__ = ["AudioChunk", "VideoFrame", "EndOfInput", "PlaybackReference", "SpeechActivity", "ResendChunks",
           "ResentChunk"]


@message
class AudioChunk(Message):
    """capture -> frontend (the chunk loop), harness (its evidence ring): one chunk of 16 kHz mono PCM s16le."""

    TYPE = "audio_chunk"; TOPIC = "media.audio"; SENDERS = ("capture",); RECEIVERS = ("frontend", "harness")
    index: int
    """The chunk's number, from 0."""
    t_start_ns: int
    """Session time of its first sample."""
    t_end_ns: int
    """Session time just after its last sample."""
    sample_rate: int = 16000
    """Samples per second of the PCM in payload frame 0."""
    n_samples: int = 0
    """How many samples payload frame 0 holds."""


@message
class VideoFrame(Message):
    """capture -> frontend, harness (its evidence ring): one RGB frame, raw rgb24 or jpeg in payload[0]."""

    TYPE = "video_frame"; TOPIC = "media.video"; SENDERS = ("capture",); RECEIVERS = ("frontend", "harness")
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


@message
class EndOfInput(Message):
    """capture -> frontend: the input (a file) is exhausted after chunk `last_index`."""

    TYPE = "end_of_input"; TOPIC = "media.end"; SENDERS = ("capture",); RECEIVERS = ("frontend",)
    last_index: int
    """The last chunk published."""
    t_end_ns: int
    """Session time the input ends."""


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
    frame (rgb24).
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
    frame_t_ns: int | None = None
    """Session time of the video frame in payload frame 1, if there is one."""
    width: int = 0
    """Its width in pixels."""
    height: int = 0
    """Its height in pixels."""


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
