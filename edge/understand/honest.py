"""What is said instead of a guess: ask back, decline plainly, or say a part is unreachable.

A confidently wrong answer costs more trust than "Sorry, I didn't catch that.": every guard in
edge/understand/route.py ends in one of these short sentences, said by the `say_back` capability.
"""
from __future__ import annotations

import re
from typing import Any

from edge.harness.capability import Outcome, RunContext, one_text

NAME = "say_back"
SUM_NOT_CAUGHT = "Sorry, I didn't catch that sum; please say it again with the numbers."
HOME_DOWN = "I can't reach Home Assistant right now."
NO_HOME = "No home devices are connected to me, so I can't do that."
NO_TIMERS = ("I can't keep a timer or a reminder through this connection, because I could not speak up when it is "
             "due; use Home Assistant's own timers, or ask me in a voice session on the device.")


class SayBack:
    """Says the sentence a guard chose; never offered to a model router (edge/understand/route.py hides it)."""

    name = NAME
    description = "Says a fixed sentence chosen by the understanding guards."
    instructions = ""
    schema: dict[str, Any] = one_text("text", 400)
    timeout_s = 5.0

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        return Outcome(arguments["text"])


# A sum was meant when an operator word sits between two number-like words.
_OPERATOR = re.compile(r"\b(plus|minus|times|multiplied by|divided by|percent of|squared)\b", re.I)


def sum_meant(text: str) -> bool:
    return bool(_OPERATOR.search(text))
