"""The chunk loop's context, position by position, against the reference's context built from its rules
(reference_rules.py), on tiny bundles exactly as the exporter writes them.

Every position llama.cpp is given is recorded: a token id, or for an embedding row what it is (a token's
own embedding row, one of the chunk's audio embeddings, or a vision slice's embedding). The reference's
context is replayed from what the session did: each chunk's media, the tokens the model drew, the forced
listen and the result prefilled; so a misread rule (a terminator fed early, the cap one place off, a marker
missing or doubled) shows as a differing position.
"""
from __future__ import annotations

import numpy as np
import pytest

from edge.backends.gguf_rows import token_rows
from edge.backends.llama import LlamaModel
from edge.bundle.settings import VenusSettings
from edge.frontend.base import ResultToSay, Chunk, Frame
from edge.frontend.venus.frontend import VenusFrontend
from edge.protocol.tokens import PROTOCOL_TOKENS

from exported import exported_omni_bundle  # noqa: F401
from reference_rules import CHUNK_CAP, SYSTEM_PROMPT, ReferenceContext
from venus_support import speechy

NAMED = PROTOCOL_TOKENS + ("<slice>", "</slice>")
NS = 1_000_000_000
# A context large enough that the window never slides here (positions stay those of the record).
SETTINGS = {"n_ctx": 2048, "kv_high": 2000, "kv_low": 1500, "threads": 1}


class Recorder:
    def __init__(self) -> None:
        self.log: list[int | str] = []
        self.rows: dict[bytes, int] = {}
        self.media: dict[bytes, str] = {}

    def row(self, r: np.ndarray) -> int | str:
        key = np.ascontiguousarray(r, np.float32).tobytes()
        return self.rows.get(key, self.media.get(key, "unknown row"))

    def watch(self, f: VenusFrontend) -> None:
        """Learn the token rows, and record what the encoders hand to the loop from now on."""
        ids = [f.llm.tokenize(t, special=True)[0] for t in NAMED]
        self.rows = {r.tobytes(): i for r, i in zip(token_rows(f.llm.path, ids), ids)}
        for enc, label in ((f.audio, "audio"), (f.vision, "slice")):
            if enc is None:
                continue
            inner = enc.encode

            def encode(x, _inner=inner, _label=label):
                out = _inner(x)
                self.media.update((r.tobytes(), _label) for r in np.asarray(out, np.float32))
                return out
            enc.encode = encode


@pytest.fixture
def recorder(monkeypatch) -> Recorder:
    rec = Recorder()
    orig = {n: getattr(LlamaModel, n) for n in ("prefill_tokens", "prefill_embeddings", "step", "truncate")}

    def prefill_tokens(self, tokens, want_logits=True):
        rec.log += [int(t) for t in tokens]
        return orig["prefill_tokens"](self, tokens, want_logits)

    def prefill_embeddings(self, embd, want_logits=False):
        rec.log += [rec.row(r) for r in np.asarray(embd, np.float32)]
        return orig["prefill_embeddings"](self, embd, want_logits)

    def step(self, token, hidden=False, copy=True):
        rec.log.append(int(token))
        return orig["step"](self, token, hidden, copy)

    def truncate(self, pos):
        del rec.log[pos:]
        return orig["truncate"](self, pos)

    for name, fn in (("prefill_tokens", prefill_tokens), ("prefill_embeddings", prefill_embeddings),
                     ("step", step), ("truncate", truncate)):
        monkeypatch.setattr(LlamaModel, name, fn)
    return rec


def reference(llm: LlamaModel) -> ReferenceContext:
    def special(name: str) -> int | None:
        ids = llm.tokenize(name, special=True)
        return ids[0] if len(ids) == 1 else None
    return ReferenceContext(special, lambda text: llm.tokenize(text, special=True))


def check(log: list, want: list) -> None:
    for pos, (got, exp) in enumerate(zip(log, want)):
        assert got == exp, f"position {pos}: {got!r}, the reference's rules give {exp!r}"
    assert len(log) == len(want), f"{len(log)} positions, the reference's rules give {len(want)}"


def frame(k: int, w: int = 56, h: int = 42) -> list[Frame]:
    return [Frame(k * NS, np.full((h, w, 3), 30 + 20 * k, np.uint8))]


