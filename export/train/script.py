"""What is said in a synthetic session: the questions, the fixed replies, delegate instructions, frames.

Every question has one reply. Routine questions are answered aloud; the
"needs outside knowledge" ones are answered with a delegate span holding a
fixed instruction and a short spoken holding line; Omni's frame questions are
answered with the colour of the shape on screen. Words come
mostly from the tiny tokenizer's training words, so most are one token.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    key: str
    text: str  # what the user says
    reply: str = ""  # what the model says back ({colour} and {shape} filled from the frame)
    delegate: str = ""  # the fixed instruction of the delegate span, for questions needing outside knowledge
    frame: bool = False  # the answer depends on the frame on screen (Omni)


LOCAL = (
    Question("greet", "Hello, how are you today?", "Hello, my friend. I have a good day. Tell me about your day."),
    Question("name", "What is your name?", "My name is Venus. I can listen and speak for you."),
    Question("story", "Please tell me a short story.",
             "A small child had an old book about music. It was a good story for the child."),
    Question("help", "Can you help me with my work?", "Yes, sure. Tell me about the work. I will do it with you."),
    Question("able", "What can you do for me?", "I can listen and speak. I can find things and check them for you."),
    Question("thanks", "Thank you very much.", "You are a good friend. It was good to speak with you."),
)

OUTSIDE = (
    Question("weather", "What will the weather be tomorrow?", "I will check the weather.",
             "Check the weather for tomorrow."),
    Question("news", "What is in the news today?", "Okay, I will find it.", "Find the news of today."),
    Question("train", "When does the next train leave?", "Sure, I will check.", "Find the next train."),
    Question("call", "Please call my mother.", "I will call her.", "Call the mother of the user."),
    Question("bank", "How much money is in my bank account?", "I will check your money.",
             "Check the money of the user."),
)

FRAME = (
    Question("colour", "What colour is this?", "It is {colour}.", frame=True),
    Question("see", "What do you see?", "There is something {colour}.", frame=True),
)

# Short acknowledgements said over the model's reply: it keeps talking.
BACKCHANNELS = ("Yeah.", "Uh huh.", "Mm hmm.", "Right.", "Okay.", "I see.")
# A barge-in opens with one of these and goes on with a new question.
INTERRUPT_OPENERS = ("Wait,", "Sorry,", "Stop,", "No no,", "Hold on,")

# Results the harness could return for each outside question; the model speaks the one in context.
RESULTS = {
    "weather": ("Tomorrow will be warm with a lot of sun.", "It will rain all day tomorrow."),
    "news": ("The city will open a new school next week.", "The big game was won by the home team."),
    "train": ("The next train leaves at five in the evening.", "The next train leaves in ten minutes."),
    "call": ("Your mother did not answer the call.", "The call to your mother is open now."),
    "bank": ("Your account has two hundred dollars.", "There is a lot of money in your account."),
}

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 60), "blue": (40, 70, 220), "yellow": (235, 215, 40),
           "white": (245, 245, 245), "black": (15, 15, 15)}
SHAPES = ("circle", "square", "triangle")


def questions(variant: str) -> tuple[Question, ...]:
    return LOCAL + OUTSIDE + (FRAME if variant == "omni" else ())


def by_key(variant: str) -> dict[str, Question]:
    return {q.key: q for q in questions(variant)}


def reply_text(q: Question, colour: str = "", shape: str = "") -> str:
    return q.reply.format(colour=colour, shape=shape) if q.frame else q.reply
