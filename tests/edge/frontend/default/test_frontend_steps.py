"""The embedded default's chunk loop driven directly, chunk by chunk (no graph): turn-taking rules."""
from __future__ import annotations

import numpy as np

from edge.frontend.base import Chunk, ResultToSay
from edge.bench import spoken
from edge.frontend.default.reply import ACKNOWLEDGEMENT

NS = 1_000_000_000


class Feed:
    """Chunks of one timeline, with the chunk index carried on."""

    def __init__(self, fe) -> None:
        self.fe, self.k = fe, 0

    def run(self, audio: np.ndarray, ahead: list | None = None):
        """Step each chunk; with `ahead`, capture's pieces of it (80 ms at a time) go to `hear_ahead` first, as
        live, and what it drafts is collected there as (chunk, its boundary's index in the outputs, draft)."""
        outs = []
        for i in range(0, len(audio), 16000):
            piece = audio[i:i + 16000]
            piece = np.pad(piece, (0, 16000 - len(piece)))
            if ahead is not None:
                for n in range(1280, 16000, 1280):
                    got = self.fe.hear_ahead(Chunk(self.k, self.k * NS, self.k * NS + n * 62_500, piece[:n]))
                    if got is not None:
                        ahead.append((self.k, len(outs), n, got))
            outs.append(self.fe.step(Chunk(self.k, self.k * NS, (self.k + 1) * NS, piece)))
            self.k += 1
        return outs


def test_results_wait_for_an_idle_boundary_and_repeats_are_ignored(frontend):
    feed = Feed(frontend)
    feed.run(np.zeros(16000 * 3, np.float32))  # let any earlier playback estimate run out
    question, _ = spoken.timeline([(0.2, "What is two plus two?")], 2.0)
    frontend.deliver(ResultToSay("r1", "It is sunny in Paris <delegate>x</delegate> today."))
    frontend.deliver(ResultToSay("r1", "It is sunny in Paris today."))
    outs = feed.run(question)
    assert all(not o.backend_id for o in outs), "a result was spoken while the user was talking"
    later = feed.run(np.zeros(16000 * 12, np.float32))
    spoken_results = [o for o in outs + later if o.backend_id == "r1"]
    assert len(spoken_results) == 1
    r = spoken_results[0]
    assert r.control == "speak" and r.turn_end and "<" not in r.text and "sunny in Paris" in r.text
    # It came only after the reply to the question had finished (the reply is not cut short for it).
    reply_ends = [i for i, o in enumerate(outs + later) if o.turn_end and not o.backend_id]
    assert reply_ends and reply_ends[0] < (outs + later).index(r)


def test_a_filler_alone_is_not_answered(frontend):
    feed = Feed(frontend)
    feed.k = 100
    feed.run(np.zeros(16000 * 8, np.float32))
    audio, _ = spoken.timeline([(0.3, "Mm-hm.")], 3.0)
    outs = feed.run(audio)
    assert any(o.user_text for o in outs), "the filler was not heard at all"
    assert not any(o.text for o in outs)


def test_an_answer_back_while_the_holding_phrase_plays_is_spoken_in_its_place(frontend):
    feed = Feed(frontend)
    feed.k = 200
    feed.run(np.zeros(16000 * 8, np.float32))  # any earlier reply and its playback are over
    # A request the model delegates itself (the weather would go by rule, with no holding phrase of its own).
    question, _ = spoken.timeline([(0.2, "Find me a good pizza place near the station.")], 3.0)
    outs = feed.run(question)
    while not any(o.delegates for o in outs) and len(outs) < 8:
        outs += feed.run(np.zeros(16000, np.float32))
    delegating = next(o for o in outs if o.delegates)
    # An acknowledgement is said as soon as the span opens, before the span (and the words after it) are whole.
    first = next(o for o in outs if o.text)
    assert first.text == ACKNOWLEDGEMENT and outs.index(first) <= outs.index(delegating)
    assert first.info["llm_tokens"] < 8, "the span was decoded before the first word was said"
    while not any(o.text for o in outs[outs.index(first) + 1:]) and len(outs) < 10:
        outs += feed.run(np.zeros(16000, np.float32))
    assert any(o.text for o in outs[outs.index(first) + 1:]), "the model's own holding phrase after its span"
    frontend.deliver(ResultToSay("w1", "Luigi's on Station Road is open until ten."))
    # The next boundary, while the holding phrase still plays: the answer takes its place, playback is cut.
    k = feed.k
    out = frontend.step(Chunk(k, k * NS, (k + 1) * NS, np.zeros(16000, np.float32), playback_active=True))
    feed.k += 1
    assert out.backend_id == "w1" and out.cut_playback and not out.interrupt
    assert out.control == "speak" and out.turn_end and "Station Road" in out.text
    later = feed.run(np.zeros(16000 * 4, np.float32))
    assert not any(o.text for o in later), "the rest of the holding phrase was still spoken after the answer"
    # The conversation keeps the model's own text, span first: the acknowledgement is not put in its mouth
    # (it would learn to write "Okay." after its spans and say it twice).
    replied = [said for role, said in frontend.history if role == "assistant" and "<delegate>" in said][-1]
    assert replied.startswith("<delegate>") and f"</delegate> {ACKNOWLEDGEMENT}" not in replied


