"""Layers import downward only: a module that imports upward fails here, naming the import.

Imports inside functions count too: a lazy import still ties the layers together
on a device install.
"""
from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]

# package prefix -> prefixes it must never import (checked on every module under the package).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "edge.protocol": ("edge", "export", "quant", "kernels"),
    "kernels": ("edge", "export", "quant"),
    "edge.wire": ("edge.graph", "edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness",
                  "edge.bench", "export", "quant"),
    "edge.messages": ("edge.graph", "edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness",
                      "edge.bench", "export", "quant"),
    "edge.graph": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness", "edge.bench",
                   "edge.bargein", "export", "quant"),
    "edge.detect": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness", "edge.bench",
                    "edge.bargein", "export", "quant"),
    "edge.backends": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness", "edge.bench",
                      "edge.bargein", "export", "quant"),
    "edge.bundle": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness", "edge.bench",
                    "export", "quant"),
    "edge.frontend": ("edge.nodes", "edge.harness", "edge.speech", "edge.bench", "export", "quant"),
    "edge.speech": ("edge.nodes", "edge.harness", "edge.frontend", "edge.bench", "export", "quant"),
    "edge.capture": ("edge.nodes", "edge.harness", "edge.frontend", "edge.speech", "edge.bench", "export", "quant"),
    "edge.harness": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.bench", "export", "quant"),
    "edge.bargein": ("edge.nodes", "edge.harness", "edge.speech", "edge.bench", "export", "quant"),
    # Memory: the gate (kernels) and the detectors/backends below it, nothing above.
    "edge.memory": ("edge.nodes", "edge.graph", "edge.wire", "edge.messages", "edge.frontend", "edge.speech",
                    "edge.capture", "edge.harness", "edge.bargein", "edge.bundle", "edge.timeline",
                    "edge.observe", "edge.bench", "edge.session", "edge.settings", "edge.cli", "export", "quant"),
    "edge.nodes": ("edge.bench", "export", "quant"),
    # Wyoming serves the device's recognizer and voice (detect, speech, backends) and answers transcripts
    # through the harness; never the session's graph.
    "edge.wyoming": ("edge.nodes", "edge.graph", "edge.frontend", "edge.capture", "edge.bench",
                     "edge.session", "export", "quant"),
    # The observer reads the bus and the supervisor: messages, wire, timeline, graph and nothing of the models.
    "edge.observe": ("edge.nodes", "edge.frontend", "edge.speech", "edge.capture", "edge.harness", "edge.bench",
                     "edge.bargein", "edge.detect", "edge.backends", "edge.bundle", "edge.session",
                     "edge.settings", "export", "quant"),
    "edge": ("export", "quant"),  # the live runtime never needs the build-time packages (torch, onnx)
    "export": ("edge.nodes", "edge.graph", "edge.frontend", "edge.harness", "edge.capture", "quant"),
}


# package prefix -> the only modules outside it that may import it (the supervisor reaches the observer
# through its Watcher protocol, never by import; the graph bench attaches it as the CLI does, to time it).
ONLY_IMPORTED_BY: dict[str, tuple[str, ...]] = {
    "edge.observe": ("edge.cli", "edge.bench.graph"),
}


def modules(root: Path) -> list[tuple[str, Path]]:
    out = []
    for top in ("edge", "export", "quant", "kernels"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out.append((".".join(parts), path))
    return out


def imports_of(name: str, path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                target = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return found


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(root: Path = ROOT) -> list[str]:
    out = set()
    for name, path in modules(root):
        rules = [(pkg, banned) for pkg, banned in FORBIDDEN.items() if _under(name, pkg)]
        for line, target in imports_of(name, path):
            for pkg, banned in rules:
                for b in banned:
                    if _under(target, b) and not _under(target, pkg):
                        out.add(f"{path.relative_to(root)}:{line} imports {target} ({pkg} may not import {b})")
            for pkg, allowed in ONLY_IMPORTED_BY.items():
                if _under(target, pkg) and not _under(name, pkg) and name not in allowed:
                    out.add(f"{path.relative_to(root)}:{line} imports {target} (only {', '.join(allowed)} "
                            f"may import {pkg})")
    return sorted(out)


def test_no_layer_imports_upward() -> None:
    assert violations() == []


def test_an_upward_import_is_named(tmp_path: Path) -> None:
    # The checker must see a lazy upward import, or the test above proves nothing.
    (tmp_path / "edge" / "graph").mkdir(parents=True)
    (tmp_path / "edge" / "graph" / "sup.py").write_text("def f():\n    from edge.nodes import frontend\n")
    (tmp_path / "edge" / "nodes").mkdir()
    (tmp_path / "edge" / "nodes" / "speech.py").write_text("import edge.observe.metrics\n")
    (tmp_path / "edge" / "protocol").mkdir()
    (tmp_path / "edge" / "protocol" / "t.py").write_text("from . import spans\nimport edge.wire\n")
    found = violations(tmp_path)
    assert found == ["edge/graph/sup.py:2 imports edge.nodes (edge.graph may not import edge.nodes)",
                     "edge/graph/sup.py:2 imports edge.nodes.frontend (edge.graph may not import edge.nodes)",
                     "edge/nodes/speech.py:1 imports edge.observe.metrics (only edge.cli, edge.bench.graph may import "
                     "edge.observe)",
                     "edge/protocol/t.py:2 imports edge.wire (edge.protocol may not import edge)"]
