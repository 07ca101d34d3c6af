"""A small Qwen2-style byte-level BPE tokenizer for tiny checkpoints, with the real special tokens.

It is trained (with the `tokenizers` library) on a seeded, generated English
corpus, so it has real merges; the MiniCPM-o specials and the 12 protocol
tokens are added as special tokens after the base vocabulary, as in Qwen.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from edge.protocol.tokens import PROTOCOL_TOKENS
from export.special_tokens import CHATML_TEMPLATE, EOS_TOKEN, MINICPMO_SPECIALS, PAD_TOKEN

# The Qwen2 pre-tokenizer split (llama.cpp's "qwen2" pre-tokenizer uses the same expression).
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
WORDS = (
    "the a an and or but if when while because so to of in on at by for with from into over under about "
    "I you he she it we they me him her us them my your his its our their this that these those here there "
    "is are was were be been being have has had do does did will would can could should may might must "
    "time person year way day thing man woman life child world school state family student group country "
    "problem hand part place case week company system program question work government number night point "
    "home water room mother area money story fact month lot right study book eye job word business issue "
    "side kind head house service friend father power hour game line end member law car city community name "
    "weather music voice camera image audio speak listen check find tell show call send open close start stop "
    "today tomorrow morning evening please thanks hello sorry yes no maybe sure okay good great new old big "
    "small long short high low early late first last next other same different important public private"
).split()
PUNCT = (".", ",", "?", "!", ":", ";")


def corpus(seed: int, n_lines: int = 3000) -> list[str]:
    """Seeded sentences of common words, digits and punctuation."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n_lines):
        n = int(rng.integers(4, 14))
        words = [WORDS[int(i)] for i in rng.integers(0, len(WORDS), n)]
        if rng.random() < 0.3:
            words.insert(int(rng.integers(0, n)), str(int(rng.integers(0, 10000))))
        words[0] = words[0].capitalize()
        lines.append(" ".join(words) + PUNCT[int(rng.integers(0, len(PUNCT)))])
    return lines


def special_tokens() -> list[str]:
    return list(MINICPMO_SPECIALS) + [t for t in PROTOCOL_TOKENS if t not in MINICPMO_SPECIALS]


def build_tokenizer(seed: int, base_vocab: int = 1000) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=base_vocab, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(corpus(seed), trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special_tokens()])
    return tok


def write_tokenizer_files(out: Path, seed: int) -> int:
    """Write tokenizer.json, vocab.json, merges.txt, tokenizer_config.json, added_tokens.json and
    special_tokens_map.json into `out`; returns the number of token ids used."""
    tok = build_tokenizer(seed)
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))  # vocab.json + merges.txt
    specials = special_tokens()
    ids = {t: tok.token_to_id(t) for t in specials}
    (out / "added_tokens.json").write_text(json.dumps(ids, indent=2) + "\n")
    decoder = {str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                        "single_word": False, "special": True} for t, i in ids.items()}
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "additional_special_tokens": [t for t in specials if t not in (EOS_TOKEN, PAD_TOKEN)],
        "bos_token": None,
        "chat_template": CHATML_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": EOS_TOKEN,
        "errors": "replace",
        "model_max_length": 40960,
        "pad_token": PAD_TOKEN,
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    smap = {"eos_token": EOS_TOKEN, "pad_token": PAD_TOKEN,
            "additional_special_tokens": config["additional_special_tokens"]}
    (out / "special_tokens_map.json").write_text(json.dumps(smap, indent=2) + "\n")
    return tok.get_vocab_size(with_added_tokens=True)
