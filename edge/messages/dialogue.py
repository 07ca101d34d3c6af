"""Dialogue messages: the chunk loop's decisions, speech requests and playback."""
from __future__ import annotations

from edge.wire.registry import SUPERVISOR, Message, field, message

__all__ = ["ChunkDecision", "DraftAhead", "SpeakText", "PlaybackAck", "PlaybackState", "Duck", "FrontendDone",
           "TypedText"]


@message
class ChunkDecision(Message):
    """frontend -> speech, harness, capture: what the frontend decided for chunk `index`, with its cost.

    Speech on the virtual clock plays up to its stamp; the harness releases results at idle boundaries;
    capture lets go of the chunk (it keeps undecided chunks for a restarted frontend).
    """

    TYPE = "chunk_decision"; TOPIC = "dlg.decision"; SENDERS = ("frontend",)
    RECEIVERS = ("speech", "harness", "capture")
    VOLATILE = frozenset({"recv_delay_ns", "compute_ns", "rtf", "info", "ahead"})
    index: int
    """The chunk decided on."""
    control: str
    """What the frontend does now: listen or speak."""
    text: str = ""
    """Words it speaks (also sent as SpeakText)."""
    user_text: str = ""
    """What it heard the user say, if it transcribes."""
    turn_end: bool = False
    """The assistant's turn ends with this chunk."""
    interrupt: bool = False
    """The frontend yielded the floor here (the Interrupt itself travels on the control socket)."""
    delegates: int = 0
    """How many delegate spans closed in this chunk."""
    recv_delay_ns: int = 0
    """Capture stamp to the frontend's step call."""
    compute_ns: int = 0
    """How long the step took."""
    rtf: float = 0.0
    """compute_ns over the chunk's length."""
    info: dict = field(default_factory=dict)
    """The frontend's own details (barge-in decisions, model timings)."""
    ahead: str = ""
    """Words drafted for a later boundary (the user paused): the voice may make them ready now."""


@message
class DraftAhead(Message):
    """frontend -> speech: a reply's first words, drafted before the boundary that may say them.

    The user stopped inside chunk `index` (or the words are known in advance): the voice may synthesize
    them now. They are said only if that boundary's decision speaks them (any further voice drops them).
    """

    TYPE = "draft_ahead"; TOPIC = "dlg.ahead"; SENDERS = ("frontend",); RECEIVERS = ("speech",)
    VOLATILE = frozenset({"info"})
    index: int
    """The chunk being cut when they were drafted: its boundary is the first that may say them."""
    t_ns: int
    """Session time up to which the frontend had heard the audio when it drafted them."""
    text: str
    """The first words."""
    user_end_ns: int = -1
    """Where the user's speech they answer ended (-1: not known)."""
    heard: str = ""
    """What the frontend heard the user say (its transcript), when it transcribes."""
    info: dict = field(default_factory=dict)
    """The frontend's own details (what the draft cost: transcript, prefill, decoding)."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.index < 0 or self.t_ns < 0:
            return f"a draft at chunk {self.index}, {self.t_ns} ns, is before the session"
        return None if self.text.strip() else "a draft ahead carries no words"


@message
class SpeakText(Message):
    """frontend -> speech (acknowledges), harness (notes a result being spoken): words to say, in order.

    Dropped if `epoch` is older than the current one.
    """

    TYPE = "speak_text"; TOPIC = "dlg.speak"; SENDERS = ("frontend",); RECEIVERS = ("speech", "harness")
    RELIABLE = True
    VOLATILE = frozenset({"id"})
    id: str
    """Unique id (acknowledgement, de-duplication)."""
    utterance: int
    """The assistant turn these words belong to."""
    index: int
    """The chunk that produced them."""
    text: str
    """The words."""
    epoch: int = 0
    """The epoch they were decided in."""
    backend_id: str = ""
    """Set when these words speak a harness result (its BackendResult id)."""
    token_ids: list = field(default_factory=list)
    """Optional: the words' token ids, for a voice conditioned on the LLM (the Venus voice)."""
    hidden_dim: int = 0
    """Optional: width of their hidden states, float16 (len(token_ids), hidden_dim) in payload frame 0."""

    def contradiction(self, payload: list[bytes]) -> str | None:
        if self.hidden_dim < 0:
            return f"hidden_dim is {self.hidden_dim}, below 0"
        if not all(isinstance(t, int) and not isinstance(t, bool) and 0 <= t < 2 ** 31 for t in self.token_ids):
            return "token_ids holds something that is not a token id"
        if self.hidden_dim and self.token_ids and payload:
            want = 2 * self.hidden_dim * len(self.token_ids)
            if len(payload[0]) != want:
                return f"payload frame 0 holds {len(payload[0])} bytes, not the {want} of {len(self.token_ids)} " \
                       f"float16 rows of {self.hidden_dim}"
        return None


