"""Retrieval: text and time match over descriptions, MAD-weighted MaxSim over tokens, near repeats discounted."""
from __future__ import annotations

import numpy as np

from edge.memory.answer import answer
from edge.memory.archive import Entry
from edge.memory.retrieve import (description_similarity, maxsim_scores, query_time, select, text_scores,
                                  token_similarity)


def entries(*items: tuple[float, str]) -> list[Entry]:
    return [Entry(i, t, "keep", d) for i, (t, d) in enumerate(items)]


def test_times_in_questions():
    assert query_time("what word was on the screen at minute 12?", now=3600) == 720
    assert query_time("what did you see ten minutes ago?", now=3600) == 3000
    assert query_time("what was shown at 12:30?", now=3600) == 750
    assert query_time("what was shown at 1:02:03?", now=9000) == 3723
    assert query_time("where did I put my keys?", now=3600) is None


def test_a_word_in_the_question_finds_its_frame():
    es = entries((10, "text: KITCHEN"), (20, "text: KEYS ON THE TABLE"), (30, "text: GARAGE"), (40, ""))
    picks = select(es, text_scores("where did I put my keys?", es, now=60), description_similarity(es))
    assert picks[0].entry.description == "text: KEYS ON THE TABLE"


def test_near_repeats_are_discounted_for_a_different_scene():
    # Five kept frames of one static scene around minute 12 and one other scene a little further away.
    es = entries(*[(715.0 + i, "text: ZEBRA") for i in range(5)], (760.0, "text: OTTER"), (2000.0, "text: LLAMA"))
    rel = text_scores("what word was on the screen at minute 12?", es, now=3600)
    picks = select(es, rel, description_similarity(es), k=3)
    assert picks[0].entry.description == "text: ZEBRA"
    assert picks[1].entry.description == "text: OTTER"       # not a second ZEBRA
    plain = [es[i].description for i in np.argsort(-rel)[:3]]
    assert plain == ["text: ZEBRA"] * 3                      # what ranking alone would give


def test_maxsim_weights_query_tokens_that_tell_frames_apart():
    rng = np.random.default_rng(0)
    d = 32
    generic = rng.normal(size=(4, d))                         # tokens present in every frame (background)
    concepts = rng.normal(size=(6, d))
    frames = [np.vstack([generic, concepts[i] + 0.1 * rng.normal(size=d), rng.normal(size=(3, d))])
              for i in range(6)]
    frames[4] = np.vstack([frames[4], concepts[2] + 0.4 * rng.normal(size=d)])  # concept 2 again, elsewhere
    frames.append(frames[2] + 0.01 * rng.normal(size=frames[2].shape))  # a near repeat of frame 2
    # The question mentions concept 2 once and the background many times over.
    query = np.vstack([generic, generic, concepts[2]])
    scores = maxsim_scores(query, frames)
    assert set(np.argsort(-scores)[:2]) == {2, 6}
    # Without MAD weighting the background tokens (best cosine 1 in every frame) drown the concept.
    q = query / np.linalg.norm(query, axis=1, keepdims=True)
    flat = np.array([(q @ (f / np.linalg.norm(f, axis=1, keepdims=True)).T).max(axis=1).mean() for f in frames])
    assert flat.max() - np.sort(flat)[-3] < scores.max() - np.sort(scores)[-3]
    es = entries(*[(float(i), "") for i in range(7)])
    assert scores[6] > scores[4]
    picks = select(es, scores, token_similarity(frames), k=2)
    assert picks[0].entry.id in (2, 6) and picks[1].entry.id == 4  # the repeat is discounted below the new view


def test_the_answer_names_what_the_best_pick_showed_and_when():
    es = entries((725.0, "text: ZEBRA; faces: 2"), (1800.0, "faces: 0"))
    picks = select(es, text_scores("what word was on the screen at minute 12?", es, now=3600),
                   description_similarity(es))
    said = answer("what word was on the screen at minute 12?", picks)
    assert said == 'At 12:05 I saw the text "ZEBRA" and two faces.'
    assert answer("what was there?", picks[1:]) == "I have nothing in memory that matches that."  # no text, no face
    assert answer("anything?", []) == "My memory is empty."
