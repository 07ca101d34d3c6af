"""The speech decoder's second stage: codes -> 24 kHz audio through the three token2wav graphs.

The streaming contract and its NumPy driver are in token2wav_stream.py:
windows of 28 codes every 25, flow caches trimmed, the vocoder cross-faded.
Here the graphs come from the bundle (onnxruntime or a TensorRT engine), the
voice prompt from the exporter's voice file, the sampler noise from its own.

A turn is one stream: `begin_turn` restores the state primed with the voice
(and restarts the vocoder's noise from its seed), then each chunk's codes are
pushed as they come. A window is run as soon as 29 codes are held (28 plus one
that proves it is not the last); the rest wait for the next chunk, and the
turn's end runs what is left as the last window. So a turn fed chunk by chunk
gives exactly the windows, hence the audio, of the same codes fed at once.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Iterator

import numpy as np

from edge.speech.venus.token2wav_stream import STREAM_DEFAULTS, FlowShapes, GraphStream, numpy_noise

STATE = ("conf_cnn", "conf_att", "dit_cnn", "dit_att", "hift_mel", "hift_source", "hift_speech", "spk",
         "spk_proj", "prompt_frames")


DEFAULT_STEPS = 5  # flow-matching steps of the reference


def cosine_span(n_steps: int) -> np.ndarray:
    """The sampler's cosine-scheduled times (n_steps + 1 values from 0 to 1)."""
    span = np.linspace(0, 1, n_steps + 1, dtype=np.float32)
    return (1 - np.cos(span * np.float32(0.5 * np.pi))).astype(np.float32)


def shapes_from(encoder_inputs: dict[str, list], step_inputs: dict[str, list]) -> FlowShapes:
    def fixed(shape: list, dims: tuple[int, ...], what: str) -> list[int]:
        vals = [shape[d] if d < len(shape) else None for d in dims]
        if not all(isinstance(v, int) for v in vals):
            raise ValueError(f"the token2wav {what} input has shape {shape}; its cache geometry must be fixed")
        return vals  # type: ignore[return-value]

    layers, heads, kv = fixed(encoder_inputs["att_cache"], (0, 2, 4), "encoder att_cache")
    (width,) = fixed(encoder_inputs["cnn_cache"], (1,), "encoder cnn_cache")
    depth, dheads, dkv = fixed(step_inputs["att_cache"], (0, 2, 4), "step att_cache")
    (dcnn,) = fixed(step_inputs["cnn_cache"], (2,), "step cnn_cache")
    return FlowShapes(layers, heads, width, kv, depth, dheads, dkv, dcnn)


def windows(codes: np.ndarray) -> list[tuple[np.ndarray, bool]]:
    size, stride = STREAM_DEFAULTS["window_codes"], STREAM_DEFAULTS["chunk_codes"]
    out, start = [], 0
    while len(codes) - start > size:
        out.append((codes[start:start + size], False))
        start += stride
    out.append((codes[start:], True))
    return out


class Token2Wav:
    sample_rate = STREAM_DEFAULTS["sample_rate"]

    def __init__(self, encoder, step, vocoder, voice: Path, noise: Path | None = None,
                 contract: dict | None = None, flow_steps: int | None = None, seed: int = 0) -> None:
        with np.load(voice) as z:
            v = {k: z[k] for k in z.files}
        if noise is not None:
            v["noise"] = np.load(noise)
        missing = [k for k in ("prompt_tokens", "prompt_mel", "spk_embedding", "noise") if k not in v]
        if missing:
            raise ValueError(f"the voice file {voice.name} lacks {', '.join(missing)}; rebuild the bundle")
        contract = contract or {}
        if flow_steps is not None:
            steps = cosine_span(flow_steps)
        elif "t_span" in contract:
            steps = np.asarray(contract["t_span"], np.float32)
        else:
            steps = np.asarray(v["t_span"], np.float32) if "t_span" in v else cosine_span(DEFAULT_STEPS)
        shapes = shapes_from(encoder.input_shapes, step.input_shapes)
        params = {k: contract.get(k, d) for k, d in STREAM_DEFAULTS.items()}
        self.seed, self.harmonics = seed, int(contract.get("harmonics", 9))
        self.stream = GraphStream(encoder, step, vocoder, shapes, v["noise"].astype(np.float32), steps,
                                  numpy_noise(seed, self.harmonics), params)
        self.stream.setup(v["prompt_tokens"], v["prompt_mel"], v["spk_embedding"])
        self.primed = {k: copy.deepcopy(getattr(self.stream, k)) for k in STATE if hasattr(self.stream, k)}
        self.held = np.zeros(0, np.int64)  # codes of the turn not yet run through a window
        self.size, self.stride = params["window_codes"], params["chunk_codes"]

    def begin_turn(self) -> None:
        """The state right after the voice set-up, the vocoder noise from its seed, no codes held."""
        for k, val in self.primed.items():
            setattr(self.stream, k, copy.deepcopy(val))
        self.stream.vocoder_noise = numpy_noise(self.seed, self.harmonics)
        self.held = np.zeros(0, np.int64)

    def push_codes(self, codes: np.ndarray, final: bool) -> Iterator[np.ndarray]:
        """A chunk's codes into the turn's stream: audio of every window now complete (all, if `final`)."""
        self.held = np.concatenate([self.held, np.asarray(codes, np.int64)])
        while len(self.held) > self.size:
            yield self.stream.push(self.held[:self.size], False)
            self.held = self.held[self.stride:]
        if final and len(self.held):
            yield self.stream.push(self.held, True)
            self.held = self.held[:0]

    def stream_codes(self, codes: np.ndarray) -> Iterator[np.ndarray]:
        """One whole utterance (a turn of its own): audio per window, as soon as each is ready."""
        self.begin_turn()
        yield from self.push_codes(codes, final=True)
