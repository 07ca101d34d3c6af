"""`venus-edge bench speaker`: how well the voice encoder tells the user from another voice, by length.

For each voice (espeak-ng variants and the Piper voice) a profile is enrolled
from two requests spoken while nothing plays, as a session enrols it; then
other sentences in every voice are cut to a given length from their onset
and compared with every profile: same-voice and other-voice similarities.
Each clip is heard clean, and in the duplex bench's simulated room while the
assistant's Piper voice plays (its echo added, then cancelled by AEC3 as
capture does). Prints both distributions per length, the threshold that
separates them best (the fewest clips on the wrong side), and the highest
threshold that keeps every same-voice clip above it, with the share of
other voices it still tells apart: the policy must never take the user for
someone else (that would ignore an interruption), while a voice it takes
for the user's is only left to the words, as without the cue.
"""
from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from edge.audio_format import RATE
from edge.bench.duplex_suite import USER_DBFS, Synth, Voice, set_level, trim
from edge.capture.room import RoomEcho, RoomSettings

VOICES = (Voice("piper", "", 1.0), Voice("espeak", "en-us", 170), Voice("espeak", "en-gb", 145),
          Voice("espeak", "en-us+f2", 190), Voice("espeak", "en-us+f3", 150), Voice("espeak", "en-us+m3", 160),
          Voice("espeak", "en-gb-x-rp+m7", 160), Voice("espeak", "en-029+f4", 155),
          Voice("espeak", "en-gb-scotland+m2", 150), Voice("espeak", "en-us-nyc+f1", 165))
ENROL = ("What is the weather going to be like this weekend in the mountains?",
         "Could you remind me to water the plants tomorrow morning at eight?")
CLIPS = ("Wait, hold on, tell me something about volcanoes instead.",
         "Hey Tom, could you pass me the salt, please?",
         "And in other news today, the markets closed slightly higher.",
         "Actually no, what time does the library open on Sunday?")
REPLY = ("Sure. The heart has four chambers. Blood from the body enters the right atrium, moves to the right "
         "ventricle, and is pumped to the lungs, where it picks up oxygen before it returns to the left side.")
LENGTHS_S = (0.3, 0.5, 0.8, 1.0, 1.5)


def in_room(clip: np.ndarray, reply: np.ndarray, at_s: float = 2.0) -> np.ndarray:
    """The clip spoken `at_s` into the reply's playback, with the room's echo added and cancelled by AEC3."""
    from edge.capture.echo import FRAME, AlignedEchoCanceller

    room = RoomEcho(RoomSettings())
    at = int(at_s * RATE)
    n = (max(len(reply), at + len(clip)) + room.delay) // FRAME * FRAME + FRAME
    ref = np.zeros(n, np.float32)
    ref[:len(reply)] = reply
    delayed = np.concatenate([np.zeros(room.delay, np.float32), ref])[:n]
    mic = room.echo(delayed)
    mic[at:at + len(clip)] += clip
    aec = AlignedEchoCanceller()
    out = np.concatenate([aec.process(mic[i:i + FRAME * 10], ref[i:i + FRAME * 10])
                          for i in range(0, n - FRAME * 10 + 1, FRAME * 10)])
    return out[at:at + len(clip)]


def best_threshold(same: list[float], other: list[float]) -> tuple[float, int]:
    """The threshold with the fewest clips on the wrong side (ties: the middle of the widest gap)."""
    cuts = sorted(set(same) | set(other))
    cands = [(a + b) / 2 for a, b in zip(cuts, cuts[1:])] or cuts
    def errors(t: float) -> int:
        return sum(s < t for s in same) + sum(o >= t for o in other)
    low = min(errors(t) for t in cands)
    good = [t for t in cands if errors(t) == low]
    runs, run = [], [good[0]]
    for t in good[1:]:  # contiguous good thresholds form a gap; take the middle of the widest
        if t == cands[cands.index(run[-1]) + 1]:
            run.append(t)
        else:
            runs.append(run)
            run = [t]
    runs.append(run)
    widest = max(runs, key=lambda r: r[-1] - r[0])
    return (widest[0] + widest[-1]) / 2, low


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="venus-edge bench speaker", description=__doc__.split("\n\n")[0])
    p.add_argument("--voices", type=int, default=len(VOICES), help=f"voices, 2-{len(VOICES)}")
    args = p.parse_args(argv)
    from edge.detect.speaker import VoiceEncoder, unavailable

    why = unavailable()
    if why is not None:
        print(f"venus-edge bench speaker: {why}.", file=sys.stderr)
        return 2
    if not 2 <= args.voices <= len(VOICES):
        print(f"venus-edge bench speaker: --voices must be 2 to {len(VOICES)}.", file=sys.stderr)
        return 2
    enc, synth = VoiceEncoder(), Synth()
    voices = VOICES[:args.voices]
    reply = set_level(trim(synth.say(REPLY, VOICES[0])), USER_DBFS)
    profiles, clips = {}, {}
    for v in voices:
        es = [enc.embed(set_level(trim(synth.say(t, v)), USER_DBFS)) for t in ENROL]
        e = np.mean(es, axis=0)
        profiles[v.label] = e / np.linalg.norm(e)
        clips[v.label] = [set_level(trim(synth.say(t, v)), USER_DBFS) for t in CLIPS]
    print(f"{len(voices)} voices, {len(CLIPS)} sentences each, enrolled from {len(ENROL)} requests; "
          f"similarity to the enrolled profile")
    every: dict[float, tuple[list[float], list[float]]] = {x: ([], []) for x in LENGTHS_S}
    for cond in ("clean", "echo"):
        for length in LENGTHS_S:
            same, other = [], []
            for w in voices:
                for c in clips[w.label]:
                    cut = c[:int((length + 0.1) * RATE)]  # the onset detector's pre-roll before the speech
                    e = enc.embed(in_room(cut, reply) if cond == "echo" else cut)
                    if e is None:
                        continue
                    for v in voices:
                        (same if v == w else other).append(float(e @ profiles[v.label]))
            t, wrong = best_threshold(same, other)
            keep = min(same) - 0.01
            print(f"speaker {cond:<5} {length:.1f} s: same min {min(same):.2f} median {statistics.median(same):.2f}; "
                  f"other max {max(other):.2f} median {statistics.median(other):.2f}; best threshold {t:.2f} "
                  f"({wrong}/{len(same) + len(other)} on the wrong side); keeping every same voice {keep:.2f} "
                  f"tells apart {sum(o < keep for o in other)}/{len(other)} others", flush=True)
            every[length][0].extend(same)
            every[length][1].extend(other)
    for length in LENGTHS_S:
        longer = [x for x in LENGTHS_S if x >= length]
        same = [v for x in longer for v in every[x][0]]
        other = [v for x in longer for v in every[x][1]]
        keep = min(same) - 0.01
        print(f"speaker from {length:.1f} s, clean and echo: keeping every same voice, threshold {keep:.2f} tells "
              f"apart {100 * sum(o < keep for o in other) / len(other):.0f}% of others", flush=True)
    return 0
