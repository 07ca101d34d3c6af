"""Sweep results as CSV, JSON and Markdown, and the one-line verdict."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from quant.state import row_key
from quant.tables import aligned, grid, markdown

# (column, header, format) in table order
COLUMNS = [
    ("label", "type", "{}"),
    ("size_mb", "size MB", "{:.2f}"),
    ("bpw", "bpw", "{:.2f}"),
    ("kl_mean", "KL mean", "{:.5f}"),
    ("kl_p99", "KL p99", "{:.4f}"),
    ("top1", "top-1", "{:.3f}"),
    ("ppl", "PPL", "{:.2f}"),
    ("decision_agree", "listen/speak", "{:.3f}"),
    ("delegate_agree", "delegate", "{:.3f}"),
    ("prefill_tps", "prefill tok/s", "{:.0f}"),
    ("decode_tps", "decode tok/s", "{:.1f}"),
    ("load_s", "load s", "{:.3f}"),
    ("peak_mb", "peak MB", "{:.0f}"),
    ("status", "status", "{}"),
]
CSV_FIELDS = ["type", "imatrix", "status", "size_mb", "bpw", "kl_mean", "kl_p99", "kl_max", "top1", "ppl",
              "decision_agree", "delegate_agree", "n_chunks", "speak_fraction", "n_eval_tokens", "prefill_tps",
              "decode_tps", "load_s", "peak_mb", "peak_delta_mb", "host", "file", "error", "decision_note"]
BOARD_FIELDS = ("prefill_tps", "decode_tps", "load_s", "peak_mb", "error")  # each as FIELD@BOARD


def boards(rows: list[dict]) -> list[str]:
    """The board kinds some row was timed on (--ray with board resources), in name order."""
    return sorted({k.split("@", 1)[1] for r in rows for k in r if "@" in k})


def columns(rows: list[dict]) -> list[tuple[str, str, str]]:
    """The table's columns: COLUMNS with a decode speed column per board before the status."""
    extra = [(f"decode_tps@{b}", f"decode tok/s {b}", "{:.1f}") for b in boards(rows)]
    return COLUMNS[:-1] + extra + COLUMNS[-1:]


def csv_fields(rows: list[dict]) -> list[str]:
    return CSV_FIELDS[:-3] + [f"{f}@{b}" for b in boards(rows) for f in BOARD_FIELDS] + CSV_FIELDS[-3:]


def label(row: dict) -> str:
    return row_key(row["type"], row.get("imatrix", False))


def _cell(row: dict, col: str, fmt: str) -> str:
    v = label(row) if col == "label" else row.get(col)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return fmt.format(v)


def ok_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("status") == "ok"]


def best_under(rows: list[dict], budget_mb: float) -> dict | None:
    """Lowest KL among measured rows no larger than the budget; faster decode breaks ties."""
    fit = [r for r in ok_rows(rows) if r["size_mb"] <= budget_mb]
    return min(fit, key=lambda r: (r["kl_mean"], -r["decode_tps"])) if fit else None


def format_size(mb: float) -> str:
    return f"{mb / 1000:.2f} GB" if mb >= 1000 else f"{mb:.2f} MB"


def verdict(rows: list[dict], budget_mb: float) -> str:
    b = best_under(rows, budget_mb)
    if b is None:
        return f"best under {format_size(budget_mb)}: none (no measured precision is that small)"
    return (f"best under {format_size(budget_mb)}: {label(b)} kl {b['kl_mean']:.5f} top1 {b['top1']:.3f} "
            f"decode {b['decode_tps']:.1f} tok/s")


def default_budget(rows: list[dict]) -> float:
    """Half the reference's size: the question is usually what fits in half of F16."""
    ref = next((r for r in rows if r.get("reference")), None)
    return (ref["size_mb"] if ref else max(r.get("size_mb", 0) for r in rows)) / 2


def markdown_table(rows: list[dict]) -> str:
    return "\n".join(markdown(grid(rows, columns(rows), _cell), right=True))


def text_table(rows: list[dict]) -> str:
    return "\n".join(aligned(grid(rows, columns(rows), _cell)))


def write_reports(out: Path, rows: list[dict], meta: dict, budget_mb: float,
                  encoder_rows: list[dict] | None = None, voice_rows: list[dict] | None = None,
                  speech_rows: list[dict] | None = None) -> dict[str, Path]:
    paths = {"csv": out / "sweep.csv", "json": out / "results.json", "md": out / "report.md"}
    fields = csv_fields(rows)
    with open(paths["csv"], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in fields})
    if encoder_rows:
        paths["encoders_csv"] = out / "encoders.csv"
        fields = ["part", "precision", "status", "size_mb", "max_abs", "mean_abs", "rel_rms", "min_cosine", "llm_kl",
                  "llm_top1", "decision_agree", "delegate_agree", "ms_per_call", "derived", "file", "error", "note"]
        with open(paths["encoders_csv"], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            for r in encoder_rows:
                w.writerow({k: r.get(k, "") for k in fields})
    best = best_under(rows, budget_mb)
    paths["json"].write_text(json.dumps({"meta": meta, "budget_mb": budget_mb, "rows": rows,
                                         "best": label(best) if best else None,
                                         "encoders": encoder_rows or [], "voice": voice_rows or [],
                                         "speech": speech_rows or []}, indent=2))
    md = [f"# Quantization sweep: {meta.get('source', '')}", "",
          f"Reference: {meta.get('reference_type')} ({meta.get('reference')}). Quality is measured against it "
          f"over {meta.get('n_eval_tokens', '?')} tokens of evaluation text; listen/speak and delegate "
          f"decisions over the chunk stream of {meta.get('stream_source', 'no stream')}.", "",
          markdown_table(rows), ""]
    failed = [r for r in rows if r.get("status") != "ok"]
    for r in failed:
        md.append(f"- {label(r)}: {r.get('status')}: {r.get('error', '')}")
    notes = sorted({r.get("decision_note") for r in rows if r.get("decision_note")})
    md += [f"- decisions not measured: {n}" for n in notes]
    md += [f"- {label(r)} on {b}: {r[f'error@{b}']}" for r in rows for b in boards(rows) if r.get(f"error@{b}")]
    from quant.columns import explain

    md += ["", "## What the columns mean", "", explain(rows, meta)]
    if encoder_rows:
        from quant.encoder_sweep import encoder_markdown

        md += ["", "## Encoders", "", encoder_markdown(encoder_rows)]
    if voice_rows:
        from quant.voice_sweep import voice_markdown

        md += ["", "## Speech decoder (token2wav flow; vocoder FP32)", "", voice_markdown(voice_rows)]
    if speech_rows:
        from quant.speech_sweep import speech_markdown

        md += ["", "## TTS model type and vocoder precision", "", speech_markdown(speech_rows)]
    md += ["", f"Imatrix: {meta.get('imatrix_note', '')}", "", "![Pareto plot](pareto.png)", "",
           verdict(rows, budget_mb), ""]
    paths["md"].write_text("\n".join(md))
    return paths
