"""`venus-edge bench answers`: are the embedded default's spoken answers right?

A seeded set of spoken questions (edge/bench/answers_set.py: sums, unit
conversions, the time, day and date, "what did I just say?") in voices the
bundled example does not use is placed on one timeline and run through the
real embedded default graph (VAD, ASR and the decision LLM in the frontend,
the harness, the Piper voice). Each reply is cut from the speaker's
time-aligned recording, transcribed, and checked: the last number said
within 1 % of the answer, the machine's time (to the minute, any minute the
run spanned), day or date, or the words to repeat. The last line:
`answers <A>% correct over <Q> questions`.

`--set trust` asks what users ask, through a voice session and Wyoming, with
camera questions over generated scenes through a voice session, and judges
each reply right, declined, asked back or wrong (edge/bench/trust.py).

`--set arithmetic` asks spoken sums instead (edge/bench/arithmetic_set.py:
every English espeak-ng voice and variant on the machine at three rates,
and Piper), and `--number-reading both` runs the same input twice, without
and with the recognizer's second reading of a sum heard wrong; each run ends
with `arithmetic <setting>: <K>/<N> answered right`.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from edge.bench.answers_set import Question, generate
from edge.bench.session_run import add_model_flags, model_extra, model_flags_problem, session_folder
from edge.detect.asr import MODELS as ASR_MODELS

SLOT_S = 12.0  # a question and its answer: a delegated one is spoken a chunk or two after the question, and a
# late one must not run into the next question (it would be taken for an interruption)


def last_number(text: str) -> float | None:
    from edge.language.spoken_math import numbers_in

    found = numbers_in(text.replace("-", " "))
    return found[-1] if found else None


def _clock_times(text: str) -> set[tuple[int, int]]:
    """(hour on a 12-hour dial, minute) pairs said: '6:42 PM', '6.42 p.m.', '6 42', '642 PM'."""
    out = set()
    for h, mnt in re.findall(r"\b(\d{1,2})[:. ]?(\d{2})\b", text):
        if int(h) <= 23 and int(mnt) <= 59:
            out.add((int(h) % 12, int(mnt)))
    return out


def correct(q: Question, reply: str, moments: list[datetime]) -> bool:
    """Whether the reply (as heard) answers `q`; `moments`: each minute the run spanned, for the clock."""
    low = reply.lower()
    kind = q.expect[0] if q.expect else ""
    if kind == "number":
        got = last_number(reply)
        want = float(q.expect[1])
        return got is not None and abs(got - want) <= max(0.01 * abs(want), 0.011)
    if kind == "time":
        said = _clock_times(reply)
        return any((t.hour % 12, t.minute) in said for t in moments)
    if kind == "day":
        return any(f"{t:%A}".lower() in low for t in moments)
    if kind == "date":
        nums = {int(x) for x in re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", low)}
        return any(f"{t:%B}".lower() in low and t.day in nums for t in moments)
    if kind == "words":
        return all(w in re.findall(r"[a-z]+", low) for w in q.expect[1:])
    return True


def make_input(path: Path, questions: list[Question]) -> list[tuple[float, float]]:
    """The questions on one timeline, each in its own voice; returns each one's (start, end) in seconds."""
    from edge.audio_format import RATE
    from edge.bench import spoken

    audio = np.zeros(int((len(questions) * SLOT_S + 2.0) * RATE), np.float32)
    marks = []
    piper = None
    for i, q in enumerate(questions):
        if q.voice == "piper":
            from edge.speech.piper.voice import PiperVoice
            from kernels.resample import resample

            piper = piper or PiperVoice()
            clip = resample(piper.sentence_audio(q.text), piper.sample_rate, RATE).astype(np.float32)
        else:
            clip = spoken.say(q.text, q.voice, q.wpm)
        start = i * SLOT_S + 0.5
        k = int(start * RATE)
        audio[k:k + len(clip)] += 0.8 * clip
        marks.append((start, start + len(clip) / RATE))
    spoken.write(path, audio)
    return marks


def replies_heard(wav: Path, marks: list[tuple[float, float]], model: str, threads: int) -> list[str]:
    """Each question's reply, from the end of the question to the start of the next, transcribed."""
    import soundfile as sf

    from edge.audio_format import RATE
    from edge.detect.asr import Transcriber
    from kernels.resample import resample

    audio, rate = sf.read(str(wav), dtype="float32")
    audio = resample(audio, rate, RATE).astype(np.float32) if rate != RATE else audio
    asr = Transcriber(threads, model)
    out = []
    for i, (_, end) in enumerate(marks):
        stop = marks[i + 1][0] if i + 1 < len(marks) else len(audio) / RATE
        clip = audio[int(end * RATE):int(stop * RATE)]
        out.append(asr.transcribe(clip) if np.abs(clip).max(initial=0.0) > 1e-3 else "")
    return out


