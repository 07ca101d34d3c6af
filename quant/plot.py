"""The Pareto plot: file size and decode speed against quality loss (KL divergence)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a Jetson or in CI
import matplotlib.pyplot as plt  # noqa: E402

from quant.report import label, ok_rows  # noqa: E402


def pareto_front(points: list[tuple[float, float]], lower_x_better: bool) -> list[int]:
    """Indices of points no other point beats on both cost (x) and KL (y, lower is better)."""
    front = []
    for i, (x, y) in enumerate(points):
        beaten = any((x2 <= x if lower_x_better else x2 >= x) and y2 <= y and (x2, y2) != (x, y)
                     for j, (x2, y2) in enumerate(points) if j != i)
        if not beaten:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def legend_entries(rows: list[dict]) -> list[tuple[str, str, str]]:
    """(marker, colour, text) of each kind of point drawn: no "with imatrix" when no row used one."""
    out = [("*", "tab:red", "reference")]
    if any(not r.get("reference") and not r.get("imatrix") for r in rows):
        out.append(("o", "tab:blue", "llama.cpp quantizer, no imatrix"))
    if any(r.get("imatrix") for r in rows):
        out.append(("s", "tab:green", "llama.cpp quantizer with imatrix"))
    return out


def pareto_plot(rows: list[dict], path: Path, title: str = "") -> Path:
    rows = ok_rows(rows)
    if not rows:
        raise ValueError("no measured precision to plot")
    nonzero = [r["kl_mean"] for r in rows if r["kl_mean"] > 0]
    floor = min(nonzero) / 10 if nonzero else 1e-6  # the reference has KL 0: draw it at a floor on the log axis
    kl = [max(r["kl_mean"], floor) for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, xlabel, lower_better in ((axes[0], "size_mb", "file size (MB)", True),
                                          (axes[1], "decode_tps", "decode (tokens/s)", False)):
        pts = [(r[key], k) for r, k in zip(rows, kl)]
        front = pareto_front(pts, lower_better)
        ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], "-", color="0.7", zorder=1,
                label="Pareto front")
        for r, (x, y) in zip(rows, pts):
            ref = r.get("reference", False)
            ax.scatter([x], [y], marker="*" if ref else ("s" if r.get("imatrix") else "o"), s=90 if ref else 40,
                       color="tab:red" if ref else ("tab:green" if r.get("imatrix") else "tab:blue"), zorder=2)
            ax.annotate(label(r) + (" (ref)" if ref else ""), (x, y), textcoords="offset points",
                        xytext=(5, -11) if r.get("imatrix") else (5, 4), fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("KL divergence vs reference (mean, nats)")
        ax.grid(True, which="both", alpha=0.3)
        for marker, color, text in legend_entries(rows):
            ax.scatter([], [], marker=marker, color=color, label=text)
        ax.legend(loc="best", fontsize=8)
    fig.suptitle(title or "Quantization sweep: cost against quality (lower KL is better)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
