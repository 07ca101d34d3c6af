"""The Venus voice's cost per chunk, measured on a session's own words (`bench voice --bundle`).

The session's SpeakText messages (words, token ids, hidden states from the
journal's payload frames) are spoken again, in order, by a Venus voice on the
same bundle in this process: each chunk's TTS time per second of speech its
codes stand for, and token2wav's time per second of audio it let out.
Replaying after the session keeps the measurement off the session's own
timeline, as the Piper figure of the embedded default is taken.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edge import messages as m
from edge.bench.stats import pct


def session_words(journal: Path, limit: int) -> list[tuple[m.SpeakText, np.ndarray | None, bool]]:
    """Up to `limit` chunks' words with their hidden states and whether their turn ends with them."""
    from edge.nodes.speech import _hidden_states
    from edge.timeline.journal import Journal

    said = [(msg, _hidden_states(msg, rec.env.payload)) for rec, msg in Journal(journal).messages(m.SpeakText)]
    said = said[:limit]
    out = []
    for i, (msg, hidden) in enumerate(said):
        nxt = said[i + 1][0] if i + 1 < len(said) else None
        final = nxt is None or (nxt.epoch, nxt.utterance) != (msg.epoch, msg.utterance)
        out.append((msg, hidden, final))
    return out


def chunk_costs(bundle: Path, journal: Path, threads: int, limit: int = 40) -> list:
    """Each replayed chunk's ChunkCost (edge/speech/venus/voice.py)."""
    from edge.bundle.settings import VenusSettings
    from edge.speech.venus.voice import VenusVoice

    voice = VenusVoice(bundle, VenusSettings.load(bundle, {"threads": threads}))
    costs = []
    try:
        for msg, hidden, final in session_words(journal, limit):
            for _ in voice.synthesize_states(msg.text, list(msg.token_ids), hidden, (msg.epoch, msg.utterance),
                                             final):
                pass
            costs.append(voice.last_cost)
    finally:
        voice.close()
    return costs


def summary(costs: list) -> tuple[dict[str, float], str]:
    """(overall real-time factors, one printable line with the per-chunk spread)."""
    nan = float("nan")
    tts = [c.tts_rtf for c in costs if c.tts_rtf is not None]
    t2w = [c.token2wav_rtf for c in costs if c.token2wav_rtf is not None]
    codes_s = sum(c.codes for c in costs) * 0.04
    audio_s = sum(c.samples for c in costs) / 24000
    overall = {"TTS": sum(c.tts_s for c in costs) / codes_s if codes_s else nan,
               "token2wav": sum(c.token2wav_s for c in costs) / audio_s if audio_s else nan}

    def spread(xs: list[float]) -> str:
        return f"p50 {pct(xs, 50):.3f} p90 {pct(xs, 90):.3f}" if xs else "none"

    line = (f"Venus voice per chunk ({len(costs)} chunks of the session's words spoken again): TTS rtf "
            f"{spread(tts)} over {len(tts)} chunks with codes; token2wav rtf {spread(t2w)} over {len(t2w)} chunks "
            f"that let audio out")
    return overall, line
