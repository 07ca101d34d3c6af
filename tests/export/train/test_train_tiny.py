"""The trained tiny model: what it learns from is what the runtime feeds it, and training is cached and repeatable.

A very small training run (a few steps, a few voices) goes through the same
code as the full one; the bundle exported from it runs in the real Venus
frontend, and every prefilled token and embedding is compared with the
training sequence of the same session.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from export.build import BuildOptions, build
from export.checkpoint import CheckpointReader
from export.train import cache as train_cache
from export.train.batch import Slicing, session_views, stream_mels
from export.train.loop import TrainSettings, audio_per_chunk, phrases, train
from export.train.model import Venus
from export.train.score import Decision, score_session
from export.train.sequence import AUDIO, IMAGE, Tokens, build_layout
from export.train.session import make_session
from export.train.voices import HELDOUT_VOICES, ClipBank

SMALL = dict(steps=2, batch=2, chunks=8, voices=3, pretrain=2, pretrain_vision=2)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("venus-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VENUS_EDGE_CACHE", str(root))
        yield train_cache.cache_root()


@pytest.fixture(scope="module")
def omni_ckpt(tmp_path_factory, cache_dir):
    out = tmp_path_factory.mktemp("trained") / "omni"
    train(TrainSettings("omni", **SMALL), out, cache_dir, progress=False)
    return out


@pytest.fixture(scope="module")
def omni_bundle(tmp_path_factory, omni_ckpt):
    out = tmp_path_factory.mktemp("trained-bundle") / "omni"
    build(omni_ckpt, out, BuildOptions(types=["F16"], encoders=["fp32"], progress=False, threads=1))
    return out


@pytest.fixture(scope="module")
def heldout_bank(cache_dir):
    return ClipBank.load_or_make(phrases("omni"), HELDOUT_VOICES, cache_dir, progress=False)


def _session_with_everything(bank):
    """The first held-out session that answers a question, delegates and speaks a prefilled result."""
    for i in range(200):
        s = make_session("omni", bank, HELDOUT_VOICES, 12, [7, i], heldout=True)
        kinds = {t.kind for t in s.turns}
        if {"reply", "delegate", "result"} <= kinds:
            return s
    raise AssertionError("no held-out session with a reply, a delegation and a result in 200 seeds")


def _forced(plan, tok_words_first):
    """The chunk plan as the frontend's forcing setting: protocol tokens by name, words as text."""
    forced, in_turn = {}, False
    for p in plan:
        if p.action == "listen":
            items = ["<|listen|>"]
        elif p.action == "yield":
            items = ["<|turn_eos|>", "<|listen|>"]
        else:
            items = ["<|speak|>"]
            if p.delegate:
                items += ["<delegate>", p.delegate, "</delegate>"]
            if p.text:
                items.append(p.text if not in_turn or p.delegate else " " + p.text)
            items += ["<|turn_eos|>", "<|listen|>"] if p.end_turn else ["<|chunk_eos|>"]
        forced[str(p.index)] = items
        if p.action != "listen":
            in_turn = not p.end_turn
    return forced


class _Recorder:
    """Everything the chunk loop feeds llama.cpp, in order: token ids, or embedding rows."""

    def __init__(self, mp):
        from edge.backends.llama import LlamaModel

        self.items: list = []
        rec = self
        orig_tokens, orig_emb, orig_step = LlamaModel.prefill_tokens, LlamaModel.prefill_embeddings, LlamaModel.step

        def prefill_tokens(self, tokens, want_logits=True):
            rec.items += [("tok", int(t)) for t in tokens]
            return orig_tokens(self, tokens, want_logits)

        def prefill_embeddings(self, embd, want_logits=False):
            rec.items += [("emb", np.array(row, np.float32)) for row in embd]
            return orig_emb(self, embd, want_logits)

        def step(self, token, hidden=False, copy=True):
            rec.items.append(("tok", int(token)))
            return orig_step(self, token, hidden, copy)

        mp.setattr(LlamaModel, "prefill_tokens", prefill_tokens)
        mp.setattr(LlamaModel, "prefill_embeddings", prefill_embeddings)
        mp.setattr(LlamaModel, "step", step)


