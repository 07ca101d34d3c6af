"""The camera capability: a question about the scene answered from what the device measured, never guessed.

It claims the questions edge/language/camera_question.py recognises, measures the newest frame frozen with the
request (edge/understand/scene.py), and says the part asked for; where it cannot tell (no frame, no text
read, no face detector), it says so.
"""
from __future__ import annotations

from typing import Any, Callable

from edge.harness.capability import Outcome, RunContext, one_text
from edge.language.camera_question import camera_question
from edge.understand.scene import Measurer, Scene

NO_FRAME = "I can't see anything right now: no camera picture came with that question."
_COUNT = {1: "one person", 2: "two people", 3: "three people"}


def _people(scene: Scene) -> str:
    if not scene.faces_known:
        return "I can't tell whether anyone is there: this device has no face detector installed."
    if not scene.faces:
        return "I don't see anyone in the picture."
    n = len(scene.faces)
    where = ", ".join(sorted(set(scene.faces)))
    return f"I see {_COUNT.get(n, f'{n} people')} in the picture, {where}."


def _read(scene: Scene) -> str:
    if not scene.lines:
        return "I can't read any text in the picture."
    return f'It says "{" / ".join(scene.lines)}".'


def _colour(scene: Scene) -> str:
    if not scene.colours:
        return "I can't tell one main colour: the picture is very mixed."
    return "Mostly " + " and ".join(scene.colours) + "."


def _see(scene: Scene) -> str:
    parts = []
    if scene.faces:
        parts.append(_COUNT.get(len(scene.faces), f"{len(scene.faces)} people") + " " + scene.faces[0]
                     if len(scene.faces) == 1 else _COUNT.get(len(scene.faces), f"{len(scene.faces)} people"))
    elif scene.faces_known:
        parts.append("no one")
    if scene.lines:
        parts.append(f'the text "{" / ".join(scene.lines)}"')
    said = "I see " + " and ".join(parts) + "." if parts else "I see no text and can't make out anyone."
    colours = f" Mostly {' and '.join(scene.colours)}" if scene.colours else ""
    return f"{said}{colours}{',' if colours else ' It is'} {scene.light}." if scene.light else said


def changed(before: Scene | None, now: Scene) -> str:
    if before is None:
        return "This is the first look I've had, so I can't say what changed."
    out = []
    if len(before.faces) != len(now.faces):
        out.append(f"{len(now.faces)} {'person' if len(now.faces) == 1 else 'people'} now, "
                   f"{len(before.faces)} before")
    if before.lines != now.lines:
        out.append(f'the text now reads "{" / ".join(now.lines)}"' if now.lines else "the text is gone")
    if before.light != now.light:
        out.append(f"it is {now.light} now")
    return ("Since you last asked: " + "; ".join(out) + ".") if out else "Nothing I can measure has changed."


def answer(kind: str, scene: Scene, before: Scene | None = None) -> str:
    if kind == "read":
        return _read(scene)
    if kind == "people":
        return _people(scene)
    if kind == "colour":
        return _colour(scene)
    if kind == "light":
        return f"It looks {scene.light}."
    if kind == "change":
        return changed(before, scene)
    return _see(scene)


class CameraCapability:
    name = "camera"
    description = "Says what the camera sees now: text on signs, people, colours, light, what changed."
    instructions = "Use for questions about the camera picture. Put the question in 'question'."
    schema: dict[str, Any] = one_text("question", 1000)
    timeout_s = 30.0

    def __init__(self, measurer: Callable[[], Callable] | None = None) -> None:
        self._make = measurer or Measurer
        self._measure: Callable | None = None
        self.last: Scene | None = None

    def claim(self, instruction: str) -> dict[str, Any] | None:
        return {"question": instruction} if camera_question(instruction) else None

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        ev = ctx.evidence_loader()
        if ev is None or not ev.frames:
            return Outcome(NO_FRAME)
        if self._measure is None:
            self._measure = self._make()
        scene = self._measure(ev.frames[-1][1])
        kind = camera_question(arguments["question"]) or "see"
        said = answer(kind, scene, self.last)
        self.last = scene
        return Outcome(said, ttl_s=30.0)  # a scene said much later is not the scene now
