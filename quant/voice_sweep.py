"""The speech decoder's precisions: token2wav's flow (encoder + sampler step) at FP32, FP16, dynamic INT8 and
two static INT8 recipes, each against FP32 on the same codes (size, speed, mel and waveform error).

The codes are the bundle's own: its TTS speaks a few sentences (text
embeddings only, as the Venus voice does for text without hidden states).
Static INT8 is calibrated on what the FP32 flow is given while it speaks the
calibration sentences (every encoder and sampler-step input of every window),
and measured on other sentences: `int8-static` quantizes MatMul, Gemm and Conv
(the encoders' recipe), `int8-static-conv` the convolutions only (on the tiny
checkpoint the MatMuls carried nearly all the mel error and none of the gain).
Each precision is timed `repeats` times, interleaved with the others so load
hits all alike, and its fastest run counts. The vocoder stays FP32 in every row, so the
rows differ only in the flow. A precision the bundle lacks is made from its
FP32 graphs as venus-export makes them (export.onnx.precision); static INT8 is
made here. Mel error: the flow's output mel, window by window, as relative
RMS against FP32; waveform error: the 24 kHz output the same way (the
vocoder's noise is seeded alike, so FP32 against itself is exact).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from quant.tables import aligned, grid, markdown

PRECISIONS = ("fp32", "fp16", "int8", "int8-static", "int8-static-conv")
STATIC = {"int8-static": ["MatMul", "Gemm", "Conv"], "int8-static-conv": ["Conv"]}  # op types quantized
FLOW = ("token2wav_encoder", "token2wav_step")
VOCODER = "token2wav_vocoder"
# Static INT8 is worth keeping only if it is faster than FP32 and its mel error stays under this bound: the
# relative RMS error of the mel the flow hands the vocoder (5 %: well under the frame-to-frame change of speech).
MEL_BOUND = 0.05
CALIB_TEXTS = ("The quick brown fox jumps over the lazy dog.", "Please turn the kitchen lights off at ten.",
               "Seven hundred and twelve people came to the concert.")
EVAL_TEXTS = ("What a lovely morning it is today.", "The train to the airport leaves from platform four.")


@dataclass
class Timed:
    """A graph runner that adds its run time to a counter and, when asked, keeps a copy of every input."""

    runner: Callable
    feeds: list | None = None
    seconds: float = 0.0
    calls: int = 0
    input_shapes: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.input_shapes = getattr(self.runner, "input_shapes", {})

    def __call__(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        if self.feeds is not None:
            names = getattr(self.runner, "inputs", list(feed))
            self.feeds.append({n: np.array(feed[n]) for n in names})
        t0 = time.perf_counter()
        out = self.runner(feed)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out


def bundle_codes(bundle: Path, texts: tuple[str, ...], threads: int) -> list[np.ndarray]:
    """The bundle's TTS codes for each text (a turn each), as the Venus voice makes them."""
    from edge.bundle.settings import VenusSettings
    from edge.speech.venus.voice import VenusVoice

    voice = VenusVoice(bundle, VenusSettings.load(bundle, {"threads": threads, "device": "cpu"}))
    try:
        out = []
        for text in texts:
            for _ in voice.synthesize(text):
                pass
            out.append(np.concatenate(voice.turn_codes))
        return out
    finally:
        voice.close()


def _graphs(bundle: Path, precision: str, work: Path, calibration: dict[str, list]) -> dict[str, Path]:
    """The three graph files of one row: the flow at `precision` (the bundle's, else made), the FP32 vocoder."""
    from edge.bundle.reader import open_bundle
    from export.onnx.precision import to_fp16, to_int8_dynamic, to_int8_static

    b = open_bundle(bundle, device="cpu")
    files = {VOCODER: _file(bundle, VOCODER, "fp32") or b.graphs[VOCODER]}
    for name in FLOW:
        fp32 = _file(bundle, name, "fp32")
        if fp32 is None:
            raise ValueError(f"the bundle has no FP32 {name} graph to compare with; build it with --encoders fp32")
        own = _file(bundle, name, precision) if precision not in STATIC else None
        if precision == "fp32" or own is not None:
            files[name] = own or fp32
            continue
        # Made under the exporter's file name: the runtime chooses session options by it.
        dst = work / precision / f"{name}.{'int8' if precision in STATIC else precision}.onnx"
        if not dst.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if precision == "fp16":
                to_fp16(fp32, dst)
            elif precision == "int8":
                to_int8_dynamic(fp32, dst)
            else:
                to_int8_static(fp32, dst, calibration[name], STATIC[precision])
        files[name] = dst
    return files