def _ending_before(feed: Feed, text: str, boundary_s: float, silence_ms: tuple[int, int], total_s: float):
    """`text` placed so that the frontend's own VAD (a copy, from where it is now) hears its last voice a short
    pause (in `silence_ms`) before `boundary_s` of the next chunks."""
    import copy

    from edge.detect.vad import FRAME_NS

    fe = feed.fe
    for start in np.arange(0.05, total_s, 0.008):
        try:
            audio, _ = spoken.timeline([(start, text)], total_s)
        except ValueError:  # it no longer fits
            break
        vad = copy.copy(fe.vad)
        vad._state, vad._context, vad._pending = fe.vad._state.copy(), fe.vad._context.copy(), fe.vad._pending.copy()
        last_voice = last = None
        for c in range(int(boundary_s)):
            frames = vad.feed(audio[c * 16000:(c + 1) * 16000], (feed.k + c) * NS)
            voiced = [f for f in frames if f.prob >= fe.s.threshold]
            last_voice = voiced[-1].t_start_ns + FRAME_NS if voiced else last_voice
            last = frames[-1].t_start_ns + FRAME_NS
        if last_voice is not None and silence_ms[0] <= (last - last_voice) / 1e6 < silence_ms[1]:
            return audio
    raise AssertionError(f"no placement of {text!r} pauses {silence_ms} ms before {boundary_s} s")


def test_a_question_whose_end_just_missed_a_boundary_is_answered_at_the_next_with_its_reply_ready(frontend):
    """The pause at a boundary was too short to end the turn: the reply is drafted there, so the next boundary
    (which ends the turn on the same words) speaks at once, with no prefill or decoding of its own."""
    feed = Feed(frontend)
    feed.k = 300
    feed.run(np.zeros(16000 * 8, np.float32))  # any earlier reply and its playback are over
    # The words end 40-90 ms before the boundary: less than the 96 ms that ends a question.
    outs = feed.run(_ending_before(feed, "What language is spoken in Spain?", 3.0, (40, 90), 3.0))
    drafted_at = outs[-1]
    assert "draft_ms" in drafted_at.info and not drafted_at.text and not drafted_at.user_text
    nxt = feed.run(np.zeros(16000, np.float32))[0]
    assert nxt.user_text and "spain" in nxt.user_text.lower()
    assert nxt.info.get("drafted") and "prefill_ms" not in nxt.info
    assert nxt.info["llm_ms"] == 0.0  # its compute was spent a chunk earlier
    assert nxt.control == "speak" and nxt.text, "the first words were not ready at the boundary"
    assert drafted_at.ahead == nxt.text  # the voice was handed them a chunk early, to make them ready
    later = feed.run(np.zeros(16000 * 6, np.float32))
    said = " ".join([nxt.text] + [o.text for o in later if o.text])
    assert "spanish" in said.lower(), said


def test_a_statement_drafted_in_its_pause_is_not_transcribed_again(frontend, monkeypatch):
    """A pause of 150 ms or more is heard whole at the boundary: the turn's end reuses that transcript too."""
    # The voice's statement is heard "Tell me and I'll come out cats." (-0.73 per token), which is asked back;
    # the drafting is what is checked here.
    monkeypatch.setattr(frontend.s, "ask_back", False)
    feed = Feed(frontend)
    feed.k = 350
    feed.run(np.zeros(16000 * 20, np.float32))
    outs = feed.run(_ending_before(feed, "Tell me a joke about cats.", 3.0, (160, 270), 3.0))
    assert "draft_ms" in outs[-1].info and "asr_ms" in outs[-1].info
    nxt = feed.run(np.zeros(16000, np.float32))[0]
    assert nxt.user_text and nxt.info.get("drafted") and nxt.info.get("asr_reused") and "asr_ms" not in nxt.info
    assert nxt.text or nxt.delegates


