"""The one protocol-token stripper: text from outside the model can never open or close a span.

Every text that reaches a model from outside it (a harness result, a transcript,
a tool's output) goes through `strip_protocol_tokens` first; the rules are in
docs/protocol.md ("Stripping").
"""
from __future__ import annotations

import re
import unicodedata

# Protocol tags written as text, with any spacing or case, plus any `<|...|>` special-token form.
_TAG = re.compile(r"<\s*/?\s*(?:delegate|backend|unit|image)\s*>", re.IGNORECASE)
_SPECIAL = re.compile(r"<\s*\|[^<>|\n]{0,40}\|\s*>")


def strip_protocol_tokens(text: str) -> str:
    """Remove every protocol token from text, so a tool result can never open or close a span.

    Look-alikes are folded first (full-width brackets, zero-width characters), and
    removal repeats until nothing changes ("<dele<backend>gate>" cannot reassemble).
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    while True:
        out = _SPECIAL.sub("", _TAG.sub("", text))
        if out == text:
            return out
        text = out
