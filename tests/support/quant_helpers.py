"""Helpers shared by the quant tests (a uniquely named module: every test directory has its own conftest)."""
from __future__ import annotations

import contextlib
import io

SWEEP_TYPES = "F16,Q8_0,Q6_K,Q4_K_M,IQ4_XS"
SCRIPT = """\
1 speak Hello there, I am listening.
3 delegate What is the weather in Paris right now?
5 speak It is sunny in Paris, about twenty degrees.
7 speak Anything else?
"""


def run_cli(*args: str) -> tuple[int, str, str]:
    """venus-quant in this process: (exit code, stdout, stderr)."""
    from quant.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return rc, out.getvalue(), err.getvalue()
