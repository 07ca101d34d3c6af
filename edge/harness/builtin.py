"""Capabilities every harness has: a calculator, the machine's clock, and timers (edge/harness/timers.py).

A 0.5B model gets sums, conversions and the time wrong; these get them right.
Each can also claim an instruction by itself (`claim`): when the words are a
sum it can work out, or a question for the local clock, the router takes it
without asking a model (edge/harness/fast_route.py).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Callable
from zoneinfo import ZoneInfo

from edge.language.clock_question import clock_question
from edge.harness.capability import CapabilityError, Outcome, RunContext, one_text
from edge.language.say import clock_time, say_date
from edge.harness.timers import TimerCapability
from edge.language.spoken_math import work_out

class CalculatorCapability:
    name = "calculator"
    description = "Works out arithmetic and unit conversions said in words: sums, products, percentages, units."
    instructions = ("Use for any sum or conversion ('what is twelve times seven', 'five miles in kilometers'). "
                    "Put the question, with its numbers, in 'question'.")
    schema: dict[str, Any] = one_text("question", 1000)
    timeout_s = 5.0

    def claim(self, instruction: str) -> dict[str, Any] | None:
        return {"question": instruction} if work_out(instruction) is not None else None

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        worked = work_out(arguments["question"])
        if worked is None:
            raise CapabilityError("I could not work that sum out; please say it with the numbers again")
        return Outcome(worked.text)


class ClockCapability:
    name = "clock"
    description = "Tells the current local time, day of the week and date from this device's clock."
    instructions = ("Use when the user asks the time, the day or the date here ('what time is it', 'what's the "
                    "date today'). Put the question in 'question'.")
    schema: dict[str, Any] = one_text("question", 1000)
    timeout_s = 5.0

    def __init__(self, now: Callable[[], datetime] | None = None, zone: str | None = None) -> None:
        tz = ZoneInfo(zone) if zone else None
        self.now = now or (lambda: datetime.now(tz).astimezone(tz))

    def claim(self, instruction: str) -> dict[str, Any] | None:
        return {"question": instruction} if clock_question(instruction) else None

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        kind = clock_question(arguments["question"]) or "time"
        return Outcome(clock_answer(kind, self.now()), ttl_s=60.0)  # a time said much later is a wrong time


def clock_answer(kind: str, now: datetime) -> str:
    """'It's 6:05 in the evening.', 'Today is Tuesday.', 'Today is Tuesday, December 1, 2026.'"""
    if kind == "time":
        return f"It's {clock_time(now.time())}."
    if kind == "day":
        return f"Today is {now:%A}."
    return f"Today is {say_date(now.date())}."


def builtin_capabilities() -> list[Any]:
    # The timer first: "a timer for 90 seconds" holds a number and a unit, but it is no conversion.
    return [TimerCapability(), CalculatorCapability(), ClockCapability()]
