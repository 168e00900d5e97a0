"""MCPToolset: a live connection to one MCP server (a command over stdio, or a streamable-HTTP URL),
callable from synchronous code such as `env.step()`.

The SDK client is async and its context must be entered and left in the same task, so one
background thread owns an event loop and one long-lived task that holds the `mcp.Client`; calls
are handed to that task through a queue and answered through futures. Every wait is bounded: a
server that does not start, hangs or dies gives a `BackendError` (on start) or an error result
(on a call), never a hang, and `close()` always ends the server process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import math
import os
import signal
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import BackendError, require
from ..tools import ToolResult, to_text, validate_arguments

log = logging.getLogger(__name__)

STDERR_TAIL = 1_500  # characters of a dead server's stderr quoted in errors


def check_schema(schema: Any) -> str | None:
    """Why an MCP tool's input schema cannot be used (None when it can)."""
    if not isinstance(schema, dict):
        return f"expected a JSON object schema, got {type(schema).__name__}"
    if schema.get("type", "object") != "object":
        return f"expected type 'object', got {schema.get('type')!r}"
    props = schema.get("properties", {})
    if not isinstance(props, dict) or not all(isinstance(p, dict) for p in props.values()):
        return "expected 'properties' to map names to schemas"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"expected 'required' to be a list of names, got {required!r}"
    return None


