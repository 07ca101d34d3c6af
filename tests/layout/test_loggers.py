"""Loggers are named one way: each module's own, `logging.getLogger(__name__)`, so a log line names the module
that wrote it and `-v` filtering by package (`edge.harness`, `edge.bargein`, ...) takes every module in it."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_logger_is_named_for_its_module():
    odd = []
    for top in ("edge", "export", "quant", "kernels"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                        and ast.unparse(node.value.func) == "logging.getLogger" \
                        and ast.unparse(node.value) != "logging.getLogger(__name__)" \
                        and any(isinstance(t, ast.Name) for t in node.targets):  # a module's own logger
                    odd.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not odd, "loggers not named getLogger(__name__):\n" + "\n".join(odd)
