"""`venus-quant merge DIR...`: the shards of one sweep (`--shard I/N`, each on its own machine) joined into one.

Each shard measured the reference and its share of the candidates with the
same inputs and measuring setup (checked here from each directory's identity);
the merged directory holds the files one local sweep writes, rows in the same
order, and its own rows.jsonl and sweep.json, so `report` and a later `sweep -o`
resume read it as any other sweep.
"""
from __future__ import annotations

import json
from pathlib import Path

from quant.report import label
from quant.state import SweepError


def _load(d: Path) -> dict:
    path = d / "results.json"
    if not path.is_file():
        raise SweepError(f"{d} holds no results.json; run its `venus-quant sweep --shard I/N -o {d}` first")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise SweepError(f"{path} is not valid JSON (line {e.lineno}); run that shard again") from None


def _same_sweep(first: Path, a: dict, d: Path, b: dict) -> None:
    ida, idb = a["meta"].get("identity") or {}, b["meta"].get("identity") or {}
    for k in sorted((set(ida) | set(idb)) - {"shard"}):
        if ida.get(k) != idb.get(k):
            raise SweepError(f"{d} holds a sweep with a different {k} than {first}; merge only shards of one sweep")
    if a["meta"].get("plan") != b["meta"].get("plan"):
        raise SweepError(f"{d} was asked for other types than {first}; merge only shards of one sweep")


def merge(dirs: list[Path], out: Path) -> tuple[list[dict], dict, list[dict], list[dict], list[dict], list[str]]:
    """(rows in table order, meta, encoder rows, speech decoder rows, TTS and vocoder rows, row labels no shard
    holds)."""
    loaded = [(d, _load(d)) for d in dirs]
    d0, first = loaded[0]
    for d, data in loaded[1:]:
        _same_sweep(d0, first, d, data)
    by: dict[str, dict] = {}
    for _, data in loaded:
        for r in data["rows"]:
            k = label(r)
            if k not in by or (by[k].get("status") != "ok" and r.get("status") == "ok"):
                by[k] = r  # a row measured in one shard beats the same row failed in another
    ref = next(r for r in first["rows"] if r.get("reference"))
    plan = first["meta"].get("plan") or [k for k in by if k != label(ref)]
    rows = [ref] + [by[k] for k in plan if k in by and k != label(ref)]
    missing = [k for k in plan if k not in by]
    meta = {**first["meta"], "shard": None, "merged_from": [str(d) for d in dirs]}
    enc = next((data["encoders"] for _, data in loaded if data.get("encoders")), [])
    voice = next((data["voice"] for _, data in loaded if data.get("voice")), [])
    speech = next((data["speech"] for _, data in loaded if data.get("speech")), [])
    out.mkdir(parents=True, exist_ok=True)
    identity = {k: v for k, v in (meta.get("identity") or {}).items() if k != "shard"}
    meta["identity"] = identity
    (out / "sweep.json").write_text(json.dumps(identity, indent=2))
    (out / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows, meta, enc, voice, speech, missing