def test_a_draft_is_dropped_when_the_user_goes_on_after_the_pause(frontend):
    feed = Feed(frontend)
    feed.k = 400
    feed.run(np.zeros(16000 * 20, np.float32))  # the joke before and its playback are over
    # Not a question yet ("?" would end the turn at 96 ms): the pause is drafted, not answered.
    first = _ending_before(feed, "Please tell me", 2.0, (60, 180), 4.0)
    rest, _ = spoken.timeline([(2.25, "the capital of France.")], 4.0)
    outs = feed.run(first + rest)
    drafted = [i for i, o in enumerate(outs) if "draft_ms" in o.info]
    assert drafted, [(o.user_text, o.text, o.info) for o in outs]
    assert outs[drafted[0] + 1].info.get("draft_dropped"), "the draft outlived the words after it"
    heard = [o.user_text for o in outs if o.user_text]
    # The turn is the whole question, not its first half ("What is the capital, unfriends?" was heard).
    assert heard and len(heard[0].split()) >= 5, heard


def test_live_the_warm_up_waits_until_the_first_words_are_heard_playing(frontend, monkeypatch):
    """The prefill for the user's next turn does not take the CPU from the voice while it makes the words the
    user is waiting for: it runs at the first boundary where they are heard playing."""
    from edge.frontend.default import frontend as default

    monkeypatch.setattr(default, "VOICING_WAIT_S", 600.0)  # only hearing them playing ends the wait here
    feed = Feed(frontend)
    feed.k = 450
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies are over
    monkeypatch.setattr(frontend.s, "llm_budget", 100.0)  # live, with no real time limit on decoding
    audio, _ = spoken.timeline([(0.3, "What color is the sky?")], 3.0)
    outs = feed.run(audio) + feed.run(np.zeros(16000 * 3, np.float32))
    spoke = next(i for i, o in enumerate(outs) if o.text)
    assert not any("warm_ms" in o.info for o in outs[spoke:]), "warmed up while the first words were made"
    heard = frontend.step(Chunk(feed.k, feed.k * NS, (feed.k + 1) * NS, np.zeros(16000, np.float32),
                                playback_active=True))
    assert "warm_ms" in heard.info


def _ending_inside(text: str, at_s: float, total_s: float) -> np.ndarray:
    """`text` placed so that its clip ends `at_s` into a chunk (past the first second)."""
    _, marks = spoken.timeline([(0.2, text)], total_s)
    end = marks[0]["end_s"]
    shift = (at_s - end) % 1.0
    audio, _ = spoken.timeline([(0.2 + shift, text)], total_s)
    return audio


def test_a_question_ending_inside_a_chunk_is_answered_at_the_next_boundary_with_words_made_before_it(frontend):
    """Live, the user stops 0.3 s into a chunk: the transcript, the prefill and the first words are made from the
    pieces capture hands over, before the boundary; the boundary speaks them at once and reads nothing again."""
    feed = Feed(frontend)
    feed.k = 500
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    ahead: list = []
    outs = feed.run(_ending_inside("What is the capital of France?", 0.3, 4.0), ahead)
    assert len(ahead) == 1, ahead  # once, at the endpoint
    k, at, n, drafted = ahead[0]
    assert drafted.text and "france" in drafted.heard.lower()
    assert 150 <= drafted.info["endpoint_ms"] <= 300 and n * 62_500 / 1e6 <= 700  # well before the boundary
    said = outs[at]  # the very next boundary
    assert said.user_text == drafted.heard and said.control == "speak" and said.text == drafted.text
    assert said.info.get("asr_reused") and "asr_ms" not in said.info and "prefill_ms" not in said.info
    assert said.info["llm_ms"] == 0.0  # its compute was spent before the boundary
    assert said.info["drafted_ahead"]["before_boundary_ms"] >= 300
    assert not any(o.text for o in outs[:at]), "spoken before the boundary"
    later = feed.run(np.zeros(16000 * 6, np.float32))
    reply = " ".join([said.text] + [o.text for o in later if o.text])
    assert "paris" in reply.lower(), reply


