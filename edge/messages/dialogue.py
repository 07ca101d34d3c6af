"""Dialogue messages: the chunk loop's decisions, speech requests and playback."""
from __future__ import annotations

from edge.wire.registry import Message, field, message


@message
class ChunkDecision(Message):
    """frontend -> timeline: what the frontend decided for chunk `index`, with its cost."""

    TYPE = "chunk_decision"; TOPIC = "dlg.decision"; SENDER = "frontend"; RECEIVER = "recorder, harness"
    VOLATILE = frozenset({"recv_delay_ns", "compute_ns", "rtf", "info"})
    index: int
    control: str
    text: str = ""
    user_text: str = ""
    turn_end: bool = False
    interrupt: bool = False
    delegates: int = 0
    recv_delay_ns: int = 0  # capture stamp to the frontend's step call
    compute_ns: int = 0
    rtf: float = 0.0
    info: dict = field(default_factory=dict)


@message
class SpeakText(Message):
    """frontend -> speech: words to say, in order; dropped if `epoch` is older than the current one."""

    TYPE = "speak_text"; TOPIC = "dlg.speak"; SENDER = "frontend"; RECEIVER = "speech"
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    utterance: int
    index: int  # the chunk that produced it
    text: str
    epoch: int = 0
    backend_id: str = ""  # set when these words speak a harness result
    # Optional: the token ids of these words and, in payload frame 0, their LLM hidden states as
    # float16 (len(token_ids), hidden_dim), for a speech decoder conditioned on them (the Venus voice).
    token_ids: list = field(default_factory=list)
    hidden_dim: int = 0


@message
class PlaybackAck(Message):
    """speech -> frontend: one synthesized piece of an utterance has been played out completely."""

    TYPE = "playback_ack"; TOPIC = "dlg.played"; SENDER = "speech"; RECEIVER = "frontend"
    RELIABLE = True
    VOLATILE = frozenset({"t_start_ns", "t_end_ns", "id", "speak_id", "recv_delay_ns"})
    id: str
    speak_id: str
    utterance: int
    seq: int
    samples: int
    digest: str  # sha1 of the int16 samples played: replay checks these match
    t_start_ns: int = 0
    t_end_ns: int = 0
    epoch: int = 0
    last: bool = False  # the last piece of this SpeakText
    backend_id: str = ""
    recv_delay_ns: int = 0  # the SpeakText's stamp to its receipt by the speech node


@message
class PlaybackState(Message):
    """speech -> frontend, harness, capture: playback started or stopped (best effort, for gating)."""

    TYPE = "playback_state"; TOPIC = "dlg.playstate"; SENDER = "speech"; RECEIVER = "frontend, harness, capture"
    VOLATILE = frozenset({"t_ns"})
    active: bool
    t_ns: int = 0
    utterance: int = -1


@message
class Duck(Message):
    """frontend -> speech: scale playback volume now (barge-in suspected); 1.0 restores."""

    TYPE = "duck"; TOPIC = "dlg.duck"; SENDER = "frontend"; RECEIVER = "speech"
    VOLATILE = frozenset({"onset_ns"})
    gain: float
    reason: str = ""
    onset_ns: int = 0


@message
class FrontendDone(Message):
    """frontend -> speech: no more speech requests will follow (the input ended)."""

    TYPE = "frontend_done"; TOPIC = "dlg.done"; SENDER = "frontend"; RECEIVER = "speech"
    last_index: int
    t_end_ns: int
