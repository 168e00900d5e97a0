"""OpenEnv: AgentWorld envs behind an OpenEnv-compatible HTTP/WebSocket server, and the matching client.

Supports openenv-core 0.3 (what `make test` installs): the server is OpenEnv's own FastAPI app
(`create_fastapi_app`: `/ws` sessions, `/reset`, `/step`, `/state`, `/schema`, `/health`), each WebSocket
session with its own env, hence its own world; it binds 127.0.0.1 unless told otherwise. Episodes are played
over WebSocket sessions; HTTP `POST /step` (a fresh env per request in OpenEnv) answers 409 naming `/ws`.
`deploy/openenv/` holds the OpenEnv manifest (openenv.yaml) and container recipe (server/Dockerfile).
A session that resets with `delta: true` (AgentWorldClient does) gets changes-only step observations, which the
client rebuilds whole (`AgentWorldOpenEnv._sent_delta`); `serve_workers` runs several processes on one port.

    agentworld serve-openenv finance --port 8000

    from agentworld_gym.integrations.openenv import AgentWorldAction, AgentWorldClient
    with AgentWorldClient(base_url="http://127.0.0.1:8000").sync() as client:
        result = client.reset(seed=0)
        result = client.step(AgentWorldAction(text='{"name": "get_account", "arguments": {"account_id": "AC-1001"}}'))
        print(result.observation.messages[-1], result.reward, result.done)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from ..errors import ConfigError, ResetNeededError, require
from ..serving import FrameError, SessionPool, dumps, openenv_ws, settle

require("openenv.core", "openenv")
from openenv.core import EnvClient  # noqa: E402
from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app  # noqa: E402

from ._common import DEFAULT_HOST  # noqa: E402  (127.0.0.1: never the network unless asked for)


class AgentWorldAction(Action):
    """The model's reply: text in any tool-call format the env parses (JSON, OpenAI, Hermes, Python call)."""

    text: str = Field(..., description='e.g. {"name": "get_account", "arguments": {"account_id": "AC-1001"}}')


class AgentWorldObservation(Observation):
    """The episode so far: the transcript text, the chat messages and tool schemas, and the grade at the end."""

    text: str = Field("", description="the text observation (gymnasium's obs)")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI-format chat messages")
    tools: list[dict[str, Any]] = Field(default_factory=list, description="OpenAI-format tool schemas")
    task_id: str = ""
    theme: str = ""
    turn: int = 0
    verification: dict[str, Any] | None = None


class AgentWorldState(State):
    task_id: str = ""
    theme: str = ""


