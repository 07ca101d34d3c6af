"""Every tool of the configured MCP servers as a capability (the `mcp` SDK; stdio, streamable HTTP or SSE).

Config: `{"name": "files", "command": "python3", "args": ["server.py"], "env": {...}, "timeout_s": 20}`
or `{"name": "home", "url": "http://127.0.0.1:8123/api/mcp", "token_env": "HA_TOKEN"}` (see mcp_http), each read
once as edge/harness/specs.py `McpStdio` or `McpHttp` (its defaults are there).
Each server's session lives in one task on a private event loop thread (the
SDK's context managers must open and close in the same task); tool calls
from worker threads are submitted to that loop. A server is started once and
kept running between calls; an HTTP server that is down or drops its session
is reconnected every `retry_s`, and its tools come back (or appear) when it does.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Callable

from edge.harness.capability import CapabilityError, Outcome, RunContext
from edge.harness.mcp_http import bearer_token, http_streams, lost, why
from edge.harness.specs import McpHttp, McpSpec
from edge.language.say import say, say_text
from edge.tether import tethered

log = logging.getLogger(__name__)


def spoken_result(result: Any, tool: str, question: str) -> str:
    """A tool's answer in words: JSON text or structured content said by rules, never read as markup."""
    texts = [getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text"]
    text = " ".join(t for t in texts if t).strip()
    if result.is_error:
        said = say_text(text, question, tool)[:200]
        raise CapabilityError(f"the {tool} tool reported an error: {said or 'no details'}")
    if result.structured_content is not None and (not text or text[:1] in "{["):
        return say(result.structured_content, question, tool)
    return say_text(text, question, tool)


class McpTool:
    def __init__(self, server: "McpServer", tool: Any) -> None:
        self.server = server
        self.tool_name = tool.name
        self.name = f"{server.name}.{tool.name}"
        self.description = tool.description or f"The {tool.name} tool of {server.name}."
        self.instructions = ""
        self.schema: dict[str, Any] = dict(getattr(tool, "input_schema", None) or {"type": "object"})
        self.timeout_s = server.timeout_s

    def run(self, arguments: dict[str, Any], ctx: RunContext) -> Outcome:
        return Outcome(self.server.call(self.tool_name, arguments, ctx))


class McpServer:
    def __init__(self, loop: asyncio.AbstractEventLoop, spec: McpSpec,
                 on_tools: Callable[["McpServer"], None] = lambda server: None) -> None:
        self.loop = loop
        self.name = spec.name
        self.spec = spec
        self.remote = isinstance(spec, McpHttp)
        self.token = bearer_token(spec) if isinstance(spec, McpHttp) else None  # ValueError: one sentence
        self.timeout_s = spec.timeout_s
        self.on_tools = on_tools
        self.session: Any = None
        self.tools: list[Any] = []
        self.problem = ""  # why it is not connected, one sentence
        self.refused: list[int] = []  # HTTP error statuses seen on the current connection
        self._stopping = False
        self._wake: asyncio.Event | None = None
        self._task: concurrent.futures.Future | None = None

    def start(self, timeout_s: float) -> None:
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._task = asyncio.run_coroutine_threadsafe(self._serve(ready), self.loop)
        try:
            ready.result(timeout_s)
        except concurrent.futures.TimeoutError:
            if not self.remote:
                self.stop()
            raise RuntimeError(f"MCP server {self.name} did not answer within {timeout_s:.0f} s") from None

    def _streams(self) -> Any:
        spec = self.spec
        if isinstance(spec, McpHttp):
            self.refused = []
            return http_streams(spec, self.token, self.refused)
        from mcp import StdioServerParameters, stdio_client

        # Started from the loop's thread, which lives as long as the server: it dies with the harness.
        command = tethered([spec.command, *spec.args])
        return stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=spec.env, cwd=spec.cwd))

    async def _serve(self, ready: concurrent.futures.Future) -> None:
        from mcp import ClientSession

        self._wake = asyncio.Event()
        while not self._stopping:
            try:
                async with self._streams() as streams:
                    async with ClientSession(streams[0], streams[1]) as session:
                        await session.initialize()
                        self.tools = list((await session.list_tools()).tools)
                        self.session, self.problem = session, ""
                        if ready.done():
                            log.info("MCP server %s is back", self.name)
                            self.on_tools(self)
                        else:
                            ready.set_result(True)
                        await self._wake.wait()  # stop(), or a call found the connection broken
                        self._wake.clear()
            except BaseException as exc:  # noqa: BLE001  (told once, in words; the loop retries)
                if isinstance(exc, asyncio.CancelledError) and self._stopping:
                    break
                problem = (why(self.name, exc, self.refused) if self.remote
                           else f"MCP server {self.name} failed to start ({exc})")
                if not ready.done():
                    ready.set_exception(RuntimeError(problem))
                elif problem != self.problem:
                    log.warning("%s", problem)
                self.problem = problem
            finally:
                self.session = None
            if not isinstance(self.spec, McpHttp) or self._stopping:
                break
            try:  # wait before reconnecting; stop() ends the wait
                await asyncio.wait_for(self._wake.wait(), self.spec.retry_s)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()

    def _broken(self) -> None:
        if self._wake is not None:
            self.loop.call_soon_threadsafe(self._wake.set)

    def call(self, tool: str, arguments: dict[str, Any], ctx: RunContext) -> str:
        session = self.session
        if session is None:
            raise CapabilityError(self.problem or f"the {self.name} tool server is not running")
        fut = asyncio.run_coroutine_threadsafe(
            session.call_tool(tool, arguments, read_timeout_seconds=self.timeout_s), self.loop)
        ctx.on_cancel.append(fut.cancel)
        try:
            result = fut.result(self.timeout_s + 1)
        except concurrent.futures.CancelledError:
            raise CapabilityError("the task was cancelled") from None
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise CapabilityError(f"the {tool} tool did not answer in time") from None
        except Exception as exc:  # protocol errors from the server, or a dropped connection
            if self.remote and lost(exc, self.refused):
                self.problem = why(self.name, exc, self.refused)
                self._broken()  # reconnect, so the next call finds the server if it is back
                raise CapabilityError(self.problem) from None
            raise CapabilityError(f"the {tool} tool failed ({str(exc)[:160]})") from None
        return spoken_result(result, tool, ctx.instruction)

    def stop(self) -> None:
        self._stopping = True
        self._broken()
        if self._task is not None:
            try:
                self._task.result(5)
            except Exception:  # noqa: BLE001  (already logged by _serve)
                pass


