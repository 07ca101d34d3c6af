"""`venus-edge bench voice`: voice-to-voice latency of the embedded default (or `--bundle DIR`), and each
stage's real-time factor.

Scripted spoken questions (espeak-ng) are placed on one timeline, each at a
seeded offset inside its chunk so the end of speech falls anywhere between
boundaries, and fed through the real graph in real time (VAD, ASR and LLM
in the frontend process, the Piper voice in the speech process). Latency
per question: from the end of the user's speech to the first reply sample
played, read from the journal. Stage real-time factors: VAD and ASR from
the frontend's per-chunk timings (compute / audio), the LLM as decode time
per second of reply audio it produced, and the voice as synthesis time per
second of audio, measured on the session's own replies. With a bundle, the
Venus voice's two stages are measured apart, per chunk, on the session's own
words and hidden states (edge/bench/voice_costs.py): TTS time per second of
speech its codes stand for, token2wav time per second of audio.

Each turn's latency is cut into stages on the one session clock every
process stamps with: from the journal's decision and SpeakText stamps, and
from the first piece's playback acknowledgement, which says when the
speech node took the words off the bus, when their first audio was
synthesized and when its first samples were written to the sink.

When the user stops inside a chunk, the frontend makes the transcript, the
prefill and the first words before the boundary (the journal's DraftAhead,
and `drafted_ahead` in the decision that says them): the bench says for how
many turns, how long after the end of speech, and how long before the
boundary the words were ready.

The peer, in the same run (unless `--no-cascade`): the plain cascade a user
would otherwise run (edge/bench/cascade.py: whisper on the whole utterance after
the endpoint, the same llama.cpp model's whole answer, then Piper) on the same
questions' audio, models and thread count, one stage after the other; the last
line compares the two p50s.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edge import messages as m
from edge.bench.session_run import session_folder
from edge.bench.stats import pct
from edge.detect.asr import MODELS as ASR_MODELS

QUESTIONS = [
    "What is two plus two?",
    "What is the capital of France?",
    "How many days are in a week?",
    "What color is the sky?",
    "Who wrote Romeo and Juliet?",
    "What is the opposite of hot?",
    "How many legs does a spider have?",
    "What do bees make?",
    "What is the largest planet?",
    "What language is spoken in Spain?",
    "What is the weather like in Paris today?",
    "What is the boiling point of water?",
]
SLOT_S = 11.0  # one question and its reply; long enough that no reply runs into the next question


@dataclass
class Turn:
    question: str
    end_ns: int  # end of the user's speech on the session clock
    start_ns: int = 0  # its start
    heard: str = ""
    reply: str = ""
    first_audio_ns: int | None = None
    boundary_ns: int = 0  # when the turn was decided (the decision's stamp)
    compute_ms: float = 0.0  # the frontend's step at that boundary
    audio_boundary_ns: int = 0  # the end of the chunk that decided it, in audio time
    cpu_ms: float = 0.0  # frontend CPU from that step up to the step that sent the first words
    first_text: str = ""
    tts_cpu_ms: float = 0.0  # CPU to synthesize the first piece
    step_start_ns: int = 0  # when the deciding step began (its decision's stamp less its compute)
    asr_ms: float = 0.0  # that step's final transcript
    prefill_ms: float = 0.0  # ... and its prompt prefill
    speak_ns: int = 0  # when the first words went to the voice
    # The first piece's way through the speech node, on the same session clock as the stamps above:
    first_speak: str = ""  # the id of the SpeakText that carried them
    received_ns: int = 0  # the speech node took the words off the bus
    ready_ns: int = 0  # their first audio was synthesized
    written_ns: int = 0  # that audio's first samples went to the sink
    # Drafted before the boundary, at the endpoint (DraftAhead), and said by the deciding step:
    ahead_text: str = ""  # the words made ready
    ahead_at_ns: int = 0  # the audio heard up to then (session clock)
    ahead_sent_ns: int = 0  # when they went to the voice
    ahead_cpu_ms: float = 0.0  # the transcript, prefill and first words then
    drafted_ahead: bool = False  # the deciding step said them

    def stages(self) -> dict[str, float] | None:
        """The turn's latency cut into what happened one after the other, in ms (None: not answered)."""
        if self.first_audio_ns is None or not self.speak_ns or not self.step_start_ns:
            return None
        step_ms = (self.step_start_ns - self.audio_boundary_ns) / 1e6
        return {"boundary": (self.audio_boundary_ns - self.end_ns) / 1e6,  # speech end -> the deciding chunk's end
                "step": step_ms,  # that chunk reaches the frontend's step
                "asr": self.asr_ms, "prefill": self.prefill_ms,
                # the first words decoded (and any boundary more they waited for)
                "words": (self.speak_ns - self.step_start_ns) / 1e6 - self.asr_ms - self.prefill_ms,
                "voice": (self.first_audio_ns - self.speak_ns) / 1e6}  # synthesized and playing

    def hand_over(self) -> dict[str, float] | None:
        """The `voice` stage cut apart, and what follows it, in ms: the words' trip from the frontend to the
        speech node, waiting there for the synthesizer and synthesizing, the player taking the audio, and
        the sink being written (after the latency's end point: the WAV places the audio at its start time)."""
        if not (self.speak_ns and self.received_ns and self.ready_ns and self.first_audio_ns):
            return None
        return {"bus": (self.received_ns - self.speak_ns) / 1e6,
                "synth": (self.ready_ns - self.received_ns) / 1e6,
                "play": (self.first_audio_ns - self.ready_ns) / 1e6,
                "sink": (self.written_ns - self.first_audio_ns) / 1e6 if self.written_ns else float("nan")}

    @property
    def idle_estimate_ms(self) -> float | None:
        """Latency on an idle machine: the wait for the boundary, plus CPU time on the critical path. A turn
        drafted at its endpoint: its work from the endpoint on (and the voice's, when it made the very words
        said) runs while the boundary is awaited; the later of the two, then the steps after the boundary."""
        if not self.first_text:
            return None
        boundary = (self.audio_boundary_ns - self.end_ns) / 1e6
        if not self.drafted_ahead:
            return boundary + self.cpu_ms + self.tts_cpu_ms
        ready = (self.ahead_at_ns - self.end_ns) / 1e6 + self.ahead_cpu_ms
        if self.ahead_text == self.first_text:  # synthesized ahead too
            return max(boundary + self.cpu_ms, ready + self.tts_cpu_ms)
        return max(boundary, ready) + self.cpu_ms + self.tts_cpu_ms

    @property
    def latency_ms(self) -> float | None:
        return None if self.first_audio_ns is None else (self.first_audio_ns - self.end_ns) / 1e6