def test_voice_after_the_endpoint_drops_the_words_made_there(frontend):
    """The user stops inside a chunk long enough for the words to be made, then goes on: they are not said,
    and the turn is the whole of what was said."""
    feed = Feed(frontend)
    feed.k = 600
    feed.run(np.zeros(16000 * 20, np.float32))
    first = _ending_inside("Please tell me", 0.15, 4.0)
    end = (np.nonzero(np.abs(first) > 1e-3)[0][-1] + 1) / 16000
    rest, _ = spoken.timeline([(end + 0.45, "the capital of France.")], 4.0)
    ahead: list = []
    outs = feed.run(first + rest, ahead) + feed.run(np.zeros(16000 * 2, np.float32))
    assert ahead, "nothing was drafted in the pause"
    k, at, n, drafted = ahead[0]
    assert outs[at].info.get("draft_dropped"), "the words made in the pause outlived the voice after it"
    assert not outs[at].text
    heard = [o.user_text for o in outs if o.user_text]
    assert heard and "capital" in heard[0].lower() and len(heard[0].split()) >= 5, heard


def test_a_sum_answered_by_the_harness_is_the_assistants_turn_and_the_next_question_is_answered_itself(frontend):
    """A rule's bare span stays out of the model's history: kept there, the 0.5B model delegated what came next
    and said the last answer again in place of a reply."""
    feed = Feed(frontend)
    feed.k = 700
    feed.run(np.zeros(16000 * 20, np.float32))
    sum_, _ = spoken.timeline([(0.2, "What is twelve times seven?")], 3.0)
    outs = feed.run(sum_)
    outs += feed.run(np.zeros(16000, np.float32))
    assert any(o.delegates and o.info.get("by_rule") for o in outs), [o.user_text for o in outs]
    frontend.deliver(ResultToSay("sum1", "12 times 7 is 84."))
    outs = feed.run(np.zeros(16000 * 4, np.float32))
    assert any(o.backend_id == "sum1" for o in outs)
    assert frontend.history[-1] == ("assistant", "12 times 7 is 84.")
    assert not any(role == "assistant" and "twelve times seven" in said.lower() for role, said in frontend.history)
    # With the span in its history, the model delegated this one and said "Okay." (tried as text, greedy).
    question, _ = spoken.timeline([(0.2, "Thanks. Who painted the Mona Lisa?")], 3.0)
    outs = feed.run(question) + feed.run(np.zeros(16000 * 6, np.float32))
    reply = " ".join(o.text for o in outs if o.text)
    assert not any(o.delegates for o in outs) and "vinci" in reply.lower() and "84" not in reply, reply


def test_a_result_back_at_an_idle_moment_is_known_ahead_in_the_words_its_boundary_says(frontend):
    """Live, the frontend node hands these words to the voice as the result comes (DraftAhead): they must be
    the very words the next boundary says, and nothing while the user is talking (it would wait for the turn)."""
    feed = Feed(frontend)
    feed.k = 750
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    result = ResultToSay("ahead1", "It's 6:39 in the morning <delegate>x</delegate> in Tokyo.")
    frontend.deliver(result)
    words = frontend.result_ahead(result)
    said = feed.run(np.zeros(16000, np.float32))[0]
    assert said.backend_id == "ahead1" and words and words == said.text
    question, _ = spoken.timeline([(0.2, "What is two plus two?")], 3.0)
    feed.run(question[:16000])  # the user is still talking at this boundary
    later = ResultToSay("ahead2", "The oven timer is done.")
    frontend.deliver(later)
    assert frontend.result_ahead(later) == ""
    frontend.withdraw("ahead2")
    feed.run(question[16000:])
    feed.run(np.zeros(16000 * 8, np.float32))


def test_live_a_boundary_while_the_user_is_still_talking_reads_once_and_the_endpoint_reads_the_turn(frontend):
    """Live, words still being said are read at one boundary only (for the prefill), not again at the later
    ones (a recognition running when the user stops would hold up the work at the endpoint by as long)."""
    feed = Feed(frontend)
    feed.k = 800
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    ahead: list = []
    question = "How many legs does a spider have and how many eyes does it have?"
    outs = feed.run(_ending_inside(question, 0.35, 6.0), ahead)
    k, at, n, drafted = ahead[-1]
    read = [i for i, o in enumerate(outs[:at]) if "asr_ms" in o.info]
    during = [o for o in outs[read[0] + 1 if read else 0:at] if o.info.get("read_at_endpoint")]
    assert read and during, "a boundary late in the turn read the words still being said again"
    said = outs[at]
    assert "spider" in drafted.heard.lower() and said.user_text == drafted.heard and said.text == drafted.text
    feed.run(np.zeros(16000 * 8, np.float32))


