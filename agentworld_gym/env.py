"""AgentWorldEnv: one gymnasium.Env class for every theme.

The base owns the episode (database copy, turn counter, dispatch, termination, reward); a theme
supplies only its spec, tools and task source.
"""

from __future__ import annotations

import json
import numbers
import reprlib
import sqlite3
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from .actions import ParsedAction, clean_text, parse_action
from .backend import Backend
from .errors import ConfigError, ResetNeededError, SnapshotError, TaskError, check_choice, check_unknown_kwargs
from .spaces import TextSpace, ToolCallSpace
from .tasks import Task, Verification, load_tasks, verify
from .theme import TOOLS_HEADER, Theme
from .user_simulator import end_reason, make_user, scenario_of, user_label
from .world import _MAGIC as SQLITE_HEADER
from .world import open_copy, state_hash

MAX_ECHO = 4_000  # characters of an action or tool result kept in the transcript
MAX_WINDOW = 200_000  # characters of the latest turns the text observation shows (the opening is always kept)
SYNTHESIS_SEEDS = 4  # seeds a reset tries before it reports that the theme makes no valid task
REPEAT_DRAWS = 8  # seeds a reset skips whose task this env already gave since its last seeding (per-theme dedupe)
REWARD_MODES = ("binary", "partial")


def _clip(text: str, limit: int = MAX_ECHO) -> str:
    """At most `limit` characters of `text`, encodable (lone surrogates replaced), with a note of what was cut."""
    return clean_text(text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more characters cut]")


def _action_text(action: Any) -> str:
    """The action as the transcript shows it: the text itself, or a bounded repr of a non-text object."""
    if isinstance(action, str):
        return action
    try:
        return reprlib.repr(action)
    except Exception:  # an object whose __repr__ fails is still an agent's action, not a crash
        return f"<{type(action).__name__} object>"


class Transcript:
    """The episode as text: the opening (system prompt and request) kept whole, then the latest parts up to
    `window` characters, older ones dropped with a note saying how much. Kept as parts, so adding one costs
    its own length and reading costs at most the window: a step's cost does not grow with the episode.
    info["messages"] always holds the whole dialogue."""

    def __init__(self, opening: str, window: int | None = None):
        self.opening, self.window = opening, MAX_WINDOW if window is None else window
        self.parts: deque[str] = deque()
        self.size = 0  # characters in `parts`
        self.dropped = 0  # characters dropped from the front
        self._text: str | None = opening

    def add(self, part: str, opening: bool = False) -> None:
        """Append a part; `opening=True` (the request that starts the episode) keeps it whole in the opening."""
        if opening and not self.parts:
            self.opening += part
            self._text = None
            return
        self.parts.append(part)
        self.size += len(part)
        while self.size > self.window and len(self.parts) > 1:
            old = self.parts.popleft()
            self.size -= len(old)
            self.dropped += len(old)
        self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            note = f"\n[... {self.dropped:,} characters of earlier turns not shown; info['messages'] holds them]\n" if self.dropped else ""
            self._text = "".join((self.opening, note, *self.parts))
        return self._text