def _file(bundle: Path, name: str, precision: str) -> Path | None:
    path = bundle / "onnx" / f"{name}.{precision}.onnx"
    return path if path.is_file() else None


def _size_mb(paths) -> float:
    return sum(p.stat().st_size + (p.with_name(p.name + ".data").stat().st_size
                                   if p.with_name(p.name + ".data").is_file() else 0) for p in paths) / 1e6


def speak(bundle: Path, files: dict[str, Path], codes: list[np.ndarray], threads: int,
          keep_feeds: bool = False) -> dict:
    """Every turn of codes through token2wav on these graphs: mels, audio, times, and (asked) the flow's inputs."""
    from edge.backends.onnx import OnnxGraph
    from edge.bundle.reader import open_bundle
    from edge.bundle.settings import VenusSettings
    from edge.speech.venus.token2wav import Token2Wav

    b = open_bundle(bundle, device="cpu")
    s = VenusSettings.load(bundle, {"threads": threads})
    runners = {n: Timed(OnnxGraph(files[n], "cpu", threads), [] if keep_feeds and n in FLOW else None)
               for n in (*FLOW, VOCODER)}
    t2w = Token2Wav(runners[FLOW[0]], runners[FLOW[1]], runners[VOCODER], b.voice, b.noise, b.token2wav,
                    s.flow_steps, s.sampling.seed)
    for r in runners.values():  # the voice set-up ran the flow once; count the turns only
        r.seconds, r.calls = 0.0, 0
        if r.feeds is not None:
            r.feeds.clear()
    mels, audio, windows = [], [], 0
    t0 = time.perf_counter()
    for turn in codes:
        for piece in t2w.stream_codes(turn):
            mels.append(t2w.stream.last_mel.copy())
            audio.append(piece)
            windows += 1
    total = time.perf_counter() - t0
    flow_s = sum(runners[n].seconds for n in FLOW)
    return {"mels": mels, "audio": audio, "seconds": total, "flow_s": flow_s, "windows": windows,
            "feeds": {n: runners[n].feeds for n in FLOW}}


def rel_rms(ref: list[np.ndarray], got: list[np.ndarray]) -> float:
    """sqrt(sum of squared differences / sum of squares of the reference), over every window."""
    num = sum(float(np.sum((r.astype(np.float64) - g) ** 2)) for r, g in zip(ref, got))
    den = sum(float(np.sum(r.astype(np.float64) ** 2)) for r in ref)
    return float(np.sqrt(num / den)) if den > 0 else float("nan")


def sweep_voice(bundle: Path, precisions: list[str], work: Path, threads: int = 1, repeats: int = 3,
                calib_texts: tuple[str, ...] = CALIB_TEXTS, eval_texts: tuple[str, ...] = EVAL_TEXTS) -> list[dict]:
    """One row per precision of the flow, against FP32 on the bundle's own codes for `eval_texts`."""
    bad = [p for p in precisions if p not in PRECISIONS]
    if bad:
        raise ValueError(f"unknown speech decoder precision {bad[0]!r}; choose from {', '.join(PRECISIONS)}")
    if repeats < 1:
        raise ValueError("the speech decoder sweep needs at least one timed run per precision (--repeats)")
    fp32 = _graphs(bundle, "fp32", work, {})
    calib = speak(bundle, fp32, bundle_codes(bundle, calib_texts, threads), threads, keep_feeds=True)["feeds"]
    codes = bundle_codes(bundle, eval_texts, threads)
    rows: dict[str, dict] = {}
    files: dict[str, dict[str, Path]] = {}
    for p in precisions:
        rows[p] = {"part": "token2wav", "precision": p}
        try:
            files[p] = fp32 if p == "fp32" else _graphs(bundle, p, work, calib)
        except Exception as e:  # the quantiser raises its own types
            rows[p].update(status="failed", error=_first_line(e))
    runs: dict[str, list[dict]] = {p: [] for p in files}
    for _ in range(repeats):
        for p in list(runs):
            try:
                runs[p].append(speak(bundle, files[p], codes, threads))
            except Exception as e:  # onnxruntime raises its own types
                rows[p].update(status="failed", error=_first_line(e))
                del runs[p]
    ref = runs.get("fp32", [None])[0] or speak(bundle, fp32, codes, threads)
    for p, done in runs.items():
        got = done[0]  # every run of a precision gives the same output; the fastest counts for speed
        audio_s = sum(len(a) for a in got["audio"]) / 24000
        flow_s, total_s = min(d["flow_s"] for d in done), min(d["seconds"] for d in done)
        rows[p].update(status="ok", flow_mb=_size_mb([files[p][n] for n in FLOW]),
                       vocoder_mb=_size_mb([files[p][VOCODER]]),
                       flow_ms_per_window=flow_s / max(got["windows"], 1) * 1e3,
                       rtf=total_s / audio_s if audio_s else float("nan"),
                       mel_rel_rms=rel_rms(ref["mels"], got["mels"]), wave_rel_rms=rel_rms(ref["audio"], got["audio"]),
                       wave_spec_db=spectral_db(ref["audio"], got["audio"]),
                       mel_max_abs=max(float(np.max(np.abs(r - g))) for r, g in zip(ref["mels"], got["mels"])),
                       windows=got["windows"], calibration_inputs=len(calib[FLOW[1]]) if p in STATIC else None)
    return list(rows.values())


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def spectral_db(ref: list[np.ndarray], got: list[np.ndarray], n_fft: int = 1024, hop: int = 256) -> float:
    """RMS difference of the two waveforms' log-magnitude spectra, in dB: what a listener hears of the error,
    without the phase (a vocoder's phase drifts with the smallest change of its input)."""
    def spec(parts: list[np.ndarray]) -> np.ndarray:
        a = np.concatenate(parts).astype(np.float64)
        if len(a) < n_fft:
            a = np.pad(a, (0, n_fft - len(a)))
        frames = np.lib.stride_tricks.sliding_window_view(a, n_fft)[::hop] * np.hanning(n_fft)
        return 20 * np.log10(np.abs(np.fft.rfft(frames, axis=1)) + 1e-5)

    return float(np.sqrt(np.mean((spec(ref) - spec(got)) ** 2)))


