"""Camera questions for the trust bench: generated scenes whose answer is known from how they were drawn.

Four kinds of scene, each a 640x480 room: a sign with printed words (drawn with OpenCV), a person (the sample
portrait that ships with matplotlib, once or twice, sometimes beside a sign), a wall of one vivid colour, and an
empty room. Each question ("What does the sign say?", "Is anyone there?", "What colour is the wall?", "What can
you see?") carries what a right reply holds: the sign's words, how many people, the wall's colour, no text.
Wyoming carries no frames, so these are asked through a voice session only.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from edge.bench.trust_set import RATES, VOICES, Request

SIZE = (640, 480)
CAMERA_SEED = 4231  # the scenes' own seed, apart from the spoken set's
SIGN_WORDS = ["PHARMACY", "BAKERY", "LIBRARY", "GARDEN", "KITCHEN", "STATION", "MUSEUM", "HOTEL", "COFFEE",
              "MARKET", "HOSPITAL", "SCHOOL"]
SECOND_LINE = ["OPEN", "CLOSED", "WELCOME", "TODAY", "UPSTAIRS", "ENTRANCE"]
# Wall colours (RGB) by the name the camera should give them.
WALLS = {"red": (200, 35, 35), "orange": (240, 140, 25), "yellow": (235, 210, 45), "green": (45, 160, 70),
         "blue": (40, 80, 200), "purple": (130, 50, 180), "pink": (240, 110, 180)}
NEUTRAL = [(222, 214, 200), (205, 205, 205), (230, 226, 218), (196, 188, 176)]  # beige, grey, off-white walls
QUESTIONS = {
    "read": ["What does the sign say?", "Can you read the sign?", "What does it say?"],
    "people": ["Is anyone there?", "Is there anyone in the room?", "How many people can you see?"],
    "colour": ["What colour is the wall?", "What colour is this?", "What colours do you see?"],
    "see": ["What can you see?", "What can you see right now?", "What's in front of the camera?"],
}
# Which questions each scene is asked, in turn.
ASKED = {"sign": ["read", "see"], "face": ["people", "see"], "colour": ["colour"], "empty": ["people", "see"]}


@dataclass(frozen=True)
class Drawn:
    """How one scene is drawn: its kind, the sign's lines, the wall's colour and where people stand."""

    kind: str
    lines: tuple[str, ...] = ()
    wall: str = ""  # a name in WALLS for a colour scene, "" for a neutral wall
    people: tuple[float, ...] = ()  # each person's centre, as a share of the width
    seed: int = 0


def portrait() -> np.ndarray | None:
    """matplotlib's sample portrait (one face; RGB, 512 wide and 480 high), where matplotlib is installed; else None."""
    try:
        import matplotlib
    except ImportError:
        return None
    bgr = cv2.imread(str(Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg"), cv2.IMREAD_COLOR)
    return None if bgr is None else cv2.cvtColor(bgr[60:540], cv2.COLOR_BGR2RGB)


def _room(rng: random.Random, wall: tuple[int, int, int]) -> np.ndarray:
    w, h = SIZE
    img = np.empty((h, w, 3), np.uint8)
    img[:] = wall
    floor = tuple(int(c * 0.55) for c in NEUTRAL[rng.randrange(len(NEUTRAL))])
    img[int(h * 0.8):] = floor
    x = rng.randrange(20, w - 160)  # a plain cupboard against the wall: something there that is not text
    cv2.rectangle(img, (x, int(h * 0.55)), (x + 120, int(h * 0.8)), tuple(int(c * 0.7) for c in wall), -1)
    return img


def _sign(img: np.ndarray, lines: tuple[str, ...], x0: int, x1: int, rng: random.Random) -> None:
    board, ink = rng.choice([((245, 245, 240), (15, 15, 15)), ((250, 225, 60), (10, 10, 10)),
                             ((20, 90, 40), (250, 250, 250))])
    font = cv2.FONT_HERSHEY_DUPLEX
    width = x1 - x0 - 40
    scale = min(2.2, min(width / cv2.getTextSize(t, font, 1.0, 3)[0][0] for t in lines))
    line_h = int(48 * scale)
    top = 60
    cv2.rectangle(img, (x0, top), (x1, top + 30 + line_h * len(lines)), board, -1)
    for i, text in enumerate(lines):
        (tw, _), _ = cv2.getTextSize(text, font, scale, 3)
        cv2.putText(img, text, (x0 + (x1 - x0 - tw) // 2, top + 10 + line_h * (i + 1) - int(8 * scale)), font,
                    scale, ink, 3, cv2.LINE_AA)


def _person(img: np.ndarray, photo: np.ndarray, centre: float) -> None:
    h = 300
    face = cv2.resize(photo, (int(photo.shape[1] * h / photo.shape[0]), h), interpolation=cv2.INTER_AREA)
    x = int(np.clip(centre * SIZE[0] - face.shape[1] / 2, 0, SIZE[0] - face.shape[1]))
    img[SIZE[1] - h:, x:x + face.shape[1]] = face


def draw(scene: Drawn, photo: np.ndarray | None) -> np.ndarray:
    """The scene as an RGB frame, with a little sensor noise."""
    rng = random.Random(scene.seed)
    wall = WALLS[scene.wall] if scene.wall else NEUTRAL[rng.randrange(len(NEUTRAL))]
    img = _room(rng, wall)
    if scene.people:
        if photo is None:
            raise ValueError("a scene with people needs the sample portrait (matplotlib's sample data)")
        for c in scene.people:
            _person(img, photo, c)
    if scene.lines:
        # beside the person, never over the face
        x0, x1 = ((20, 280) if scene.people[0] > 0.5 else (360, 620)) if scene.people else (90, 550)
        _sign(img, scene.lines, x0, x1, rng)
    noise = np.random.default_rng(scene.seed).normal(0, 3, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def _expect(scene: Drawn, asked: str) -> tuple:
    words = ("words", *(w.lower() for line in scene.lines for w in line.split())) if scene.lines else None
    if asked == "read":
        return ("scene", words)
    if asked == "colour":
        return ("scene", ("colour", scene.wall))
    people = ("people", len(scene.people))
    if asked == "people":
        return ("scene", people)
    return ("scene", people, words or ("no_text",))  # "what can you see"


def _scene(kind: str, rng: random.Random, faces: bool, wall: str) -> Drawn:
    seed = rng.randrange(1 << 30)
    sign = (rng.choice(SIGN_WORDS),) + ((rng.choice(SECOND_LINE),) if rng.random() < 0.6 else ())
    if kind == "sign":
        return Drawn("sign", sign, seed=seed)
    if kind == "face" and faces:
        people = (rng.choice([0.3, 0.7]),) if rng.random() < 0.7 else (0.25, 0.75)
        return Drawn("face", sign if rng.random() < 0.4 and len(people) == 1 else (), people=people, seed=seed)
    if kind == "colour":
        return Drawn("colour", wall=wall, seed=seed)
    return Drawn("empty", seed=seed)


def camera_requests(n: int, seed: int = CAMERA_SEED, faces: bool = True) -> list[tuple[Request, Drawn]]:
    """`n` camera questions, each with the scene it is asked over; without `faces`, no scene has a person."""
    rng = random.Random(seed)
    pool = [(v, r) for v in VOICES for r in RATES]
    rng.shuffle(pool)
    walls = rng.sample(sorted(WALLS), len(WALLS))  # every colour in turn, in an order of the seed's
    kinds = ["sign", "face", "colour", "empty"]
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        scene = _scene(kind, rng, faces, walls[(i // len(kinds)) % len(walls)])
        asked = ASKED[scene.kind][(i // len(kinds)) % len(ASKED[scene.kind])]
        text = rng.choice(QUESTIONS[asked])
        voice, wpm = pool[i % len(pool)]
        out.append((Request(text, "camera", _expect(scene, asked), voice, wpm, scene.kind), scene))
    return out


def write_frames(folder: Path, scenes: list[Drawn], slot_s: float, tail_s: float = 2.0) -> Path:
    """The camera's image folder at one frame a second: each scene shown for its request's whole slot.

    Each scene is drawn once into `folder/scenes`; the frames in `folder/camera` link to it.
    """
    face = portrait() if any(s.people for s in scenes) else None
    drawn, frames = folder / "scenes", folder / "camera"
    drawn.mkdir(parents=True, exist_ok=True)
    frames.mkdir(parents=True, exist_ok=True)
    for old in frames.glob("*.png"):  # a folder kept from an earlier run (--out) holds that run's frames
        old.unlink()
    for i, scene in enumerate(scenes):
        cv2.imwrite(str(drawn / f"{i:03d}-{scene.kind}.png"), cv2.cvtColor(draw(scene, face), cv2.COLOR_RGB2BGR))
    total = int(len(scenes) * slot_s + tail_s) + 1
    for k in range(total):
        i = min(len(scenes) - 1, int(k // slot_s))
        (frames / f"{k:06d}.png").symlink_to(Path("..") / "scenes" / f"{i:03d}-{scenes[i].kind}.png")
    return frames