class AgentWorldEnv(gym.Env[str, str]):
    """A tool-use episode in one theme's world.

    Args:
        theme: a theme id (e.g. "finance"), a `Theme`, or a `Backend` (an external world: an MCP
            server, a tau2 domain, an Agent-World release environment; then `tasks` is required).
        difficulty: 1-5, used when tasks are synthesized on reset.
        tasks: a JSONL path or a list of `Task`s (or dicts) to draw from instead of synthesizing.
        task_kind: synthesis kind ("graph", "programmatic", "mixed", or "rules": tasks that exercise business rules).
        max_turns: steps before the episode is truncated.
        reward_mode: "binary" (1 when every check passes) or "partial" (1 when every check passes, else
            the share of checks no guess can pass: a requested change of the world; see `Verification.fraction`).
        db_seed: which world to build (the seed of its fake data).
        scale: how many rows the world holds, as a multiple of the theme's own sizes.
        render_mode: "ansi" or "human".
        tools_in_prompt: False (default): info["messages"] opens with the theme's instructions only, for
            `apply_chat_template(messages, tools=info["tools"])`; True: its system message also lists every
            tool schema as text (for models without a tool-calling chat template). The text observation
            always lists them.
        user: None or "solo" (default: the agent reads the task; plain text ends the episode), or a user
            simulator that holds the task's private facts ("scripted", a policy spec, or a user object;
            see agentworld_gym.user_simulator): the agent's plain text goes to the user, whose reply is the
            next observation, and the episode ends when the agent submits or the user ends the conversation.
        requests: how synthesized tasks are worded: "person" (tasks v3: a person's request with a reason, the
            records named by what a person knows, lookups that depend on earlier results), "classic" ("What is
            the status of order OR-1042?"), or None (default): the process's setting (the environment variable
            AGENTWORLD_REQUESTS, else classic; docs/tasks.md).
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(
        self,
        theme: str | Theme | Backend = "finance",
        difficulty: int = 1,
        tasks: str | Path | Sequence[Task | dict] | None = None,
        task_kind: str = "graph",
        max_turns: int = 20,
        reward_mode: str = "binary",
        db_seed: int = 0,
        scale: float = 1.0,
        render_mode: str | None = None,
        tools_in_prompt: bool = False,
        user: Any = None,
        requests: str | None = None,
        **unknown: Any,
    ):
        from .envs.registry import get_theme

        check_env_args({**unknown, "difficulty": difficulty, "task_kind": task_kind, "max_turns": max_turns,
                        "reward_mode": reward_mode, "db_seed": db_seed, "scale": scale, "render_mode": render_mode,
                        "requests": requests})
        # An external backend plays the theme's part (id, prompt, tool schemas) and runs the tools.
        self.backend: Backend | None = theme if isinstance(theme, Backend) else None
        self.theme = theme if isinstance(theme, Theme) or self.backend is not None else get_theme(theme)
        self.difficulty = difficulty
        self.task_kind = task_kind
        self.max_turns = max_turns
        self.reward_mode = reward_mode
        self.db_seed = db_seed
        self.scale = scale
        self.render_mode = render_mode
        self.tools_in_prompt = tools_in_prompt
        self.user = make_user(user)
        self.requests = requests
        self.tasks = _load_task_list(tasks, self.theme.id)
        self._issued: set[str] = set()  # instructions of the tasks synthesized since the last seeded reset
        if self.backend is not None and self.tasks is None:
            raise TaskError(f"Expected tasks=... for the external backend {self.backend.id!r}, got none (tasks are synthesized only for themes).")
        self._init_kwargs = dict(theme=self.backend or self.theme.id, difficulty=difficulty, tasks=self.tasks, task_kind=task_kind,
                                 max_turns=max_turns, reward_mode=reward_mode, db_seed=db_seed, scale=scale, render_mode=render_mode,
                                 tools_in_prompt=tools_in_prompt, user=self.user, requests=requests)
        self.observation_space = TextSpace(max_length=2**26)
        self.action_space = ToolCallSpace(self.backend.tools if self.backend is not None else self.theme.toolset.schemas)
        if self.backend is None:
            self.theme.world(db_seed, scale)  # build (or load) the world template now, not on first reset
        self.conn = None
        self.task: Task | None = None
        self.scenario = None
        self.ended_by: str | None = None
        self._done = True
        self._template_schema: dict[str, str] | None = None

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise ConfigError(f"Expected options to be a dict such as {{'task': task}} or {{'difficulty': 3}}, got {type(options).__name__}.")
        # other keys are left alone: wrappers and PettingZoo's API test pass options of their own
        if options and "difficulty" in options:
            check_env_args({"difficulty": options["difficulty"]})
        if seed is not None:  # a seeded reset starts a fresh sequence: reset(seed=s) always gives the same task
            self._issued.clear()
        options = options or {}
        self.task = self._choose_task(options)
        self._close_conn()
        if self.backend is not None:
            self.backend.reset(self.task)
        else:
            self.conn = open_copy(self.theme.world(self.task.db_seed, self.scale).template)
            self.db = self.theme.db(self.conn)
            self._watch_writes(restored=False)
        self.turn = 0
        self.submitted: Any = None
        self.verification: Verification | None = None
        self._done, self.terminated = False, False
        self.ended_by = None
        self.messages = [{"role": "system", "content": self.theme.system_prompt if self.tools_in_prompt else instructions_of(self.theme)}]
        self._transcript = Transcript(f"[system]\n{self.theme.system_prompt}\n")
        if self.user is None:
            self._add_user_message(self.task.instruction)
        else:
            self.scenario = scenario_of(self.task)
            opening = self.user.reply(self.scenario, [])
            if opening is not None:  # a relayed user opens through user_says()
                self._add_user_message(opening)
        return self._transcript.text, self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if self._done:
            raise ResetNeededError("Expected reset() before step(): the episode has not started or has ended. Call env.reset().")
        parsed = parse_action(action)
        text = _action_text(action)
        self.turn += 1
        terminated = self._apply(parsed, text)
        return self._end_turn(terminated)

    def user_says(self, text: Any) -> tuple[str, float, bool, bool, dict]:
        """A user's message from outside the env (a PettingZoo user agent playing a `RelayUser`);
        it may end the conversation with a tau2 end token. Returns what `step` returns."""
        if self._done:
            raise ResetNeededError("Expected reset() before user_says(): the episode has not started or has ended. Call env.reset().")
        if not isinstance(text, str):
            text = f"(the user's message could not be read: expected text, got {type(text).__name__})"
        return self._end_turn(self._hear_user(text))

    def _end_turn(self, terminated: bool) -> tuple[str, float, bool, bool, dict]:
        truncated = not terminated and self.turn >= self.max_turns
        reward = 0.0
        if terminated or truncated:
            self._done, self.terminated = True, terminated
            self.verification = self._verify()
            reward = float(self.verification.passed) if self.reward_mode == "binary" else self.verification.fraction
        if self.render_mode == "human":
            self.render()
        return self._transcript.text, reward, terminated, truncated, self._info()

    def _verify(self) -> Verification:
        """Grade the finished episode (a backend's env adds its own checks here)."""
        # Hash the gold tables only when the task changes them, and other tables only when written to (ms each).
        final = self._final_hash() if self.task.state_hash is not None else None
        verification = verify(self.task, self.submitted, final, self._untouched())
        if hasattr(self.backend, "grade"):  # a backend whose tasks carry checks of their own (release success criteria)
            verification = self.backend.grade(self.task, verification)
        return verification

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._transcript.text
        if self.render_mode == "human":
            # The console may not take every character an agent typed: replace what it cannot encode.
            encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
            print(self._transcript.text.encode(encoding, "replace").decode(encoding, "replace"))
        return None

    def close(self) -> None:
        self._close_conn()
        if self.backend is not None:
            self.backend.close()
        self._done = True

    def as_mcp_server(self, name: str | None = None):
        """An MCP server (mcp SDK `MCPServer`) over this env's live episode: its tools plus submit,
        each call played through `step()`, so an external MCP agent plays and the env grades."""
        from .mcp.server import episode_server

        return episode_server(self, name)

    # ------------------------------------------------------------------ state access
    def snapshot(self) -> bytes:
        """The current episode database, serialized."""
        return self._require_conn().serialize()

    def restore(self, blob: bytes) -> None:
        """Make `blob` (from `snapshot()` of an env of the same theme) the episode database. Anything else
        (not bytes, not a database, a damaged one, another theme's) raises a SnapshotError and changes nothing."""
        conn = self._check_snapshot(blob)
        self._close_conn()
        self.conn = conn
        self.db = self.theme.db(self.conn)
        self._watch_writes(restored=True)

    def _check_snapshot(self, blob) -> Any:
        if self.backend is not None:
            raise SnapshotError(f"Expected a theme world to restore into, got the external backend {self.backend.id!r}, whose state lives outside the env.")
        if not isinstance(blob, (bytes, bytearray, memoryview)):
            raise SnapshotError(f"Expected the bytes env.snapshot() returned, got {type(blob).__name__}.")
        blob = bytes(blob)
        if not blob.startswith(SQLITE_HEADER) or len(blob) < 512:
            raise SnapshotError(f"Expected the bytes env.snapshot() returned (a SQLite database), got {len(blob):,} bytes "
                                f"starting {blob[:16]!r}. Pass what snapshot() gave you, unchanged.")
        expected = self._schema()
        conn = None
        try:
            conn = open_copy(blob)
            schema = _schema_of(conn)
            damage = conn.execute("PRAGMA quick_check").fetchone()[0]
        except (sqlite3.DatabaseError, MemoryError) as exc:
            if conn is not None:
                conn.close()
            raise SnapshotError(f"Expected a readable snapshot, got a damaged database ({exc}). Take a new one with env.snapshot().") from None
        if schema != expected:
            conn.close()
            raise SnapshotError(f"Expected a snapshot of theme {self.theme.id!r} (tables {sorted(expected)}), got one with tables "
                                f"{sorted(schema)}. Restore it into an env of the theme it came from.")
        if damage != "ok":
            conn.close()
            raise SnapshotError(f"Expected a readable snapshot, got a damaged database ({damage}). Take a new one with env.snapshot().")
        return conn

    def _schema(self) -> dict[str, str]:
        """The theme world's tables and their CREATE statements (read once)."""
        if self._template_schema is None:
            conn = open_copy(self.theme.world(self.db_seed, self.scale).template)
            try:
                self._template_schema = _schema_of(conn)
            finally:
                conn.close()
        return self._template_schema

    def state_hash(self, tables: Sequence[str] | None = None) -> str:
        if self.backend is not None:
            return self.backend.state_hash(tables)
        return state_hash(self._require_conn(), tables)

    # ------------------------------------------------------------------ internals
    def _apply(self, parsed: ParsedAction, text: str) -> bool:
        """Record the action and its results; True when the agent has responded (episode over)."""
        calls = parsed.calls
        message: dict[str, Any] = {"role": "assistant", "content": _clip(parsed.text if calls else text)}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{self.turn}_{i}", "type": "function", "function": {"name": c.name, "arguments": _as_json_object(c.arguments)}}
                for i, c in enumerate(calls)
            ]
        self.messages.append(message)
        self._transcript.add(f"\n[assistant]\n{_clip(text)}\n")
        if parsed.error is not None:
            self._observe(f"Error: could not read your tool call: {parsed.error} "
                          'Use {"name": "<tool>", "arguments": {...}}.', name="parser")
            return False
        if parsed.is_response:
            if self.user is None:
                self.submitted = parsed.text
                return True
            if not parsed.text.strip():
                self._observe("Error: your message was empty. Ask the user a question, call a tool, or submit.", name="dialogue")
                return False
            self.submitted = parsed.text  # the agent's latest words stand as its answer if the user ends here
            reply = self._user_reply()
            return reply is not None and self._hear_user(reply)  # None: a relayed user answers through user_says()
        for i, call in enumerate(calls):
            if call.name == "submit":
                answer = call.arguments.get("answer", call.args[0] if call.args else None)
                self.submitted = answer
                self._observe(f"Submitted: {_clip(json.dumps(answer, ensure_ascii=False, default=str), 200)}", name="submit", call_id=f"call_{self.turn}_{i}")
                return True
            result = self.backend.call(call) if self.backend is not None else self.theme.toolset.call(self.db, call)
            self._observe(result.content, name=call.name, call_id=f"call_{self.turn}_{i}")
        return False

    def _user_reply(self) -> str | None:
        """The user's answer to the agent's words (envs where the user also acts, like tau2 telecom, override it)."""
        return self.user.reply(self.scenario, self.dialogue())

    def dialogue(self) -> list[dict]:
        """The conversation as the user sees it: the user's messages and the agent's words, no tool traffic."""
        return [{"role": m["role"], "content": m["content"]} for m in self.messages[1:]
                if m["role"] == "user" or (m["role"] == "assistant" and not m.get("tool_calls"))]

    def _add_user_message(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        self._transcript.add(f"\n[user]\n{text}\n", opening=len(self.messages) == 2)

    def _hear_user(self, text: str) -> bool:
        """Record the user's reply; True when it ends the conversation."""
        if not text.strip():
            text = "(the user sent an empty message)"
        self._add_user_message(_clip(text))
        self.ended_by = end_reason(text)
        return self.ended_by is not None

    def _observe(self, content: str, name: str, call_id: str | None = None) -> None:
        content = _clip(content)
        self.messages.append({"role": "tool", "tool_call_id": call_id or f"call_{self.turn}_error", "name": name, "content": content})
        self._transcript.add(f"\n[tool {name}]\n{content}\n")

    def _choose_task(self, options: dict) -> Task:
        if "task" in options:
            return self._check_task(options["task"])
        if self.tasks:
            return self.tasks[int(self.np_random.integers(len(self.tasks)))]
        from .synthesis import synthesize_task, task_key
        from .synthesis.persona import requests_as

        difficulty = options.get("difficulty", self.difficulty)
        # A theme that cannot make this level gives the nearest lower one (info["difficulty"] says which);
        # a seed whose candidates all break the task rules is followed by the next one (still one
        # sequence per reset seed, so episodes stay deterministic).
        # A task this env already gave since its last seeding is skipped for the next seed (a thin theme
        # that keeps repeating gives the repeat after REPEAT_DRAWS tries).
        failures, repeats = 0, 0
        while True:
            try:
                with requests_as(self.requests):
                    task = synthesize_task(self.theme, difficulty, int(self.np_random.integers(2**31)), self.task_kind, self.db_seed,
                                           fallback=True)
            except TaskError:
                failures += 1
                if failures >= SYNTHESIS_SEEDS:
                    raise
                continue
            key = task_key(task)
            if key in self._issued and repeats < REPEAT_DRAWS:
                repeats += 1
                continue
            if len(self._issued) >= 100_000:
                self._issued.clear()  # memory stays bounded on endless training runs
            self._issued.add(key)
            return task

    def _check_task(self, task) -> Task:
        """A task given to reset(): a Task (or its dict) of this env's theme whose tables the world has."""
        if isinstance(task, dict):
            try:
                task = Task.from_dict(task)
            except TypeError as exc:
                raise TaskError(f"Expected a task dict as Task.to_dict() writes it, got one that does not fit: {exc}.") from None
        if not isinstance(task, Task):
            raise TaskError(f"Expected options['task'] to be a Task or its dict, got {type(task).__name__}.")
        if task.theme != self.theme.id:
            raise TaskError(f"Expected a task of theme {self.theme.id!r}, got one of {task.theme!r} ({task.id!r}). "
                            "Reset an env of that theme with it.")
        if not (isinstance(task.db_seed, numbers.Integral) and not isinstance(task.db_seed, bool)):
            raise TaskError(f"Expected the task's db_seed to be an int, got {task.db_seed!r}.")
        if self.backend is None:
            unknown = set(task.state_tables) - {t.name for t in self.theme.spec.tables}
            if unknown:
                raise TaskError(f"Expected the task's state_tables among theme {self.theme.id!r}'s tables, got {sorted(unknown)}.")
        return task

    def _info(self) -> dict:
        info = {
            "messages": list(self.messages),  # a copy: an info kept from an earlier step must not grow
            "tools": self.theme.tool_schemas,
            "task_id": self.task.id,
            "difficulty": self.task.difficulty,
            "theme": self.theme.id,
            "turn": self.turn,
        }
        if self.user is not None:
            info["user"] = user_label(self.user)
            if self.ended_by is not None:
                info["ended_by"] = self.ended_by
        if self.verification is not None:
            info["verification"] = self.verification.to_dict()
        return info

    def _watch_writes(self, restored: bool) -> None:
        """Record the tables this episode writes to (a restored snapshot may differ anywhere)."""
        from .synthesis.facts import written_table

        self._written: set[str] | None = None if restored else set()

        def trace(sql: str) -> None:
            table = written_table(sql)
            if table and self._written is not None:
                self._written.add(table)

        self.conn.set_trace_callback(trace)

    def _final_hash(self) -> str:
        """The hash of the task's gold tables now; when the episode wrote none of them, the template's (cached), so
        an episode that changed nothing ends without reading every row."""
        if self.backend is not None or self._written is None:
            return self.state_hash(self.task.state_tables or None)
        tables = tuple(sorted(self.task.state_tables or (t.name for t in self.theme.spec.tables)))
        if not self._written & set(tables):
            key = (self.theme.id, id(self.theme), self.task.db_seed, self.scale, tables)
            if key not in _INITIAL_STATE:
                conn = open_copy(self.theme.world(self.task.db_seed, self.scale).template)
                try:
                    _INITIAL_STATE[key] = state_hash(conn, list(tables))
                finally:
                    conn.close()
            return _INITIAL_STATE[key]
        return self.state_hash(self.task.state_tables or None)

    def _untouched(self) -> bool | None:
        """Whether every table outside the task's gold tables still holds its initial rows (None when the
        world is external and cannot be compared)."""
        if self.backend is not None or self.conn is None:
            return None
        tables = {t.name for t in self.theme.spec.tables} if self._written is None else self._written
        initial = _initial_hashes(self.theme, self.task.db_seed, self.scale)
        return all(state_hash(self.conn, [t]) == initial(t) for t in sorted(tables - set(self.task.state_tables)))

    def _require_conn(self):
        if self.conn is None:
            raise ResetNeededError("Expected an episode database; call env.reset() first.")
        return self.conn

    def _close_conn(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        state = {"kwargs": self._init_kwargs, "np_random": self._np_random}
        if self.backend is None and (not self._done or self.verification is not None):  # an external state cannot be saved
            state["episode"] = {k: getattr(self, k) for k in ("task", "turn", "submitted", "verification", "messages", "_transcript", "_done",
                                                              "scenario", "ended_by")}
            state["db"] = self.conn.serialize() if self.conn is not None else None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["kwargs"])
        self._np_random = state["np_random"]
        if "episode" in state:
            self.__dict__.update(state["episode"])
            if state["db"] is not None:
                self.restore(state["db"])


def check_env_args(args: dict[str, Any], owner: str = "AgentWorldEnv", accepted: Sequence[str] | None = None) -> None:
    """Raise a typed error, with a hint, for any argument AgentWorldEnv refuses: unknown names (did you
    mean), wrong types, values out of range or not among the choices. Run at construction, so at
    gym.make time, by AgentWorldEnv and by every env that passes arguments on to it later (the pool)."""
    import inspect

    if accepted is None:
        accepted = [p for p in inspect.signature(AgentWorldEnv.__init__).parameters if p not in ("self", "unknown")]
    check_unknown_kwargs(owner, args, accepted)
    for name in ("difficulty", "max_turns", "db_seed"):
        if name in args and not (isinstance(args[name], numbers.Integral) and not isinstance(args[name], bool)):
            raise ConfigError(f"Expected {name} to be an int, got {args[name]!r} ({type(args[name]).__name__}).")
    if "db_seed" in args and args["db_seed"] < 0:
        raise ConfigError(f"Expected db_seed >= 0, got {args['db_seed']!r}.")
    if "difficulty" in args and args["difficulty"] not in range(1, 6):
        raise ConfigError(f"Expected difficulty in 1-5, got {args['difficulty']!r}.")
    if "max_turns" in args and args["max_turns"] < 1:
        raise ConfigError(f"Expected max_turns >= 1, got {args['max_turns']!r}.")
    if "scale" in args and not (isinstance(args["scale"], numbers.Real) and 0 < args["scale"] < float("inf")):
        raise ConfigError(f"Expected scale to be a number > 0, got {args['scale']!r}.")
    if "task_kind" in args:
        from .synthesis import KINDS

        check_choice("task_kind", args["task_kind"], KINDS)
    if "reward_mode" in args:
        check_choice("reward_mode", args["reward_mode"], REWARD_MODES)
    if "requests" in args:
        from .synthesis.persona import check_requests

        check_requests(args["requests"])
    if "render_mode" in args:
        check_choice("render_mode", args["render_mode"], (None, *AgentWorldEnv.metadata["render_modes"]))


def _schema_of(conn) -> dict[str, str]:
    """table name -> its CREATE statement: what a snapshot of a theme's world must have."""
    return dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall())


