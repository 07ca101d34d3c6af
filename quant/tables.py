"""Sweep rows as tables: Markdown for the report, columns aligned with spaces for the terminal.

A table is given as its columns, each (row key, header, format); a cell with no value is "-".
"""
from __future__ import annotations

from collections.abc import Callable

Column = tuple[str, str, str]
Cell = Callable[[dict, str, str], str]


def plain_cell(row: dict, key: str, fmt: str) -> str:
    return "-" if row.get(key) is None else fmt.format(row[key])


def grid(rows: list[dict], cols: list[Column], cell: Cell = plain_cell) -> list[list[str]]:
    """The header, then each row's cells."""
    return [[h for _, h, _ in cols]] + [[cell(r, c, f) for c, _, f in cols] for r in rows]


def markdown(cells: list[list[str]], right: bool = False) -> list[str]:
    """A Markdown table; `right`: every column but the first aligned right (figures)."""
    rule = "|" + "|".join("---" if i == 0 or not right else "---:" for i in range(len(cells[0]))) + "|"
    return ["| " + " | ".join(cells[0]) + " |", rule] + ["| " + " | ".join(c) + " |" for c in cells[1:]]


def aligned(cells: list[list[str]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell: the first `left` columns (names) to the left, figures to the right."""
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    return ["  ".join(v.ljust(w) if i < left else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths)))
            for c in cells]