def verdict(rows: list[dict]) -> str:
    """The fastest static INT8 recipe that is faster than FP32 with its mel error under MEL_BOUND, or why none."""
    by = {r["precision"]: r for r in rows if r.get("status") == "ok"}
    f = by.get("fp32")
    static = [by[p] for p in STATIC if p in by]
    if f is None or not static:
        return "static INT8 flow: not measured (the sweep needs fp32 and int8-static or int8-static-conv)"
    good = [s for s in static if s["flow_ms_per_window"] < f["flow_ms_per_window"] and s["mel_rel_rms"] <= MEL_BOUND]
    if good:
        s = min(good, key=lambda r: r["flow_ms_per_window"])
        return (f"static INT8 flow: {s['precision']} ({s['flow_ms_per_window']:.1f} ms/window vs FP32 "
                f"{f['flow_ms_per_window']:.1f}, mel error {s['mel_rel_rms']:.4f} under the bound {MEL_BOUND})")
    why = "; ".join(f"{s['precision']} {s['flow_ms_per_window']:.1f} ms/window, mel error {s['mel_rel_rms']:.4f}"
                    for s in static)
    return (f"static INT8 flow: FP32 stays (FP32 {f['flow_ms_per_window']:.1f} ms/window; none both faster and under "
            f"the mel bound {MEL_BOUND}: {why})")


_COLS = [("precision", "precision", "{}"), ("flow_mb", "flow MB", "{:.2f}"), ("vocoder_mb", "vocoder MB", "{:.2f}"),
         ("flow_ms_per_window", "flow ms/window", "{:.1f}"), ("rtf", "rtf", "{:.3f}"),
         ("mel_rel_rms", "mel err", "{:.4f}"), ("mel_max_abs", "mel max", "{:.3f}"),
         ("wave_rel_rms", "wave err", "{:.4f}"), ("wave_spec_db", "wave spec dB", "{:.2f}"),
         ("status", "status", "{}")]


def voice_text_table(rows: list[dict]) -> str:
    lines = aligned(grid(rows, _COLS))
    lines += [f"{r['precision']}: {r['error']}" for r in rows if r.get("status") != "ok"]
    return "\n".join(lines)


def run_voice_sweep(sweep, precisions: list[str]) -> list[dict]:
    """The speech decoder rows of `venus-quant sweep --voice`: a bundle's token2wav graphs, or why not."""
    if sweep.src.kind != "bundle":
        why = f"a {sweep.src.kind} has no token2wav graphs; sweep a bundle built by venus-export build"
        return [{"part": "token2wav", "precision": p, "status": "failed", "error": why} for p in precisions]
    return sweep_voice(sweep.src.path, precisions, sweep.out / "voice", threads=sweep.opts.n_threads,
                       repeats=sweep.opts.repeats)


def voice_markdown(rows: list[dict]) -> str:
    lines = markdown(grid(rows, _COLS))
    lines += [f"- {r['precision']}: {r['error']}" for r in rows if r.get("status") != "ok"]
    return "\n".join(lines + ["", verdict(rows)])