def make_input(path: Path, questions: list[str], chunk_ms: int, seed: int) -> list[Turn]:
    from edge.bench import spoken

    rng = np.random.default_rng(seed)
    lines = [(i * SLOT_S + 0.4 + rng.uniform(0, chunk_ms / 1000), q) for i, q in enumerate(questions)]
    audio, marks = spoken.timeline(lines, len(questions) * SLOT_S + 2.0)
    spoken.write(path, audio)
    return [Turn(mk["text"], int(mk["end_s"] * 1e9), int(mk["start_s"] * 1e9)) for mk in marks]


def read_turns(journal: Path, turns: list[Turn], by_time: bool = False) -> dict:
    """Each turn's reply and when it was first heard, and the stages' costs. A frontend that transcribes
    (the embedded default) says which question it answers; otherwise (`by_time`: a Venus bundle) the first
    words decided after a question ended are its reply."""
    from edge.timeline.journal import Journal

    j = Journal(journal)
    stage = {"vad_ms": 0.0, "audio_ms": 0.0, "asr_ms": 0.0, "asr_audio_ms": 0.0, "llm_ms": 0.0, "reply_s": 0.0}
    speaks: dict[str, Turn] = {}
    current: Turn | None = None
    rate = int(j.session.get("config", j.session).get("speaker_rate", 24000))
    replies: list[str] = []
    opens: list[Turn | None] = []  # per reply: the turn whose first words it carries
    waiting: Turn | None = None  # a turn whose first words are out but not yet heard playing
    speaking: Turn | None = None  # a turn decided, its first words not yet sent
    chunk_end: dict[int, int] = {}  # chunk index -> its end on the session clock
    chunk_start: dict[int, int] = {}
    for rec, msg in j.messages(m.AudioChunk, m.ChunkDecision, m.SpeakText, m.PlaybackAck, m.PlaybackState,
                               m.DraftAhead):
        if isinstance(msg, m.AudioChunk):
            chunk_end[msg.index], chunk_start[msg.index] = msg.t_end_ns, msg.t_start_ns
        elif isinstance(msg, m.DraftAhead):
            if msg.user_end_ns >= 0 and turns:  # the newest draft of a turn is the one its boundary may say
                near = min(turns, key=lambda t: abs(t.end_ns - msg.user_end_ns))
                if not near.heard:
                    near.ahead_text, near.ahead_at_ns, near.ahead_sent_ns = msg.text, msg.t_ns, rec.env.t_ns
        elif isinstance(msg, m.ChunkDecision):
            for key in ("vad_ms", "audio_ms", "asr_ms", "asr_audio_ms", "llm_ms", "vision_ms"):
                stage[key] = stage.get(key, 0.0) + float(msg.info.get(key, 0.0))
            span_ns = chunk_end.get(msg.index, 0) - chunk_start.get(msg.index, 0)
            stage["chunk_s"] = stage.get("chunk_s", 0.0) + span_ns / 1e9
            end = msg.info.get("user_end_ns")
            if by_time and msg.text:  # the first words decided after a question ended, before the next one
                done = [t for t in turns if t.end_ns <= chunk_end.get(msg.index, 0)]
                if done and not done[-1].heard:
                    current = done[-1]
                    current.heard, current.compute_ms = "(not transcribed)", msg.compute_ns / 1e6
                    current.boundary_ns, current.audio_boundary_ns = rec.env.t_ns, chunk_end.get(msg.index, 0)
                    current.first_text = msg.text
                elif not done or done[-1] is not current:
                    current = None  # words before any question, or a later turn already answered
            elif end is not None and msg.user_text:
                current = min(turns, key=lambda t: abs(t.end_ns - end))
                if current.heard:
                    current = None  # a second turn near the same question: not one of ours
                else:
                    current.heard, current.compute_ms = msg.user_text, msg.compute_ns / 1e6
                    current.boundary_ns = rec.env.t_ns
                    current.step_start_ns = rec.env.t_ns - msg.compute_ns
                    current.asr_ms = float(msg.info.get("asr_ms", 0.0))
                    current.prefill_ms = float(msg.info.get("prefill_ms", 0.0))
                    current.audio_boundary_ns = chunk_end.get(msg.index, 0)
                    ahead = msg.info.get("drafted_ahead")
                    if ahead:  # the draft it said was made at the endpoint: when, at what cost, with which words
                        current.drafted_ahead = True
                        if ahead["t_ns"] != current.ahead_at_ns:  # its words were not ready before the boundary
                            current.ahead_text, current.ahead_sent_ns = "", 0
                        current.ahead_at_ns, current.ahead_cpu_ms = ahead["t_ns"], float(ahead.get("cpu_ms", 0.0))
                    speaking = current
            if speaking is not None:
                speaking.cpu_ms += float(msg.info.get("cpu_ms", 0.0))
                if msg.text:
                    speaking.first_text, speaking = msg.text, None
        elif isinstance(msg, m.SpeakText):
            replies.append(msg.text)
            opens.append(current if current is not None and not current.speak_ns else None)
            if current is not None:
                current.reply = (current.reply + " " + msg.text).strip()
                speaks[msg.id] = current
                if current.first_audio_ns is None:
                    waiting = current
                if not current.speak_ns:
                    current.speak_ns, current.first_speak = rec.env.t_ns, msg.id
        elif isinstance(msg, m.PlaybackState):
            # A piece cut short by an interruption is never acknowledged; playback starting still counts.
            if msg.active and waiting is not None and waiting.first_audio_ns is None:
                waiting.first_audio_ns = msg.t_ns
            waiting = None
        elif isinstance(msg, m.PlaybackAck):
            stage["reply_s"] += msg.samples / rate
            turn = speaks.get(msg.speak_id)
            if turn is not None and msg.seq == 0 and (turn.first_audio_ns is None or msg.t_start_ns < turn.first_audio_ns):
                turn.first_audio_ns = msg.t_start_ns  # exact: the piece's first sample on the session clock
            if turn is not None and msg.seq == 0 and msg.speak_id == turn.first_speak:
                turn.received_ns = turn.speak_ns + msg.recv_delay_ns  # the turn's first words' piece
                turn.ready_ns, turn.written_ns = msg.t_ready_ns, msg.t_written_ns
    stage["replies"], stage["opens"] = replies, opens
    return stage


