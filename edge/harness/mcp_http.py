"""MCP over HTTP (streamable HTTP, or SSE where a server still uses it) with a bearer token kept out of the JSON.

Config: `{"name": "home", "url": "http://homeassistant.local:8123/api/mcp", "token_env": "HA_TOKEN"}`
or `"token_file": "/run/secrets/ha_token"`; `"transport": "sse"` for the older SSE servers (read as
edge/harness/specs.py `McpHttp`, where a token written in the settings is refused).
"""
from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from edge.harness.specs import McpHttp


def bearer_token(spec: McpHttp) -> str | None:
    """The token named by `token_env` or `token_file`; ValueError (one sentence) when it is missing."""
    name = spec.name
    if spec.token_env:
        token = os.environ.get(spec.token_env, "").strip()
        if not token:
            raise ValueError(f"the MCP server {name} needs the token in the environment variable "
                             f"{spec.token_env}, which is not set")
        return _one_line(token, f"the environment variable {spec.token_env}", name)
    if spec.token_file:
        path = Path(spec.token_file).expanduser()
        try:
            token = path.read_text().strip()
            mode = path.stat().st_mode & 0o777
        except (OSError, UnicodeDecodeError):
            raise ValueError(f"the MCP server {name} needs its token in {path}, which cannot be read") from None
        if not token:
            raise ValueError(f"the token file {path} of the MCP server {name} is empty")
        if mode & 0o077:  # a secret others can read is refused, as ssh refuses such a key
            raise ValueError(f"the token file {path} of the MCP server {name} can be read by other users (mode "
                             f"{mode:04o}); make it private with `chmod 600 {path}`")
        return _one_line(token, f"the token file {path}", name)
    return None


def _one_line(token: str, where: str, name: str) -> str:
    """A token with a line break or another control character would split the HTTP header, and the error
    raised for that quotes the header, token and all; refused here without showing it."""
    if any(ord(c) < 32 or ord(c) == 127 for c in token):
        raise ValueError(f"the token of the MCP server {name} in {where} holds a line break or another control "
                         "character; a token is one line of printable text")
    return token


@asynccontextmanager
async def http_streams(spec: McpHttp, token: str | None,
                       refused: list[int]) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams to the server at `spec.url`, each request limited to `spec.timeout_s`; HTTP error
    statuses are appended to `refused` (the SDK turns a 401 into a generic error, and the status is what tells a bad
    token from a broken server)."""
    import httpx2

    async def note(response: Any) -> None:
        if response.status_code >= 400:
            refused.append(response.status_code)

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout_s = spec.timeout_s
    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(spec.url, headers=headers, timeout=timeout_s) as streams:
            yield streams[0], streams[1]
        return
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(timeout_s, read=max(timeout_s, 60.0))
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks={"response": [note]}) as client:
        async with streamable_http_client(spec.url, http_client=client) as streams:
            yield streams[0], streams[1]


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups and their causes."""
    if isinstance(getattr(exc, "exceptions", None), tuple):  # an exception group (3.11+, or anyio's backport)
        return [leaf for e in exc.exceptions for leaf in leaves(e)]
    out = [exc]
    if exc.__cause__ is not None:
        out += leaves(exc.__cause__)
    return out


def lost(exc: BaseException, refused: list[int]) -> bool:
    """Whether a failed call means the connection is gone (reconnect) rather than the tool failing."""
    names = {type(e).__name__ for e in leaves(exc)}
    return bool(refused) or bool(names & {"ConnectError", "ConnectTimeout", "ReadError", "RemoteProtocolError",
                                          "ConnectionRefusedError", "ClosedResourceError", "BrokenResourceError",
                                          "EndOfStream"}) or "connect" in str(exc).lower()


def why(name: str, exc: BaseException, refused: list[int] | None = None) -> str:
    """One sentence for a server that could not be reached or refused us."""
    found = leaves(exc)
    text = " ".join(f"{type(e).__name__} {e}" for e in found)
    status = next((getattr(getattr(e, "response", None), "status_code", None) for e in found
                   if getattr(getattr(e, "response", None), "status_code", None)), None)
    status = status or (refused[-1] if refused else None)
    if status in (401, 403) or "401" in text or "Unauthorized" in text or "invalid_token" in text:
        return f"the {name} server refused the access token; check the token it is given"
    if any(type(e).__name__ in ("ConnectError", "ConnectTimeout", "ConnectionRefusedError", "OSError")
           for e in found) or "connect" in text.lower():
        return f"the {name} server cannot be reached"
    if status:
        return f"the {name} server answered with HTTP status {status}"
    leaf = found[-1]
    return f"the {name} server failed ({type(leaf).__name__}: {str(leaf)[:120]})"
