"""The understanding router: guards around whichever router a harness is configured with.

Before the inner router: a request this connection cannot keep (a timer where nothing can speak up later),
home control with no way to reach the home, a sum whose numbers did not come through. After it: a model's
choice of a capability that only takes what it recognises (the calculator, the clock, timers) but does not
recognise this request is not run, since a model that picks the calculator for "what is the capital of
France" makes up the numbers; the request goes to the general capability, or is asked back.
"""
from __future__ import annotations

from edge.harness.capability import Registry
from edge.harness.fast_route import by_claim
from edge.harness.router import Choice, Recent, Router
from edge.harness.time_elsewhere import time_elsewhere
from edge.language.live_facts import live_topic
from edge.language.timer_words import timer_request
from edge.understand import honest
from edge.language.ask_back import NOT_CAUGHT
from edge.language.home_words import home_request
from edge.understand.home import home_tools

CLAIMING = ("calculator", "clock", "timer")


def _say(text: str, why: str) -> Choice:
    return Choice(honest.NAME, {"text": text}, path="understand", why=why)


class Understand:
    def __init__(self, inner: Router, speaks_later: bool = True, home_expected: bool = False) -> None:
        self.inner, self.speaks_later, self.home_expected = inner, speaks_later, home_expected
        self.name = inner.name
        self._view: tuple[tuple[str, ...], Registry] | None = None

    def _without_say_back(self, registry: Registry) -> Registry:
        """The registry as the inner router sees it: without the guards' own capability."""
        names = tuple(n for n in registry.names() if n != honest.NAME)
        if self._view is None or self._view[0] != names:
            view = Registry()
            for n in names:
                view.add(registry.get(n))
            self._view = (names, view)
        return self._view[1]

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        if not self.speaks_later and timer_request(instruction) is not None:
            return _say(honest.NO_TIMERS, "a timer here could never ring")
        if home_request(instruction) and not home_tools(registry):
            text = honest.HOME_DOWN if self.home_expected else honest.NO_HOME
            return _say(text, "home control asked with no home tools loaded")
        view = self._without_say_back(registry)
        if live_topic(instruction) or time_elsewhere(instruction) is not None:
            if registry.get("general") is not None and not self._tools(view):
                # general answers these from the zone data or declines them: no model needs asking
                return Choice("general", {"request": instruction}, path="understand", why="live fact or time "
                              "elsewhere, which general answers without its model")
        if not self._tools(view) and registry.get("general") is not None:
            # nothing but the built-ins and general: a model router could only choose wrongly, and slowly
            claimed = by_claim(instruction, view)
            if claimed is None and honest.sum_meant(instruction):
                return _say(honest.SUM_NOT_CAUGHT, "a sum that did not parse")
            return claimed or Choice("general", {"request": instruction}, path="understand",
                                     why="no tool claims it and no other tool is loaded")
        choice = self.inner.route(instruction, view, recent)
        if choice.capability in CLAIMING and choice.path != "claim":
            cap = registry.get(choice.capability)
            claim = getattr(cap, "claim", None)
            if claim is not None and claim(instruction) is None:
                return self._instead(instruction, registry, f"{choice.capability} was chosen but does not "
                                                            "recognise the request")
        return choice

    @staticmethod
    def _tools(registry: Registry) -> list[str]:
        """Capabilities a router has to choose among: skills and servers' tools, not the built-ins."""
        return [n for n in registry.names() if n not in (*CLAIMING, "general", "camera", honest.NAME)]

    def _instead(self, instruction: str, registry: Registry, why: str) -> Choice:
        if honest.sum_meant(instruction):
            return _say(honest.SUM_NOT_CAUGHT, why + "; a sum that did not parse")
        if registry.get("general") is not None:
            return Choice("general", {"request": instruction}, path="understand", why=why + "; general instead")
        return _say(NOT_CAUGHT, why + "; nothing else fits")
