"""Whether a chunk decision is the user asking something new (the harness drops stale work by it, and the
frontend node drops a stale answer it still holds by the same rule), or telling the assistant to stop."""
from __future__ import annotations

from edge import messages as m
from edge.bargein import words as heard


def asked_anew(msg: m.ChunkDecision) -> int | None:
    """When the frontend heard the user ask something new in this decision, where the user's turn ended.

    Only a frontend that transcribes says so (`user_text`, `user_end_ns`); "mm-hm", "stop" or speech the
    barge-in judge let the reply go on past are no new question.
    """
    end = msg.info.get("user_end_ns")
    said = heard.words(msg.user_text)
    if end is None or not said or heard.only_filler(said) or heard.only_stop(said):
        return None
    if msg.info.get("barge_in", {}).get("decision") in heard.GO_ON:
        return None
    return int(end)


# Words that ask the assistant to give up, not only to pause: "hold on" or "wait a second" keep the work.
GIVE_UP = frozenset({"stop", "cancel", "enough", "quiet", "shush", "hush", "shut"})


def asked_to_stop(msg: m.ChunkDecision) -> int | None:
    """When the user's turn in this decision was only "stop" ("Stop.", "Stop, please.", "Enough."), where it
    ended, or where the interrupt it made was decided: the harness gives up the work of the request it cut short."""
    said = heard.words(msg.user_text)
    end = msg.info.get("user_end_ns")
    if end is None and msg.interrupt and msg.info.get("barge_in"):
        end = msg.info["barge_in"].get("decided_ns")
    if end is None or not heard.only_stop(said) or not any(w in GIVE_UP for w in said):
        return None
    return int(end)
