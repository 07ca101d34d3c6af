"""The main command answers spoken arithmetic right in voices the bundled example does not use.

`venus-edge --mic question.wav --speaker reply.wav --fast` (the CLI's own parser, in this process), with the
question spoken by espeak-ng voices other than the example's; the reply is judged from its recording.
"""
from __future__ import annotations

import numpy as np
import pytest

from edge.audio_format import RATE
from edge.bench import spoken
from edge.cli import main as venus_edge
from edge.language.spoken_math import numbers_in

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("voice, question, operands, answer", [
    ("en-us+f3", "Hey there. What is three plus four?", {3, 4}, 7),
    ("en-gb+m3", "What is twelve times seven?", {12, 7}, 84),
    # a user's report: heard "what time time 6" and answered "The time 6 is 12:00 PM." before the number reading
    ("en-gb-x-rp", "Could you tell me what nine times six is?", {9, 6}, 54),
    ("en-us+klatt2", "What is three plus four?", {3, 4}, 7),  # "three" was heard "free"
])
def test_the_main_command_answers_spoken_arithmetic(tmp_path, transcriber, voice, question, operands, answer):
    clip = spoken.say(question, voice, 150)
    silence = np.zeros(RATE // 2, np.float32)
    mic = spoken.write(tmp_path / "question.wav", np.concatenate([silence, 0.8 * clip, np.zeros(8 * RATE, np.float32)]))
    reply = tmp_path / "reply.wav"
    assert venus_edge(["--mic", str(mic), "--speaker", str(reply), "--fast", "--journal",
                       str(tmp_path / "s.journal")]) == 0
    import soundfile as sf
    from kernels.resample import resample

    audio, rate = sf.read(str(reply), dtype="float32")
    heard = transcriber.transcribe(resample(audio, rate, RATE).astype(np.float32))
    # The answer is said, and no other number than the question's own (a repeated question is fine, a wrong sum
    # is not); on a loaded machine the reply can restate the question after its answer.
    said = set(numbers_in(heard))
    assert answer in said and said <= operands | {answer}, heard
