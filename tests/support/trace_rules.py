"""The trace-event format's rules, as a checker: what Perfetto and chrome://tracing need to draw a trace.

From the Trace Event Format document: every event has a phase (`ph`), a name, a process and a thread id, and
a timestamp in microseconds; complete slices (X) carry a duration and nest on their track; duration events
(B/E) pair up per thread; async events (b/e) pair up per category and id; a flow (s ... f) has one start and
one finish with the same category and id, each bound to a slice enclosing it on its own thread.
"""
from __future__ import annotations

from numbers import Real

PHASES = {"B", "E", "X", "b", "e", "n", "s", "t", "f", "i", "I", "M"}
EPS = 1e-6  # microseconds
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index", "process_labels"}


def _num(v: object) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def check_trace(trace: object) -> list[str]:
    """Every rule the trace breaks, one sentence each (empty: a valid trace)."""
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["the trace must be an object with a traceEvents list"]
    problems: list[str] = []
    events = trace["traceEvents"]
    stacks: dict[tuple, list[dict]] = {}
    asyncs: dict[tuple, list[dict]] = {}
    flows: dict[tuple, dict[str, list[dict]]] = {}
    slices: dict[tuple, list[tuple[float, float]]] = {}
    for n, ev in enumerate(events):
        where = f"event {n} ({ev.get('ph')!r} {ev.get('name')!r})" if isinstance(ev, dict) else f"event {n}"
        if not isinstance(ev, dict):
            problems.append(f"{where} is not an object")
            continue
        ph = ev.get("ph")
        if ph not in PHASES:
            problems.append(f"{where}: unknown phase")
            continue
        if not isinstance(ev.get("name"), str) and ph != "E":
            problems.append(f"{where}: name must be a string")
        if not isinstance(ev.get("pid"), int) or not isinstance(ev.get("tid"), int):
            problems.append(f"{where}: pid and tid must be integers")
        if ph == "M":
            if ev.get("name") not in METADATA:
                problems.append(f"{where}: unknown metadata name")
            elif not isinstance(ev.get("args"), dict):
                problems.append(f"{where}: metadata needs args")
            continue
        ts = ev.get("ts")
        if not _num(ts) or ts < 0:
            problems.append(f"{where}: ts must be a non-negative number of microseconds")
            continue
        if "args" in ev and not isinstance(ev["args"], dict):
            problems.append(f"{where}: args must be an object")
        track = (ev.get("pid"), ev.get("tid"))
        if ph == "X":
            dur = ev.get("dur")
            if not _num(dur) or dur < 0:
                problems.append(f"{where}: a complete event needs a non-negative dur")
            else:
                slices.setdefault(track, []).append((ts, ts + dur))
        elif ph == "B":
            stacks.setdefault(track, []).append(ev)
        elif ph == "E":
            open_ = stacks.get(track)
            if not open_:
                problems.append(f"{where}: an end with no begin on its thread")
                continue
            b = open_.pop()
            if ts < b["ts"]:
                problems.append(f"{where}: ends before it begins")
            if "name" in ev and ev["name"] != b["name"]:
                problems.append(f"{where}: ends {b['name']!r}, the innermost open slice")
            slices.setdefault(track, []).append((b["ts"], ts))
        elif ph in ("b", "e", "n"):
            if "cat" not in ev or "id" not in ev:
                problems.append(f"{where}: an async event needs cat and id")
                continue
            key = (ev.get("pid"), ev["cat"], str(ev["id"]))
            if ph == "b":
                asyncs.setdefault(key, []).append(ev)
            elif ph == "e":
                open_ = asyncs.get(key)
                if not open_:
                    problems.append(f"{where}: an async end with no begin for id {ev['id']!r}")
                    continue
                b = open_.pop()
                if b["name"] != ev["name"]:
                    problems.append(f"{where}: ends {ev['name']!r} but the innermost open one is {b['name']!r}")
                if ts < b["ts"]:
                    problems.append(f"{where}: ends before it begins")
        elif ph in ("s", "t", "f"):
            if "cat" not in ev or "id" not in ev:
                problems.append(f"{where}: a flow event needs cat and id")
                continue
            flows.setdefault((ev["cat"], str(ev["id"])), {}).setdefault(ph, []).append(ev)
        elif ph in ("i", "I") and ev.get("s", "t") not in ("g", "p", "t"):
            problems.append(f"{where}: instant scope must be g, p or t")
    for track, open_ in stacks.items():
        if open_:
            problems.append(f"thread {track}: {len(open_)} begin events never end ({open_[-1]['name']!r})")
    for key, open_ in asyncs.items():
        if open_:
            problems.append(f"async id {key[2]!r}: {len(open_)} begin events never end ({open_[-1]['name']!r})")
    for track, spans in slices.items():
        problems += _nesting(track, spans)
    for key, parts in flows.items():
        s, f = parts.get("s", []), parts.get("f", [])
        if len(s) != 1 or len(f) != 1:
            problems.append(f"flow {key}: needs exactly one start and one finish, has {len(s)} and {len(f)}")
            continue
        if f[0]["ts"] < s[0]["ts"]:
            problems.append(f"flow {key}: finishes before it starts")
        for ev in (s[0], f[0]):
            spans = slices.get((ev.get("pid"), ev.get("tid")), [])
            if not any(a <= ev["ts"] <= z for a, z in spans):
                problems.append(f"flow {key}: its {ev['ph']} event at {ev['ts']} has no slice to bind to")
    return problems


def _nesting(track: tuple, spans: list[tuple[float, float]]) -> list[str]:
    """Slices on one thread must nest: a slice that starts inside another ends inside it too.

    Ends are compared to within EPS: ts + dur is summed in floating point here, not in the viewer's integers.
    """
    out = []
    stack: list[tuple[float, float]] = []
    for a, z in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        # A finished slice leaves the stack; a zero-length one at this very time still holds what starts there.
        while stack and (stack[-1][1] < a - EPS or (stack[-1][1] <= a + EPS and stack[-1][1] - stack[-1][0] > EPS)):
            stack.pop()
        if stack and z > stack[-1][1] + EPS:
            out.append(f"thread {track}: slice {a}-{z} overlaps {stack[-1][0]}-{stack[-1][1]} without nesting")
        stack.append((a, z))
    return out