class AgentWorldOpenEnv(Environment):
    """An AgentWorld gymnasium env as an OpenEnv `Environment`; one instance per session."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every instance builds its own env and world copy

    def __init__(self, env_id: str = "AgentWorld/finance-v0", **make_kwargs):
        import gymnasium as gym

        from .. import envs  # noqa: F401  (registers the ids)

        super().__init__()
        self.env = gym.make(env_id, **make_kwargs)
        self._episode: dict[str, Any] = {}  # AgentWorldState's fields, kept plain: a pydantic assignment per step costs more than the rest of it
        self._started = False
        self._delta = False  # this session asked for changes-only step observations (see `_sent_delta`)
        self._sent: tuple[str, int] = ("", 0)  # the transcript text and message count the client holds

    def _fields(self, obs: str, info: dict) -> dict[str, Any]:
        """The observation's fields as OpenEnv's `serialize_observation` writes them (no reward, done, metadata)."""
        return {"text": obs, "messages": info["messages"], "tools": info["tools"], "task_id": info["task_id"], "theme": info["theme"],
                "turn": info["turn"], "verification": info.get("verification")}

    def _reset(self, seed: int | None, episode_id: str | None, task: dict | None) -> tuple[str, dict]:
        obs, info = self.env.reset(seed=seed, options={"task": task} if task is not None else None)
        self._started = True
        self._episode = {"episode_id": episode_id, "step_count": 0, "task_id": info["task_id"], "theme": info["theme"]}
        return obs, info

    def _step(self, text: str) -> tuple[str, float, bool, dict]:
        if not self._started:  # OpenEnv's HTTP /step builds a fresh env for each request (the app answers 409)
            raise ResetNeededError("Expected reset() before step() in this session, got step() first. "
                                   "Play an episode in one WebSocket session (/ws): reset, then step.")
        obs, reward, terminated, truncated, info = self.env.step(text)
        self._episode["step_count"] += 1
        return obs, float(reward), terminated or truncated, info

    def reset(self, seed: int | None = None, episode_id: str | None = None, task: dict | None = None, **kwargs) -> AgentWorldObservation:
        """A new episode: the task drawn from `seed`, or the given `task` (a task dict)."""
        obs, info = self._reset(seed, episode_id, task)
        return AgentWorldObservation(**self._fields(obs, info))

    def step(self, action: AgentWorldAction, timeout_s: float | None = None, **kwargs) -> AgentWorldObservation:
        obs, reward, done, info = self._step(action.text)
        return AgentWorldObservation(**self._fields(obs, info), reward=reward, done=done)

    # the lean WebSocket path (agentworld_gym.serving.openenv_ws): the same episode, payloads as plain dicts
    def reset_payload(self, data: dict) -> bytes:
        seed, task, delta = data.get("seed"), data.get("task"), data.get("delta", False)
        if (seed is not None and type(seed) is not int) or (task is not None and not isinstance(task, dict)) or type(delta) is not bool:
            raise FrameError(f"Expected reset data {{'seed': int, 'task': object, 'episode_id': str, 'delta': bool}} (all optional), "
                             f"got {data!r:.200}")
        obs, info = self._reset(seed, data.get("episode_id"), task)
        self._delta, self._sent = delta, (obs, len(info["messages"]))
        fields = self._fields(obs, info)
        tools = fields.pop("tools")
        body = dumps({"observation": fields, "reward": None, "done": False})
        return _OBSERVATION + b'"tools":' + _encoded(tools) + b"," + body[len(_OBSERVATION):]

    def step_payload(self, data: dict) -> dict:
        text = data.get("text")
        if not isinstance(text, str) or set(data) - {"text", "metadata"}:
            raise FrameError(f"Expected step data {{'text': str}} (the model's reply), got {data!r:.200}")
        obs, reward, done, info = self._step(text)
        fields = self._fields(obs, info)
        if self._delta:
            fields.update(self._sent_delta(obs, info["messages"]))
        return {"observation": fields, "reward": reward, "done": done}

    def _sent_delta(self, text: str, messages: list) -> dict:
        """A session that reset with `delta: true` gets, per step, only what the client lacks: the text past what it
        holds, the new messages, no tool schemas (sent at reset), and `metadata.delta` saying where each part
        continues (`AgentWorldClient` rebuilds the whole observation from it). A step is then about 1 KB instead of
        the whole transcript twice plus the schemas (about 13 KB), most of a step's encoding and sending cost."""
        held, count = self._sent
        cut = len(held) if text.startswith(held) else 0  # 0: the transcript window dropped old turns; send it whole
        self._sent = (text, len(messages))
        return {"text": text[cut:], "messages": messages[count:], "tools": [], "metadata": {"delta": {"text_from": cut, "messages_from": count}}}

    def state_payload(self) -> dict:
        return self.state.model_dump()

    @property
    def state(self) -> AgentWorldState:
        return AgentWorldState(**self._episode)

    def close(self) -> None:
        self.env.close()


_OBSERVATION = b'{"observation":{'  # how `dumps` begins a payload, where the cached tool schemas go in
_ENCODED: dict[int, tuple[list, bytes]] = {}


def _encoded(tools: list) -> bytes:
    """The tool schemas as JSON, encoded once per theme: the same list every reset, and most of a reset frame's
    encoding cost."""
    hit = _ENCODED.get(id(tools))
    if hit is None or hit[0] is not tools:
        hit = _ENCODED[id(tools)] = (tools, dumps(tools))
    return hit[1]


WS_PATH = "/ws"
DEFAULT_MAX_SESSIONS = 8
IDLE_TIMEOUT_S = 900.0
# Frames go uncompressed: per-message deflate costs more CPU per step than the frame's bytes cost on a rollout
# cluster's network (and zlib state per connection), and the OpenEnv client works either way.
UVICORN_WS = {"ws_per_message_deflate": False, "backlog": 4096}


