"""Which tests are slow: those that run real-time multi-process work, found from what they call.

A test is slow when its own body, a helper of its module it calls, or a fixture it asks for (and so on down)
starts a session or a process (`SPAWNS`), or when it is marked `slow` by hand. `pytest -m "not slow"` is the
quick loop; the full run (CI) still runs every test.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

TESTS = Path(__file__).resolve().parent
# What starts real-time work in other processes (or a whole graph of nodes): a session, the supervisor, a child.
SPAWNS = ("run_session(", "make_supervisor(", "Supervisor(", "subprocess.", "Popen(", "multiprocessing",
          "main([\"bench\"")  # a benchmark run from the command line is a whole session


def _source(fn: Callable[..., Any]) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""


def _in_tests(fn: Callable[..., Any]) -> bool:
    """A helper of the tests (followed), not of the project (its callers are judged by the names they use)."""
    try:
        return TESTS in Path(inspect.getsourcefile(fn) or "").resolve().parents
    except TypeError:
        return False


def _spawns(fn: Callable[..., Any], seen: set[int]) -> bool:
    """Whether `fn`, or a function of the tests it calls by name (followed through its module), starts one."""
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    src = _source(fn)
    if any(word in src for word in SPAWNS):
        return True
    module = inspect.getmodule(fn)
    if module is None or not src:
        return False
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = getattr(module, node.func.id, None)
            if inspect.isfunction(helper) and _in_tests(helper) and _spawns(helper, seen):
                return True
    return False


def is_slow(item: pytest.Item) -> bool:
    if item.get_closest_marker("slow") is not None:
        return True
    seen: set[int] = set()
    fn = getattr(item, "obj", None)
    if fn is not None and _spawns(fn, seen):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for fixturedef in defs:
            if _spawns(fixturedef.func, seen):
                return True
    return False


def mark_slow(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is None and is_slow(item):
            item.add_marker(pytest.mark.slow)
