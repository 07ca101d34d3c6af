"""Live, a reply's first piece may be its first few words: the voice starts on them while the rest of the
sentence is decoded, and the rest follows as the next piece, the words unchanged."""
from __future__ import annotations

from edge.frontend.default.reply import ACKNOWLEDGEMENT, Reply


class Tokens:
    """A decoded reply, a token at a time, as the chat model's stream hands it out."""

    def __init__(self, pieces: list[str]) -> None:
        self.pieces, self.text, self.finished, self.tokens = list(pieces), "", False, []

    def next(self) -> str:
        if not self.pieces:
            self.finished = True
            return ""
        piece = self.pieces.pop(0)
        self.text += piece
        self.tokens.append(len(self.tokens))
        return piece

    def close(self) -> None:
        self.finished = True


BERLIN = ["The", " capital", " of", " Germany", " is", " Berlin", ".", " It", " is", " big", "."]


def pieces(reply: Reply) -> list[str]:
    said = []
    while not reply.finished:
        said.append(reply.next_piece(32).text)
    return said


def test_live_the_first_few_words_are_said_before_their_sentence_is_decoded():
    stream = Tokens(BERLIN)
    reply = Reply(stream, first_words=True)
    first = reply.next_piece(32)
    assert first.text == "The capital of Germany"
    assert stream.text == "The capital of Germany is", "decoded on to the end of the sentence first"
    assert reply.opening  # the rest of the first sentence is still awaited: it is decoded as the first piece was
    assert reply.next_piece(32).text == "is Berlin." and not reply.opening
    assert pieces(reply) == ["It is big."]


def test_without_it_the_first_piece_is_the_whole_sentence():
    assert pieces(Reply(Tokens(BERLIN))) == ["The capital of Germany is Berlin.", "It is big."]


def test_a_short_sentence_and_a_holding_phrase_are_said_whole():
    assert pieces(Reply(Tokens(["2", " plus", " 2", " is", " 4", "."]), first_words=True)) == ["2 plus 2 is 4."]
    span = ["<delegate>", "Find the time in Tokyo.", "</delegate>", " Let", " me", " check", " the", " time", " in",
            " Tokyo", " for", " you", "."]
    said = pieces(Reply(Tokens(span), first_words=True))
    assert said == [ACKNOWLEDGEMENT, "Let me check the time in Tokyo for you."]