class OpenEnvApp:
    """ASGI: WebSocket sessions at `WS_PATH` on the lean path (`agentworld_gym.serving.openenv_ws`: a bounded pool
    with idle expiry, every message answered on the event loop); everything else (HTTP `/reset`, `/step`,
    `/state`, `/schema`, `/health`, the lifespan) by OpenEnv's own FastAPI `app`, whose attributes this exposes."""

    def __init__(self, app, ws, pool: SessionPool):
        self.app, self.ws, self.pool = app, ws, pool

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket" and scope["path"] == WS_PATH:
            await self.ws(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def __getattr__(self, name: str):
        return getattr(self.app, name)


def make_app(env_id: str, max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float | None = IDLE_TIMEOUT_S, **make_kwargs):
    """The OpenEnv app serving `env_id`: at most `max_sessions` concurrent WebSocket sessions (one more is refused
    with a CAPACITY_REACHED error line), each ended after `idle_timeout` seconds without a message.

    OpenEnv's plain HTTP `/reset` and `/step` run each request on a fresh env: a tool episode needs a session,
    so `POST /step` answers 409 naming the WebSocket path instead of failing with 500."""
    from fastapi.responses import JSONResponse

    def factory() -> AgentWorldOpenEnv:
        return AgentWorldOpenEnv(env_id, **make_kwargs)

    app = create_fastapi_app(factory, AgentWorldAction, AgentWorldObservation, max_concurrent_envs=max_sessions)

    async def needs_a_session(request, exc: ResetNeededError):
        return JSONResponse(status_code=409, content={"detail": (
            f"{request.url.path} has no episode to act in: OpenEnv's HTTP endpoints run each request on a fresh env. "
            f"Play an episode over a WebSocket session at {WS_PATH} (AgentWorldClient(base_url=...).sync(), or any "
            "OpenEnv EnvClient): reset, then step, in one session.")})

    app.add_exception_handler(ResetNeededError, needs_a_session)
    pool = SessionPool(max_sessions, idle_timeout)
    return OpenEnvApp(app, openenv_ws(pool, factory), pool)


def app_from_environ():
    """The app the OpenEnv manifest (deploy/openenv/openenv.yaml) and its container serve, configured by environment
    variables: AGENTWORLD_ENV_ID (default AgentWorld/finance-v0), AGENTWORLD_MAX_SESSIONS (default 8),
    AGENTWORLD_DIFFICULTY (1-5, default 1), AGENTWORLD_MAX_TURNS (default 20)."""
    import os

    def number(name: str, default: int) -> int:
        value = os.environ.get(name, str(default))
        if not value.strip().isdigit() or int(value) < 1:
            raise ConfigError(f"Expected a positive integer in ${name}, got {value!r}.")
        return int(value)

    env_id = os.environ.get("AGENTWORLD_ENV_ID", "AgentWorld/finance-v0")
    return make_app(env_id, number("AGENTWORLD_MAX_SESSIONS", DEFAULT_MAX_SESSIONS), difficulty=number("AGENTWORLD_DIFFICULTY", 1),
                    max_turns=number("AGENTWORLD_MAX_TURNS", 20))


def serve(env_id: str, host: str = DEFAULT_HOST, port: int = 8000, max_sessions: int = DEFAULT_MAX_SESSIONS,
          idle_timeout: float | None = IDLE_TIMEOUT_S, workers: int = 1, **make_kwargs) -> None:
    """Serve until stopped. `workers` > 1: that many server processes share the port (see `serve_workers`)."""
    if workers > 1:
        serve_workers(env_id, workers, host, port, max_sessions, idle_timeout, **make_kwargs)
        return
    uvicorn = require("uvicorn", "openenv")
    app = make_app(env_id, max_sessions, idle_timeout, **make_kwargs)
    settle()
    uvicorn.run(app, host=host, port=port, log_level="warning", **UVICORN_WS)


def _shared_port(host: str, port: int):
    """A socket bound to (host, port) with SO_REUSEPORT: the kernel spreads new connections over every process
    listening on such a socket, and a connection (a WebSocket session) stays with the process that accepted it."""
    import socket

    if not hasattr(socket, "SO_REUSEPORT"):
        raise ConfigError("Expected SO_REUSEPORT for --workers (Linux, BSD, macOS), got a platform without it. "
                          "Run one server per port instead, and spread clients over the ports.")
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ConfigError(f"Expected to bind {host}:{port} for the workers, got {e.strerror} (is the port taken?). Pick another --port.") from None
    return sock


def _worker(env_id: str, host: str, port: int, max_sessions: int, idle_timeout: float | None, make_kwargs: dict, ready) -> None:
    """One worker process: its own app, pool and envs on the shared port; `ready` is set once it accepts."""
    import threading
    import time

    uvicorn = require("uvicorn", "openenv")
    sock = _shared_port(host, port)
    server = uvicorn.Server(uvicorn.Config(make_app(env_id, max_sessions, idle_timeout, **make_kwargs), log_level="warning", **UVICORN_WS))
    settle()

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        ready.set()

    threading.Thread(target=announce, daemon=True).start()
    server.run(sockets=[sock])


def serve_workers(env_id: str, workers: int, host: str = DEFAULT_HOST, port: int = 8000, max_sessions: int = DEFAULT_MAX_SESSIONS,
                  idle_timeout: float | None = IDLE_TIMEOUT_S, on_ready: Callable[[], None] | None = None, **make_kwargs) -> None:
    """`workers` server processes on one port (SO_REUSEPORT), each with its own pool of `max_sessions` sessions:
    one Python process uses one core, so this is how one machine's cores serve more sessions. The kernel gives each
    new connection to one of the processes, and a WebSocket session stays on the process that accepted it. This
    process supervises: `on_ready()` once every worker accepts; when one worker dies or this process is told to
    stop (SIGTERM, Ctrl-C), all are stopped."""
    import multiprocessing
    import signal
    from multiprocessing.connection import wait

    from ..checks import Number

    Number(low=1).check("workers", workers)
    _shared_port(host, port).close()  # a taken port or a platform without SO_REUSEPORT: one line here, before any worker
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter per worker: no state shared by accident
    events = [ctx.Event() for _ in range(workers)]
    procs = [ctx.Process(target=_worker, args=(env_id, host, port, max_sessions, idle_timeout, make_kwargs, ready), daemon=True,
                         name=f"openenv-worker-{i}") for i, ready in enumerate(events)]
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))  # stop as on Ctrl-C
    try:
        for proc in procs:
            proc.start()
        while not all(e.is_set() for e in events):
            if not all(proc.is_alive() for proc in procs):
                raise ConfigError(f"Expected {workers} OpenEnv workers to start on {host}:{port}, got one that exited "
                                  f"(its error is above). Check the env id and options with --workers 1.")
            events[0].wait(0.1) if not events[0].is_set() else next(e for e in events if not e.is_set()).wait(0.1)
        if on_ready is not None:
            on_ready()
        wait([proc.sentinel for proc in procs])  # returns when a worker ends: then stop the others
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # uvicorn in the worker shuts down on SIGTERM
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()


