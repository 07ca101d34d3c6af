"""Structured tool results said as a person would say them: JSON objects, lists, ISO dates and times.

`say(value, question, action)` turns a decoded result into one or two plain
sentences; `say_text(text, ...)` does the same for text that holds JSON (or
Home Assistant's "Live Context" listing) and replaces ISO timestamps inside
ordinary text. Rules, not a model: the same result is always said the same way.
"""
from __future__ import annotations

import json
import re
from datetime import date, datetime, time
from typing import Any

_ISO_DT = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
MAX_ITEMS = 5  # more than this many list entries: the first few and "and N more"
MAX_FIELDS = 4  # key/value pairs said from one object
# Verbs of action tools (Home Assistant's HassTurnOff, a light's "set"...) in the past tense.
_PAST = {"turn": "turned", "set": "set", "open": "opened", "close": "closed", "lock": "locked", "unlock": "unlocked",
         "start": "started", "stop": "stopped", "pause": "paused", "unpause": "resumed", "toggle": "toggled",
         "cancel": "cancelled", "add": "added", "remove": "removed", "create": "created", "delete": "deleted",
         "play": "played", "mute": "muted", "unmute": "unmuted", "activate": "activated", "enable": "enabled",
         "disable": "disabled", "send": "sent", "run": "ran"}
_QUIET_KEYS = {"success", "ok", "status_code", "id", "entity_id", "type", "language", "card", "is_dst"}


def words(key: str) -> str:
    """`time_difference` / `dayOfWeek` / `HassTurnOff` -> 'time difference' / 'day of week' / 'hass turn off'."""
    return " ".join(_CAMEL.sub(" ", key).replace("_", " ").replace("-", " ").split()).lower()


def place(tz: str) -> str:
    """An IANA zone name as a place: 'Asia/Tokyo' -> 'Tokyo', 'America/New_York' -> 'New York'."""
    return tz.rsplit("/", 1)[-1].replace("_", " ") if "/" in tz else tz


def clock_time(t: time) -> str:
    """'10:39 in the evening', '7 o'clock in the morning', 'midnight', 'noon'."""
    if t.minute == 0 and t.hour in (0, 12):
        return "midnight" if t.hour == 0 else "noon"
    h12 = t.hour % 12 or 12
    part = "in the morning" if t.hour < 12 else "in the afternoon" if t.hour < 18 else "in the evening"
    return f"{h12} o'clock {part}" if t.minute == 0 else f"{h12}:{t.minute:02d} {part}"


def say_date(d: date, weekday: bool = True) -> str:
    day = f"{d:%B} {d.day}, {d.year}"
    return f"{d:%A}, {day}" if weekday else day


def parse_iso(text: str) -> datetime | date | None:
    text = text.strip()
    try:
        if _ISO_DT.fullmatch(text):
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        if _ISO_DATE.fullmatch(text):
            return date.fromisoformat(text)
    except ValueError:
        return None
    return None


def say_moment(v: datetime | date, tz: str = "", weekday: str = "") -> str:
    """A moment as words: '10:39 in the evening on Wednesday in Tokyo'."""
    if not isinstance(v, datetime):
        return say_date(v)
    out = clock_time(v.time())
    if weekday:
        out += f" on {weekday}"
    return out + (f" in {place(tz)}" if tz else "")


def say_iso_in_text(text: str) -> str:
    """ISO timestamps and dates inside ordinary text replaced by words."""
    def dt(m: re.Match) -> str:
        v = parse_iso(m.group(0))
        return m.group(0) if v is None else f"{say_moment(v)} on {say_date(v, weekday=False)}"

    def d(m: re.Match) -> str:
        v = parse_iso(m.group(0))
        return m.group(0) if v is None else say_date(v, weekday=False)

    return _ISO_DATE.sub(d, _ISO_DT.sub(dt, text))


def number(v: float | int) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else f"{v:g}" if isinstance(v, float) else str(v)


