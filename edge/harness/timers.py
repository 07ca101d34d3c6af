"""Timers and reminders: set now, said when due, even after a restart.

"Set a timer for two minutes" is answered at once ("Timer set for 2 minutes.") and
the ring ("Your 2-minute timer is done.") goes with that answer as a `Later`: the
harness stores it as a work item of its own, queued until its due time, and says it
then as a result nobody asked for at that moment. A timer is never a task that
waits: no worker is held, no timeout cuts it, no "still checking" notice is said,
and a new question does not make it stale. The words are read by edge/language/timer_words.py.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Callable

from edge.harness.capability import CapabilityError, Later, Outcome, RunContext, Scheduled, one_text
from edge.language.say import clock_time, join
from edge.language.timer_words import ClockTime, TimerRequest, timer_request

MAX_S = 24 * 3600.0  # longer than a day is a calendar's job
MAX_TASK = 200  # characters of a reminder's task said back
HOW = "say it like 'set a timer for five minutes' or 'remind me in ten minutes to check the oven'"


def say_duration(seconds: float) -> str:
    """'2 minutes', '90 seconds', '1 hour and 30 minutes', '1 hour, 5 minutes and 10 seconds'."""
    s = int(round(seconds))
    if s < 120 and s % 60:
        return f"{s} second{'s' if s != 1 else ''}"
    parts = [(s // 3600, "hour"), (s % 3600 // 60, "minute"), (s % 60, "second")]
    return join([f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in parts if n])


def timer_name(seconds: float) -> str:
    """'2-minute timer', '90-second timer', 'timer for 1 hour and 30 minutes'."""
    said = say_duration(seconds)
    if " and " in said or "," in said:
        return f"timer for {said}"
    n, unit = said.split()
    return f"{n}-{unit.rstrip('s')} timer"


def seconds_until(at: ClockTime, now: datetime) -> float:
    """Seconds from `now` to the next time the clock shows `at` (7:30 without morning or evening said: the
    sooner of the two)."""
    if at.meridiem == "am":
        hours = [at.hour % 12]
    elif at.meridiem == "pm":
        hours = [at.hour % 12 + 12]
    elif at.hour > 12 or at.hour == 0:
        hours = [at.hour]
    else:
        hours = [at.hour % 12, at.hour % 12 + 12]
    best = None
    for h in hours:
        t = now.replace(hour=h, minute=at.minute, second=0, microsecond=0)
        if t <= now:
            t += timedelta(days=1)
        best = t if best is None or t < best else best
    assert best is not None
    return (best - now).total_seconds()


class TimerCapability:
    name = "timer"
    description = "Sets timers, reminders and alarms said in words, says how long is left, and cancels them."
    instructions = ("Use for 'set a timer for two minutes', 'remind me in ten minutes to check the oven', "
                    "'how long is left on my timer', 'cancel the timer'. Put the request in 'request'.")
    schema: dict[str, Any] = one_text("request", 1000)
    timeout_s = 5.0  # setting one takes no time: the wait is the harness's queue, not this call

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        self.now = now or (lambda: datetime.now().astimezone())

    def claim(self, instruction: str) -> dict[str, Any] | None:
        return {"request": instruction} if timer_request(instruction) is not None else None

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        req = timer_request(arguments["request"])
        if req is None:
            raise CapabilityError(f"I did not hear a timer or a reminder in that; {HOW}")
        if req.kind == "cancel":
            return Outcome(self._cancel(req, arguments["request"], ctx))
        if req.kind == "left":
            return Outcome(self._left(ctx.scheduled()), ttl_s=30.0)  # "4 minutes left" said much later is wrong
        return self._set(req)

    # --- setting one ---------------------------------------------------------------------------
    def _set(self, req: TimerRequest) -> Outcome:
        if req.unclear:
            raise CapabilityError(f"I can't tell how long '{req.unclear}' is; {HOW}")
        if req.seconds is None and req.at is None:
            what = {"reminder": "when to remind you", "alarm": "what time to set the alarm for"}.get(
                req.what, "how long the timer should be")
            raise CapabilityError(f"I didn't hear {what}; {HOW}")
        if len(req.task) > MAX_TASK:  # said back in full it would be cut short ("I'll remind you to.")
            raise CapabilityError(f"that reminder is too long for me to say back; tell me in fewer than "
                                  f"{MAX_TASK} characters what to remind you of")
        if req.at is not None:
            return self._at(req)
        seconds = float(req.seconds or 0)
        if seconds < 1:
            raise CapabilityError(f"a {req.what} needs at least one second; {HOW}")
        if seconds > MAX_S:
            raise CapabilityError(f"{say_duration(seconds)} is longer than a day, the longest I can wait; "
                                  "please set it for a day or less")
        about = {"what": req.what, "seconds": seconds, "task": req.task}
        span = say_duration(seconds)
        if req.what == "reminder":
            if req.task:
                return Outcome(f"I'll remind you to {req.task} in {span}.",
                               later=Later(seconds, f"It's time to {req.task}.", about))
            return Outcome(f"I'll remind you in {span}.",
                           later=Later(seconds, f"This is your reminder from {span} ago.", about))
        name = timer_name(seconds)
        if req.what == "alarm":
            return Outcome(f"Alarm set for {span} from now.",
                           later=Later(seconds, f"This is your alarm, set {span} ago.", about))
        return Outcome(f"Timer set for {span}.", later=Later(seconds, f"Your {name} is done.", about))

    def _at(self, req: TimerRequest) -> Outcome:
        assert req.at is not None
        now = self.now()
        seconds = seconds_until(req.at, now)
        when = clock_time((now + timedelta(seconds=seconds)).time())
        about = {"what": req.what, "seconds": seconds, "at": when, "task": req.task}
        if req.what == "reminder" and req.task:
            return Outcome(f"I'll remind you to {req.task} at {when}.",
                           later=Later(seconds, f"It's {when}: time to {req.task}.", about))
        if req.what == "reminder":
            return Outcome(f"I'll remind you at {when}.", later=Later(seconds, f"It's {when}; this is your reminder.",
                                                                        about))
        return Outcome(f"{req.what.capitalize()} set for {when}.",
                       later=Later(seconds, f"It's {when}; this is your {req.what}.", about))

    # --- asking about them ---------------------------------------------------------------------
    def _left(self, waiting: list[Scheduled]) -> str:
        if not waiting:
            return "You have no timers or reminders set."
        said = [f"{_name(s.about)} has {say_duration(max(1.0, s.due_in_s))} left" for s in waiting[:3]]
        text = said[0] if len(said) == 1 else ", ".join(said[:-1]) + ", and " + said[-1]
        more = f" There are {len(waiting) - 3} more." if len(waiting) > 3 else ""
        return text[0].upper() + text[1:] + "." + more

    def _cancel(self, req: TimerRequest, said: str, ctx: RunContext) -> str:
        waiting = ctx.scheduled()
        if not waiting:
            return "There is no timer or reminder to cancel."
        chosen = waiting if req.every else _named(waiting, req.what, said)[:1]  # the named one due soonest
        if not chosen:
            kept = _name(waiting[0].about)
            return f"There is no {req.what} to cancel; {kept} is still set." if len(waiting) == 1 else \
                f"There is no {req.what} to cancel; {len(waiting)} others are still set."
        gone = [s for s in chosen if ctx.unschedule(s.work_id)]
        if not gone:
            return "It had already gone off; there is nothing left to cancel."
        text = f"I've cancelled {join([_name(s.about, definite=True) for s in gone])}."
        rest = len(waiting) - len(gone)
        if rest:
            text += f" {rest} more {'is' if rest == 1 else 'are'} still set."
        return text


def _named(waiting: list[Scheduled], what: str, said: str) -> list[Scheduled]:
    """The ones the words name: by what they remind of ("cancel the oven reminder"), else by kind."""
    heard = set(said.lower().split())
    by_task = [s for s in waiting if heard & set(str(s.about.get("task", "")).lower().split()) - _LITTLE]
    by_kind = [s for s in waiting if s.about.get("what") == what]
    return by_task or by_kind


_LITTLE = frozenset("the a an to my your of in on at for and".split())


def _name(about: dict[str, Any], definite: bool = False) -> str:
    """'your 2-minute timer', 'the reminder to check the oven', 'your alarm for 7:30 in the morning'."""
    what, task, at = about.get("what", "timer"), about.get("task", ""), about.get("at", "")
    mine = "the" if definite else "your"
    if what == "reminder":
        return f"{mine} reminder to {task}" if task else f"{mine} reminder"
    if at:
        return f"{mine} {what} for {at}"
    seconds = float(about.get("seconds") or 0)
    return f"{mine} {timer_name(seconds)}" if what == "timer" else f"{mine} {what}"
