"""The fast path: route by rules when one capability clearly matches, the model otherwise.

A model router costs seconds on a loaded device; most requests to a tool name it
plainly ("what time is it in Tokyo", "turn off the kitchen light"). Each
capability is scored by the instruction's words found in its tool name (weight 2)
and description (weight 1). Rules decide only when the best score clears a floor
and beats the runner-up by a margin, and when its arguments can be filled by
rules too; everything else goes to the wrapped router, unchanged.
"""
from __future__ import annotations

import re
from typing import Any

from edge.harness.capability import Capability, Registry
from edge.harness.router import Choice, Recent, Router
from edge.harness.time_elsewhere import zone_named

# Capabilities only ever chosen by claim or by a model: the word score would pick them for any
# instruction that mentions "time" or "current".
_CLAIMING = frozenset({"general", "calculator", "clock", "timer"})
MIN_SCORE = 3  # e.g. one tool-name word and one description word
MARGIN = 2  # over the runner-up: a tie or a near tie is the model's to decide
# Not "on" or "off": they name tools (HassTurnOn).
_STOP = frozenset("a an and are at be can could do does for from get give how i in is it its me my of or "
                  "please right the this to what whats which who will with would you your".split())
# Home Assistant's entity domains a spoken device kind names ("the lights" -> light).
_DOMAINS = frozenset("light switch fan cover climate lock media_player vacuum valve".split())
# Words people say for the words tools are named with.
_SAME = {"now": "current", "currently": "current", "lights": "light", "lamp": "light", "switch": "turn"}
# Phrases that mean a tool word without saying it: "what time is it" asks for the current time.
_IDIOMS = [(re.compile(r"\bwhat time is it\b|\bwhat(?:'s| is) the time\b", re.I), "current time")]


def words(text: str) -> list[str]:
    """Lower-case content words; camelCase and snake_case names split into their parts."""
    for idiom, meaning in _IDIOMS:
        text = idiom.sub(meaning, text)
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        w = _SAME.get(w, w)
        if w.endswith("s") and len(w) > 3 and not w.endswith("ss"):
            w = w[:-1]  # turns -> turn, devices -> device
        if w not in _STOP:
            out.append(w)
    return out


def score(instruction: list[str], cap: Capability) -> tuple[int, set[str]]:
    """The capability's score and the instruction words it explains."""
    name, desc = set(words(cap.name)), set(words(cap.description))
    total, hit = 0, set()
    for w in set(instruction):
        weight = 2 if w in name else 1 if w in desc else 0
        if weight:
            total += weight
            hit.add(w)
    return total, hit


def _is_array(schema: dict[str, Any]) -> bool:
    """An array, or an optional one (`anyOf: [array, null]`, as MCP servers describe `list[str] | None`)."""
    return schema.get("type") == "array" or any(isinstance(x, dict) and x.get("type") == "array"
                                                 for x in schema.get("anyOf", []))


def fill(instruction: str, cap: Capability, explained: set[str]) -> tuple[dict[str, Any], str] | None:
    """Arguments by rules, with why; None when a required one (or every one) cannot be filled."""
    schema = cap.schema or {}
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    notes = []
    zone_props = [p for p in props if "timezone" in p.lower() or p.lower() == "zone"]
    for p, sub in sorted(props.items(), key=lambda kv: kv[0] != "area"):  # an area first: it rules out a name
        sub = sub if isinstance(sub, dict) else {}
        if "enum" in sub:
            hits = [v for v in sub["enum"] if isinstance(v, str) and re.search(rf"\b{re.escape(v)}\b",
                                                                                  instruction, re.I)]
            if len(hits) == 1:
                args[p] = hits[0]
        elif p in zone_props and len(zone_props) == 1:
            zone = zone_named(instruction)
            if zone:
                args[p] = zone
                notes.append(f"{p}={zone} from the city named")
        elif p == "area" and sub.get("type", "string") == "string":
            m = re.search(r"\bin the ([a-z][a-z ]*?)\s*[?.!]*$", instruction, re.I)
            if m:
                args[p] = m.group(1).lower()
                notes.append(f"{p}={args[p]!r} from 'in the ...'")
        elif p == "domain" and "area" in args:
            kinds = [w for w in words(instruction) if w in _DOMAINS]
            if len(kinds) == 1:
                args[p] = [kinds[0]] if _is_array(sub) else kinds[0]
                notes.append(f"{p}={kinds[0]} from the device kind named")
        elif p == "name" and not required - {"name"} and "area" not in args:
            rest = [w for w in re.findall(r"[A-Za-z0-9]+", instruction)
                    if w.lower() not in _STOP and (words(w) or [""])[0] not in explained]
            if rest:
                args[p] = " ".join(rest).lower()
                notes.append(f"{p}={args[p]!r}: the words the tool's name does not explain")
    if required - set(args) or (props and not args):
        return None
    return args, "; ".join(notes)


def by_claim(instruction: str, registry: Registry) -> Choice | None:
    """The first capability that claims the instruction by itself (the calculator for a sum it can work out,
    the clock for a question about the local time); None when none does."""
    for cap in registry:
        claim = getattr(cap, "claim", None)
        args = claim(instruction) if claim is not None else None
        if args is not None:
            return Choice(cap.name, args, path="claim", why=f"{cap.name} recognised the instruction as its own")
    return None


class ClaimFirst:
    """A capability that recognises an instruction as its own takes it; the wrapped router decides the rest."""

    def __init__(self, fallback: Router) -> None:
        self.fallback = fallback
        self.name = fallback.name

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        return by_claim(instruction, registry) or self.fallback.route(instruction, registry, recent)


class FastRouter:
    """Claims, then rules when one capability clearly matches; the wrapped router for the rest."""

    def __init__(self, fallback: Router) -> None:
        self.fallback = fallback
        self.name = f"fast+{fallback.name}"

    def route(self, instruction: str, registry: Registry, recent: list[Recent]) -> Choice:
        claimed = by_claim(instruction, registry)
        if claimed is not None:
            return claimed
        choice = self.by_rules(instruction, registry)
        if isinstance(choice, Choice):
            return choice
        out = self.fallback.route(instruction, registry, recent)
        out.path = self.fallback.name
        out.why = f"{choice}; the {self.fallback.name} router chose"
        return out

    def by_rules(self, instruction: str, registry: Registry) -> Choice | str:
        """The choice, or a sentence saying why rules did not decide."""
        said = words(instruction)
        scored = sorted(((score(said, c), c) for c in registry if c.name not in _CLAIMING),
                        key=lambda t: -t[0][0])
        if not scored or scored[0][0][0] < MIN_SCORE:
            return "no capability clearly matched"
        (best, hit), cap = scored[0]
        second = scored[1][0][0] if len(scored) > 1 else 0
        if best - second < MARGIN:
            return f"{cap.name} ({best}) and {scored[1][1].name} ({second}) matched about as well"
        filled = fill(instruction, cap, hit)
        if filled is None:
            return f"{cap.name} matched but its arguments need the model"
        args, notes = filled
        why = f"{cap.name} matched {sorted(hit)} (score {best} over {second})" + (f"; {notes}" if notes else "")
        return Choice(cap.name, args, path="rules", why=why)