def instructions_of(theme) -> str:
    """The system prompt without the tool schemas (chat templates render those from `tools=`)."""
    instructions = getattr(theme, "instructions", None)
    return instructions if instructions is not None else theme.system_prompt.split(TOOLS_HEADER)[0]


def _as_json_object(arguments: dict) -> dict:
    """Tool-call arguments as a JSON object (not a JSON string: chat templates encode it once themselves)."""
    return json.loads(json.dumps(arguments, ensure_ascii=False, default=str))


_INITIAL: dict[tuple, dict[str, str]] = {}
_INITIAL_STATE: dict[tuple, str] = {}  # (theme, world, tables) -> hash of those tables in the template


def _initial_hashes(theme: Theme, db_seed: int, scale: float):
    """table -> hash of its rows in the world's template (computed on first need, then kept)."""
    cache = _INITIAL.setdefault((theme.id, id(theme), db_seed, scale), {})

    def initial(table: str) -> str:
        if table not in cache:
            conn = open_copy(theme.world(db_seed, scale).template)
            try:
                cache[table] = state_hash(conn, [table])
            finally:
                conn.close()
        return cache[table]

    return initial


def _load_task_list(tasks, theme_id: str) -> list[Task] | None:
    if tasks is None:
        return None
    if isinstance(tasks, (str, Path)):
        loaded = load_tasks(tasks)
    elif not isinstance(tasks, Sequence):
        raise ConfigError(f"Expected tasks to be a JSONL path or a list of tasks, got {type(tasks).__name__}.")
    else:
        loaded = [t if isinstance(t, Task) else Task.from_dict(t) for t in tasks]
    if not loaded:
        raise TaskError("Expected at least one task in `tasks`, got none.")
    wrong = {t.theme for t in loaded} - {theme_id}
    if wrong:
        raise TaskError(f"Expected tasks of theme {theme_id!r}, got tasks of {sorted(wrong)}. Pass them to that theme's env.")
    return loaded
