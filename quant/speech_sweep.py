"""The TTS model's GGUF type and the vocoder's precision, each against the bundle's own on the same sentences.

TTS rows: the bundle's TTS GGUF quantized to each type (as the LLM is), speaking
EVAL_TEXTS from the same seed; the codes are compared with the reference TTS's
(code agree: the fraction of the reference's codes matched at the same position;
the sampler follows its own path after the first difference), and both code
streams are voiced by the FP32 token2wav, so the spectral difference is the
TTS's alone. Vocoder rows: the FP32 flow's mels through the vocoder at each
precision (FP16, dynamic INT8, made as venus-export makes them), against the
FP32 vocoder. Spectral difference: RMS of the log-magnitude spectra's
difference in dB (phase left out); 0 is identical.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from quant.tables import aligned, grid, markdown
from quant.voice_sweep import EVAL_TEXTS, VOCODER, _first_line, _graphs, _size_mb, rel_rms, spectral_db, speak

VOCODER_PRECISIONS = ("fp32", "fp16", "int8")


def tts_codes(bundle: Path, texts: tuple[str, ...], threads: int, gguf: Path | None = None) -> tuple[list, float]:
    """(codes per text, seconds the TTS spent on them), with the bundle's TTS or another GGUF of it."""
    from edge.bundle.settings import VenusSettings
    from edge.speech.venus.tts import TTS
    from edge.speech.venus.voice import VenusVoice

    s = VenusSettings.load(bundle, {"threads": threads, "device": "cpu"})
    voice = VenusVoice(bundle, s)
    try:
        if gguf is not None:  # the same voice with only its TTS model swapped
            b = voice.bundle
            voice.tts.close()
            voice.tts = TTS(gguf, b.tts_extras, b.runtime.tts, s.tts_sampling, 2048, threads, s.gpu_layers())
        out, tts_s = [], 0.0
        for text in texts:
            for _ in voice.synthesize(text):
                pass
            out.append(np.concatenate(voice.turn_codes))
            tts_s += voice.last_cost.tts_s
        return out, tts_s
    finally:
        voice.close()


def code_agree(ref: list[np.ndarray], got: list[np.ndarray]) -> float:
    n = sum(len(r) for r in ref)
    same = sum(int(np.sum(r[: len(g)] == g[: len(r)])) for r, g in zip(ref, got))
    return same / n if n else float("nan")


def sweep_tts(bundle: Path, types: list[str], work: Path, threads: int = 1) -> list[dict]:
    from edge.bundle.reader import open_bundle
    from export.gguf_types import gguf_type
    from export.quantize import quantize
    from quant.source import gguf_info

    ref_gguf = open_bundle(bundle, device="cpu").tts
    ref_type = gguf_info(ref_gguf)[1]
    fp32 = _graphs(bundle, "fp32", work, {})
    ref_codes, _ = tts_codes(bundle, EVAL_TEXTS, threads)
    ref_audio = speak(bundle, fp32, ref_codes, threads)["audio"]
    rows = []
    for name in types:
        row = {"part": "tts", "precision": name}
        try:
            t = gguf_type(name)
            path = ref_gguf if t.name == ref_type else work / f"tts-{t.name}.gguf"
            if not path.is_file():
                work.mkdir(parents=True, exist_ok=True)
                quantize(ref_gguf, path, t, nthread=threads)
            t0 = time.perf_counter()
            codes, tts_s = tts_codes(bundle, EVAL_TEXTS, threads, None if path == ref_gguf else path)
            audio = speak(bundle, fp32, codes, threads)["audio"]
            audio_s = sum(len(a) for a in audio) / 24000
            row.update(status="ok", size_mb=path.stat().st_size / 1e6, code_agree=code_agree(ref_codes, codes),
                       tts_rtf=tts_s / audio_s if audio_s else None, wave_spec_db=spectral_db(ref_audio, audio),
                       reference=t.name == ref_type, seconds=time.perf_counter() - t0)
        except Exception as e:  # the quantizer and llama.cpp raise their own types
            row.update(status="failed", error=_first_line(e))
        rows.append(row)
    return rows


def sweep_vocoder(bundle: Path, precisions: list[str], work: Path, threads: int = 1, repeats: int = 1) -> list[dict]:
    from export.onnx.precision import to_fp16, to_int8_dynamic

    bad = [p for p in precisions if p not in VOCODER_PRECISIONS]
    if bad:
        raise ValueError(f"unknown vocoder precision {bad[0]!r}; choose from {', '.join(VOCODER_PRECISIONS)}")
    fp32 = _graphs(bundle, "fp32", work, {})
    codes, _ = tts_codes(bundle, EVAL_TEXTS, threads)
    ref = speak(bundle, fp32, codes, threads)
    rows = []
    for p in precisions:
        row = {"part": "vocoder", "precision": p}
        try:
            files = dict(fp32)
            if p != "fp32":
                dst = work / "vocoder" / p / f"{VOCODER}.{p}.onnx"  # the exporter's name: the runtime reads it
                if not dst.is_file():
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    (to_fp16 if p == "fp16" else to_int8_dynamic)(fp32[VOCODER], dst)
                files[VOCODER] = dst
            runs = [speak(bundle, files, codes, threads) for _ in range(max(repeats, 1))]
            audio_s = sum(len(a) for a in runs[0]["audio"]) / 24000
            row.update(status="ok", size_mb=_size_mb([files[VOCODER]]), reference=p == "fp32",
                       rtf=min(r["seconds"] for r in runs) / audio_s if audio_s else None,
                       wave_rel_rms=rel_rms(ref["audio"], runs[0]["audio"]),
                       wave_spec_db=spectral_db(ref["audio"], runs[0]["audio"]))
        except Exception as e:  # onnxruntime and the converters raise their own types
            row.update(status="failed", error=_first_line(e))
        rows.append(row)
    return rows


_COLS = [("part", "part", "{}"), ("precision", "precision", "{}"), ("size_mb", "MB", "{:.2f}"),
         ("code_agree", "code agree", "{:.3f}"), ("tts_rtf", "TTS rtf", "{:.3f}"), ("rtf", "rtf", "{:.3f}"),
         ("wave_rel_rms", "wave err", "{:.4f}"), ("wave_spec_db", "wave spec dB", "{:.2f}"), ("status", "status", "{}")]


def speech_markdown(rows: list[dict]) -> str:
    lines = markdown(grid(rows, _COLS))
    lines += [f"- {r['part']} {r['precision']}: {r['error']}" for r in rows if r.get("status") != "ok"]
    lines += ["", "code agree: fraction of the bundle's own TTS codes matched at the same position (same seed); "
              "TTS rtf: TTS seconds per second of speech; rtf: token2wav seconds per second of speech; wave err: "
              "relative RMS of the 24 kHz waveform against the reference; wave spec dB: RMS difference of the "
              "log-magnitude spectra (what is heard, without phase). Each against the bundle's own TTS GGUF or the "
              "FP32 vocoder, on the same sentences; 0 difference is identical."]
    return "\n".join(lines)


def speech_text_table(rows: list[dict]) -> str:
    return "\n".join(aligned(grid(rows, _COLS), left=2))
