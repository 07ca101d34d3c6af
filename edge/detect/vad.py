"""Silero VAD (its ONNX file, in onnxruntime): speech probability per 32 ms frame, streamed.

The model takes 512 new samples at 16 kHz plus the last 64 samples of the
previous frame as context, and carries a recurrent state tensor between
calls. Audio that does not fill a frame is kept for the next call, so
feeding a signal in pieces gives the same probabilities as feeding it whole.
Each frame also reports its RMS level, so a caller never needs the samples
the VAD holds back. Once a second of frames in a row has been quieter than
`quiet_rms` (a quiet room), further quiet frames are not run through the
model: their probability is 0, so an always-on device spends next to
nothing on silence. The model's state is kept as the quiet second left it:
reset to zeros, Silero needs several frames to trust the next speech (the
more so for speech thinned by the echo canceller), which delayed barge-in
by a second or more. Short pauses inside speech still go through the model
(its memory bridges them).
The choice depends on the audio alone, so a replay decides the same.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edge.audio_format import RATE
from edge.backends.locate import SILERO_VAD
from edge.backends.onnx_cpu import cpu_session
from edge.detect.level import frame_rms

FRAME = 512  # samples per decision (32 ms)
CONTEXT = 64  # samples of the previous frame the model sees again
FRAME_NS = FRAME * 1_000_000_000 // RATE
QUIET_RMS = 10 ** (-60 / 20)  # -60 dBFS: well under any voice, above a quiet room's floor
QUIET_HOLD = 31  # quiet frames in a row (about a second) before the model is skipped


@dataclass
class FrameProb:
    t_start_ns: int  # session time of the frame's first sample
    prob: float  # speech probability
    rms: float  # the frame's RMS level (linear): the onset detector weighs it against the noise floor


class SileroVad:
    def __init__(self, threads: int = 1, quiet_rms: float = QUIET_RMS) -> None:
        self.quiet_rms = quiet_rms
        self.session = cpu_session(SILERO_VAD.locate(), threads)
        names = {i.name for i in self.session.get_inputs()}
        if names != {"input", "state", "sr"}:
            raise RuntimeError(f"unexpected Silero VAD inputs {sorted(names)}; expected input, state and sr")
        self._sr = np.array(RATE, dtype=np.int64)
        self.reset()

    def reset(self, t_ns: int = 0) -> None:
        self._state = np.zeros((2, 1, 128), np.float32)
        self._context = np.zeros(CONTEXT, np.float32)
        self._pending = np.zeros(0, np.float32)
        self._next_ns = t_ns  # session time of the first pending sample
        self._quiet_run = 0  # quiet frames in a row so far

    def snapshot(self) -> tuple:
        """Everything `feed` carries from one call to the next: `restore` goes back to it (audio fed ahead of
        a chunk boundary that the chunk then did not hold)."""
        return (self._state.copy(), self._context.copy(), self._pending.copy(), self._next_ns, self._quiet_run)

    def restore(self, snap: tuple) -> None:
        state, context, pending, self._next_ns, self._quiet_run = snap
        self._state, self._context, self._pending = state.copy(), context.copy(), pending.copy()

    def frame_prob(self, frame: np.ndarray) -> float:
        """Speech probability of one 512-sample frame (advances the state)."""
        x = np.concatenate([self._context, frame]).reshape(1, -1)
        out, self._state = self.session.run(None, {"input": x, "state": self._state, "sr": self._sr})
        self._context = frame[-CONTEXT:].copy()
        return float(out[0, 0])

    def feed(self, audio: np.ndarray, t_ns: int | None = None) -> list[FrameProb]:
        """Probabilities of every whole frame now available; `t_ns` re-anchors time (chunk start)."""
        if t_ns is not None and not len(self._pending):
            self._next_ns = t_ns
        self._pending = np.concatenate([self._pending, np.asarray(audio, np.float32)])
        out = []
        n = len(self._pending) // FRAME
        for i in range(n):
            frame = self._pending[i * FRAME:(i + 1) * FRAME]
            rms = frame_rms(frame)
            self._quiet_run = self._quiet_run + 1 if rms < self.quiet_rms else 0
            if self._quiet_run > QUIET_HOLD:
                # The state stays as the quiet second left it (a cold model is slow to trust the next
                # speech); only the context moves on, so the next model call sees the audio before it.
                self._context = frame[-CONTEXT:].copy()
                out.append(FrameProb(self._next_ns, 0.0, rms))
            else:
                out.append(FrameProb(self._next_ns, self.frame_prob(frame), rms))
            self._next_ns += FRAME_NS
        self._pending = self._pending[n * FRAME:]
        return out
