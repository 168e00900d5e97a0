"""Agent-World release environments as Gym envs (`agentworld import agentworld-release PATH`).

Format: PATH holds `environment_mix/` (or is it). An environment is a folder `<id>/` of JSON data files
plus `<id>_step4_checkpoint.json` (beside the folder or inside it) whose `data.ToolDesignAgent.tool_schemas`
lists tools as {name, description, parameters (JSON Schema), implementation (Python source of a standalone
`def name(..., **_extra)`)}; `metadata.taxonomy` holds the labels (`L1_name`/`L2_name`/`L3_name`, read as
L1/L2/L3). A tool finds its data folder through `$MCP_DB_DIR`, reads and writes the JSON files itself, and
returns a JSON-able dict or {"error": {"code": ..., "message": ...}}. The release's tasks live in
`environment_mix/questions/<id>.json` (see `release_tasks`).

Third-party tool code never runs in this process: a worker (`python -I -S`) runs it in the sandbox of
`agentworld_gym.sandbox` (bubblewrap namespaces, its own uid, read-only view, no network, rlimits, PID-
namespace kill) against a per-episode copy of the data folder, one call at a time, each within a time limit;
a worker that hangs or dies is killed with everything it started and restarted, and the agent sees an error.

FROZEN — what the worker makes deterministic before any tool code loads, so the same calls give the same
state: `time.time`/`time_ns`/`localtime`/`gmtime`/`ctime`/`strftime` and `datetime.datetime.now`/`utcnow`/
`today`, `datetime.date.today` return one instant per episode (2026-01-01T00:00:00Z plus task.db_seed days;
it does not tick); `os.urandom` (hence `uuid.uuid4`, `secrets`, `random.SystemRandom`), `uuid.uuid1` and the
global `random` draw from a generator reseeded before every call from (task.db_seed, the call's name and
arguments, how many times that same call ran this episode) — so an extra read before a write does not change
the ids the write creates. String hashing is fixed (PYTHONHASHSEED=0), so set order does not vary between workers. Not frozen: `time.monotonic`/`perf_counter` (durations only) and anything a tool
reads from outside the copy (there is nothing to read). The state hash covers every file of the copy except
the call logs `release_tasks` detects, which each task names in `features["state_excluded"]`.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import select
import shutil
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym

from ..actions import ToolCall
from ..errors import BackendError, ConfigError, did_you_mean
from ..sandbox import (
    Limits,
    OutOfBounds,
    Sandbox,
    check_isolation,
    episode_folder,
    folder_usage,
    python_executable,
    read_bounded_json,
    release_folder,
)
from ..tasks import Task
from ..theme import SUBMIT_SCHEMA, tools_prompt
from ..tools import ToolResult, to_text, validate_arguments
from .backend import json_hash, state_digest
from .client import check_schema
from .registration import RELEASE_ENTRY_POINT, data_home, env_id_for, index_path, read_index, register_release_env

CHECKPOINT_SUFFIX = "_step4_checkpoint.json"
TASKS_VERSION = 2  # part of the task cache's name: tasks built by an older loader are rebuilt
MAX_LOGGED = 100_000  # characters of each tool result kept in `episode_log` for grading success criteria
FROZEN_EPOCH = 1767225600.0  # 2026-01-01T00:00:00Z: the worker's clock, plus one day per task db_seed

# The worker: reads one JSON request a line, answers one JSON line. Tool output printed to stdout
# is sent to stderr so it cannot corrupt the protocol. Before any tool code loads it freezes the clock
# and makes every source of randomness a seeded generator (see FROZEN in the module doc); each call
# reseeds it from the seed the host sends, so a call's ids depend on the call, not on what ran before.
WORKER = r'''
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]  # -c puts the working folder (the tools' data) first
import json, os
out, sys.stdout = sys.stdout, sys.stderr
import datetime, random, time, uuid
_rng = random.Random(0)
os.urandom = random._urandom = lambda n: _rng.randbytes(n)  # uuid4, secrets and SystemRandom draw from here
_clock = [0.0]
_real = {k: getattr(time, k) for k in ("localtime", "gmtime", "ctime", "strftime")}
time.time = lambda: _clock[0]
time.time_ns = lambda: int(_clock[0] * 1e9)
time.localtime = lambda secs=None: _real["localtime"](_clock[0] if secs is None else secs)
time.gmtime = lambda secs=None: _real["gmtime"](_clock[0] if secs is None else secs)
time.ctime = lambda secs=None: _real["ctime"](_clock[0] if secs is None else secs)
time.strftime = lambda fmt, t=None: _real["strftime"](fmt, time.localtime() if t is None else t)
class _DateTime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(_clock[0], tz)
    @classmethod
    def utcnow(cls):
        return cls.fromtimestamp(_clock[0], datetime.timezone.utc).replace(tzinfo=None)
    @classmethod
    def today(cls):
        return cls.fromtimestamp(_clock[0])
class _Date(datetime.date):
    @classmethod
    def today(cls):
        return cls.fromtimestamp(_clock[0])
datetime.datetime, datetime.date = _DateTime, _Date
uuid.uuid1 = lambda node=None, clock_seq=None: uuid.UUID(int=_rng.getrandbits(128), version=1)
tools = {}
for line in sys.stdin:
    msg = json.loads(line)
    try:
        if msg["op"] == "load":
            _clock[0] = msg["clock"]
            for name, src in msg["tools"].items():
                scope = {"__name__": "tool_" + name}
                exec(compile(src, "<tool " + name + ">", "exec"), scope)
                tools[name] = scope[name]
            reply = {"ok": True}
        else:
            _rng.seed(msg["seed"])
            random.seed(msg["seed"])
            result = tools[msg["name"]](**msg["arguments"])
            reply = {"ok": True, "result": json.loads(json.dumps(result))}
    except BaseException as exc:
        reply = {"ok": False, "error": type(exc).__name__ + ": " + str(exc)[:500]}
    out.write(json.dumps(reply) + "\n")
    out.flush()
'''

def _send(proc, data: bytes, deadline: float) -> str | None:
    """Write `data` to the worker's stdin by the deadline (a worker that stops reading cannot block the host)."""
    fd = proc.stdin.fileno()
    os.set_blocking(fd, False)
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            return "the tool process stopped reading its requests"
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue
        except (BrokenPipeError, OSError):
            return "the tool process exited"
    return None


