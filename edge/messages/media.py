"""Media messages: audio chunks and video frames from capture, stamped once."""
from __future__ import annotations

from edge.wire.registry import Message, message


@message
class AudioChunk(Message):
    """capture -> frontend (and harness evidence ring): one chunk of 16 kHz mono PCM s16le in payload[0]."""

    TYPE = "audio_chunk"; TOPIC = "media.audio"; SENDER = "capture"; RECEIVER = "frontend, harness"
    index: int
    t_start_ns: int
    t_end_ns: int
    sample_rate: int = 16000
    n_samples: int = 0


@message
class VideoFrame(Message):
    """capture -> frontend (and harness evidence ring): one RGB frame, raw rgb24 or jpeg in payload[0]."""

    TYPE = "video_frame"; TOPIC = "media.video"; SENDER = "capture"; RECEIVER = "frontend, harness"
    index: int
    t_ns: int
    width: int
    height: int
    encoding: str = "rgb24"


@message
class EndOfInput(Message):
    """capture -> everyone: the input (a file) is exhausted after chunk `last_index`."""

    TYPE = "end_of_input"; TOPIC = "media.end"; SENDER = "capture"; RECEIVER = "frontend, speech, recorder"
    last_index: int
    t_end_ns: int


@message
class PlaybackReference(Message):
    """speech -> capture: the exact samples handed to the output device (for echo cancellation), in payload[0]."""

    TYPE = "playback_ref"; TOPIC = "media.playref"; SENDER = "speech"; RECEIVER = "capture"
    t_ns: int
    sample_rate: int
    n_samples: int


@message
class SpeechActivity(Message):
    """capture -> frontend: user speech started or stopped (sub-chunk VAD on echo-cancelled audio)."""

    TYPE = "speech_activity"; TOPIC = "media.activity"; SENDER = "capture"; RECEIVER = "frontend"
    kind: str  # "onset" or "offset"
    onset_ns: int  # when this stretch of speech started
    t_ns: int  # when the detector decided (onset) or the speech stopped (offset)
    level_db: float = -120.0  # speech level of the stretch so far, dBFS
    voiced_ms: float = 0.0  # length of the stretch so far
    playback: bool = False  # the assistant's audio was playing at the onset
