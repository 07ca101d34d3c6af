"""The report's explanation of its columns: units, what each figure compares with what, and when one means nothing."""
from __future__ import annotations

# a reference perplexity above this fraction of the vocabulary is barely better than guessing every token
CHANCE_FRACTION = 0.1


def _reference(rows: list[dict]) -> dict:
    return next((r for r in rows if r.get("reference")), {})


def caveats(rows: list[dict], meta: dict) -> list[str]:
    """Figures of this sweep that say nothing, each with why."""
    ref, out = _reference(rows), []
    ppl, vocab = ref.get("ppl"), ref.get("n_vocab")
    if ppl and vocab and ppl > CHANCE_FRACTION * vocab:
        out.append(f"PPL means nothing here: the reference's perplexity ({ppl:,.0f}) is above a tenth of its "
                   f"vocabulary ({vocab:,} tokens), i.e. it predicts the text hardly better than guessing (random or "
                   "untrained weights). "
                   "KL and top-1 still measure how far each precision moves from the reference.")
    if not ref.get("n_chunks"):
        out.append("listen/speak and delegate are not measured: no chunk stream was replayed (give --journal), "
                   "or the model has no protocol tokens.")
    if meta.get("ray") is not None and len({r.get("host") for r in rows if r.get("host")}) > 1:
        out.append("prefill, decode, load and peak columns were measured on whichever node ran each row (column "
                   "host in sweep.csv); compare them across rows only where the host is the same, or use a board "
                   "column.")
    return out


def explain(rows: list[dict], meta: dict) -> str:
    ref_type = meta.get("reference_type", "the reference")
    n = meta.get("n_eval_tokens", "?")
    lines = [
        f"- **size MB**: the GGUF file in megabytes (10^6 bytes); **bpw**: its bits per weight.",
        f"- **KL mean / KL p99**: Kullback-Leibler divergence of each precision's next-token distribution from "
        f"{ref_type}'s, in nats, at each of the {n} evaluation tokens: the mean, and the 99th percentile "
        "(the worst positions). 0 is identical; lower is better.",
        f"- **top-1**: fraction of those positions whose most likely next token is {ref_type}'s (1 = always).",
        "- **PPL**: perplexity of the evaluation text itself (exp of the mean negative log-likelihood per token); "
        "unlike the others it compares with the text, not with the reference.",
        f"- **listen/speak**, **delegate**: fraction of the replayed chunks where the precision makes "
        f"{ref_type}'s decision (speak or keep listening; hand the turn to the delegate or not), from "
        f"{meta.get('stream_source', 'the chunk stream')}. Agreement with the reference, not correctness.",
        "- **prefill tok/s**: evaluation tokens prefilled per second; **decode tok/s**: tokens generated per second, "
        "one at a time (the fastest of --repeats runs each).",
        "- **load s**: seconds to open the model (with mmap the weights are read later, at first use); "
        "**peak MB**: the measuring process's peak resident memory (weights, KV cache, one token's logits).",
    ]
    from quant.report import boards

    for b in boards(rows):
        lines.append(f"- **decode tok/s {b}**: decode speed of the same file timed on the cluster's {b} board "
                     f"(its prefill, load and peak figures are in sweep.csv as `prefill_tps@{b}`, `load_s@{b}` and "
                     f"`peak_mb@{b}`).")
    lines.append("- **status**: ok, skipped (a type above the reference's precision: nothing to compare it with) "
                 "or failed (the reason is listed under the table).")
    return "\n".join(lines + [""] + [f"Note: {c}" for c in caveats(rows, meta)])