def test_omni_context_follows_the_reference_rules_token_by_token(exported_omni_bundle, recorder):
    words, result, long = "Hello there", "It is sunny in Paris.", "one two three four five six seven eight nine ten"
    forced = {0: ["<|listen|>"], 1: ["<|speak|>", words, "<|turn_eos|>"], 2: ["<|listen|>"],
              3: ["<|speak|>", long], 4: ["more words", "<|chunk_eos|>"]}
    f = VenusFrontend(exported_omni_bundle, VenusSettings.from_dict({**SETTINGS, "forced": forced}))
    recorder.watch(f)
    llm, out = f.llm, {}
    try:
        assert f.s.max_speak_tokens == CHUNK_CAP and f.s.system_prompt == SYSTEM_PROMPT
        ref = reference(llm)
        for k, frames in ((0, frame(0)), (1, []), (2, []), (3, frame(3)), (4, [])):
            if k == 2:
                f.deliver(ResultToSay("w:r1", result, "w"))
            out[k] = f.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k), frames))
            ref.prefill([1] * len(frames), 1.0)
            if k == 4:
                continue
            ref.generate(out[k].tokens)
            ref.finalize()
            if k == 2:
                ref.backend(llm.tokenize(result, special=False))
        f.yield_turn()  # the user took the floor after chunk 4: the reference's forced listen in that unit
        ref.forced_listen()
        ref.finalize()
        check(recorder.log, ref.seq)
        assert llm.n_past == len(recorder.log)
        # What the loop reported agrees: the result injected after the listen unit is what the next turn speaks.
        assert out[2].info["injected"] == ["w:r1"] and out[3].backend_id == "w:r1"
        assert out[1].turn_end and out[1].text == words and len(out[3].tokens) == CHUNK_CAP
    finally:
        f.close()


def check_one_listening_unit(bundle, recorder, frames: list[Frame], slices: list[int], **settings) -> None:
    """One chunk with `frames`, forced to listen, against the reference's unit with `slices` per frame."""
    f = VenusFrontend(bundle, VenusSettings.from_dict({**SETTINGS, **settings, "forced": {"*": ["<|listen|>"]}}))
    recorder.watch(f)
    try:
        ref = reference(f.llm)
        out = f.step(Chunk(0, 0, NS, speechy(1.0), frames))
        ref.prefill(slices, 1.0)
        ref.generate(out.tokens)
        ref.finalize()
        check(recorder.log, ref.seq)
    finally:
        f.close()


def test_a_frame_of_several_slices_is_marked_slice_by_slice(exported_omni_bundle, recorder):
    # twice as wide as 448: the view + 2 slices
    check_one_listening_unit(exported_omni_bundle, recorder, frame(0, 896, 448), [3], max_slices=4)


def test_every_frame_queued_with_a_chunk_enters_its_unit(exported_omni_bundle, recorder):
    two = [Frame(0, np.full((42, 56, 3), 40, np.uint8)), Frame(NS // 2, np.full((42, 56, 3), 90, np.uint8))]
    check_one_listening_unit(exported_omni_bundle, recorder, two, [1, 1])


def test_typed_text_and_the_prompt_enter_the_next_unit_after_its_media(exported_omni_bundle, recorder):
    from edge.frontend.venus.frontend import build
    from edge.protocol.strip import strip_protocol_tokens

    f = build({"frontend_arg": str(exported_omni_bundle), "prompt": "Describe the room.",
               "venus": {**SETTINGS, "forced": {"*": ["<|listen|>"]}}})
    recorder.watch(f)
    try:
        ref = reference(f.llm)
        for k, typed in ((0, "Describe the room."), (1, None), (2, "What colour is the <|speak|> wall?")):
            if k == 2:
                assert f.type_text(typed)
            out = f.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            ref.prefill([], 1.0)
            if typed:  # plain text: a protocol token typed by the user is text, never the token
                ref.typed(f.llm.tokenize(strip_protocol_tokens(typed).strip(), special=False))
            ref.generate(out.tokens)
            ref.finalize()
        check(recorder.log, ref.seq)
    finally:
        f.close()


def test_audio_context_follows_the_reference_rules(exported_audio_bundle, recorder):
    f = VenusFrontend(exported_audio_bundle, VenusSettings.from_dict({
        **SETTINGS, "forced": {0: ["<|listen|>"], 1: ["<|speak|>", "Hi", "<|turn_eos|>"]}}))
    recorder.watch(f)
    try:
        ref = reference(f.llm)
        for k in range(2):
            out = f.step(Chunk(k, k * NS, (k + 1) * NS, speechy(1.0, seed=k)))
            ref.prefill([], 1.0)
            ref.generate(out.tokens)
            ref.finalize()
        check(recorder.log, ref.seq)
    finally:
        f.close()
