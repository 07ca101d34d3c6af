"""Echo cancellation for the capture node: WebRTC's AEC3 (pywebrtc-audio), fed an aligned reference.

AEC3 finds delays up to about half a second by itself (measured: 60 dB at
400 ms, nothing at 600 ms), and any jump in the alignment makes it start
over. So GCC-PHAT measures the bulk delay, and the reference is shifted
only by what lies beyond AEC3's own reach (`OWN_REACH`), and only during a
pause in playback, with the canceller reset. Blocks must be whole 10 ms
frames of 16 kHz mono float32.

AEC3's suppressor also holds back the start of the user's speech while the
reference plays, echo or not (measured: 0.9 s of a sentence lost with no
echo at all). So the same GCC-PHAT evaluations decide whether the
reference reaches the microphone at all: while none of it has for a few
seconds of playback (a headset, a device that cancels echo itself), the
microphone passes through untouched; the canceller keeps running beside it,
so it is ready the moment echo is found again.
"""
from __future__ import annotations

import numpy as np

from edge.audio_format import RATE
from edge.capture.delay import DelayEstimate, DelayTracker

FRAME = 160  # AEC3 works on 10 ms frames
OWN_REACH = int(0.3 * RATE)  # delay left for AEC3's own estimator (it handles up to ~0.5 s)
QUIET_TO_REALIGN = int(0.3 * RATE)
# GCC-PHAT peak-to-mean, measured on 2 s windows: a real echo gives 50-300, unrelated speech (even in the same
# voice) up to 17. Over ECHO_CONFIDENCE the reference is in the microphone; under NO_ECHO_CONFIDENCE it is not.
ECHO_CONFIDENCE = 30.0
NO_ECHO_CONFIDENCE = 20.0
NO_ECHO_EVALUATIONS = 3  # ... for this many evaluations in a row (half a second apart) before passing through  # silence in the reference needed before the alignment may change


class EchoCancellerMissing(RuntimeError):
    """pywebrtc-audio is not installed; the message says how to fix it."""


class AlignedEchoCanceller:
    def __init__(self, max_delay_ms: float = 1000.0) -> None:
        try:
            from pywebrtc_audio import EchoCanceller
        except ImportError:
            raise EchoCancellerMissing("echo cancellation needs pywebrtc-audio; install it with "
                                       "`pip install pywebrtc-audio`, or turn it off with echo_cancel=false "
                                       "where the device already cancels echo") from None
        self._ec = EchoCanceller(sample_rate=RATE, num_channels=1, stream_delay_ms=0)
        self.tracker = DelayTracker(max_delay_ms=max_delay_ms, every_s=0.5, min_confidence=ECHO_CONFIDENCE)
        self.shift = 0  # samples the reference is delayed by before the canceller sees it
        self.pending_shift: int | None = None  # a new alignment, applied at the next pause in playback
        self.quiet_run = 0  # reference samples in a row that were silent
        self._hist = np.zeros(self.tracker.max_delay + FRAME, np.float32)
        self.echo_present = True  # assumed until measured otherwise: an uncancelled echo would take the floor
        self._no_echo_run = 0
        self._candidate: DelayEstimate | None = None  # the newest confident lag, until another agrees
        self.energy_in = 0.0  # microphone energy while the reference played
        self.energy_out = 0.0  # what was left of it

    def process(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Cancel the echo of `ref` (played at the same session times as `mic`) from `mic`."""
        if len(mic) != len(ref) or len(mic) % FRAME:
            raise ValueError(f"echo cancellation takes equal blocks of whole 10 ms frames, got {len(mic)} "
                             f"microphone and {len(ref)} reference samples")
        seen, before = self.tracker.evaluations, self.tracker.estimate
        est = self.tracker.feed(ref, mic)
        if self.tracker.evaluations > seen:
            conf = self.tracker.last_confidence or 0.0
            self._no_echo_run = self._no_echo_run + 1 if conf < NO_ECHO_CONFIDENCE else 0
            if self._no_echo_run >= NO_ECHO_EVALUATIONS:
                self.echo_present = False
        if est is not None:
            # A real echo comes back at the same lag; a chance peak (the user's voice resembling the
            # assistant's) does not. Trust a lag once two evaluations agree on it.
            agreed = [x for x in (before, self._candidate) if x is not None and abs(x.samples - est.samples) <= 32]
            self._candidate = est
            if agreed:
                self.echo_present = True
                want = max(0, est.samples - OWN_REACH)
                if abs(want - self.shift) > FRAME:  # small jitter is the canceller's to absorb
                    self.pending_shift = want
            else:
                self.tracker.estimate = before
        # Re-align only while nothing plays: a jump in the reference mid-echo makes the canceller start over.
        quiet = float(np.max(np.abs(ref))) < 1e-4 if len(ref) else True
        self.quiet_run = self.quiet_run + len(ref) if quiet else 0
        if self.pending_shift is not None and self.quiet_run >= QUIET_TO_REALIGN:
            self.shift, self.pending_shift = self.pending_shift, None
            self._ec.reset()  # its filter was fitted to the old alignment: start clean, as at the first reply
        self._hist = np.concatenate([self._hist, ref])[-(self.tracker.max_delay + len(ref)):]
        end = len(self._hist) - self.shift
        far = self._hist[end - len(ref):end]
        out = self._ec.process(np.ascontiguousarray(mic, np.float32), np.ascontiguousarray(far, np.float32))
        if not self.echo_present:
            return np.asarray(mic, np.float32)
        if float(np.mean(far * far)) > 1e-6:
            self.energy_in += float(np.sum(mic.astype(np.float64) ** 2))
            self.energy_out += float(np.sum(out.astype(np.float64) ** 2))
        return out

    @property
    def delay_ms(self) -> float | None:
        est = self.tracker.estimate
        return None if est is None else est.ms

    def erle_db(self) -> float | None:
        """Echo return loss enhancement over everything processed while the reference played."""
        if self.energy_in <= 0 or self.energy_out <= 0:
            return None
        return 10 * np.log10(self.energy_in / self.energy_out)
