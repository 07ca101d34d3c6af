"""The short sentences that ask back instead of answering what was probably misheard."""
from __future__ import annotations

NOT_CAUGHT = "Sorry, I didn't catch that."


def did_you_say(guess: str) -> str:
    """'Did you say six times eight?': the likely reading, asked back rather than answered."""
    return f"Did you say {guess.strip().rstrip('?.!')}?"