def tts_rtf(texts: list[str], opens: list[Turn | None], threads: int) -> float:
    """Synthesis time per second of audio over the replies; also each turn's CPU for its first piece. The
    replies are said again in the session's order, so a phrase the voice kept ("Okay.") is free here
    exactly where it was free there."""
    from edge.speech.piper.voice import PiperVoice

    voice = PiperVoice(threads=threads)
    spent = audio_s = 0.0
    for text, turn in zip(texts, opens):
        t0 = time.perf_counter()
        c0 = time.process_time()
        for i, piece in enumerate(voice.synthesize(text)):
            if turn is not None and i == 0:
                turn.tts_cpu_ms = (time.process_time() - c0) * 1e3
            audio_s += len(piece) / voice.sample_rate
        spent += time.perf_counter() - t0
    return spent / audio_s if audio_s else float("nan")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench voice", description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=len(QUESTIONS), help=f"how many (10 to {len(QUESTIONS)})")
    p.add_argument("--chunk-ms", type=int, default=1000, help="the session's chunk length (default 1000)")
    p.add_argument("--threads", type=int, default=1, help="inference threads per model (default 1)")
    p.add_argument("--asr", choices=ASR_MODELS, default=None,
                   help="the frontend's speech recognizer (default: the frontend's own, whisper base)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--bundle", type=Path, help="run a Venus bundle (its frontend and voice) instead of the "
                                                "embedded default")
    p.add_argument("--out", help="keep the input, journal and reply audio here")
    p.add_argument("--no-cascade", action="store_true", help="skip the plain cascade run as the peer")
    args = p.parse_args(argv)
    if not 10 <= args.questions <= len(QUESTIONS):
        print(f"venus-edge bench voice: --questions must be between 10 and {len(QUESTIONS)}.", file=sys.stderr)
        return 2
    if args.bundle is not None and not (args.bundle / "manifest.json").is_file():
        print(f"venus-edge bench voice: {args.bundle} is not a bundle (no manifest.json); give the folder "
              "venus-export build wrote.", file=sys.stderr)
        return 2
    out = session_folder(args.out, "voice")
    from edge.backends.locate import ModelMissing
    from edge.session import SessionConfig, run_session

    try:
        turns = make_input(out / "questions.wav", QUESTIONS[:args.questions], args.chunk_ms, args.seed)
    except ModelMissing as exc:
        print(f"venus-edge bench voice: {exc}", file=sys.stderr)
        return 2
    bundle = args.bundle
    cfg = SessionConfig(mic=str(out / "questions.wav"), speaker=str(out / "replies.wav"), speaker_rate=24000,
                        journal=str(out / "session.journal"), chunk_ms=args.chunk_ms, realtime=True,
                        frontend=f"bundle:{bundle}" if bundle else "default",
                        voice=f"bundle:{bundle}" if bundle else "piper", threads=args.threads,
                        extra={} if bundle else {"max_reply_tokens": 32, **({"asr": args.asr} if args.asr else {})})
    who = f"bundle {bundle}" if bundle else "the embedded default"
    print(f"bench voice: {len(turns)} spoken questions, {who}, {args.chunk_ms} ms chunks, {args.threads} thread(s), "
          f"real time ({len(turns) * SLOT_S:.0f} s of audio); files in {out}", flush=True)
    load0 = os.getloadavg()[0]
    report = run_session(cfg)
    if not report.ok:
        print(f"venus-edge bench voice: the session did not complete: {report.reason}", file=sys.stderr)
        return 1
    stage = read_turns(out / "session.journal", turns, by_time=bundle is not None)
    load1 = os.getloadavg()[0]
    nan = float("nan")
    voice_line = ""
    if bundle:  # per second of input: the Venus frontend runs its encoders and the chunk loop on every chunk
        from edge.bench.voice_costs import chunk_costs, summary

        sec = stage.get("chunk_s", 0.0)
        rtf = {"encoders": (stage["vision_ms"] + stage["audio_ms"]) / 1e3 / sec if sec else nan,
               "LLM": stage["llm_ms"] / 1e3 / sec if sec else nan}
        overall, voice_line = summary(chunk_costs(bundle, out / "session.journal", args.threads))
        rtf.update(overall)  # per second of speech, as the embedded default's TTS figure
    else:
        rtf = {
            "VAD": stage["vad_ms"] / stage["audio_ms"] if stage["audio_ms"] else nan,
            "ASR": stage["asr_ms"] / stage["asr_audio_ms"] if stage["asr_audio_ms"] else nan,
            "LLM": stage["llm_ms"] / 1e3 / stage["reply_s"] if stage["reply_s"] else nan,
            "TTS": tts_rtf(stage["replies"], stage["opens"], args.threads),
        }
    for i, t in enumerate(turns, 1):
        lat = f"{t.latency_ms:.0f} ms" if t.latency_ms is not None else "no reply"
        decided = (t.boundary_ns - t.end_ns) / 1e6 if t.boundary_ns else float("nan")
        idle = f"{t.idle_estimate_ms:.0f}" if t.idle_estimate_ms is not None else "-"
        print(f"{i:2d}. {t.question!r} heard {t.heard!r} -> {t.reply[:60]!r}: {lat} (decided {decided:.0f} ms "
              f"after the speech ended, that step took {t.compute_ms:.0f} ms; idle estimate {idle} ms)")
    lat = [t.latency_ms for t in turns if t.latency_ms is not None]
    print(f"answered {len(lat)}/{len(turns)}; machine load average {load0:.1f} at the start, "
          f"{load1:.1f} at the end ({os.cpu_count()} cores)")
    print("real-time factor per stage: " + ", ".join(f"{k} {v:.3f}" for k, v in rtf.items()))
    if voice_line:
        print(voice_line)
    if not lat:
        print("voice-to-voice p50 nan ms p90 nan ms")
        return 1
    staged = [st for st in (t.stages() for t in turns) if st is not None]
    if staged and not bundle:
        print("stages p50 (ms): " + ", ".join(f"{k} {pct([st[k] for st in staged], 50):.0f}" for k in staged[0]) +
              " (speech end -> chunk boundary -> step -> final transcript -> prefill -> first words -> playing)")
    ahead = [t for t in turns if t.drafted_ahead]
    if not bundle:
        line = f"drafted at the endpoint, before the boundary: {len(ahead)}/{len(turns)} turns"
        if ahead:
            line += (f", p50 {pct([(t.ahead_at_ns - t.end_ns) / 1e6 for t in ahead], 50):.0f} ms after the speech "
                     f"ended, costing {pct([t.ahead_cpu_ms for t in ahead], 50):.0f} ms CPU")
        worded = [t for t in ahead if t.ahead_text]
        if worded:  # on the session clock: how long before (positive) or after the boundary
            line += (f"; first words made there for {len(worded)}, sent to the voice p50 "
                     f"{pct([(t.audio_boundary_ns - t.ahead_sent_ns) / 1e6 for t in worded], 50):.0f} ms before "
                     "the boundary")
        print(line)
    handed = [h for h in (t.hand_over() for t in turns) if h is not None]
    if handed:
        print("voice stage p50 (ms): " + ", ".join(f"{k} {pct([h[k] for h in handed], 50):.0f}" for k in handed[0]) +
              " (words sent -> speech node has them -> first audio synthesized -> playing -> written to the sink)")
    paired = [t for t in turns if t.stages() is not None and t.first_text]
    if paired and not bundle:  # where the wall clock and the idle estimate part
        print(f"critical path p50 (ms): frontend wall {pct([(t.speak_ns - t.step_start_ns) / 1e6 for t in paired], 50):.0f} "
              f"against CPU {pct([t.cpu_ms for t in paired], 50):.0f}; voice wall "
              f"{pct([(t.first_audio_ns - t.speak_ns) / 1e6 for t in paired], 50):.0f} against CPU "
              f"{pct([t.tts_cpu_ms for t in paired], 50):.0f}")
    idle = [t.idle_estimate_ms for t in turns if t.idle_estimate_ms is not None]
    if idle and not bundle:  # the estimate needs the CPU times only the embedded default reports
        print(f"on an idle machine (estimate: the wait for the chunk boundary plus CPU time on the critical path): "
              f"p50 {pct(idle, 50):.0f} ms p90 {pct(idle, 90):.0f} ms")
    print(f"voice-to-voice p50 {pct(lat, 50):.0f} ms p90 {pct(lat, 90):.0f} ms")
    if not bundle and not args.no_cascade:
        peer(out / "questions.wav", turns, args, pct(lat, 50))
    return 0


