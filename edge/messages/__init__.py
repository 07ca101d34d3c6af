"""Every message type, registered on import. One module per domain."""
from . import control, dialogue, harness, media  # noqa: F401  (registration side effect)
from .control import (Ack, Checkpoint, Fatal, Finished, Heartbeat, Hello, Interrupt, NodeEvent, Probe, Ready,
                      SessionEnd, Shutdown, Start)
from .dialogue import ChunkDecision, Duck, FrontendDone, PlaybackAck, PlaybackState, SpeakText
from .harness import BackendResult, CancelWork, DelegateRequest, Delivered, WorkEvent
from .media import AudioChunk, EndOfInput, PlaybackReference, SpeechActivity, VideoFrame

__all__ = [
    "Ack", "Checkpoint", "Fatal", "Finished", "Heartbeat", "Hello", "Interrupt", "NodeEvent", "Probe", "Ready",
    "SessionEnd", "Shutdown", "Start", "ChunkDecision", "Duck", "FrontendDone", "PlaybackAck",
    "PlaybackState", "SpeakText", "BackendResult", "CancelWork", "DelegateRequest", "Delivered", "WorkEvent",
    "AudioChunk", "EndOfInput", "PlaybackReference", "SpeechActivity", "VideoFrame",
]
