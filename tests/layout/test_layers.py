"""The layout table (docs/layout.md) is the rule: an import between the project's packages that the table does
not allow fails here, naming the import, and so does a folder or top-level module that no row names.

Imports inside functions count too: a lazy import still ties the layers together on a device install.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = Path("docs/layout.md")
TOPS = ("edge", "export", "quant", "kernels", "deploy")  # where the project's Python lives
NAMED_TOPS = ("edge", "export", "quant", "kernels")  # each folder in them (and each module of edge/) needs a row
_PATH = re.compile(r"`((?:edge|export|quant|kernels|deploy)(?:/[\w.]+)*(?:/|\.py))`")


@dataclass(frozen=True)
class Row:
    units: tuple[str, ...]  # paths named in the first column: one unit
    allowed: tuple[str, ...]  # paths in the last column: what the unit may import


def read_table(text: str) -> list[Row]:
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) < 3 or set(cells[0]) <= {"-", " "} or cells[0] == "folder":
            continue
        units = tuple(_PATH.findall(cells[0]))
        if units:
            rows.append(Row(units, tuple(_PATH.findall(cells[-1]))))
    return rows


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every Python module of the project."""
    out = {}
    for top in TOPS:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join(parts)] = path.relative_to(root)
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) for each project module this file imports; `from a import b` counts as a.b when b is a
    module, else as a."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                found.append((node.lineno, f"{base}.{a.name}" if f"{base}.{a.name}" in known else base))
    out = []
    for line, target in found:
        while target and target not in known:  # an attribute of a module: the module
            target = target.rpartition(".")[0]
        if target:
            out.append((line, target))
    return out


def _unit(rel: str, rows: list[Row]) -> Row | None:
    """The row whose longest named path holds this file."""
    best, length = None, -1
    for row in rows:
        for u in row.units:
            if (rel == u or (u.endswith("/") and rel.startswith(u))) and len(u) > length:
                best, length = row, len(u)
    return best


def _holds(path: str, rel: str) -> bool:
    return rel == path or (path.endswith("/") and rel.startswith(path))


def unnamed(root: Path, rows: list[Row]) -> list[str]:
    """Folders (and edge's top-level modules) that no row names, and rows that name what does not exist."""
    named = {u for row in rows for u in row.units}
    out = [f"{u} is in {TABLE} but does not exist" for u in sorted(named) if not (root / u).exists()]
    for top in NAMED_TOPS:
        if f"{top}/" not in named and top != "edge":
            out.append(f"{top}/ has no row in {TABLE}")
        for child in sorted((root / top).iterdir()):
            rel = child.relative_to(root).as_posix()
            if child.is_dir() and not child.name.startswith((".", "__")) and rel + "/" not in named:
                out.append(f"{rel}/ has no row in {TABLE}")
            elif top == "edge" and child.suffix == ".py" and child.name != "__init__.py" and rel not in named:
                out.append(f"{rel} has no row in {TABLE}")
    return out


def violations(root: Path = ROOT) -> list[str]:
    rows = read_table((root / TABLE).read_text())
    out = set(unnamed(root, rows))
    known = modules(root)
    for name, path in known.items():
        rel = path.as_posix()
        row = _unit(rel, rows)
        if row is None:
            continue  # a module under a folder no row names: said once above, for the folder
        for line, target in imports_of(name, root / path, known):
            trel = known[target].as_posix()
            if _unit(trel, rows) is row or any(_holds(a, trel) for a in row.allowed):
                continue
            out.add(f"{rel}:{line} imports {target} ({', '.join(row.units)} may import "
                    f"{', '.join(row.allowed) or 'nothing of the project'})")
    return sorted(out)


def test_every_import_and_folder_is_as_the_layout_table_says() -> None:
    found = violations()
    assert found == [], "\n".join(found)


TINY_TABLE = """| folder | what lives there | may import |
|---|---|---|
| `edge/protocol/` | tokens | nothing of the project |
| `edge/graph/`, `edge/wire/` | the graph | `edge/protocol/` |
| `edge/nodes/` | nodes | `edge/graph/`, `edge/protocol/` |
| `edge/clock.py` | the clock | nothing of the project |
| `export/` | build | `edge/protocol/` |
| `quant/` | sweeps | `edge/`, `export/` |
| `kernels/` | kernels | nothing of the project |
"""


def _tiny(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "layout.md").write_text(TINY_TABLE)
    for d in ("edge/protocol", "edge/graph", "edge/wire", "edge/nodes", "export", "quant", "kernels"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "__init__.py").write_text("")
    (tmp_path / "edge" / "clock.py").write_text("")
    (tmp_path / "edge" / "protocol" / "tokens.py").write_text("")
    (tmp_path / "edge" / "graph" / "node.py").write_text("from edge.wire import x\nfrom edge.protocol import tokens\n")
    (tmp_path / "edge" / "nodes" / "speech.py").write_text("from edge.graph.node import Node\n")
    (tmp_path / "quant" / "sweep.py").write_text("import edge.nodes.speech\nfrom export import build\n")
    (tmp_path / "export" / "build.py").write_text("from edge.protocol import tokens\n")
    return tmp_path


def test_what_the_table_allows_passes(tmp_path: Path) -> None:
    assert violations(_tiny(tmp_path)) == []


def test_an_import_the_table_does_not_allow_is_named(tmp_path: Path) -> None:
    # The checker must see a lazy import and a relative one, or the test above proves nothing.
    root = _tiny(tmp_path)
    (root / "edge" / "graph" / "sup.py").write_text("def f():\n    from edge.nodes import speech\n")
    (root / "edge" / "protocol" / "spans.py").write_text("from . import tokens\nfrom .. import clock\n")
    (root / "export" / "plan.py").write_text("import quant.sweep\n")
    assert violations(root) == [
        "edge/graph/sup.py:2 imports edge.nodes.speech (edge/graph/, edge/wire/ may import edge/protocol/)",
        "edge/protocol/spans.py:2 imports edge.clock (edge/protocol/ may import nothing of the project)",
        "export/plan.py:1 imports quant.sweep (export/ may import edge/protocol/)"]


def test_a_folder_or_module_without_a_row_is_named(tmp_path: Path) -> None:
    root = _tiny(tmp_path)
    (root / "edge" / "memory").mkdir()
    (root / "edge" / "memory" / "archive.py").write_text("from edge.protocol import tokens\n")
    (root / "edge" / "timer_words.py").write_text("")
    (root / "export" / "train").mkdir()
    (root / "export" / "train" / "loop.py").write_text("")
    (root / "docs" / "layout.md").write_text(TINY_TABLE + "| `edge/gone/` | nothing here | nothing |\n")
    assert violations(root) == [
        f"edge/gone/ is in {TABLE} but does not exist",
        f"edge/memory/ has no row in {TABLE}",
        f"edge/timer_words.py has no row in {TABLE}",
        f"export/train/ has no row in {TABLE}"]
