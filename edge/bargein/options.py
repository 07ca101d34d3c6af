"""The barge-in judge's options, built once from the session's flat settings (edge/options.py): each by its own
name, each default here and nowhere else."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from edge.options import from_settings

REREAD_MODEL = "base"  # reads the overlap again (beam 5) before speech in the user's voice stops the reply
# Measured with `venus-edge bench speaker` (10 voices, clean and through the simulated room's cancelled echo,
# README "Full-duplex behaviour"): from 0.8 s of speech on, the highest threshold under which no clip in the
# user's own voice fell. Mistaking the user for someone else would ignore an interruption, while another voice
# taken for the user's is left to the words and the level, as without the cue; so it errs that way. Shorter
# speech scatters more (the same voice fell to 0.54 at 0.3 s, and a fast voice's "No." over the reply scored
# 0.567 at 0.54 s in `bench duplex`), so under 0.8 s only a clearly different voice counts (edge/bargein/voice.py).
VOICE_THRESHOLD = 0.57


@dataclass(frozen=True)
class BargeInOptions:
    threads: int = 1
    asr: str = "tiny.en"  # the judge's own first reading, for a frontend that does not hear the overlap itself
    overlap_reread: str = REREAD_MODEL  # the second reading; "off" for none
    background_margin_db: float = 12.0  # speech this far below the reply's level is taken for the background
    realtime: bool = True  # live: the recognizers are loaded during set-up, never while chunks arrive
    speaker_cue: bool = True  # whose voice speaks over the reply weighs in (edge/bargein/voice.py)
    voice_threshold: float = VOICE_THRESHOLD  # the similarity under which 0.8 s or more of speech is another voice

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "BargeInOptions":
        """A setting absent, None or empty keeps the default; one of the wrong kind is one sentence."""
        options = from_settings(cls, config, "barge-in's")
        return options if options.threads >= 1 else replace(options, threads=1)
