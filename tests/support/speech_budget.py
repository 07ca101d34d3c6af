"""A session through a bundle's frontend and voice, counting the TTS codes of every speaking chunk.

The chunks go to the voice as the frontend and speech nodes send them: a turn's chunks share one turn key, a
turn's last chunk is final, a speaking chunk without words is sent too (an empty call).
"""
from __future__ import annotations

from pathlib import Path

from edge.bundle.settings import VenusSettings
from edge.frontend.base import Chunk
from edge.frontend.venus.frontend import VenusFrontend
from edge.speech.venus.voice import VenusVoice

from venus_support import BASE, speechy

NS = 1_000_000_000
# Chunk 1 starts a turn, 2-4 go on (3 without a word), 5 ends it; 7 is a lone <|chunk_eos|> while idle.
PLAN = {"1": ["<|speak|>", "Hello there", "<|chunk_eos|>"], "2": ["how are", "<|chunk_eos|>"],
        "3": ["<|chunk_eos|>"], "4": ["you", "<|chunk_eos|>"], "5": ["today", "<|turn_eos|>", "<|listen|>"],
        "7": ["<|chunk_eos|>"], "*": ["<|listen|>"]}


def codes_per_chunk(bundle: Path, chunks: int = 9) -> tuple[dict[int, int], list[str]]:
    """Codes the voice made for each speaking chunk, and each chunk's control."""
    settings = {**BASE, "tts_chunk_draws": 26, "forced": PLAN}
    f = VenusFrontend(bundle, VenusSettings.from_dict(settings))
    voice = VenusVoice(bundle, VenusSettings.from_dict(settings))
    counts: dict[int, int] = {}
    controls: list[str] = []
    turn, in_turn = 0, False
    try:
        for k in range(chunks):
            out = f.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            controls.append(out.control)
            if out.control != "speak":
                continue
            assert out.speech is not None, f"chunk {k} speaks but carries no speech states"
            if not in_turn:
                turn, in_turn = turn + 1, True
            ids = list(out.speech.token_ids)
            for _ in voice.synthesize_states(out.text, ids, out.speech.hidden if ids else None, turn=turn,
                                             final=out.turn_end):
                pass
            counts[k] = voice.last_cost.codes
            in_turn = in_turn and not out.turn_end
    finally:
        f.close()
        voice.close()
    return counts, controls
