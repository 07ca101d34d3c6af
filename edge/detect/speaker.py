"""Who is speaking: a 256-value voice embedding (GE2E), to tell the user's voice from another.

The weights are the pretrained voice encoder inside the `resemblyzer` wheel
(0.1.4, Apache-2.0: a 3-layer LSTM over 40-band mel frames, trained on
thousands of speakers). The wheel's own code needs librosa and webrtcvad
for what is a mel filterbank and a silence trim, so it is installed with
--no-deps and only its `pretrained.pt` is read. That file is a torch
checkpoint: it is converted once, with torch, into an ONNX graph in the
model cache, and the encoder runs in onnxruntime from then on (no torch at
run time). ONNX rather than a NumPy LSTM: a Python loop over 160 frames x 3
layers took 100-500 ms on the shared 2-core machine, onnxruntime's fused
LSTM about 50 ms for a batch of partials.
"""
from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
from scipy.signal import get_window

from edge.audio_format import RATE
from edge.backends.locate import cache_dir
from edge.backends.onnx_cpu import cpu_session

N_FFT, HOP, N_MELS = 400, 160, 40  # 25 ms windows every 10 ms, as the encoder was trained
PARTIAL = 160  # frames per partial utterance (1.6 s)
PARTIALS_PER_S = 1.3
TARGET_DBFS = -30.0  # quieter speech is raised to this level first, as in training
CONVERTED = "ge2e-voice-encoder.onnx"
LAYERS = 3  # LSTM layers of 256


def checkpoint() -> Path | None:
    """The pretrained encoder inside the installed resemblyzer wheel (found without importing its code)."""
    spec = importlib.util.find_spec("resemblyzer")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "pretrained.pt"
    return path if path.is_file() else None


def unavailable() -> str | None:
    """Why the voice encoder cannot run here (one sentence with the fix), or None when it can."""
    if (cache_dir() / CONVERTED).is_file():
        return None
    if checkpoint() is None:
        return ("the voice encoder's weights are missing; install them with "
                "`pip install --no-deps resemblyzer==0.1.4`")
    if importlib.util.find_spec("torch") is None:
        return ("the voice encoder's weights must be converted once with torch, which is not installed; "
                "install it with `pip install torch` (only the first run needs it)")
    return None


def _convert(src: Path, dst: Path) -> None:
    """The checkpoint's LSTM and projection as an ONNX graph: mels (batch, frames, 40) -> unit embeddings."""
    import torch  # only here: the checkpoint is a torch file

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(N_MELS, 256, LAYERS, batch_first=True)
            self.linear = torch.nn.Linear(256, 256)

        def forward(self, mels: torch.Tensor) -> torch.Tensor:
            _, (hidden, _) = self.lstm(mels)
            e = torch.relu(self.linear(hidden[-1]))
            return e / torch.norm(e, dim=1, keepdim=True).clamp_min(1e-9)

    state = torch.load(src, map_location="cpu", weights_only=True)["model_state"]
    model = Encoder()
    model.load_state_dict({k: v for k, v in state.items() if k.startswith(("lstm.", "linear."))})
    model.eval()
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notices
        torch.onnx.export(model, (torch.zeros(1, PARTIAL, N_MELS),), str(tmp), input_names=["mels"],
                          output_names=["embeds"], dynamic_axes={"mels": {0: "batch", 1: "frames"}},
                          dynamo=False, opset_version=17)
    tmp.replace(dst)


def mel_filters(n_fft: int = N_FFT, n_mels: int = N_MELS, rate: int = RATE) -> np.ndarray:
    """Slaney-style triangular mel filters (area-normalised), as the encoder's training features used."""
    def to_hz(mel: np.ndarray) -> np.ndarray:
        sp, knee = 200.0 / 3, 15.0  # linear to 1 kHz (mel 15), logarithmic above
        return np.where(mel < knee, sp * mel, 1000.0 * np.exp(np.log(6.4) / 27.0 * (mel - knee)))

    top = 15.0 + np.log(rate / 2 / 1000.0) / (np.log(6.4) / 27.0)
    hz = to_hz(np.linspace(0.0, top, n_mels + 2))
    fft = np.fft.rfftfreq(n_fft, 1.0 / rate)
    ramps = hz[:, None] - fft[None, :]
    lower = -ramps[:-2] / np.diff(hz)[:-1, None]
    upper = ramps[2:] / np.diff(hz)[1:, None]
    w = np.maximum(0.0, np.minimum(lower, upper))
    return (w * (2.0 / (hz[2:] - hz[:-2]))[:, None]).astype(np.float32)


class VoiceEncoder:
    def __init__(self, threads: int = 1) -> None:
        why = unavailable()
        if why is not None:
            raise RuntimeError(why)
        path = cache_dir() / CONVERTED
        if not path.is_file():
            src = checkpoint()
            assert src is not None
            _convert(src, path)
        self.session = cpu_session(path, threads)
        self.window = get_window("hann", N_FFT, fftbins=True).astype(np.float32)
        self.filters = mel_filters()

    def mel(self, audio: np.ndarray) -> np.ndarray:
        """Power mel frames (not log), one every 10 ms: (frames, 40)."""
        x = np.pad(np.asarray(audio, np.float32), N_FFT // 2, mode="reflect")
        n = 1 + (len(x) - N_FFT) // HOP
        idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n)[:, None]
        spec = np.abs(np.fft.rfft(x[idx] * self.window, axis=1)) ** 2
        return (spec @ self.filters.T).astype(np.float32)

    def embed(self, audio: np.ndarray) -> np.ndarray | None:
        """The voice's embedding (unit length), or None when the audio holds too little sound to weigh."""
        x = trim_silence(np.asarray(audio, np.float32))
        if len(x) < RATE // 4:
            return None
        rms = float(np.sqrt(np.mean(x ** 2)))
        gain = 10 ** (TARGET_DBFS / 20) / max(rms, 1e-9)
        mel = self.mel(x * max(gain, 1.0))
        if len(mel) <= PARTIAL:
            parts = mel[None]  # shorter than one partial: the state after its last frame, not after padding
        else:
            step = int(round(RATE / PARTIALS_PER_S / HOP))
            starts = list(range(0, len(mel) - PARTIAL + 1, step))
            if len(mel) - (starts[-1] + PARTIAL) > 0.25 * PARTIAL:
                starts.append(len(mel) - PARTIAL)  # the tail too, when a quarter of a partial is left over
            parts = np.stack([mel[s:s + PARTIAL] for s in starts])
        e = self.session.run(None, {"mels": np.ascontiguousarray(parts, np.float32)})[0].mean(axis=0)
        return e / (np.linalg.norm(e) + 1e-9)


def trim_silence(x: np.ndarray, frame: int = 480, floor_db: float = 40.0, keep: int = 6) -> np.ndarray:
    """Drop 30 ms frames more than `floor_db` under the loudest, keeping `keep` frames around speech."""
    n = len(x) // frame
    if n == 0:
        return x[:0]
    e = np.mean(x[:n * frame].reshape(n, frame) ** 2, axis=1)
    loud = e > e.max() * 10 ** (-floor_db / 10)
    if not loud.any() or e.max() <= 1e-10:
        return x[:0]
    near = np.convolve(loud.astype(np.float32), np.ones(2 * keep + 1, np.float32), mode="same") > 0
    return x[:n * frame].reshape(n, frame)[near].reshape(-1)