def join(items: list[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b and c'; more than MAX_ITEMS -> the first ones 'and N more'."""
    items = [i for i in items if i]
    if len(items) > MAX_ITEMS:
        items = items[:MAX_ITEMS - 1] + [f"{len(items) - MAX_ITEMS + 1} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "nothing"


def scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        return number(v)
    if v is None:
        return "nothing"
    if isinstance(v, str):
        moment = parse_iso(v)
        return say_moment(moment) if moment is not None else v.strip()
    return phrase(v)


def phrase(v: Any) -> str:
    """A value as a noun phrase (no sentence punctuation), for use inside a sentence."""
    if isinstance(v, dict):
        return join([f"{words(k)} {scalar(x)}" for k, x in list(v.items())[:MAX_FIELDS] if k not in _QUIET_KEYS])
    if isinstance(v, list):
        return join([scalar(x) for x in v])
    return scalar(v)


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _time_shape(d: dict) -> tuple[datetime, str, str] | None:
    """{"timezone": ..., "datetime": ISO, "day_of_week": ...} (the time server's answer)."""
    moment = parse_iso(str(d.get("datetime", ""))) if isinstance(d.get("datetime"), str) else None
    if not isinstance(moment, datetime):
        return None
    return moment, str(d.get("timezone", "")), str(d.get("day_of_week", ""))


def _device(d: dict) -> str | None:
    """A Home Assistant device entry ({names, state, areas, ...}) -> 'the Kitchen Light in the Kitchen is off'."""
    name = d.get("names") or d.get("name")
    if not name or "state" not in d:
        return None
    name = name[0] if isinstance(name, list) else str(name)
    area = d.get("areas") or d.get("area")
    area = area[0] if isinstance(area, list) and area else area
    where = f" in the {area}" if area and str(area).lower() not in str(name).lower() else ""
    state = ("on" if d["state"] else "off") if isinstance(d["state"], bool) else scalar(d["state"])  # YAML's off
    attrs = d.get("attributes") if isinstance(d.get("attributes"), dict) else {}
    extra = [f"{words(k)} {scalar(x)}" for k, x in list(attrs.items())[:2]]
    return f"the {name}{where} is {state}" + (f", {join(extra)}" if extra else "")


def _relevant(entries: list[dict], question: str) -> list[dict]:
    """Entries whose name or area is mentioned in the question (all of them when none is)."""
    q = question.lower()
    hits = []
    for e in entries:
        names = e.get("names") or e.get("name") or []
        names = names if isinstance(names, list) else [names]
        areas = e.get("areas") or e.get("area") or []
        areas = areas if isinstance(areas, list) else [areas]
        if any(str(n).lower() in q for n in names) or any(str(a).lower() in q for a in areas if a):
            hits.append(e)
    return hits or entries


def _action(action: str, data: dict) -> str | None:
    """Home Assistant's intent answer ({"response_type": "action_done", "data": {"success": [...]}})."""
    speech = ((data.get("speech") or {}).get("plain") or {}).get("speech") if isinstance(data.get("speech"), dict) \
        else None
    if speech:
        return sentence(str(speech))
    kind = data.get("response_type")
    if kind == "error":
        return sentence(f"That didn't work: {words(str((data.get('data') or {}).get('code', 'an error')))}")
    if kind not in ("action_done", "query_answer"):
        return None
    body = data.get("data") or {}
    done = [str(x.get("name", "")) for x in body.get("success", []) if isinstance(x, dict)]
    failed = [str(x.get("name", "")) for x in body.get("failed", []) if isinstance(x, dict)]
    parts = action.split()
    if parts and parts[0] == "hass":
        parts = parts[1:]
    verb = _PAST.get(parts[0]) if parts else None
    said = sentence(f"{verb} {' '.join(parts[1:])} the {join(done)}".replace("  ", " ")) if verb and done else \
        sentence(f"Done: {join(done)}") if done else ""
    if failed:
        said += (" " if said else "") + sentence(f"I couldn't reach the {join(failed)}")
    return said or sentence("Done")


def _live_context(text: str, question: str) -> str | None:
    """Home Assistant's GetLiveContext text: a heading line, then a YAML list of devices."""
    import yaml

    head, _, body = text.partition("\n")
    if not head.lower().startswith("live context"):
        return None
    try:
        entries = yaml.safe_load(body)
    except yaml.YAMLError:
        return None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return None
    said = [s for s in (_device(e) for e in _relevant(entries, question)) if s]
    if len(said) > 2:
        return sentence(join(said))
    return " ".join(sentence(s) for s in said) or None


def say(value: Any, question: str = "", action: str = "") -> str:
    """A decoded result as one or two spoken sentences."""
    if isinstance(value, dict):
        ts = _time_shape(value)
        if ts is not None:
            return sentence(f"It's {say_moment(*ts)}")
        src, dst = value.get("source"), value.get("target")
        if isinstance(src, dict) and isinstance(dst, dict) and _time_shape(src) and _time_shape(dst):
            a, b = _time_shape(src), _time_shape(dst)
            return sentence(f"{say_moment(a[0], a[1])} is {say_moment(b[0], b[1])}")
        done = _action(words(action), value)
        if done is not None:
            return done
        device = _device(value)
        if device is not None:
            return sentence(device)
        if isinstance(value.get("result"), (str, dict, list)) and len(value) <= 3:
            return say_text(value["result"], question, action) if isinstance(value["result"], str) else \
                say(value["result"], question, action)
        pairs = [(k, x) for k, x in value.items() if k not in _QUIET_KEYS and x not in (None, "", [], {})]
        return " ".join(sentence(f"the {words(k)} is {scalar(x)}") for k, x in pairs[:2]) or sentence("Done")
    if isinstance(value, list):
        if value and all(isinstance(x, dict) for x in value):
            devices = [d for d in (_device(x) for x in _relevant(value, question)) if d]
            if devices:
                return sentence(join(devices))
            return sentence(join([phrase(x) for x in value]))
        return sentence(join([scalar(x) for x in value]) if value else "There's nothing there")
    if isinstance(value, str):
        return say_text(value, question, action)
    return sentence(scalar(value))


def say_text(text: str, question: str = "", action: str = "") -> str:
    """Text from a tool: JSON or a live-context listing said in words; ISO times inside prose replaced."""
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            return say(json.loads(stripped), question, action)
        except json.JSONDecodeError:
            pass
    if stripped.lower().startswith("live context"):
        said = _live_context(stripped, question)
        if said:
            return said
    moment = parse_iso(stripped)
    if moment is not None:
        return sentence(f"It's {say_moment(moment)}" if isinstance(moment, datetime) else say_date(moment))
    return say_iso_in_text(text)