def test_live_the_first_few_words_are_said_at_once_and_the_rest_is_ready_before_the_next_boundary(frontend,
                                                                                                  monkeypatch):
    """Live, the reply's first piece is its first few words (the voice starts on them sooner); the rest of the
    sentence is decoded while they play, before the next boundary, and handed to the voice to be made ready."""
    from edge.frontend.default import drafting

    feed = Feed(frontend)
    feed.k = 850
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    monkeypatch.setattr(frontend.s, "llm_budget", 100.0)  # live, with no real time limit on decoding
    monkeypatch.setattr(drafting, "ENDPOINT_BUDGET_S", 100.0)
    ahead: list = []
    outs = feed.run(_ending_inside("What is the capital of France?", 0.3, 3.0), ahead)
    k, at, n, drafted = ahead[0]
    first = outs[at]
    assert first.text == drafted.text and len(first.text.split()) <= 5 and first.text[-1] not in ".!?", first.text
    assert at == len(outs) - 1, "the question was placed to end in the last chunk"
    # The next chunk, while the first words are heard playing: the rest is decoded before its boundary.
    k = feed.k
    quiet = np.zeros(16000, np.float32)
    got = [frontend.hear_ahead(Chunk(k, k * NS, k * NS + n * 62_500, quiet[:n], playback_active=True))
           for n in range(1280, 16000, 1280)]
    rest = [a for a in got if a is not None]
    assert len(rest) == 1 and rest[0].text, "the rest of the reply waited for its boundary to be decoded"
    nxt = frontend.step(Chunk(k, k * NS, (k + 1) * NS, quiet, playback_active=True))
    feed.k += 1
    assert nxt.text == rest[0].text and nxt.info["llm_ms"] == 0.0
    later = feed.run(np.zeros(16000 * 6, np.float32))
    reply = " ".join([first.text, nxt.text] + [o.text for o in later if o.text])
    assert "paris" in reply.lower(), reply


def test_the_history_is_trimmed_while_nobody_waits_not_at_the_end_of_the_turn_that_outgrows_it(frontend):
    """The turn that would make the history too long does not pay for prefilling the trimmed prompt: the idle
    boundary before it trimmed and prefilled it (the prompt is the same as trimming at the turn gives)."""
    feed = Feed(frontend)
    feed.k = 900
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    frontend.history = [turn for i in range(frontend.s.history_turns)
                        for turn in (("user", f"Say the number {i}."), ("assistant", f"The number is {i}."))]
    frontend.warm = False
    feed.run(np.zeros(16000 * 3, np.float32))  # idle boundaries: the cache is warmed up for the next turn
    outs = feed.run(_ending_inside("What is the capital of France?", 0.3, 4.0))
    turn = next(o for o in outs if o.user_text)
    assert turn.info["prefill_tokens"] < 20, turn.info
    history = [text for _, text in frontend.history]
    assert "Say the number 6." in history and "Say the number 5." not in history
    feed.run(np.zeros(16000 * 6, np.float32))  # the reply is said


def test_live_the_warm_up_waits_while_a_delegated_answer_is_awaited(frontend, monkeypatch):
    """A question the harness answers by rule: the boundaries until the answer is back do not prefill the next
    turn (a prefill running when the answer comes back holds up its words); once it is said, they do."""
    feed = Feed(frontend)
    feed.k = 950
    feed.run(np.zeros(16000 * 20, np.float32))  # earlier replies and their playback are over
    monkeypatch.setattr(frontend.s, "llm_budget", 100.0)  # live, with no real time limit on decoding
    question, _ = spoken.timeline([(0.2, "What time is it in Tokyo?")], 3.0)
    outs = feed.run(question) + feed.run(np.zeros(16000 * 3, np.float32))
    assert any(o.delegates and o.info.get("by_rule") for o in outs), [o.user_text for o in outs]
    assert not any("warm_ms" in o.info for o in outs), "warmed up while the answer was awaited"
    frontend.deliver(ResultToSay("tokyo1", "It's 7:57 in the morning on Monday in Tokyo."))
    said = feed.run(np.zeros(16000, np.float32))[0]
    assert said.backend_id == "tokyo1"
    monkeypatch.setattr(frontend, "voiced_at", None)
    later = feed.run(np.zeros(16000 * 2, np.float32))
    assert any("warm_ms" in o.info for o in later)