def _unwrap(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # (Base)ExceptionGroup
        exc = exc.exceptions[0]
    return exc


def _child_pids() -> set[int]:
    """Direct children of this process (Linux /proc); empty elsewhere."""
    me, out = os.getpid(), set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == me and fields[0] != "Z":
                    out.add(int(name))
            except (OSError, IndexError, ValueError):
                continue
    return out


class MCPToolset:
    """One MCP server, its tools, and synchronous calls to them.

    Args:
        command: argv of a stdio server (e.g. ["mcp-server-calculator"]); or
        url: a streamable-HTTP endpoint (e.g. "http://127.0.0.1:8000/mcp").
        env: extra environment variables for the server process.
        cwd: working directory of the server process.
        timeout: seconds one tool call may take before it becomes an error result.
        start_timeout: seconds the server may take to start and list its tools.
        mode: protocol negotiation: "legacy" (initialize handshake; every server speaks it) or "auto".
        skip_bad_tools: drop tools whose input schema is unusable instead of raising on start.
    """

    def __init__(self, command: Sequence[str] | None = None, url: str | None = None, *, env: dict[str, str] | None = None,
                 cwd: str | None = None, timeout: float = 30.0, start_timeout: float = 30.0, mode: str = "legacy",
                 skip_bad_tools: bool = False):
        if (command is None) == (url is None):
            raise BackendError(f"Expected exactly one of command=[...] or url='...', got command={command!r}, url={url!r}.")
        if command is not None and (isinstance(command, str) or not command):
            raise BackendError(f"Expected command as a non-empty argv list, e.g. ['mcp-server-calculator'], got {command!r}.")
        require("mcp", "mcp")
        self.command = list(command) if command is not None else None
        self.url = url
        self.timeout = timeout
        self.label = " ".join(self.command) if self.command else url
        self.tools: list[dict] = []  # [{"name", "description", "input_schema"}]
        self.skipped: dict[str, str] = {}  # tool -> why its schema was rejected
        self.broken: str | None = None  # set once the server died or stopped answering
        self._env, self._cwd, self._mode, self._skip_bad = env, cwd, mode, skip_bad_tools
        # the server's stderr, quoted when it fails; open as long as the server runs
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") if command else None  # noqa: SIM115
        self._start_timeout = start_timeout
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue | None = None
        self._start_error: BaseException | None = None
        self._pids: set[int] = set()
        self._closed = False
        before = _child_pids()
        self._thread = threading.Thread(target=self._thread_main, name=f"mcp:{self.label[:40]}", daemon=True)
        self._thread.start()
        if not self._ready.wait(start_timeout + 5):
            self._start_error = TimeoutError(f"no answer within {start_timeout}s")
        self._pids = _child_pids() - before
        if self._start_error is not None:
            why = self._start_error
            self.close()
            raise BackendError(f"Expected the MCP server {self.label!r} to start and list its tools, got {type(why).__name__}: "
                               f"{why}.{self._stderr_hint()} Check the command and that the server runs on its own.") from None
        if self.skipped and not skip_bad_tools:
            bad = "; ".join(f"{k}: {v}" for k, v in self.skipped.items())
            self.close()
            raise BackendError(f"Expected usable input schemas from {self.label!r}, got broken ones ({bad}). "
                               "Pass skip_bad_tools=True to use the other tools.")

    # ------------------------------------------------------------------ the loop thread
    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main(self._start_timeout))
        except BaseException as exc:  # recorded, reported by the caller
            if not self._ready.is_set():
                self._start_error = exc
        finally:
            self.broken = self.broken or "the connection to the MCP server ended"
            self._ready.set()

    async def _main(self, start_timeout: float) -> None:
        import anyio
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        if self.command:
            params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=self._env, cwd=self._cwd)
            target: Any = stdio_client(params, errlog=self._stderr)
        else:
            target = self.url
        # One cancel scope bounds the start (connect + handshake + list_tools); its deadline is lifted
        # once the tools are listed, and the same `async with` then serves calls until close().
        with anyio.CancelScope() as scope:
            scope.deadline = anyio.current_time() + start_timeout
            try:
                async with Client(target, mode=self._mode, cache=None) as client:
                    listed = await client.list_tools()
                    for t in listed.tools:
                        problem = check_schema(t.input_schema)
                        if problem:
                            self.skipped[t.name] = problem
                        else:
                            self.tools.append({"name": t.name, "description": t.description or "", "input_schema": t.input_schema})
                    scope.deadline = math.inf
                    self._ready.set()
                    await self._serve(client)
            except BaseException as exc:
                if self._ready.is_set():
                    raise
                self._start_error = TimeoutError(f"no answer within {start_timeout:g}s") if scope.cancel_called else _unwrap(exc)
        if scope.cancelled_caught and not self._ready.is_set():
            self._start_error = TimeoutError(f"no answer within {start_timeout:g}s")

    async def _serve(self, client) -> None:
        import anyio

        while True:
            item = await self._queue.get()
            if item is None:
                return
            name, arguments, timeout, fut = item
            try:
                with anyio.fail_after(timeout):
                    result = await client.call_tool(name, arguments)
                if not fut.done():
                    fut.set_result(result)
            except TimeoutError:
                self.broken = f"the MCP server did not answer {name} within {timeout:g}s"
                if not fut.done():
                    fut.set_exception(TimeoutError(self.broken))
            except BaseException as exc:
                if not fut.done():
                    fut.set_exception(exc)
                if isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, asyncio.CancelledError)):
                    self.broken = "the MCP server closed the connection"
                    raise

    # ------------------------------------------------------------------ public API
    @property
    def alive(self) -> bool:
        return self.broken is None and not self._closed and self._thread.is_alive()

    def schemas(self) -> list[dict]:
        """OpenAI-format schemas of the server's (usable) tools."""
        return [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
                for t in self.tools]

    def call_raw(self, name: str, arguments: dict, timeout: float | None = None):
        """Call a tool; returns the SDK's CallToolResult or raises BackendError / TimeoutError."""
        if not self.alive:
            raise BackendError(f"Expected a running MCP server, got: {self.broken or 'closed'}.{self._stderr_hint()}")
        timeout = self.timeout if timeout is None else timeout
        fut: concurrent.futures.Future = concurrent.futures.Future()
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (name, arguments, timeout, fut))
        except RuntimeError as exc:  # the loop is gone
            raise BackendError(f"Expected a running MCP server, got a closed connection ({exc}).") from None
        try:
            return fut.result(timeout + 5)
        except concurrent.futures.TimeoutError:
            self.broken = f"the MCP server did not answer {name} within {timeout:g}s"
            raise TimeoutError(self.broken) from None

    def call(self, name: str, arguments: dict, timeout: float | None = None) -> ToolResult:
        """Validate and run one call; every failure becomes an error result, never an exception."""
        tool = next((t for t in self.tools if t["name"] == name), None)
        if tool is None:
            from ..errors import did_you_mean

            names = [t["name"] for t in self.tools]
            return ToolResult(False, f"Error: unknown tool {name[:80]!r}.{did_you_mean(name, names)} Available tools: {', '.join(names)}.")
        problem = validate_arguments(tool["input_schema"], arguments)
        if problem:
            return ToolResult(False, f"Error: invalid arguments for {name}: {problem}")
        try:
            result = self.call_raw(name, arguments, timeout)
        except TimeoutError as exc:
            return ToolResult(False, f"Error: {exc}.")
        except BackendError as exc:
            return ToolResult(False, f"Error: the tool server is unavailable ({exc})")
        except Exception as exc:  # protocol errors, garbage answers: the agent sees them, the episode goes on
            detail = getattr(getattr(exc, "error", None), "message", None) or str(exc) or type(exc).__name__
            return ToolResult(False, f"Error: {name} failed: {detail[:500]}")
        return to_tool_result(result)

    def close(self) -> None:
        """Stop the server (idempotent). Bounded: the SDK's own shutdown, then a kill of what is left."""
        if self._closed:
            return
        self._closed = True
        loop, queue = self._loop, self._queue
        if loop is not None and queue is not None and self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(queue.put_nowait, None)
        self._thread.join(15)
        for pid in self._pids:  # the SDK kills its process tree; this catches what a stuck shutdown left
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if self._stderr is not None:
            self._stderr.close()

    def __enter__(self) -> MCPToolset:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()

    def _stderr_hint(self) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()[-STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f" Server stderr: {text}" if text else ""


def to_tool_result(result) -> ToolResult:
    """An SDK CallToolResult as the ToolResult the env shows: text content, data, error flag."""
    parts = []
    for block in result.content or []:
        text = getattr(block, "text", None)
        parts.append(text if isinstance(text, str) else json.dumps(block.model_dump(mode="json", exclude_none=True), ensure_ascii=False))
    text = "\n".join(parts)
    data = result.structured_content
    if data is None:
        try:
            data = json.loads(text) if text else None
        except json.JSONDecodeError:
            data = text
    if result.is_error:  # data is kept for backends that unwrap an envelope (tau2); the agent sees the text
        return ToolResult(False, text if text.startswith("Error") else f"Error: {text or 'the tool failed'}", data)
    return ToolResult(True, text if text else to_text(data), data)
