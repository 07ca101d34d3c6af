"""What the camera shows, told to the chat model in words before the user's turn."""
from __future__ import annotations

from edge.frontend.default import grammar as protocol
from edge.memory.describe import fields as scene_fields


def camera_line(scene: tuple[int, str] | None) -> str:
    """What the camera shows now, before the user's words: the model cannot see, so it is told in words.

    The newest description's text read, and how many faces are in view when faces are counted (the
    user's own is usually one of them: "is anyone behind me?" is answered from the count).
    """
    if scene is None:
        return ""
    seen = scene_fields(scene[1])
    words = protocol.strip_protocol(seen.get("text", ""))
    line = f"(The camera shows a sign or page that reads: {words}.)\n" if words else ""
    if seen.get("faces", "").isdigit():
        n = int(seen["faces"])
        others = n - 1  # a camera facing the user sees the user's own face first
        who = ("no face" if n == 0 else "only the user's face, so no one else is there" if n == 1 else
               f"{n} faces, so {'someone else is' if others == 1 else f'{others} other people are'} there "
               "with the user")
        line += f"(The camera sees {who}.)\n"
    return line
