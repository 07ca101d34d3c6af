"""Which tests are slow: those that run real-time multi-process work or build a model, found from what they call.

A test is slow when its own body, a helper of its module it calls, or a fixture it asks for (and so on down,
`request.getfixturevalue("name")` included) starts a session or a process (`SPAWNS`), builds a model or runs a
large one (`BUILDS`), or when it is marked `slow` by hand. `pytest -m "not slow"` is the quick loop; the full
run (CI) still runs every test.
"""
from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

TESTS = Path(__file__).resolve().parent
# What starts real-time work in other processes (or a whole graph of nodes): a session, the supervisor, a child.
SPAWNS = ("run_session(", "make_supervisor(", "Supervisor(", "subprocess.", "Popen(", "multiprocessing",
          "main([\"bench\"",  # a benchmark run from the command line is a whole session
          "inprocess=False")  # ... and so is a graph of nodes asked for in processes of their own
# What builds a model (a training run, a bundle or its graphs exported, here or by the exporter's command line)
# or runs a large one step by step. Each costs tens of seconds of CPU on a small machine, so the tests of what it
# built go to the full run.
BUILDS = ("TrainSettings(", "BuildOptions(", "build_onnx_parts(", "run_export(", "make_bundle",
          # the embedded default frontend: its 0.5B chat model decodes at every step (seconds each on 2 cores)
          "edge.frontend.default.build")
_ASKED = re.compile(r"getfixturevalue\(\s*f?[\"']([\w{}]+)[\"']\s*\)")  # a name, or an f-string of parameters


@dataclass(frozen=True)
class _Facts:
    """What a function's own source says: whether it names heavy work, the fixtures it asks for by name at run
    time, and the functions of the tests it calls by name."""
    heavy: bool
    asked: tuple[str, ...]
    helpers: tuple[Callable[..., Any], ...]


@functools.cache
def _facts(fn: Callable[..., Any]) -> _Facts:
    """Read once per function: many tests share their fixtures and helpers (collection stays quick)."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return _Facts(False, (), ())
    if any(word in src for word in SPAWNS + BUILDS):
        return _Facts(True, (), ())
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return _Facts(False, tuple(_ASKED.findall(src)), ())
    names = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    # The names as the function itself sees them (a conftest's module name is not unique, its globals are).
    module = inspect.getmodule(fn)
    scope = getattr(inspect.unwrap(fn), "__globals__", None) or (vars(module) if module is not None else {})
    helpers = [scope.get(name) for name in sorted(names)]
    return _Facts(False, tuple(_ASKED.findall(src)),
                  tuple(h for h in helpers if inspect.isfunction(h) and _in_tests(h)))


@functools.cache
def _in_tests(fn: Callable[..., Any]) -> bool:
    """A helper of the tests (followed), not of the project (its callers are judged by the names they use)."""
    try:
        return TESTS in Path(inspect.getsourcefile(fn) or "").resolve().parents
    except TypeError:
        return False


def _heavy(fn: Callable[..., Any], seen: set[int], asked: Callable[[str], list[Callable[..., Any]]]) -> bool:
    """Whether `fn`, a function of the tests it calls by name (followed through its module) or a fixture it asks
    for by name at run time (`asked`), starts a process or builds a model."""
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    try:
        facts = _facts(fn)
    except TypeError:  # not hashable: read as having nothing to say
        return False
    return facts.heavy or any(_heavy(f, seen, asked) for name in facts.asked for f in asked(name)) or \
        any(_heavy(h, seen, asked) for h in facts.helpers)


def is_slow(item: pytest.Item) -> bool:
    if item.get_closest_marker("slow") is not None:
        return True
    seen: set[int] = set()

    params = getattr(getattr(item, "callspec", None), "params", {})

    def asked(name: str, names: set[str] | None = None) -> list[Callable[..., Any]]:
        """The functions of fixture `name` where this test runs, and of the fixtures they ask for (none when
        unknown). `{param}` in the name is this test's parameter of that name."""
        name = re.sub(r"{(\w+)}", lambda m: str(params.get(m.group(1), m.group(0))), name)
        names = set() if names is None else names
        if name in names:
            return []
        names.add(name)
        found = []
        for d in item.session._fixturemanager.getfixturedefs(name, item) or ():
            found += [d.func] + [f for arg in d.argnames for f in asked(arg, names)]
        return found

    fn = getattr(item, "obj", None)
    if fn is not None and _heavy(fn, seen, asked):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for fixturedef in defs:
            if _heavy(fixturedef.func, seen, asked):
                return True
    return False


def mark_slow(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is None and is_slow(item):
            item.add_marker(pytest.mark.slow)
