"""The bundle's voice: a reference recording turned into token2wav's prompt with the checkpoint's own graphs.

`venus-export build --voice REF.wav` (default: the project's own recording,
edge/assets/two_plus_two.wav) reads the recording (mono, at most 10 s), runs the
checkpoint's speech tokenizer (speech_tokenizer_v2_25hz.onnx, on a 128-bin
Whisper log-mel at 16 kHz) for the prompt codes and its speaker graph
(campplus.onnx, on a mean-normalised Kaldi filterbank) for the speaker vector,
and cuts the 24 kHz prompt mel to two frames per code. The bundle gets
voice/voice.npz (prompt_tokens, prompt_mel, spk_embedding) and the 16-bit
recording it was made from (voice/reference.wav, so `verify` can remake it);
the manifest's part entry records the codes, the speaker vector and where
they came from. Both graphs run only here, so bundles do not carry them.
"""

from __future__ import annotations

import hashlib
import importlib.resources
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from export.errors import ExportError
from export.voice_features import kaldi_fbank, prompt_mel, whisper_log_mel
from kernels.resample import resample, to_mono

SPEAKER_GRAPH = "campplus.onnx"
TOKENIZER_GRAPH = "speech_tokenizer_v2_25hz.onnx"
VOICE_NPZ, VOICE_WAV = "voice/voice.npz", "voice/reference.wav"
MAX_SECONDS = 10.0
MIN_SECONDS = 0.5
MEL_PER_CODE = 2


def default_voice() -> Path:
    """The project's own recording (edge/assets/two_plus_two.wav), used when --voice is not given."""
    return Path(str(importlib.resources.files("edge") / "assets" / "two_plus_two.wav"))


@dataclass
class VoicePrompt:
    tokens: np.ndarray  # (P,) int64 speech codes
    mel: np.ndarray  # (2P, 80) float32 log-mel at 50 frames a second
    spk: np.ndarray  # (192,) float32 speaker vector

    def arrays(self) -> dict[str, np.ndarray]:
        return {"prompt_tokens": self.tokens, "prompt_mel": self.mel, "spk_embedding": self.spk}


def read_reference(path: Path) -> tuple[np.ndarray, int]:
    """The recording as float32 mono, cut to MAX_SECONDS; one sentence if it cannot serve as a voice."""
    import soundfile as sf

    if not path.is_file():
        raise ExportError(f"The reference voice {path} does not exist; give a WAV file with --voice.")
    try:
        audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as exc:
        raise ExportError(f"The reference voice {path} is not a readable sound file ({exc}).") from None
    audio = to_mono(audio)[: int(MAX_SECONDS * sr)]
    if len(audio) < MIN_SECONDS * sr or not np.any(audio):
        raise ExportError(f"The reference voice {path} holds under {MIN_SECONDS} s of sound; give a few seconds "
                          "of clear speech with --voice.")
    return audio, int(sr)


def _session(path: Path, threads: int):
    import onnxruntime as ort

    if not path.is_file():
        raise ExportError(f"The checkpoint has no {path.name} in {path.parent}, so the voice prompt cannot be made; "
                          "copy it there from the model's release.")
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def make_prompt(audio: np.ndarray, sr: int, assets: Path, threads: int = 1) -> VoicePrompt:
    """Prompt codes, mel and speaker vector of a recording, from the graphs in `assets`."""
    a16, a24 = resample(audio, sr, 16000), resample(audio, sr, 24000)
    tokenizer = _session(assets / TOKENIZER_GRAPH, threads)
    t_in = tokenizer.get_inputs()
    bins = t_in[0].shape[1] if isinstance(t_in[0].shape[1], int) else 128
    feats = whisper_log_mel(a16, bins)[None]
    tokens = tokenizer.run(None, {t_in[0].name: feats, t_in[1].name: np.array([feats.shape[2]], np.int32)})[0]
    tokens = np.asarray(tokens, np.int64).reshape(-1)
    speaker = _session(assets / SPEAKER_GRAPH, threads)
    fbank = kaldi_fbank(a16)
    fbank = fbank - fbank.mean(axis=0, keepdims=True)
    spk = np.asarray(speaker.run(None, {speaker.get_inputs()[0].name: fbank[None]})[0], np.float32).reshape(-1)
    mel = prompt_mel(a24)
    want = MEL_PER_CODE * len(tokens)
    if len(mel) < want:  # the reference repeats the last frame up to two per code
        mel = np.concatenate([mel, np.repeat(mel[-1:], want - len(mel), axis=0)])
    return VoicePrompt(tokens, np.ascontiguousarray(mel[:want], np.float32), spk)


def check_prompt(prompt: VoicePrompt, codebook: int, spk_dim: int) -> str | None:
    """Why the prompt cannot drive token2wav, or None."""
    if len(prompt.tokens) == 0:
        return "the speech tokenizer gave no codes"
    if prompt.tokens.min() < 0 or prompt.tokens.max() >= codebook:
        return f"its codes span {prompt.tokens.min()}..{prompt.tokens.max()}, outside the flow model's {codebook}"
    if prompt.spk.shape != (spk_dim,):
        return f"its speaker vector has {prompt.spk.size} values where the flow model takes {spk_dim}"
    if prompt.mel.shape != (MEL_PER_CODE * len(prompt.tokens), 80):
        return f"its mel is {list(prompt.mel.shape)}, not two 80-bin frames per code"
    if not (np.isfinite(prompt.mel).all() and np.isfinite(prompt.spk).all()):
        return "it holds non-finite values"
    return None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_voice(bundle: Path, reference: Path, assets: Path, codebook: int, spk_dim: int, key: str,
                is_default: bool, threads: int = 1) -> dict[str, Any]:
    """Make the prompt, write voice/voice.npz and voice/reference.wav; returns the manifest part entry."""
    import soundfile as sf

    audio, sr = read_reference(reference)
    wav = bundle / VOICE_WAV
    wav.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(wav), audio, sr, subtype="PCM_16")
    audio, sr = read_reference(wav)  # the prompt comes from the stored 16-bit copy, so verify can remake it
    prompt = make_prompt(audio, sr, assets, threads)
    problem = check_prompt(prompt, codebook, spk_dim)
    if problem:
        raise ExportError(f"The voice prompt made from {reference} cannot be used: {problem}.")
    np.savez(bundle / VOICE_NPZ, **prompt.arrays())
    return {"name": "token2wav-voice", "kind": "npz", "role": "token2wav-voice", "precision": "fp32",
            "files": [VOICE_NPZ, VOICE_WAV], "inputs_key": key,
            "shapes": {k: list(v.shape) for k, v in prompt.arrays().items()},
            "voice": {"reference": reference.name, "default": is_default, "seconds": round(len(audio) / sr, 3),
                      "sample_rate": sr, "prompt_tokens": [int(t) for t in prompt.tokens],
                      "spk_embedding": [float(v) for v in prompt.spk],
                      "speaker_graph": {"file": SPEAKER_GRAPH, "sha256": _sha(assets / SPEAKER_GRAPH)},
                      "tokenizer_graph": {"file": TOKENIZER_GRAPH, "sha256": _sha(assets / TOKENIZER_GRAPH)},
                      "method": "speech tokenizer on a 128-bin Whisper log-mel at 16 kHz; speaker graph on a "
                                "mean-normalised 80-bin Kaldi filterbank; 80-bin log-mel at 24 kHz, two per code"}}
