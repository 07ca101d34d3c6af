"""The chunk stream of a runtime journal, rebuilt for replay into every precision.

Per chunk the journal holds the frontend's decision (listen/speak, the words
spoken, what it heard, turn end), its delegate spans and the harness results
delivered before it. The input of a chunk is `<unit>` and the heard text
(harness results before it as `<backend>…</backend>`); the recorded output
is rebuilt in protocol tokens and forced after the decision is read. The
recorded audio and the newest video frame of each chunk are kept; when the
sweep has the bundle's encoders they become embeddings after `<unit>`
(quant.sweep.embed_media). The session's system prompt comes first, as the
Venus chunk loop prefills it before the first chunk: the runtime's default,
or the one the session's config set.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edge.protocol.strip import strip_protocol_tokens
from edge.protocol.tokens import (BACKEND_CLOSE, BACKEND_OPEN, CHUNK_EOS, DELEGATE_CLOSE, DELEGATE_OPEN, LISTEN,
                                  SPEAK, TURN_EOS, UNIT_OPEN)
from quant.chunks import ChunkRecord, ChunkStream


def _output(control: str, text: str, spans: list[str], turn_end: bool) -> str:
    body = "".join(f"{DELEGATE_OPEN}{s}{DELEGATE_CLOSE}" for s in spans)
    if control == "speak":
        return SPEAK + text + body + (TURN_EOS if turn_end else CHUNK_EOS)
    return body + LISTEN


def _frames_per_chunk(frames: list[tuple[int, np.ndarray]], spans_ns: dict[int, tuple[int, int]]
                      ) -> dict[int, np.ndarray]:
    """The newest frame captured before each chunk ended and after the previous one did (as the frontend sees it)."""
    out: dict[int, np.ndarray] = {}
    frames = sorted(frames, key=lambda f: f[0])
    prev_end = -1
    for index in sorted(spans_ns):
        end = spans_ns[index][1]
        inside = [img for t, img in frames if prev_end <= t < end]
        if inside:
            out[index] = inside[-1]
        prev_end = end
    return out


def system_prompt(session: dict | None) -> str:
    """The prompt the Venus frontend prefilled for this session: its config's `venus.system_prompt` if set."""
    from edge.bundle.settings import REFERENCE_SYSTEM_PROMPT

    venus = ((session or {}).get("config") or {}).get("venus") or {}
    prompt = venus.get("system_prompt", REFERENCE_SYSTEM_PROMPT) if isinstance(venus, dict) else REFERENCE_SYSTEM_PROMPT
    return prompt if isinstance(prompt, str) else REFERENCE_SYSTEM_PROMPT


def stream_from_journal(path: str | Path, max_chunks: int = 32) -> ChunkStream:
    try:
        from edge.messages import frame_rgb
        from edge.timeline.journal import Journal
    except ImportError as e:
        raise ValueError(f"reading a journal needs the runtime package edge ({e})") from None
    journal = Journal(path)  # raises JournalError (a ValueError) with one sentence
    prompt = system_prompt(journal.session)
    decisions: dict[int, object] = {}
    spans: dict[int, list[str]] = {}
    backend_before: dict[int, list[str]] = {}
    pending_results: list[str] = []
    audio: dict[int, np.ndarray] = {}
    spans_ns: dict[int, tuple[int, int]] = {}
    frames: list[tuple[int, np.ndarray]] = []
    for rec, msg in journal.messages():
        kind = msg.TYPE
        if kind == "audio_chunk" and msg.index not in audio and (rec.env.payload or msg.silent):
            # A quiet chunk is zeros said in its header alone; the frontend hears it as zeros, and so does this.
            audio[msg.index] = np.zeros(msg.n_samples, np.float32) if msg.silent else \
                np.frombuffer(rec.env.payload[0], dtype="<i2").astype(np.float32) / 32768.0
            spans_ns[msg.index] = (msg.t_start_ns, msg.t_end_ns)
        elif kind == "video_frame" and rec.env.payload:
            img = frame_rgb(msg.width, msg.height, msg.encoding, rec.env.payload[0])  # jpeg (the default) or rgb24
            if img is not None:
                frames.append((msg.t_ns, img))
        elif kind == "backend_result" and getattr(msg, "kind", "result") == "result":
            pending_results.append(msg.text)
        elif kind == "delegate_request":
            spans.setdefault(msg.index, []).append(msg.instruction)
        elif kind == "chunk_decision" and msg.index not in decisions:
            decisions[msg.index] = msg
            if pending_results:
                backend_before[msg.index] = pending_results
                pending_results = []
    if not decisions:
        raise ValueError(f"journal {path} records no chunk decisions; record a session with a frontend running")
    frame_of = _frames_per_chunk(frames, spans_ns)
    chunks = []
    for index in sorted(decisions)[:max_chunks]:
        d = decisions[index]
        # Outside text is stripped as the runtime strips it: the stream is tokenized with special tokens parsed.
        inputs = [f"{BACKEND_OPEN}{strip_protocol_tokens(t)}{BACKEND_CLOSE}" for t in backend_before.get(index, [])]
        inputs.append(UNIT_OPEN + strip_protocol_tokens(d.user_text or ""))
        if not chunks and prompt:
            inputs.insert(0, prompt)
        chunks.append(ChunkRecord(index, inputs, _output(d.control, d.text or "", spans.get(index, []), d.turn_end),
                                  audio=audio.get(index), frame=frame_of.get(index)))
    return ChunkStream(f"journal {Path(path).name} ({len(chunks)} chunks)", chunks)


def stream_from_journals(paths: list[str | Path], max_chunks: int = 32) -> ChunkStream:
    """Several recorded sessions as one stream (up to `max_chunks` of each), every session marked so that it
    replays from an empty context and a fresh audio encoder cache, as each was recorded."""
    if len(paths) == 1:
        return stream_from_journal(paths[0], max_chunks)
    chunks = []
    for session, path in enumerate(paths):
        for c in stream_from_journal(path, max_chunks).chunks:
            c.session = session
            chunks.append(c)
    names = ", ".join(Path(p).name for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    return ChunkStream(f"{len(paths)} journals {names} ({len(chunks)} chunks)", chunks)