def serve_in_background(env_id: str, host: str = DEFAULT_HOST, port: int = 8000, max_sessions: int = DEFAULT_MAX_SESSIONS,
                        idle_timeout: float | None = IDLE_TIMEOUT_S, **make_kwargs):
    """Start the server on a daemon thread and return its `uvicorn.Server` once it accepts connections
    (for notebooks, examples and tests; `server.should_exit = True` stops it)."""
    import threading
    import time

    uvicorn = require("uvicorn", "openenv")
    server = uvicorn.Server(uvicorn.Config(make_app(env_id, max_sessions, idle_timeout, **make_kwargs), host=host, port=port, log_level="error",
                                                **UVICORN_WS))
    thread = threading.Thread(target=server.run, name=f"openenv-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise ConfigError(f"Expected the OpenEnv server to start on {host}:{port}, got no server (is the port taken?).")
        time.sleep(0.02)
    return server


class AgentWorldClient(EnvClient[AgentWorldAction, AgentWorldObservation, AgentWorldState]):
    """OpenEnv client for an AgentWorld server (WebSocket session: one world for this client).

    With `delta=True` (the default) it asks the server for changes-only step observations and keeps the transcript
    itself: every observation it returns is whole, the same as without. A server that does not know the flag
    ignores it and sends whole observations, which are taken as they are."""

    def __init__(self, base_url: str, *args, delta: bool = True, **kwargs):
        super().__init__(base_url, *args, **kwargs)
        self._delta = delta
        self._held: tuple[str, list, list] = ("", [], [])  # text, messages, tools of the last observation

    async def reset(self, **kwargs: Any) -> StepResult[AgentWorldObservation]:
        if self._delta:
            kwargs.setdefault("delta", True)
        return await super().reset(**kwargs)

    def _step_payload(self, action: AgentWorldAction) -> dict[str, Any]:
        return {"text": action.text}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[AgentWorldObservation]:
        fields = dict(payload.get("observation", {}))
        delta = fields.pop("metadata", {}).get("delta")
        if delta is not None:  # a changes-only step: continue what this client holds
            text, messages, tools = self._held
            fields.update(text=text[:delta["text_from"]] + fields.get("text", ""), tools=tools,
                          messages=messages[:delta["messages_from"]] + fields.get("messages", []))
        obs = AgentWorldObservation(**fields, reward=payload.get("reward"), done=payload.get("done", False))
        self._held = (obs.text, obs.messages, obs.tools)
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> AgentWorldState:
        return AgentWorldState(**payload)


__all__ = ["AgentWorldAction", "AgentWorldClient", "AgentWorldObservation", "AgentWorldOpenEnv", "AgentWorldState", "OpenEnvApp", "UVICORN_WS", "WS_PATH", "app_from_environ", "make_app",
           "serve", "serve_in_background", "serve_workers"]