def find_environments(path: str | Path) -> dict[str, tuple[Path, Path | None]]:
    """{id: (checkpoint file, data folder or None)} for every checkpoint under `path` (or `path`/environment_mix), one level deep."""
    root = Path(path)
    if not root.is_dir():
        raise ConfigError(f"Expected a release folder, got {str(path)!r} (not a directory).")
    if (root / "environment_mix").is_dir():  # the release's top folder
        root = root / "environment_mix"
    found = {}
    for ckpt in sorted([*root.glob("*" + CHECKPOINT_SUFFIX), *root.glob("*/*" + CHECKPOINT_SUFFIX)]):
        env_id = ckpt.name[: -len(CHECKPOINT_SUFFIX)]
        folder = ckpt.parent if ckpt.parent.name == env_id else ckpt.parent / env_id
        found[env_id] = (ckpt, folder if folder.is_dir() else None)
    return found


def labels_of(taxonomy: dict) -> dict:
    """{"L1", "L2", "L3"} from a checkpoint's taxonomy (the release writes L1_name/L2_name/L3_name)."""
    out = {}
    for level in ("L1", "L2", "L3"):
        value = taxonomy.get(f"{level}_name") or taxonomy.get(level)
        if value:
            out[level] = str(value)
    return out


def load_spec(checkpoint: Path, folder: Path | None) -> dict:
    """The environment's tools and labels, validated; raises ConfigError saying what is wrong."""
    if folder is None:
        raise ConfigError("no data folder <id>/ beside the checkpoint")
    try:
        doc = json.loads(checkpoint.read_text(encoding="utf-8"))
        schemas = doc["data"]["ToolDesignAgent"]["tool_schemas"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ConfigError(f"unreadable checkpoint ({type(exc).__name__}: {exc}); expected data.ToolDesignAgent.tool_schemas") from None
    if not isinstance(schemas, list) or not schemas:
        raise ConfigError("expected a non-empty list in data.ToolDesignAgent.tool_schemas")
    tools = []
    for i, t in enumerate(schemas):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not isinstance(t.get("implementation"), str):
            raise ConfigError(f"tool #{i}: expected name and implementation strings")
        problem = check_schema(t.get("parameters"))
        if problem:
            raise ConfigError(f"tool {t['name']!r}: broken parameters schema: {problem}")
        try:
            module = ast.parse(t["implementation"])
        except SyntaxError as exc:
            raise ConfigError(f"tool {t['name']!r}: implementation does not parse ({exc.msg}, line {exc.lineno})") from None
        if not any(isinstance(n, ast.FunctionDef) and n.name == t["name"] for n in module.body):
            raise ConfigError(f"tool {t['name']!r}: implementation defines no function named {t['name']!r}")
        tools.append({"name": t["name"], "description": str(t.get("description", "")), "parameters": t["parameters"],
                      "implementation": t["implementation"]})
    taxonomy = labels_of((doc.get("metadata") or {}).get("taxonomy") or {})
    return {"tools": tools, "taxonomy": taxonomy, "description": str((doc.get("metadata") or {}).get("description", ""))}


class ReleaseBackend:
    """A release environment: its tools in a sandboxed worker over a per-episode copy of its data."""

    def __init__(self, path: str | Path, env_id: str, timeout: float = 5.0, unsafe: bool = False, limits: Limits | None = None,
                 excluded: Sequence[str] = (), judge=None):
        envs = find_environments(path)
        if env_id not in envs:
            raise ConfigError(f"Expected an environment id of {str(path)!r}, got {env_id!r}.{did_you_mean(env_id, envs)}")
        self._config = {"path": str(path), "env_id": env_id, "timeout": timeout, "unsafe": unsafe, "limits": limits,
                        "excluded": tuple(excluded), "judge": judge}
        self.judge = judge  # a policy spec or object that grades the success criteria no mechanical check covers
        checkpoint, self.folder = envs[env_id]
        spec = load_spec(checkpoint, self.folder)
        self.env_id, self.id, self.timeout, self.taxonomy = env_id, f"release-{env_id}", timeout, spec["taxonomy"]
        self._sources = {t["name"]: t["implementation"] for t in spec["tools"]}
        self.tools = [{"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
                      for t in spec["tools"]]
        self._schemas = {t["name"]: t["parameters"] for t in spec["tools"]}
        self.tool_schemas = [*self.tools, SUBMIT_SCHEMA]
        labels = " / ".join(self.taxonomy.values())
        self.system_prompt = tools_prompt(f"You are an assistant for the {env_id} environment{f' ({labels})' if labels else ''}. {spec['description']}",
                                          self.tool_schemas)
        self.excluded = set(excluded)  # call-log files left out of the state (named in each task's features)
        self.sandbox = Sandbox(limits, unsafe=unsafe)
        if not unsafe:
            check_isolation(limits)
        self.episode_dir: Path | None = None
        self._quota_mounted, self._over_quota = False, False
        self.episode_log: list[dict] = []  # this episode's calls: {name, ok, text}, for the success criteria
        self._clock, self._seed, self._calls = FROZEN_EPOCH, 0, Counter()

    # ------------------------------------------------------------------ worker
    @property
    def _proc(self):
        return self.sandbox.proc

    def _start_worker(self) -> None:
        # Not -I: it would also ignore PYTHONHASHSEED, and set order must not vary between runs (the worker's env is ours alone)
        self.sandbox.start([python_executable(), "-s", "-S", "-c", WORKER], self.episode_dir, {"PYTHONHASHSEED": "0"})
        reply = self._request({"op": "load", "tools": self._sources, "clock": self._clock}, self.timeout * 4)
        if not reply.get("ok"):
            self._stop_worker()
            raise BackendError(f"Expected the tools of {self.id} to load in the worker, got: {reply.get('error')}.")

    def _request(self, msg: dict, timeout: float) -> dict:
        """Send one request and read one reply line, all within `timeout` seconds and the limits' bounds.

        Whatever goes wrong (a hang, half a line, a reply too big, too deep or with too long a number, the group's
        CPU time spent) stops the worker, so the next call starts a fresh one on the same episode data."""
        proc, limits = self._proc, self.sandbox.limits
        deadline = time.monotonic() + timeout
        problem = _send(proc, (json.dumps(msg) + "\n").encode(), deadline)
        line = None
        if problem is None:
            line, problem = self._receive(proc, deadline, limits)
        if problem is None:
            try:
                return read_bounded_json(line, limits)
            except OutOfBounds as exc:
                problem = f"the tool's reply was refused: {exc}"
            except (ValueError, UnicodeDecodeError):
                problem = "the tool process answered garbage"
        self._stop_worker()
        return {"ok": False, "error": problem}

    def _receive(self, proc, deadline: float, limits: Limits) -> tuple[bytes | None, str | None]:
        """(one reply line, None) or (None, what went wrong); watches the deadline, the size and the group's CPU time."""
        fd, buf, cap = proc.stdout.fileno(), bytearray(), limits.reply_mb * 2**20
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None, f"the tool did not finish within {self.timeout:g}s"
            if select.select([fd], [], [], min(left, 0.25))[0]:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None, "the tool process exited"
                end = chunk.find(b"\n")
                buf += chunk if end < 0 else chunk[:end]
                if len(buf) > cap:
                    return None, f"the tool's reply was refused: more than the {cap:,} bytes allowed"
                if end >= 0:
                    return bytes(buf), None
            used = self.sandbox.cpu_seconds()
            if used is not None and used > limits.cpu_s:
                return None, f"the tool's processes used more than {limits.cpu_s} CPU seconds"

    def _stop_worker(self) -> None:
        self.sandbox.stop()

    # ------------------------------------------------------------------ Backend
    def reset(self, task: Task | None = None) -> None:
        self._stop_worker()
        self._remove_episode()
        self.episode_dir = Path(tempfile.mkdtemp(prefix="agentworld-release-")) / "db"
        self.episode_dir.mkdir()
        self._quota_mounted = not self.sandbox.unsafe and episode_folder(self.episode_dir, self.sandbox.limits)
        try:  # the original is never handed to tool code
            shutil.copytree(self.folder, self.episode_dir, symlinks=True, dirs_exist_ok=True)
        except OSError as exc:
            raise BackendError(f"Expected the data of {self.id} to fit the episode quota ({self.sandbox.limits.quota_mb} MB, "
                               f"{self.sandbox.limits.max_files} files), got {exc}. Pass limits=Limits(quota_mb=..., max_files=...).") from None
        for stray in self.episode_dir.glob("*" + CHECKPOINT_SUFFIX):
            stray.unlink()
        self.sandbox.prepare(self.episode_dir)
        self._seed = task.db_seed if task is not None else 0
        self._clock, self._calls, self._over_quota = FROZEN_EPOCH + 86400 * (self._seed % 3650), Counter(), False
        self.episode_log = []
        self._start_worker()

    def _remove_episode(self) -> None:
        if self.episode_dir is not None:
            if getattr(self, "_quota_mounted", False):
                release_folder(self.episode_dir)
            shutil.rmtree(self.episode_dir.parent, ignore_errors=True)
            self.episode_dir = None

    def call(self, call: ToolCall) -> ToolResult:
        result = self._call(call)
        self.episode_log.append({"name": call.name, "ok": result.ok, "text": result.content[:MAX_LOGGED]})
        return result

    def _call(self, call: ToolCall) -> ToolResult:
        schema = self._schemas.get(call.name)
        if schema is None:
            return ToolResult(False, f"Error: unknown tool {call.name[:80]!r}.{did_you_mean(call.name, self._schemas)} Available tools: {', '.join(self._schemas)}.")
        if call.args:
            order = list(schema.get("properties", {}))
            if len(call.args) > len(order):
                return ToolResult(False, f"Error: {call.name} takes at most {len(order)} positional arguments, got {len(call.args)}.")
        arguments = {**dict(zip(schema.get("properties", {}), call.args, strict=False)), **call.arguments}
        problem = validate_arguments(schema, arguments)
        if problem:
            return ToolResult(False, f"Error: invalid arguments for {call.name}: {problem}")
        if self.episode_dir is None:
            return ToolResult(False, "Error: the environment has not been reset.")
        if self._over_quota:
            return ToolResult(False, f"Error: {self._over_quota}; the episode cannot go on (reset starts a fresh one).")
        if self._proc is None:
            self._start_worker()  # after a timeout or crash: same episode data, fresh process
        # The same call gets the same ids however many other calls ran before it (see FROZEN).
        key = json.dumps([call.name, arguments], sort_keys=True, default=str)
        self._calls[key] += 1
        seed = hashlib.sha256(f"{self._seed}\n{key}\n{self._calls[key]}".encode()).hexdigest()
        reply = self._request({"op": "call", "name": call.name, "arguments": arguments, "seed": seed}, self.timeout)
        self.sandbox.reap()  # a child the tool left behind does not run on between calls
        if self.sandbox.worker_threads() > 1:
            self._stop_worker()  # nor does a thread it left in the worker: the next call starts a fresh one on the same data
        if not self._within_quota():
            limits = self.sandbox.limits
            self._over_quota = f"the tools wrote past the episode folder's quota ({limits.quota_mb} MB, {limits.max_files} files)"
            self._stop_worker()
            return ToolResult(False, f"Error: {call.name} failed: {self._over_quota}.")
        if not reply.get("ok"):
            return ToolResult(False, f"Error: {call.name} failed: {reply.get('error')}")
        data = reply.get("result")
        if isinstance(data, dict) and isinstance(data.get("error"), dict | str):
            err = data["error"]
            message = err.get("message") or err.get("code") or "error" if isinstance(err, dict) else err
            return ToolResult(False, f"Error: {message}")
        return ToolResult(True, to_text(data), data)

    def grade(self, task: Task, verification):
        """`verification` plus the task's success criteria, checked against this episode's tool results (`release_tasks.grade`)."""
        from ..suites.release import grade

        if isinstance(self.judge, str):
            from ..policies.base import make_policy

            self.judge = make_policy(self.judge)
        return grade(task, verification, self.episode_log, self.judge)

    def _within_quota(self) -> bool:
        """The kernel holds a mounted episode folder to its quota; elsewhere it is measured (a bounded walk)."""
        if self._over_quota:
            return False
        return self._quota_mounted or self.episode_dir is None or folder_usage(self.episode_dir, self.sandbox.limits) is not None

    def _files(self) -> list[tuple[str, Path]]:
        """(name, path) of every file of the episode copy, sorted."""
        if self.episode_dir is None:
            return []
        return [(str(f.relative_to(self.episode_dir)), f) for f in sorted(self.episode_dir.rglob("*"))]

    def _value(self, f: Path):
        """A file's content for the state: JSON parsed within bounds, else a streamed digest; never a file past the size cap.

        Opened without following links and without blocking, and checked to be a regular file once open: a tool's
        thread cannot swap in a FIFO or a link between the listing and the read."""
        if f.is_symlink():
            return "symlink -> " + os.readlink(f)
        try:
            fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            return f"unreadable: {type(exc).__name__}"
        with os.fdopen(fd, "rb") as fh:
            st, cap = os.fstat(fd), self.sandbox.limits.state_file_mb * 2**20
            if not stat.S_ISREG(st.st_mode):
                return "not a regular file"
            if st.st_size > cap:
                return f"refused: {st.st_size} bytes, more than the {cap} a data file may hold"
            if f.suffix == ".json":
                raw = fh.read(cap + 1)
                with contextlib.suppress(ValueError, UnicodeDecodeError):
                    return read_bounded_json(raw, self.sandbox.limits, max_bytes=cap)
                return hashlib.sha256(raw).hexdigest()
            digest = hashlib.sha256()
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
            return digest.hexdigest()

    def state(self, include_excluded: bool = False) -> dict:
        """Every file of the episode copy (JSON parsed, else a digest); symlinks by target, never followed."""
        if not self._within_quota():
            return {"<episode>": "over its quota"}
        return {name: self._value(f) for name, f in self._files()
                if (include_excluded or name not in self.excluded) and (f.is_symlink() or f.is_file())}

    def state_hash(self, tables: Sequence[str] | None = None) -> str:
        """`state_digest` of `state()`, one file in memory at a time."""
        if not self._within_quota():
            return state_digest({"<episode>": "over its quota"})
        digests = {}
        for name, f in self._files():
            if name in self.excluded or not (f.is_symlink() or f.is_file()) or (tables and Path(name).stem not in tables and name not in tables):
                continue
            digests[name] = json_hash(self._value(f))
        return json_hash(digests)

    def close(self) -> None:
        self._stop_worker()
        self._remove_episode()

    def __getstate__(self) -> dict:
        return {"config": {**self._config, "excluded": tuple(sorted(self.excluded))}}  # the call logs found since

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["config"])

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


def _fingerprint(path: str | Path, env_id: str) -> str:
    """Changes when the environment's checkpoint or questions change (then its tasks are rebuilt)."""
    from ..suites.release import questions_file

    checkpoint, _ = find_environments(path)[env_id]
    files = [checkpoint, questions_file(Path(path), env_id)]
    return json_hash([[str(f), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f is not None])


def release_tasks(backend: ReleaseBackend, path: str | Path, n_tasks: int = 6, seed: int = 0, examples: dict | None = None) -> tuple[list[Task], dict]:
    """The release's verified tasks for this environment plus synthesized ones on top; cached in data_home()."""
    from ..suites.release import ReleaseTaskReport, load_release_tasks, questions_file, recheck_synthesized
    from ..tasks import load_tasks, save_tasks
    from .discovery import discover_tasks

    cache = data_home() / "release" / f"{backend.env_id}-{_fingerprint(path, backend.env_id)}-n{n_tasks}-s{seed}-v{TASKS_VERSION}"
    if (cache / "tasks.jsonl").is_file() and (cache / "report.json").is_file():
        report = json.loads((cache / "report.json").read_text(encoding="utf-8"))
        backend.excluded = set(report["state_excluded"])
        return load_tasks(cache / "tasks.jsonl"), report
    questions = questions_file(Path(path), backend.env_id)
    tasks, report = load_release_tasks(backend, questions) if questions else ([], ReleaseTaskReport(backend.env_id))
    # chains of up to 5 calls, so levels 1-5 where the tools allow
    synthesized = discover_tasks(backend, n_tasks=n_tasks, seed=seed, examples=examples, max_calls=5).tasks if n_tasks else []
    synthesized = recheck_synthesized(backend, synthesized, report)
    report = {**report.to_dict(), "questions_file": str(questions) if questions else None, "synthesized": len(synthesized)}
    cache.mkdir(parents=True, exist_ok=True)
    save_tasks([*tasks, *synthesized], cache / "tasks.jsonl")
    (cache / "report.json").write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return [*tasks, *synthesized], report


def make_release_env(path: str, env_id: str, tasks=None, n_tasks: int = 6, seed: int = 0, timeout: float = 5.0,
                     examples: dict | None = None, max_turns: int = 20, reward_mode: str = "binary", render_mode: str | None = None,
                     unsafe: bool = False, judge=None, limits: Limits | None = None):
    """A release environment as an AgentWorldEnv: its release tasks plus `n_tasks` synthesized ones, unless `tasks` is given.

    `unsafe=True` runs the tool code without the sandbox (loudly); only for releases you trust. `judge` (a policy
    spec such as "openai:MODEL@URL", or a policy) grades the success criteria that no mechanical check covers;
    without one they are listed in the verification's `criteria_not_graded`."""
    from ..env import AgentWorldEnv

    # Given tasks name the call logs their state hashes leave out; the backend must leave them out too.
    excluded = sorted({name for t in tasks or () for name in t.features.get("state_excluded", ())})
    backend = ReleaseBackend(path, env_id, timeout, unsafe=unsafe, judge=judge, limits=limits, excluded=excluded)
    try:
        if tasks is None:
            tasks, report = release_tasks(backend, path, n_tasks, seed, examples)
            if not tasks:
                raise BackendError(f"Expected tasks in release environment {env_id!r}, got none (dropped questions: {report['dropped']}). "
                                   "Pass tasks=... instead.")
        return AgentWorldEnv(backend, tasks=tasks, max_turns=max_turns, reward_mode=reward_mode, render_mode=render_mode)
    except BaseException:
        backend.close()
        raise


def register_release(path: str | Path, build_tasks: bool = False, unsafe: bool = False, n_tasks: int = 6, progress: bool = False) -> dict:
    """Register every environment of a release folder that loads, remember it in the index, and report the others.

    Later processes register the indexed environments on `import agentworld_gym` (`registration.register_index`).

    With `build_tasks`, also load each environment's release tasks (gold replayed in the sandbox) and
    synthesized ones, and report per environment what loaded, replayed to 1.0 or was dropped."""
    from tqdm import tqdm

    root = str(Path(path).resolve())
    registered, failed, taxonomy, tasks, index = [], {}, {}, {}, read_index()
    for env_id, (checkpoint, folder) in tqdm(find_environments(path).items(), desc="release", disable=not progress):
        try:
            spec = load_spec(checkpoint, folder)
        except ConfigError as exc:
            failed[env_id] = str(exc)
            continue
        gid = env_id_for(env_id)
        if gid in gym.registry and gym.registry[gid].entry_point != RELEASE_ENTRY_POINT:
            failed[env_id] = f"{gid} is already the id of another environment (a catalog theme); not replaced"
            continue
        entry = {"path": root, "taxonomy": spec["taxonomy"], "n_tools": len(spec["tools"])}
        if build_tasks:
            try:
                backend = ReleaseBackend(root, env_id, unsafe=unsafe)
                try:
                    found, report = release_tasks(backend, root, n_tasks)
                finally:
                    backend.close()
            except BackendError as exc:
                failed[env_id] = str(exc)
                continue
            tasks[gid] = report
            entry["tasks"] = len(found)
        register_release_env(env_id, root)
        index[env_id] = entry
        registered.append(gid)
        taxonomy[gid] = spec["taxonomy"]
    index_path().parent.mkdir(parents=True, exist_ok=True)
    tmp = index_path().with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": 1, "environments": index}, indent=1), encoding="utf-8")
    tmp.replace(index_path())
    return {"registered": registered, "failed": failed, "taxonomy": taxonomy, "tasks": tasks, "index": str(index_path())}
