"""Secrets never reach a journal: the recorded session config keeps their names, never their values.

Journals are attached to bug reports. An MCP server's `env` (where tokens are passed) and any
setting named like a token, secret, password or API key is replaced by a marker; everything else
stays, so replay still knows how the session was set up.
"""
from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
# Matched against a name's words (`HF_TOKEN`, `apiKey`, `db-password`), so `max_tokens` stays a number.
_SECRET_WORDS = {"token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "apikey",
                 "authorization", "cookie", "privatekey"}
_SECRET_BLOCKS = {"env", "headers"}  # whole maps of values handed to other programs or servers


def is_secret_name(name: str) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    if words and words[-1] in {"file", "path", "env", "var"}:
        return False  # a reference to where the secret lives (a file, an env var) is safe to keep
    pairs = {a + b for a, b in zip(words, words[1:])}  # api_key -> apikey, private_key -> privatekey
    return bool(_SECRET_WORDS & (set(words) | pairs))


def redact(value: Any) -> Any:
    """A copy of `value` with every secret value replaced by REDACTED (keys are kept)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and k in _SECRET_BLOCKS and isinstance(v, dict):
                out[k] = {name: REDACTED for name in v}
            elif isinstance(k, str) and is_secret_name(k) and v not in (None, "", {}, []):
                out[k] = REDACTED
            else:
                out[k] = redact(v)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value
