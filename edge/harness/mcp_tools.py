"""Every tool of the configured MCP servers as a capability (the `mcp` SDK, stdio transport).

Config: `{"name": "files", "command": "python3", "args": ["server.py"], "env": {...}, "timeout_s": 20}`.
Each server's session lives in one task on a private event loop thread (the
SDK's context managers must open and close in the same task); tool calls
from worker threads are submitted to that loop.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any

from edge.harness.capability import CapabilityError, Outcome, RunContext
from edge.harness.spoken import say, say_text

log = logging.getLogger("edge.harness.mcp")


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
    def __init__(self, loop: asyncio.AbstractEventLoop, spec: dict[str, Any]) -> None:
        for key in ("name", "command"):
            if not spec.get(key):
                raise ValueError(f"an MCP server entry needs '{key}' (got {sorted(spec)})")
        self.loop = loop
        self.name = str(spec["name"])
        self.spec = spec
        self.timeout_s = float(spec.get("timeout_s", 30.0))
        self.session: Any = None
        self.tools: list[Any] = []
        self._stop: asyncio.Event | None = None
        self._task: concurrent.futures.Future | None = None

    def start(self, timeout_s: float) -> None:
        ready: concurrent.futures.Future = concurrent.futures.Future()
        self._task = asyncio.run_coroutine_threadsafe(self._serve(ready), self.loop)
        try:
            ready.result(timeout_s)
        except concurrent.futures.TimeoutError:
            self.stop()
            raise RuntimeError(f"MCP server {self.name} did not answer within {timeout_s:.0f} s") from None

    async def _serve(self, ready: concurrent.futures.Future) -> None:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        self._stop = asyncio.Event()
        params = StdioServerParameters(command=self.spec["command"], args=list(self.spec.get("args", [])),
                                       env=self.spec.get("env"), cwd=self.spec.get("cwd"))
        try:
            async with stdio_client(params) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    self.tools = list((await session.list_tools()).tools)
                    self.session = session
                    ready.set_result(True)
                    await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001  (reported to whoever waits on start)
            if not ready.done():
                ready.set_exception(RuntimeError(f"MCP server {self.name} failed to start ({exc})"))
            else:
                log.warning("MCP server %s stopped: %s", self.name, exc)
        finally:
            self.session = None

    def call(self, tool: str, arguments: dict[str, Any], ctx: RunContext) -> str:
        if self.session is None:
            raise CapabilityError(f"the {self.name} tool server is not running")
        fut = asyncio.run_coroutine_threadsafe(
            self.session.call_tool(tool, arguments, read_timeout_seconds=self.timeout_s), self.loop)
        ctx.on_cancel.append(fut.cancel)
        try:
            result = fut.result(self.timeout_s + 1)
        except concurrent.futures.CancelledError:
            raise CapabilityError("the task was cancelled") from None
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise CapabilityError(f"the {tool} tool did not answer in time") from None
        except Exception as exc:  # protocol errors from the server
            raise CapabilityError(f"the {tool} tool failed ({str(exc)[:160]})") from None
        return spoken_result(result, tool, ctx.instruction)

    def stop(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        if self._task is not None:
            try:
                self._task.result(5)
            except Exception:  # noqa: BLE001  (already logged by _serve)
                pass


class McpHub:
    """Starts the configured servers and exposes their tools; `close()` stops them all."""

    def __init__(self, specs: list[dict[str, Any]], start_timeout_s: float = 20.0) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp-loop", daemon=True)
        self.thread.start()
        self.servers: list[McpServer] = []
        self.problems: list[str] = []
        for spec in specs:
            try:
                server = McpServer(self.loop, spec)
                server.start(start_timeout_s)
                self.servers.append(server)
            except (ValueError, RuntimeError) as exc:
                self.problems.append(str(exc))
                log.warning("%s", exc)

    def tools(self) -> list[McpTool]:
        return [McpTool(s, t) for s in self.servers for t in s.tools]

    def close(self) -> None:
        for s in self.servers:
            s.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
