"""The work-state table (edge/messages/work_states.py) is the only spelling of a work item's states: a module
that compares a state with a word, keys words by states or lists states spells none of them itself, so renaming
or adding a state is one edit and the readers (capture's wait at a file's end, the trace, the observer, the
benchmarks) cannot drift from the harness."""
from __future__ import annotations

import ast
from pathlib import Path

from edge.messages import work_states as W
from edge.nodes.capture_tail import STATE_WORDS, WORKING, AnswerWait, _Request

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "edge" / "messages" / "work_states.py"


def _words(node: ast.AST) -> list[str]:
    """The work-state words spelled in `node`: a literal, or the literals of a list, tuple, set or dict keys."""
    if isinstance(node, ast.Constant) and node.value in W.STATES:
        return [node.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set") \
            and node.args:
        return _words(node.args[0])
    items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else \
        [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else []
    found = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return found if len(found) >= 2 and set(found) <= set(W.STATES) | {""} and set(found) & set(W.STATES) else []


def _spelled(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "state" for s in sides):
                out += [(node.lineno, w) for s in sides for w in _words(s)]
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            out += [(node.lineno, w) for w in _words(node)]
    return out


def test_no_module_spells_a_work_state_but_the_table():
    found = []
    for path in sorted((ROOT / "edge").rglob("*.py")):
        if path != TABLE:
            found += [f"{path.relative_to(ROOT)}:{line}: {word!r}" for line, word in
                      _spelled(ast.parse(path.read_text(), str(path)))]
    assert not found, "work states spelled outside edge/messages/work_states.py:\n" + "\n".join(found)


def test_every_state_a_file_end_can_leave_open_is_said_in_words():
    wait = AnswerWait(limit_s=0.0, chunk_ns=1_000_000_000)
    wait.requests = {state: _Request(f"ask {state}", state) for state in W.STATES}
    still = wait.open()
    assert sorted(still) == sorted(set(W.STATES) - {W.DELIVERED, W.CANCELLED})  # a failure's notice is still owed
    assert all(state in STATE_WORDS for state in still) and W.WORKING <= WORKING