def test_training_sequence_is_what_the_chunk_loop_prefills(omni_ckpt, omni_bundle, heldout_bank, monkeypatch):
    from edge.backends.gguf_rows import token_rows
    from edge.bundle.settings import VenusSettings
    from edge.frontend.base import Chunk, Frame, ResultToSay
    from edge.frontend.venus.frontend import VenusFrontend
    from kernels.resample import float_to_pcm16, pcm16_to_float

    session = _session_with_everything(heldout_bank)
    reader = CheckpointReader(omni_ckpt)
    tok = Tokens(omni_ckpt)
    settings = VenusSettings()
    slicing = Slicing.from_config(reader.config)
    views, per_chunk, _ = session_views(session, slicing)
    layout = build_layout(session.plan, tok, tok.with_specials(settings.system_prompt),
                          audio_per_chunk(reader.config), [len(v) for v in per_chunk])

    # What the model is trained on at the media positions: the torch encoders on the same features.
    model = Venus(reader.config, reader.get, "omni").eval()
    with torch.no_grad():
        mel = torch.from_numpy(stream_mels([session.chunk_audio(k) for k in range(session.n_chunks)]))
        audio = model.encode_audio(mel[None])[0].numpy()  # (chunks, 10, hidden)
        image = [model.encode_view(torch.from_numpy(v)).numpy() for v in views]

    rec = _Recorder(monkeypatch)
    fe = VenusFrontend(omni_bundle, VenusSettings.from_dict({
        "forced": _forced(session.plan, tok), "precision": "F16", "encoder_precision": "fp32", "device": "cpu"}))
    for k in range(session.n_chunks):
        if session.plan[k].inject:  # queued before the chunk: prefilled after its </unit> when it listens
            fe.deliver(ResultToSay(f"r{k}", session.plan[k].inject))
        audio_k = pcm16_to_float(float_to_pcm16(session.chunk_audio(k)))
        out = fe.step(Chunk(k, k * 10**9, (k + 1) * 10**9, audio_k, [Frame(k * 10**9, session.frame(k))]))
        assert not out.info.get("refused"), f"chunk {k}: the runtime refused {out.info['refused']}"
    fe.close()

    assert len(rec.items) == len(layout.ids), "the runtime prefilled a different number of positions"
    rows = {}
    image_at = {int(p): (c, j) for c, pos in layout.image_pos for j, p in enumerate(pos)}
    audio_k = {int(p): (k, j) for k, pos in enumerate(layout.audio_pos) for j, p in enumerate(pos)}
    for pos, (want, (kind, got)) in enumerate(zip(layout.ids, rec.items)):
        if want == AUDIO:
            k, j = audio_k[pos]
            assert kind == "emb", f"position {pos}: audio expected, the runtime fed token {got}"
            np.testing.assert_allclose(got, audio[k, j], atol=2e-3, rtol=1e-3, err_msg=f"audio of chunk {k}")
        elif want == IMAGE:
            c, j = image_at[pos]
            assert kind == "emb", f"position {pos}: image expected, the runtime fed token {got}"
            ids = per_chunk[c]
            np.testing.assert_allclose(got, np.concatenate([image[v] for v in ids])[j], atol=2e-3, rtol=1e-3,
                                       err_msg=f"image of chunk {c}")
        elif kind == "tok":
            assert got == want, f"position {pos}: token {want} expected, the runtime fed {got}"
        else:  # a protocol token fed as its embedding row
            if want not in rows:
                rows[want] = token_rows(fe.bundle.llm, [int(want)])[0]
            np.testing.assert_array_equal(got, rows[want], err_msg=f"position {pos}: row of token {want}")


def test_block_encoding_equals_chunk_by_chunk_streaming(omni_ckpt, heldout_bank):
    reader = CheckpointReader(omni_ckpt)
    model = Venus(reader.config, reader.get, "omni").eval()
    session = make_session("omni", heldout_bank, HELDOUT_VOICES, 6, [3], heldout=True)
    mels = [torch.from_numpy(m)[None] for m in stream_mels([session.chunk_audio(k) for k in range(6)])]
    with torch.no_grad():
        whole = model.encode_audio(torch.cat(mels)[None])[0]
        past, streamed = model.audio.empty_cache(), []
        for m in mels:
            emb, past = model.audio(m, past)
            streamed.append(emb[0])
    np.testing.assert_allclose(whole.numpy(), torch.stack(streamed).numpy(), atol=1e-4, rtol=1e-4)


def _perfect(session):
    """The decisions of a model that does exactly what the session's plan asks."""
    perfect, in_turn = [], False
    for p in session.plan:
        text = "" if p.action != "speak" else p.text if not in_turn or p.delegate else " " + p.text
        perfect.append(Decision(p.index, "listen" if p.action == "listen" else "speak", text, p.end_turn,
                                [p.delegate] if p.delegate else [], p.inject))
        if p.action != "listen":
            in_turn = not p.end_turn
    return perfect


def test_a_perfect_run_scores_full_marks_and_talking_over_is_counted(heldout_bank):
    for i in range(6):
        s = make_session("omni", heldout_bank, HELDOUT_VOICES, 20, [11, i], heldout=True)
        perfect = _perfect(s)
        score = score_session(s, perfect)
        for name, t in score.tallies.items():
            want = 0 if name in ("talk-over", "uninvited turns") else t.total
            assert t.hits == want, f"session {i}: {name} {t.hits}/{t.total} for the planned run"
        chatty = [Decision(d.index, "speak", " word", False) for d in perfect]
        assert score_session(s, chatty).tallies["talk-over"].hits == score.tallies["talk-over"].total


