"""One call of a Python skill, in a process of its own, so that a skill that hangs can be killed.

    python -m edge.harness.skill_host FILE FUNCTION       request JSON on stdin, result JSON on stdout
    python -m edge.harness.skill_host --check FILE FUNCTION

The request is {"arguments": ..., "instruction", "work_id", "attempt"}; the
function is called as `run(arguments, context)`. What the skill prints goes
to stderr, so stdout holds only the result. Exit 75 asks for a retry (the
skill raised TransientError), exit 1 is a failure whose last stderr line
says why, exit 2 means the skill could not be loaded.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from typing import Any, Callable

EX_TEMPFAIL = 75


def load(file: str, attr: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location("venus_skill", file)
    if spec is None or spec.loader is None:
        raise ImportError(f"{file} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise AttributeError(f"has no function {attr}")
    return fn


def main(argv: list[str]) -> int:
    check = argv[:1] == ["--check"]
    file, attr = argv[1:] if check else argv
    try:
        with contextlib.redirect_stdout(sys.stderr):
            fn = load(file, attr)
    except Exception as exc:  # one sentence for the harness's log
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if check:
        return 0
    request = json.load(sys.stdin)
    arguments = request.pop("arguments")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            out = fn(arguments, request)
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return EX_TEMPFAIL if type(exc).__name__ == "TransientError" else 1
    sys.stdout.write(json.dumps(out if isinstance(out, dict) else {"text": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