def peer(wav: Path, turns: list[Turn], args: argparse.Namespace, p50_ms: float) -> None:
    """The plain cascade on the same questions' audio and models, and the comparison line."""
    import soundfile as sf

    from edge.bench.cascade import ENDPOINT_SILENCE_S, run_cascade

    audio, rate = sf.read(str(wav), dtype="float32")
    load0 = os.getloadavg()[0]
    done = run_cascade(audio, [(t.question, t.start_ns / 1e9, t.end_ns / 1e9) for t in turns], args.threads,
                       max_tokens=32, asr_model=args.asr or "base", rate=rate)
    for i, c in enumerate(done, 1):
        print(f"cascade {i:2d}. heard {c.heard!r} -> {c.reply[:60]!r}: {c.latency_ms:.0f} ms (endpoint "
              f"{ENDPOINT_SILENCE_S * 1e3:.0f}, whisper {c.asr_ms:.0f}, LLM {c.llm_ms:.0f}, Piper {c.tts_ms:.0f})")
    cas = pct([c.latency_ms for c in done], 50)
    print(f"cascade: machine load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"stages p50 (ms): whisper {pct([c.asr_ms for c in done], 50):.0f}, LLM "
          f"{pct([c.llm_ms for c in done], 50):.0f}, Piper {pct([c.tts_ms for c in done], 50):.0f}")
    print(f"voice-to-voice p50 {p50_ms:.0f} ms vs cascade {cas:.0f} ms (ratio {p50_ms / cas:.2f})")