def test_training_is_cached_by_settings_and_reproducible(cache_dir, monkeypatch):
    settings = TrainSettings("audio", **SMALL)
    first = train_cache.trained_checkpoint(settings, progress=False)
    monkeypatch.setattr(train_cache, "train", lambda *a, **k: pytest.fail("trained again for a cached result"))
    assert train_cache.trained_checkpoint(settings, progress=False) == first
    other = TrainSettings("audio", **{**SMALL, "seed": 1})
    assert train_cache.cached(other) is None, "another seed must not hit the same cache entry"
    monkeypatch.undo()
    again = train_cache.entry(settings).parent / "again"
    train(settings, again, cache_dir, progress=False)
    a, b = CheckpointReader(first), CheckpointReader(again)
    assert a.names() == b.names()
    for name in a.names("llm.") + a.names("apm."):
        np.testing.assert_array_equal(a.get(name), b.get(name), err_msg=f"{name} differs between two runs")


def test_cli_refuses_bad_requests_with_one_sentence(tmp_path, capsys):
    from export.cli import main

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert main(["bench", "tiny", "--variant", "video"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Unknown variant 'video'") and err.count("\n") == 1
    assert main(["train-tiny", str(tmp_path / "full"), "--variant", "audio"]) == 2
    err = capsys.readouterr().err
    assert "is not empty" in err and err.count("\n") == 1


def test_the_bench_counts_every_goal_over_enough_events(heldout_bank):
    """With the CLI's default session count, each figure of the bench's last line rests on at least 8 events."""
    from export.cli import _parser
    from export.train.bench import DEFAULT_SESSIONS, heldout_sessions
    from export.train.score import Score

    assert _parser().parse_args(["bench", "tiny"]).sessions == DEFAULT_SESSIONS
    for variant in ("audio", "omni"):
        chunks = TrainSettings(variant).resolved().chunks
        total = Score()
        for s in heldout_sessions(variant, heldout_bank, DEFAULT_SESSIONS, chunks):
            total.merge(score_session(s, _perfect(s)))
        wanted = ["speak-after-turn", "interruption", "backchannel", "delegate", "local kept"]
        for name in wanted + (["frame-answer"] if variant == "omni" else []):
            assert total.tallies[name].total >= 8, f"{variant}: only {total.tallies[name].total} {name} events"


def test_first_stage_hears_each_phrase_all_through_a_session_length(heldout_bank):
    """Phrases come at late positions too, and the chunk where one is answered holds nothing said after it."""
    from export.train.pretrain import phrase_batch

    texts = phrases("audio")
    mel, heard = phrase_batch(np.random.default_rng(5), heldout_bank, HELDOUT_VOICES, texts, 6, 20)
    assert mel.shape[:2] == (6, 20)
    assert max(h.first for h in heard) >= 12, "no phrase is heard in the second half of a sequence"
    for a, b in zip(heard, heard[1:]):
        if a.seq == b.seq:
            assert a.first <= a.answer < b.first
    assert len({h.label for h in heard}) >= len(texts) // 2


def test_vowel_shifted_voices_are_new_takes_of_training_voices_only():
    """Omni's vowel-shifted voices move vowels and nothing else, and never borrow a held-out accent, variant or rate."""
    import re

    from export.train.voices import NEIGHBOURS, TRAIN_VOICES, Speaker, shift_vowels, shifted_voices

    said = "w,0t d'u: ju: s'i: | w,0t Iz jO@ n'eIm"
    moved = shift_vowels(said, np.random.default_rng(0), share=1.0)
    every = set(NEIGHBOURS) | {n for ns in NEIGHBOURS.values() for n in ns}
    vowels = re.compile("|".join(re.escape(v) for v in sorted(every, key=len, reverse=True)))
    assert vowels.sub("V", moved) == vowels.sub("V", said), "a consonant, a stress or a word boundary moved"
    assert moved != said
    shifted = shifted_voices(TRAIN_VOICES, 3)
    plain = {v.label for v in TRAIN_VOICES}
    assert len({v.label for v in shifted}) == len(shifted) and not plain & {v.label for v in shifted}
    held_accents = {v.name.split("+")[0] for v in HELDOUT_VOICES if v.engine == "espeak"}
    held_variants = {v.name.split("+")[1] for v in HELDOUT_VOICES if "+" in v.name}
    for v in shifted:
        accent, _, variant = v.name.partition("+")
        assert accent not in held_accents and variant not in held_variants, v.label
        assert v.rate in {t.rate for t in TRAIN_VOICES if t.engine == "espeak"}, v.label
    speaker = Speaker()
    take = shifted[0]
    plain_take = dataclasses.replace(take, shift=0)
    texts = phrases("omni")[:8]
    moved = [not np.array_equal(speaker.say(t, take), speaker.say(t, plain_take)) for t in texts]
    assert sum(moved) >= len(texts) // 2, "most phrases said by a vowel-shifted voice sound as the plain one"


def test_the_trained_bundle_speaks_the_references_budget_per_chunk(omni_bundle):
    """A session of the trained tiny Omni through its frontend and voice: 25 codes per speaking chunk inside a
    turn, a wordless one included (docs/conformance.md, the speech budget)."""
    import sys
    from pathlib import Path

    from speech_budget import codes_per_chunk

    counts, controls = codes_per_chunk(omni_bundle)
    assert [counts[k] for k in (2, 3, 4)] == [25, 25, 25] and controls[3] == "speak"
    assert counts[1] <= 25 and counts[5] <= 25 and 7 in counts
