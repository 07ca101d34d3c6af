"""The generated video of `venus-edge bench memory`: scenes with printed words, visitors, shake and light.

One frame per second. A scene is a room (a tinted, textured wall with furniture) with one
word printed on a card. Within a scene, objects (shapes) and people-like figures come and go,
the camera shakes for a second or two, and the light dims or brightens and stays so; all of
these are *not* scene changes. Everything else is static (sensor noise only). Each second
carries its truth: the scene, its word, whether a new scene starts, whether the frame shows
the same thing as the second before.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

WORDS = ("ZEBRA OTTER LLAMA PIANO GARDEN ROCKET WALNUT CASTLE MAGNET VIOLIN HARBOR TUNNEL PEPPER "
         "SADDLE BEACON FOSSIL CANYON LANTERN MEADOW COBALT PARROT QUARTZ TIMBER VELVET ANCHOR "
         "BISCUIT CACTUS DOLPHIN EMBER FALCON GLACIER HAMMOCK IGLOO JASMINE KETTLE LOBSTER MARBLE "
         "NECTAR ORCHID PLANET RIBBON SUMMIT TROPHY UMBRELLA VOLCANO WHISTLE YOGURT").split()
W, H = 640, 360


@dataclass
class Scene:
    start: int
    end: int                   # exclusive, in seconds
    word: str
    seed: int
    visitors: list[tuple[int, int, str, int]] = field(default_factory=list)  # (start, end, kind, seed)


@dataclass(frozen=True)
class Second:
    t: int
    scene: int
    word: str
    new_scene: bool
    static: bool               # shows the same as the second before (noise aside)


class Video:
    """The whole script; `frame(t)` renders second t."""

    def __init__(self, seconds: int, seed: int = 0, scene_s: tuple[int, int] = (60, 240)) -> None:
        rng = np.random.default_rng(seed)
        self.seconds = seconds
        self.scenes: list[Scene] = []
        t, words = 0, list(rng.permutation(WORDS))
        while t < seconds:
            length = int(rng.integers(scene_s[0], scene_s[1] + 1))
            scene = Scene(t, min(seconds, t + length), words[len(self.scenes) % len(words)], int(rng.integers(1 << 30)))
            for _ in range(int(rng.integers(0, 3 + length // 60))):   # visitors: shapes and figures
                a = int(rng.integers(scene.start + 3, max(scene.start + 4, scene.end - 5)))
                scene.visitors.append((a, min(scene.end, a + int(rng.integers(8, 40))),
                                       str(rng.choice(["shape", "figure"])), int(rng.integers(1 << 30))))
            self.scenes.append(scene)
            t += length
        # Camera shake bursts (1-2 s) and lighting levels that hold for a while: not scene changes.
        self.shake = np.zeros((seconds, 2), np.int32)
        for s in rng.integers(0, seconds, max(1, seconds // 150)):
            for k in range(int(rng.integers(1, 3))):
                if s + k < seconds:
                    self.shake[s + k] = rng.integers(-8, 9, 2)
        self.gain = np.ones(seconds)
        for s in rng.integers(0, seconds, max(1, seconds // 200)):
            level, ramp, hold = float(rng.uniform(0.6, 1.3)), 4, int(rng.integers(20, 60))
            for k in range(ramp + hold + ramp):
                if s + k < seconds:
                    x = min(k / ramp, 1.0, (ramp + hold + ramp - k) / ramp)
                    self.gain[s + k] = 1 + (level - 1) * x
        self._base: dict[int, np.ndarray] = {}
        self._noise = np.random.default_rng(seed + 1)
        self.truth = self._truth()

    def scene_at(self, t: int) -> int:
        for i, s in enumerate(self.scenes):
            if s.start <= t < s.end:
                return i
        raise IndexError(t)

    def _signature(self, t: int) -> tuple:
        i = self.scene_at(t)
        present = tuple(v for v in self.scenes[i].visitors if v[0] <= t < v[1])
        return i, present, tuple(self.shake[t]), round(float(self.gain[t]), 3)

    def _truth(self) -> list[Second]:
        out, prev = [], None
        for t in range(self.seconds):
            sig = self._signature(t)
            i = sig[0]
            out.append(Second(t, i, self.scenes[i].word, t == self.scenes[i].start, sig == prev))
            prev = sig
        return out

    def _room(self, i: int) -> np.ndarray:
        if i not in self._base:
            scene = self.scenes[i]
            rng = np.random.default_rng(scene.seed)
            tint = rng.integers(40, 220, 3)
            ramp = np.linspace(0.75, 1.15, W)[None, :, None]
            img = np.clip(tint[None, None, :] * ramp * np.ones((H, 1, 1)), 0, 255).astype(np.uint8)
            for _ in range(int(rng.integers(15, 30))):      # furniture
                x, y = int(rng.integers(0, W)), int(rng.integers(0, H))
                w, h = int(rng.integers(20, 120)), int(rng.integers(20, 120))
                cv2.rectangle(img, (x, y), (x + w, y + h), tuple(int(c) for c in rng.integers(0, 255, 3)), -1)
            scale = float(rng.uniform(1.6, 2.2))
            (tw, th), _ = cv2.getTextSize(scene.word, cv2.FONT_HERSHEY_SIMPLEX, scale, 5)
            x, y = int(rng.integers(10, max(11, W - tw - 30))), int(rng.integers(th + 30, H - 30))
            cv2.rectangle(img, (x - 14, y - th - 16), (x + tw + 14, y + 18), (235, 235, 235), -1)  # the card
            cv2.putText(img, scene.word, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, (25, 25, 25), 5, cv2.LINE_AA)
            self._base = {i: img}   # one room at a time: scenes are rendered in order
        return self._base[i]

    def frame(self, t: int) -> np.ndarray:
        i = self.scene_at(t)
        img = self._room(i).copy()
        for a, b, kind, seed in self.scenes[i].visitors:
            if a <= t < b:
                rng = np.random.default_rng(seed)
                x, y = int(rng.integers(60, W - 60)), int(rng.integers(80, H - 60))
                color = tuple(int(c) for c in rng.integers(0, 255, 3))
                if kind == "figure":
                    cv2.circle(img, (x, y - 50), 16, color, -1)
                    cv2.ellipse(img, (x, y + 10), (24, 44), 0, 0, 360, color, -1)
                else:
                    cv2.fillPoly(img, [np.array([(x, y - 30), (x - 30, y + 25), (x + 30, y + 25)], np.int32)], color)
        dy, dx = (int(v) for v in self.shake[t])
        if dy or dx:
            img = cv2.warpAffine(img, np.float32([[1, 0, dx], [0, 1, dy]]), (W, H), borderMode=cv2.BORDER_REPLICATE)
        if self.gain[t] != 1:
            img = cv2.convertScaleAbs(img, alpha=float(self.gain[t]))
        noise = self._noise.integers(-3, 4, img.shape, dtype=np.int16)
        return np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)

    def audio(self, t: int, rate: int = 16000) -> np.ndarray:
        """One second of room noise (int16), so the archive stores audio as it would from a microphone."""
        return self._noise.integers(-300, 300, rate, dtype=np.int16)


def questions(video: Video, now: float, margin_s: int = 40) -> list[tuple[str, str, int]]:
    """(question, word, scene) about what was on screen when; only times well inside one scene."""
    out = []
    for m in range(1, video.seconds // 60 + 1):
        for t in (m * 60, m * 60 + 30):
            if t >= video.seconds:
                continue
            i = video.scene_at(t)
            s = video.scenes[i]
            if t - s.start < margin_s or s.end - t < margin_s:
                continue
            ago = (now - t) / 60
            if t % 60:
                q = f"What was written at {t // 60}:{t % 60:02d}?"
            elif m % 3 == 0 and ago == int(ago) and ago > 0:
                q = f"What word did you see {int(ago)} minutes ago?"
            else:
                q = f"What word was on the screen at minute {m}?"
            out.append((q, s.word, i))
    return out
