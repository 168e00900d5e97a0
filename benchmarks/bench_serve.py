"""How many concurrent episodes one server holds: this project's servers beside openenv-core's reference server,
driven by the same load generator on the loopback interface in the same run.

Servers (SERVERS): `agentworld`, the MCP HTTP server as `agentworld serve --transport http` runs it (stateless token
tool calls answered on the lean path, agentworld_gym/serving.py); `agentworld-sdk`, the same server with every request
through the MCP SDK's own path (how it served before the lean path); `agentworld-ws`, `agentworld serve-openenv`'s app:
OpenEnv's WebSocket protocol with one AgentWorld env episode per session (task, world, transcript, grading; resets draw
from a set of 60 synthesized tasks, as `--tasks 60` serves them; changes-only step observations, `delta`, as
AgentWorldClient asks for them); `agentworld-ws-whole`, the same with every observation whole; `agentworld-ws-2w`,
agentworld-ws on two worker processes (`--workers 2`; CPU and RSS summed over all its processes); `openenv`,
openenv-core's own reference server and echo environment. For each N (concurrent sessions) and each server, a fresh server process starts, then N sessions:

  1. open: every session starts (MCP: `start_session`, a private SQLite world; OpenEnv protocol: a `/ws` WebSocket and
     `reset`), and the server's RSS is read with all N sessions open and idle;
  2. load: for `--seconds`, every session plays episodes: reset (MCP: `reset_world`; OpenEnv: `reset`), 3-6 tool
     calls (the calls of synthesized level-1..3 task solutions of the theme, reads and writes; to the echo env, the
     same calls as its message; to agentworld-ws, as the model's reply text), each after a think time drawn around
     `--think` seconds (the agent's inference time), then the next episode. No `submit` goes over the wire; the
     episode ends at the next reset;
  3. close: every session ends (`end_session` / WebSocket close).

Reported per (server, N): tool calls, errors (transport errors, timeouts, HTTP/JSON-RPC/OpenEnv errors, and tool
results that are server refusals: expired / unknown / over-limit sessions; a tool's own domain error such as
"insufficient funds" is an answer, not an error), requests/s, p50/p99 latency of a tool call as the client sees it,
server RSS per idle session, and requests per CPU-second of the server's processes (its utime+stime over the load phase:
the figure that holds on a shared machine, where wall-clock req/s depends on the neighbours), and its ratio to
openenv's in the same run. `uptime`'s load average is recorded beside every run.

The MCP load goes over the wire as the mcp SDK's stateless (2026-07-28) client sends it: one JSON-RPC `tools/call`
POST per call, the session token in `_meta["agentworld/session"]`; a pool of keep-alive HTTP connections is shared by
all sessions (tests/test_serve_load.py drives the same pattern with the real `mcp.Client`). The OpenEnv-protocol load
goes one WebSocket per session (its HTTP /step is stateless).

    nice -n 5 python benchmarks/bench_serve.py --sessions 1,64,256,1024,2048 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

# agentworld: the MCP HTTP server as `agentworld serve` runs it (token tool calls on the lean path, agentworld_gym.serving);
# agentworld-sdk: the same server with every request through the MCP SDK's own path (as before the lean path);
# agentworld-h11: agentworld-sdk on the pure-Python HTTP stack (as before httptools/uvloop);
# agentworld-ws: `agentworld serve-openenv`: OpenEnv's WebSocket protocol, one AgentWorld env episode per session,
#   changes-only step observations (`delta`, what AgentWorldClient asks for);
# agentworld-ws-whole: the same server and episodes, every step observation whole (transcript, messages, tool schemas);
# agentworld-ws-2w: agentworld-ws as `agentworld serve-openenv --workers 2` runs it: two processes on one port (CPU and
#   memory are summed over both);
# openenv: openenv-core's own reference server and echo environment
SERVERS = ("agentworld", "agentworld-sdk", "agentworld-h11", "agentworld-ws", "agentworld-ws-whole", "agentworld-ws-2w", "openenv")
DEFAULT_SERVERS = ("agentworld", "agentworld-sdk", "agentworld-ws", "agentworld-ws-whole", "openenv")
REFUSALS = ("session expired", "unknown session token", "live sessions", "names none")  # server refusals, not tool answers


@dataclass
class Args:
    sessions: str = "1,64,256,1024,2048"
    """comma-separated numbers of concurrent sessions"""
    servers: str = ",".join(DEFAULT_SERVERS)
    """which servers to drive, from SERVERS (see there)"""
    seconds: float = 20.0
    """length of the load phase per (server, N), at most 60"""
    think: float = 1.0
    """mean think time before each tool call (the agent's inference), seconds; 0 = closed loop"""
    theme: str = "finance"
    """theme our server serves"""
    connections: int = 128
    """keep-alive HTTP connections the load generator shares among sessions (ours; OpenEnv has one WebSocket per session)"""
    timeout: float = 30.0
    """seconds one request may take before it counts as an error"""
    seed: int = 0
    """seed of the load generator (think times, episode lengths, which task's calls)"""
    out: str = "benchmarks/results/bench_serve.json"
    """where the figures are written"""
    serve: str = ""
    """internal: run one server (agentworld or openenv) on --port with room for --capacity sessions"""
    port: int = 0
    """internal: the port of --serve"""
    capacity: int = 0
    """internal: sessions --serve must hold"""


# ----------------------------------------------------------------------------------------------- the servers
def serve_agentworld(args: Args, pure_python: bool = False, lean: bool = True) -> None:
    import uvicorn

    from agentworld_gym.mcp.server import http_app, theme_server
    from agentworld_gym.serving import settle

    room = args.capacity + 16
    server = theme_server(args.theme, max_sessions=room, sessions_per_client=room)  # one client address drives them all
    config = uvicorn.Config(http_app(server, lean=lean), host="127.0.0.1", port=args.port, log_level="warning", timeout_keep_alive=30,
                            limit_concurrency=4 * args.connections, backlog=4096,  # uvicorn counts lingering request tasks too
                            **({"http": "h11", "loop": "asyncio"} if pure_python else {}))
    settle()  # as `agentworld serve` does
    uvicorn.Server(config).run()


def serve_agentworld_ws(args: Args) -> None:
    """`agentworld serve-openenv THEME`'s app: OpenEnv's wire protocol, one env episode (task, world, grading) per session."""
    import uvicorn

    from agentworld_gym.integrations.openenv import UVICORN_WS, make_app
    from agentworld_gym.serving import settle

    app = make_app(f"AgentWorld/{args.theme}-v0", max_sessions=args.capacity + 16, tasks=task_set(args.theme))
    settle()  # as `agentworld serve-openenv` does
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_keep_alive=30, **UVICORN_WS)


