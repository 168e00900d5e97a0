"""Optional language-model phrasing of a task request (off by default).

`rephrase_task(task, policy)` asks a model (any policy spec of `agentworld_gym.policies.make_policy`,
`openai:<model>@<url>` or `hf:<model>`, or a policy object) to say a templated request in a person's own
words, then checks the rewrite before anything uses it:

* it still names every value the verifier needs the agent to be told (`needed`: every id, quoted value,
  email, date and number of the original request, verbatim);
* it leaks none it must not: the answer, and the values the agent has to find (gold arguments the
  original request does not state).

A rewrite that fails either check raises `PhrasingError` (one line, the value named) and nothing is
written. Rewrites are cached per task (`<cache>/<task id>.json`, written whole through a temporary
file), so a suite is phrased once. The deterministic wording stays the default everywhere (synthesis,
tests, the held-out suite); this is opt-in.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from ..errors import PhrasingError
from ..tasks import Task
from .quality import instruction_values
from .wording import show

PROMPT = ("Rewrite the customer request below the way the customer would say it in a chat: first person, natural, "
          "one short paragraph, same meaning. Keep each of these values exactly as written: {values}. Do not add any "
          "other names, numbers, ids or dates. Reply with the rewritten request only.\n\nRequest: {text}")


def needed(task: Task) -> list[str]:
    """The values the rewrite must keep verbatim: those of the original request (`instruction_values`)."""
    return instruction_values(task.instruction)


def forbidden(task: Task) -> list[str]:
    """Values the rewrite must not add: the answer, and gold arguments the original request does not state."""
    values = [task.answer] if task.answer_type != "none" and task.answer is not None else []
    values = [v for a in values for v in (a if isinstance(a, list) else [a])]
    values += [v for c in task.solution for v in c.get("arguments", {}).values()]
    shown = {show(v) for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    return sorted(v for v in shown if len(v) > 2 and v not in task.instruction)


def check(task: Task, text: str) -> None:
    """Raise PhrasingError when `text` drops a needed value or leaks a forbidden one."""
    missing = [v for v in needed(task) if v not in text]
    if missing:
        raise PhrasingError(f"Expected the rewrite of task {task.id} to keep {missing[0]!r} (the verifier needs it), got a text without it; "
                            "keep the deterministic wording (phrasing off) or try another model.")
    leaked = [v for v in forbidden(task) if v in text]
    if leaked:
        raise PhrasingError(f"Expected the rewrite of task {task.id} to leak nothing the agent must find, got {leaked[0]!r} in it; "
                            "keep the deterministic wording (phrasing off) or try another model.")


def _policy(policy: Any):
    if isinstance(policy, str):
        from ..policies import make_policy

        return make_policy(policy)
    return policy


def _ask(policy, prompt: str) -> str:
    """One reply of a policy to a plain user message (the same `act` an episode uses, with no tools)."""
    reply = policy.act(prompt, {"messages": [{"role": "user", "content": prompt}], "tools": []})
    return " ".join(str(reply).split()).strip().strip('"')


def rephrase_task(task: Task, policy: Any, cache: str | Path | None = None) -> Task:
    """`task` with its request in the model's words, checked (`check`) and cached per task id."""
    path = Path(cache) / f"{task.id}.json" if cache else None
    if path is not None and path.is_file():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored.get("original") == task.instruction:
            check(task, stored["text"])
            return dataclasses.replace(task, instruction=stored["text"], features={**task.features, "phrased_by": stored["model"]})
    model = _policy(policy)
    text = _ask(model, PROMPT.format(values=", ".join(needed(task)) or "(none)", text=task.instruction))
    check(task, text)  # before anything is written
    name = policy if isinstance(policy, str) else type(model).__name__
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"original": task.instruction, "text": text, "model": name}), encoding="utf-8")
        tmp.replace(path)
    return dataclasses.replace(task, instruction=text, features={**task.features, "phrased_by": name})


__all__ = ["PROMPT", "check", "forbidden", "needed", "rephrase_task"]