@message
class PlaybackAck(Message):
    """speech -> frontend: one synthesized piece of an utterance has been played out completely."""

    TYPE = "playback_ack"; TOPIC = "dlg.played"; SENDERS = ("speech",); RECEIVERS = ("frontend",)
    RELIABLE = True
    VOLATILE = frozenset({"t_start_ns", "t_end_ns", "id", "speak_id", "recv_delay_ns", "t_ready_ns", "t_written_ns"})
    id: str
    """Unique id (acknowledgement, de-duplication)."""
    speak_id: str
    """The SpeakText this piece came from."""
    utterance: int
    """Its utterance."""
    seq: int
    """The piece's number within the SpeakText, from 0."""
    samples: int
    """How many samples were played."""
    digest: str
    """sha1 of the int16 samples played: replay checks these match."""
    t_start_ns: int = 0
    """Session time the piece started playing."""
    t_end_ns: int = 0
    """Session time it ended."""
    epoch: int = 0
    """The SpeakText's epoch."""
    last: bool = False
    """The last piece of this SpeakText."""
    backend_id: str = ""
    """The harness result these words spoke, if any."""
    recv_delay_ns: int = 0
    """The SpeakText's stamp to its receipt by the speech node."""
    t_ready_ns: int = 0
    """Session time the piece was synthesized (handed to the player)."""
    t_written_ns: int = 0
    """Session time its first samples were written to the sink (0: none were)."""


@message
class PlaybackState(Message):
    """speech -> frontend, harness: playback started or stopped (best effort, for gating)."""

    TYPE = "playback_state"; TOPIC = "dlg.playstate"; SENDERS = ("speech",); RECEIVERS = ("frontend", "harness")
    VOLATILE = frozenset({"t_ns"})
    active: bool
    """The assistant is audible now."""
    t_ns: int = 0
    """Session time of the change."""
    utterance: int = -1
    """The utterance at the head of the queue (-1: none)."""


@message
class Duck(Message):
    """capture, frontend -> speech, capture, frontend: scale playback volume now; 1.0 restores.

    Capture ducks when the user starts speaking over playback; the frontend's barge-in judge restores the
    volume once it has decided. Speech applies the gain, capture and the judge track whether it is ducked.
    """

    TYPE = "duck"; TOPIC = "dlg.duck"
    SENDERS = ("capture", "frontend"); RECEIVERS = ("speech", "capture", "frontend")
    VOLATILE = frozenset({"onset_ns"})
    gain: float
    """Playback gain from now on (1.0: full volume)."""
    reason: str = ""
    """Why (for the journal)."""
    onset_ns: int = 0
    """The speech onset that caused it, if any."""


@message
class FrontendDone(Message):
    """frontend -> speech: no more speech requests will follow (the input ended)."""

    TYPE = "frontend_done"; TOPIC = "dlg.done"; SENDERS = ("frontend",); RECEIVERS = ("speech",)
    last_index: int
    """The last chunk stepped."""
    t_end_ns: int
    """Session time the input ended."""


@message
class TypedText(Message):
    """supervisor -> frontend: text the user typed during the session (the `--http` page's box): a bundle's
    model reads it in its next unit, after the chunk's audio, as the reference feeds a unit's text."""

    TYPE = "typed_text"; TOPIC = "dlg.typed"; SENDERS = (SUPERVISOR,); RECEIVERS = ("frontend",)
    text: str
    """What was typed."""