def serve_agentworld_ws_workers(args: Args) -> None:
    """`agentworld serve-openenv THEME --workers 2`: two server processes on one port, each with room for all sessions
    (the kernel's spread is even only on average); tells the load generator when both accept (a file by the port)."""
    from agentworld_gym.integrations.openenv import serve_workers

    serve_workers(f"AgentWorld/{args.theme}-v0", 2, "127.0.0.1", args.port, max_sessions=args.capacity + 16,
                  on_ready=lambda: ready_file(args.port).touch(), tasks=task_set(args.theme))


def ready_file(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"bench_serve_{port}.ready"


def serve_openenv(args: Args) -> None:
    """openenv-core's own echo environment, written by `openenv init echo` (its reference template), served by its own
    `create_app` with room for the sessions (the template's app.py allows one)."""
    import importlib

    import uvicorn
    from openenv.core.env_server.http_server import create_app

    root = tempfile.mkdtemp(prefix="openenv_echo_")
    subprocess.run([sys.executable, "-m", "openenv.cli", "init", "echo", "--output-dir", root], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    sys.path.insert(0, root)
    env = importlib.import_module("echo.server.echo_environment").EchoEnvironment
    models = importlib.import_module("echo.models")
    app = create_app(env, models.EchoAction, models.EchoObservation, env_name="echo", max_concurrent_envs=args.capacity + 16)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", timeout_keep_alive=30, backlog=4096)


class ServerProcess:
    def __init__(self, kind: str, args: Args, capacity: int):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [sys.executable, __file__, "--serve", kind, "--port", str(self.port), "--capacity", str(capacity),
               "--theme", args.theme, "--connections", str(args.connections)]
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - the server's stderr, quoted if it dies (a pipe nobody reads would block it)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"the {kind} server exited: {self.log.read().decode(errors='replace')[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                if kind != "agentworld-ws-2w" or ready_file(self.port).exists():  # every worker accepts
                    break
                time.sleep(0.1)
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the {kind} server did not listen within 120 s") from None
                time.sleep(0.1)

    def pids(self) -> list[int]:
        """The server process and its descendants (the workers of agentworld-ws-2w)."""
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            with contextlib.suppress(OSError):
                todo += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return out

    def rss_kb(self) -> int:
        total = 0
        for pid in self.pids():
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return total

    def cpu_s(self) -> float:
        total = 0
        for pid in self.pids():
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# ----------------------------------------------------------------------------------------------- the sessions
@dataclass
class Tally:
    latencies_ms: list[float] = field(default_factory=list)  # tool calls only
    calls: int = 0
    episodes: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what[:300])


def task_set(theme_id: str, count: int = 60) -> list:
    """The tasks the load plays: synthesized levels 1-3, seeds 0..count-1 (agentworld-ws serves them as its task
    set, as `agentworld serve-openenv --tasks` does, so a reset draws one instead of synthesizing one)."""
    from agentworld_gym.envs import get_theme

    from agentworld_gym.synthesis import synthesize_task

    theme = get_theme(theme_id)
    return [synthesize_task(theme, 1 + seed % 3, seed) for seed in range(count)]


def episode_calls(theme_id: str, count: int = 60) -> list[list[tuple[str, dict]]]:
    """Tool-call sequences of synthesized task solutions (levels 1-3), the calls a correct agent makes."""
    from agentworld_gym.envs import get_theme

    tools = get_theme(theme_id).toolset.tools
    out = []
    for task in task_set(theme_id, count):
        calls = [(c["name"], dict(c["arguments"])) for c in task.solution if c["name"] in tools]
        if calls:
            out.append(calls)
    return out


class HTTPPool:
    """Keep-alive HTTP/1.1 connections on asyncio streams, shared by all sessions: a client as light as the
    WebSocket client on OpenEnv's side, so the load generator's own cost does not weigh on one side only."""

    def __init__(self, port: int, size: int):
        self.port, self.size, self.made = port, size, 0
        self.idle: asyncio.Queue = asyncio.Queue()

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self.idle.empty() and self.made < self.size:
            self.made += 1
            conn = await asyncio.open_connection("127.0.0.1", self.port)
        else:
            conn = await self.idle.get()
        reader, writer = conn
        try:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            writer.write(f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-length: {len(body)}\r\n{head}\r\n".encode() + body)
            status = int((await reader.readline()).split()[1])
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            reply = await reader.readexactly(length)
        except BaseException:
            writer.close()  # a broken or timed-out connection is not reused
            self.made -= 1
            raise
        self.idle.put_nowait(conn)
        return status, reply

    async def aclose(self) -> None:
        while not self.idle.empty():
            self.idle.get_nowait()[1].close()


class AgentWorldSession:
    """One session over the MCP wire (stateless protocol, token in _meta), sharing the generator's HTTP pool."""

    HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2026-07-28"}
    META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "bench_serve", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}  # what mcp.Client sends on every stateless request

    def __init__(self, http: HTTPPool, tally: Tally, timeout: float):
        self.http, self.tally, self.timeout, self.token = http, tally, timeout, None
        self._id = 0

    async def _call(self, name: str, arguments: dict) -> tuple[bool, str]:
        self._id += 1
        meta = {**self.META, "agentworld/session": self.token} if self.token else self.META
        body = json.dumps({"jsonrpc": "2.0", "id": self._id, "method": "tools/call", "params": {"name": name, "arguments": arguments, "_meta": meta}})
        headers = {**self.HEADERS, "mcp-method": "tools/call", "mcp-name": name}
        status, raw = await asyncio.wait_for(self.http.post("/mcp", body.encode(), headers), self.timeout)
        text = raw.decode()
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {text[:200]}")
        if not text.startswith("{"):  # an SSE reply: its data line
            text = next(line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
        reply = json.loads(text)
        if "error" in reply:
            raise RuntimeError(f"JSON-RPC error {reply['error']}")
        result = reply["result"]
        content = result["content"][0]["text"] if result.get("content") else ""
        if result.get("isError") and any(r in content for r in REFUSALS):
            raise RuntimeError(content)
        return True, content

    async def open(self) -> None:
        _, content = await self._call("start_session", {})
        self.token = json.loads(content)["session"]

    async def reset(self) -> None:
        await self._call("reset_world", {})

    async def tool(self, name: str, arguments: dict) -> None:
        await self._call(name, arguments)

    async def close(self) -> None:
        await self._call("end_session", {})


class OpenEnvSession:
    """One OpenEnv session: its own WebSocket to /ws, reset and step messages (openenv-core's wire format). The
    echo env's action is a message; an AgentWorld env's (`agent=True`) is the model's reply, here the tool call as JSON."""

    def __init__(self, url: str, tally: Tally, timeout: float, agent: bool = False, delta: bool = False):
        self.url, self.tally, self.timeout, self.ws, self.agent = url, tally, timeout, None, agent
        self.opening = {"delta": True} if delta else {}  # changes-only step observations (AgentWorldClient's default)

    async def _send(self, message: dict) -> dict:
        await self.ws.send(json.dumps(message))
        reply = json.loads(await asyncio.wait_for(self.ws.recv(), self.timeout))
        if reply.get("type") == "error":
            raise RuntimeError(f"OpenEnv error {reply.get('data')}")
        return reply

    async def open(self) -> None:
        import websockets

        self.ws = await asyncio.wait_for(websockets.connect(self.url, max_size=2**20, open_timeout=self.timeout, ping_interval=None),
                                         self.timeout)
        await self._send({"type": "reset", "data": self.opening})

    async def reset(self) -> None:
        await self._send({"type": "reset", "data": self.opening})

    async def tool(self, name: str, arguments: dict) -> None:
        call = json.dumps({"name": name, "arguments": arguments})
        await self._send({"type": "step", "data": {"text": call} if self.agent else {"message": call}})

    async def close(self) -> None:
        await self.ws.close()


async def drive(kind: str, server: ServerProcess, n: int, args: Args, episodes: list, rng: random.Random) -> dict:
    tally = Tally()
    http = None
    if kind in ("agentworld", "agentworld-sdk", "agentworld-h11"):
        http = HTTPPool(server.port, args.connections)
        sessions = [AgentWorldSession(http, tally, args.timeout) for _ in range(n)]
    else:
        url = f"ws://127.0.0.1:{server.port}/ws"
        sessions = [OpenEnvSession(url, tally, args.timeout, kind.startswith("agentworld-ws"), kind in ("agentworld-ws", "agentworld-ws-2w")) for _ in range(n)]
    seeds = [rng.randrange(2**32) for _ in range(n)]

    async def guarded(what: str, coro) -> bool:
        try:
            await coro
            return True
        except Exception as e:  # noqa: BLE001 - every failure of a request is an error to count, whatever its type
            tally.error(f"{what}: {type(e).__name__}: {e}")
            return False

    # warm-up: one session opened and closed, so imports and caches are in the baseline
    warm = AgentWorldSession(http, tally, args.timeout) if http else OpenEnvSession(url, tally, args.timeout, kind.startswith("agentworld-ws"), kind in ("agentworld-ws", "agentworld-ws-2w"))
    await guarded("warm-up open", warm.open())
    await guarded("warm-up close", warm.close())
    tally.errors, tally.error_samples = 0, []
    rss0 = server.rss_kb()

    t = time.perf_counter()
    sem = asyncio.Semaphore(max(args.connections, 64))  # opening 2,048 WebSockets at once would be a SYN flood, not load
    async def open_one(s):
        async with sem:
            return await guarded("open", s.open())
    opened = await asyncio.gather(*(open_one(s) for s in sessions))
    open_s = time.perf_counter() - t
    live = [s for s, ok in zip(sessions, opened, strict=True) if ok]
    await asyncio.sleep(1.0)
    rss_idle = server.rss_kb()

    cpu0, start, gen0 = server.cpu_s(), time.perf_counter(), own_cpu_s()
    deadline = start + args.seconds

    async def play(s, seed: int) -> None:
        r = random.Random(seed)
        await asyncio.sleep(r.uniform(0, max(args.think, 0.05)))  # sessions start out of phase, as real agents do
        while time.perf_counter() < deadline:
            if not await guarded("reset", s.reset()):
                return
            calls = r.choice(episodes)
            k = r.randint(3, 6)
            for name, arguments in (calls * 6)[:k]:  # a short solution is replayed to reach 3-6 calls
                if args.think:
                    await asyncio.sleep(r.expovariate(1 / args.think))
                if time.perf_counter() >= deadline:
                    return
                t0 = time.perf_counter()
                if not await guarded(name, s.tool(name, arguments)):
                    return
                tally.latencies_ms.append((time.perf_counter() - t0) * 1e3)
                tally.calls += 1
            tally.episodes += 1

    await asyncio.gather(*(play(s, seed) for s, seed in zip(live, seeds, strict=False)))
    wall = time.perf_counter() - start
    cpu, gen = server.cpu_s() - cpu0, own_cpu_s() - gen0
    load_errors = tally.errors
    await asyncio.gather(*(guarded("close", s.close()) for s in live))
    if http is not None:
        await http.aclose()
    lat = sorted(tally.latencies_ms) or [float("nan")]
    return {"server": kind, "sessions": n, "opened": len(live), "open_s": round(open_s, 2), "episodes": tally.episodes,
            "tool_calls": tally.calls, "errors": tally.errors, "errors_during_load": load_errors, "error_samples": tally.error_samples,
            "load_s": round(wall, 2), "requests_per_s": round(tally.calls / wall, 1),
            "server_cpu_s": round(cpu, 2), "generator_cpu_s": round(gen, 2), "requests_per_cpu_s": round(tally.calls / cpu, 1) if cpu > 0 else None,
            "p50_ms": round(statistics.median(lat), 1), "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1),
            "rss_base_mb": round(rss0 / 1024, 1), "rss_idle_mb": round(rss_idle / 1024, 1),
            "kb_per_idle_session": round((rss_idle - rss0) / max(len(live), 1), 1)}


def own_cpu_s() -> float:
    """The load generator's own CPU time (user + system): when it nears the load phase's length, the generator, not
    the server, bounds the latencies."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, value in vars(Args()).items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    args = Args(**vars(p.parse_args()))
    if args.serve:
        {"agentworld": serve_agentworld, "agentworld-sdk": lambda a: serve_agentworld(a, lean=False),
         "agentworld-h11": lambda a: serve_agentworld(a, pure_python=True, lean=False), "agentworld-ws": serve_agentworld_ws,
         "agentworld-ws-whole": serve_agentworld_ws, "agentworld-ws-2w": serve_agentworld_ws_workers,
         "openenv": serve_openenv}[args.serve](args)
        return
    if not 0 < args.seconds <= 60:
        p.error(f"expected --seconds in (0, 60], got {args.seconds}")
    counts = [int(x) for x in args.sessions.split(",") if x.strip()]
    kinds = [k.strip() for k in args.servers.split(",") if k.strip()]
    if bad := [k for k in kinds if k not in SERVERS]:
        p.error(f"expected --servers from {SERVERS}, got {bad}")
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # one WebSocket per OpenEnv session, both ends here
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    episodes = episode_calls(args.theme)
    rng = random.Random(args.seed)
    rows = []
    print(f"{'server':<14} {'N':>5} {'opened':>6} {'calls':>7} {'errors':>6} {'req/s':>7} {'req/cpu-s':>9} {'p50 ms':>7} "
          f"{'p99 ms':>7} {'KB/sess':>8}  load avg", flush=True)
    for n in counts:
        for kind in kinds:
            before = loadavg()
            server = ServerProcess(kind, args, n)
            try:
                row = asyncio.run(drive(kind, server, n, args, episodes, rng))
            finally:
                server.stop()
            row["loadavg_before"], row["loadavg_after"] = before, loadavg()
            rows.append(row)
            print(f"{kind:<14} {n:>5} {row['opened']:>6} {row['tool_calls']:>7} {row['errors']:>6} {row['requests_per_s']:>7} "
                  f"{row['requests_per_cpu_s']!s:>9} {row['p50_ms']:>7} {row['p99_ms']:>7} {row['kb_per_idle_session']:>8}  "
                  f"{before} -> {row['loadavg_after']}", flush=True)
            for sample in row["error_samples"]:
                print(f"    error: {sample}", flush=True)
        pair = {r["server"]: r for r in rows if r["sessions"] == n}
        reference = (pair.get("openenv") or {}).get("requests_per_cpu_s")
        for kind in kinds:
            if kind != "openenv" and reference and pair[kind]["requests_per_cpu_s"]:
                pair[kind]["ratio_to_openenv"] = round(pair[kind]["requests_per_cpu_s"] / reference, 2)
                print(f"{'':<14} {n:>5} {kind} / openenv, requests per server CPU-second: {pair[kind]['ratio_to_openenv']:.2f}x", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": asdict(args), "cores": os.cpu_count(), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