def main(argv: list[str]) -> int:
    if "trust" in argv and argv[argv.index("trust") - 1:argv.index("trust")] == ["--set"]:
        from edge.bench.trust import main as trust
        return trust(argv)
    p = argparse.ArgumentParser(prog="venus-edge bench answers", description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=27, help="how many scored questions (default 27)")
    p.add_argument("--seed", type=int, default=None, help="the set's seed (default 11; 23 for --set arithmetic)")
    p.add_argument("--set", choices=("mixed", "arithmetic", "trust"), default="mixed",
                   help="mixed: sums, conversions, the clock and recall (default); arithmetic: spoken sums in "
                        "every English espeak-ng voice and variant, and Piper")
    p.add_argument("--number-reading", choices=("on", "off", "both"), default="on",
                   help="the recognizer's second reading of a sum heard with a broken operand (default on; "
                        "both: run without it, then with it, on the same input)")
    add_model_flags(p)
    p.add_argument("--asr-beam", type=int, default=None, help="the frontend recognizer's beam size (default: its own)")
    p.add_argument("--judge-asr", choices=ASR_MODELS, default="base",
                   help="the recognizer that transcribes the replies for scoring (default base)")
    p.add_argument("--no-rules", action="store_true",
                   help="let the decision model answer everything itself (the baseline)")
    p.add_argument("--out", help="keep the input, journal and reply audio here")
    args = p.parse_args(argv)
    if not 1 <= args.questions <= 500:
        print("venus-edge bench answers: --questions must be between 1 and 500.", file=sys.stderr)
        return 2
    problem = model_flags_problem(args)
    if problem:
        print(f"venus-edge bench answers: {problem}", file=sys.stderr)
        return 2
    out = session_folder(args.out, "answers")
    from edge.backends.locate import ModelMissing

    if args.set == "arithmetic":
        from edge.bench.arithmetic_set import DEFAULT_SEED, generate as sums
        from edge.bench.espeak_voices import english_voices, variants

        seed = DEFAULT_SEED if args.seed is None else args.seed
    else:
        seed = 11 if args.seed is None else args.seed
    try:
        questions = sums(args.questions, seed, english_voices(), variants()) if args.set == "arithmetic" \
            else generate(args.questions, seed)
        marks = make_input(out / "questions.wav", questions)
    except (ModelMissing, FileNotFoundError, subprocess.SubprocessError) as exc:
        print(f"venus-edge bench answers: {exc}", file=sys.stderr)
        return 2
    settings = {"on": [True], "off": [False], "both": [False, True]}[args.number_reading]
    for reading in settings:
        code = _run(args, out / ("number-reading" if reading else "first-reading"), out / "questions.wav",
                    questions, marks, seed, reading)
        if code:
            return code
    return 0


def _run(args, out: Path, mic: Path, questions: list[Question], marks: list[tuple[float, float]], seed: int,
         reading: bool) -> int:
    """One session over the questions, with or without the number reading; prints each verdict and the tally."""
    from edge.graph.supervisor import SupervisorSettings
    from edge.session import SessionConfig, run_session

    out.mkdir(parents=True, exist_ok=True)
    extra = model_extra(args)
    if args.asr_beam:
        extra["asr_beam"] = args.asr_beam
    if args.no_rules:
        extra["rules"] = False
    extra["number_reading"] = reading
    setting = "number-reading" if reading else "first-reading-only"
    cfg = SessionConfig(mic=str(mic), speaker=str(out / "replies.wav"), speaker_rate=24000,
                        journal=str(out / "session.journal"), realtime=args.realtime, frontend="default",
                        voice="piper", threads=args.threads, extra=extra)
    scored = [q for q in questions if q.kind != "say"]
    print(f"bench answers: {len(scored)} spoken questions ({args.set}, seed {seed}) in "
          f"{len(set(q.voice for q in questions))} voices, the embedded default"
          f"{' without its rules' if args.no_rules else ''} (asr {args.asr or 'default'}"
          f"{f' beam {args.asr_beam}' if args.asr_beam else ''}, {setting}); files in {out}", flush=True)
    start = datetime.now().astimezone()
    # On a virtual clock the graph waits for its slowest node: a busy machine's stall is not a hang.
    report = run_session(cfg, settings=SupervisorSettings(hang_s=60.0))
    end = datetime.now().astimezone()
    if not report.ok:
        print(f"venus-edge bench answers: the session did not complete: {report.reason}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    heard = replies_heard(out / "replies.wav", marks, args.judge_asr, args.threads)
    moments = [start.replace(second=0, microsecond=0) + timedelta(minutes=k)
               for k in range(int((end - start).total_seconds() // 60) + 3)]
    by_kind: dict[str, list[bool]] = {}
    right = 0
    for i, (q, reply) in enumerate(zip(questions, heard), 1):
        if q.kind == "say":
            continue
        ok = correct(q, reply, moments)
        right += ok
        by_kind.setdefault(q.kind, []).append(ok)
        print(f"{i:2d}. [{q.voice} {q.wpm}] {q.text!r} -> {reply!r}: {'right' if ok else 'WRONG'}")
    print(f"(replies transcribed by whisper {args.judge_asr} in {time.perf_counter() - t0:.0f} s; "
          f"session {(end - start).total_seconds():.0f} s)")
    if args.set == "arithmetic":
        print(f"arithmetic {setting}: {right}/{len(scored)} answered right", flush=True)
        return 0
    print("by kind: " + ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())))
    print(f"answers {100 * right / max(1, len(scored)):.1f}% correct over {len(scored)} questions", flush=True)
    return 0