class McpHub:
    """Starts the configured servers and exposes their tools; `close()` stops them all.

    `on_tools(tools)` is called with a server's tools when an HTTP server that was down comes up later.
    """

    def __init__(self, specs: list[McpSpec], start_timeout_s: float = 20.0,
                 on_tools: Callable[[list["McpTool"]], None] = lambda tools: None) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp-loop", daemon=True)
        self.thread.start()
        self.servers: list[McpServer] = []
        self.problems: list[str] = []
        self.on_tools = on_tools
        for spec in specs:
            try:
                server = McpServer(self.loop, spec, lambda s: self.on_tools([McpTool(s, t) for t in s.tools]))
            except ValueError as exc:  # its token cannot be read
                self.problems.append(str(exc))
                log.warning("%s", exc)
                continue
            try:
                server.start(start_timeout_s)
                self.servers.append(server)
            except RuntimeError as exc:
                if server.remote:  # kept: it keeps trying, and its tools appear when it answers
                    self.servers.append(server)
                    self.problems.append(f"{exc}; its tools will appear when it answers")
                else:
                    self.problems.append(str(exc))
                log.warning("%s", exc)

    def tools(self) -> list[McpTool]:
        return [McpTool(s, t) for s in self.servers for t in s.tools]

    def close(self) -> None:
        for s in self.servers:
            s.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
