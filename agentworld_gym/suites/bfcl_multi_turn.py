"""BFCL multi-turn categories as episodes against the package's own state classes.

An item is a conversation of user turns over stateful APIs (file system, trading, travel, vehicle,
messaging, ...) whose Python classes ship in `bfcl-eval`. Each episode builds fresh instances from the
item's initial configuration; within a turn the policy's calls run on them (methods called with the
decoded arguments, never `eval`) and their results come back as tool messages until the policy
replies without a call, then the next user turn starts.

Graded, as BFCL's multi-turn checker does, after every turn whose gold list is not empty: the policy
made a call in the turn; every instance's public attributes equal those of instances that ran the
gold calls; every gold call's result appears among the policy's results so far. A turn whose gold list
is empty (the request cannot be served: a parameter or a function is missing) passes only without a
call. miss_func items hold the missing functions back until the turn that adds them. Not graded: the
policy's free-text answers (BFCL does not grade them either).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from collections import Counter
from pathlib import Path
from typing import Any

from .bfcl import BadItem, _read_jsonl, as_tools, bfcl_dir

PREFIX = "multi_turn_"
MAX_STEPS = 10  # policy replies per user turn before the turn is cut


def _classes():
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, MULTI_TURN_FUNC_DOC_FILE_MAPPING

    return CLASS_FILE_PATH_MAPPING, MULTI_TURN_FUNC_DOC_FILE_MAPPING


def load_multi_turn(path: str | Path | None, category: str, limit: int | None = None, skipped: dict | None = None) -> list[dict]:
    root = bfcl_dir(path)
    modules, doc_files = _classes()
    docs = {c: _read_jsonl(root / "multi_turn_func_doc" / f) for c, f in doc_files.items() if (root / "multi_turn_func_doc" / f).is_file()}
    answers = {x.get("id"): x.get("ground_truth") for x in _read_jsonl(root / "possible_answer" / f"BFCL_v4_{category}.json")}
    items = []
    for x in _read_jsonl(root / f"BFCL_v4_{category}.json")[:limit]:
        try:
            classes, gt, turns = x.get("involved_classes") or [], answers.get(x.get("id")), x.get("question") or []
            if "_error" in x or not classes or any(c not in modules or c not in docs for c in classes):
                raise BadItem(x.get("_error") or f"classes without state code or docs in the package: {classes}")
            if not (isinstance(gt, list) and len(gt) == len(turns)):
                raise BadItem("ground truth turns do not match the question turns")
            excluded = set(x.get("excluded_function") or [])
            missed = {int(k): list(v) for k, v in (x.get("missed_function") or {}).items()}
            held_back = {n for v in missed.values() for n in v}
            functions = [d for c in classes for d in docs[c] if d["name"] not in excluded]
            items.append({"id": x["id"], "category": category, "turns": turns, "ground_truth": gt, "classes": classes,
                          "initial_config": x.get("initial_config") or {}, "functions": [f for f in functions if f["name"] not in held_back],
                          "missed": {t: [f for f in functions if f["name"] in names] for t, names in missed.items()},
                          "long_context": "long_context" in category})
        except BadItem as exc:
            if skipped is not None:
                skipped[str(x.get("id"))] = str(exc)
    return items


class World:
    """The item's API instances, built from its initial configuration by the package's classes."""

    def __init__(self, item: dict):
        modules, _ = _classes()
        self.instances: dict[str, Any] = {}
        for name in item["classes"]:
            instance = getattr(importlib.import_module(modules[name]), name)()
            if hasattr(instance, "_load_scenario"):
                instance._load_scenario(copy.deepcopy(item["initial_config"].get(name, {})), long_context=item["long_context"])
            self.instances[name] = instance
        self.methods = {m: getattr(i, m) for i in self.instances.values()
                        for m, _ in inspect.getmembers(i, predicate=inspect.ismethod) if not m.startswith("_")}

    def call(self, name: str, arguments: dict, args: tuple = ()) -> str:
        """Run one call; a wrong call comes back as an error result, as BFCL's executor reports it."""
        method = self.methods.get(name)
        if method is None:
            return f"Error during execution: unknown function {name!r}"
        try:
            result = method(*args, **arguments)
        except Exception as exc:  # noqa: BLE001 - the API's own error for a bad call is the observation
            return f"Error during execution: {exc}"
        if isinstance(result, str):
            return result
        try:
            return json.dumps(result) if isinstance(result, dict) else str(result)
        except (TypeError, ValueError):
            return str(result)

    def state(self) -> dict[str, dict]:
        return {c: {k: v for k, v in vars(i).items() if not k.startswith("_")} for c, i in self.instances.items()}


def _parse(text: str) -> list[tuple[str, dict, tuple]]:
    from ..actions import parse_action

    return [(c.name, dict(c.arguments), tuple(c.args)) for c in parse_action(text).calls]


def gold_turn_calls(item: dict, turn: int) -> list[tuple[str, dict, tuple]]:
    return [c for s in item["ground_truth"][turn] for c in _parse(s)]


def play(item: dict, act) -> dict:
    """One episode: `act(messages, tools) -> reply text`. Returns per-turn calls and the verdict."""
    world, gold = World(item), World(item)
    functions = list(item["functions"])
    messages: list[dict] = [{"role": "system", "content": system_prompt(functions)}]
    made_per_turn: list[list[str]] = []
    results_so_far: list[str] = []
    passed, reason = True, ""
    for t, turn in enumerate(item["turns"]):
        if t in item["missed"]:  # the held-back functions arrive with this turn
            functions += item["missed"][t]
            messages.append({"role": "user", "content": "You now also have these functions: " + json.dumps(item["missed"][t])})
        messages += [m for m in turn if m.get("role") != "system"]
        made: list[str] = []
        for _ in range(MAX_STEPS):
            reply = act(messages, as_tools(functions))
            calls = _parse(reply)
            messages.append({"role": "assistant", "content": reply})
            if not calls:
                break
            for name, arguments, args in calls:
                out = world.call(name, arguments, args)  # as BFCL's executor: any method of the instances runs
                made.append(out)
                messages.append({"role": "tool", "name": name, "content": out})
        made_per_turn.append(made)
        results_so_far += made
        expected = [gold.call(n, a, p) for n, a, p in gold_turn_calls(item, t)]
        if not passed:
            continue
        if not item["ground_truth"][t]:
            if made:
                passed, reason = False, f"turn {t}: called a function where none could serve the request"
            continue
        if not made:
            passed, reason = False, f"turn {t}: no call"
        elif world.state() != gold.state():
            passed, reason = False, f"turn {t}: API state differs from the gold state"
        elif Counter(expected) - Counter(results_so_far):
            passed, reason = False, f"turn {t}: a gold call's result is missing from the policy's results"
    return {"passed": passed, "reason": reason, "results": made_per_turn}


def system_prompt(functions: list[dict]) -> str:
    return ("You can call these functions:\n" + json.dumps(functions) + '\nCall them as JSON: {"name": "<function>", '
            '"arguments": {...}}, several as a JSON list; you see each result. Reply in plain text, without a call, '
            "when the request is done or cannot be served (a function or a detail is missing).")


def oracle_act(item: dict, turn_calls: list[list[str]] | None = None):
    """Replays each turn's gold calls (or the given call strings per turn) at once, then says it is done."""
    per_turn = turn_calls if turn_calls is not None else item["ground_truth"]
    state = {"turn": -1, "sent": False, "users": 0}

    def act(messages: list[dict], tools: list[dict]) -> str:
        users = sum(m["role"] == "user" for m in messages)
        if users != state["users"]:
            state["users"], state["sent"] = users, False
            state["turn"] = _turn_of(item, messages)
        if state["sent"] or not per_turn[state["turn"]]:
            return "Done."
        state["sent"] = True
        calls = [{"name": n, "arguments": {**_bind(item, n, p), **a}} for s in per_turn[state["turn"]] for n, a, p in _parse(s)]
        return json.dumps(calls)

    return act


def perturbations(item: dict, rng) -> list[tuple[str, list[list[str]]]]:
    """(label, call strings per turn): the gold turns, and wrong ones (a turn's last call dropped, a
    turn's calls repeated in the next empty one, nothing at all)."""
    gold = [list(t) for t in item["ground_truth"]]
    out = [("oracle", gold), ("do-nothing", [[] for _ in gold])]
    full = [i for i, t in enumerate(gold) if t]
    if full:
        k = full[int(rng.integers(len(full)))]
        out.append(("drop-last-call", [t[:-1] if i == k else t for i, t in enumerate(gold)]))
        out.append(("turn-late", [[] if i == k else (gold[k] + t if i == k + 1 else t) for i, t in enumerate(gold)]))
    empty = [i for i, t in enumerate(gold) if not t]
    if empty and full:
        out.append(("call-when-impossible", [gold[full[0]][:1] if i == empty[0] else t for i, t in enumerate(gold)]))
    return out


def reference_checker():
    """BFCL's own multi-turn checker from the installed package, as (item, call strings per turn) -> bool."""
    from .bfcl import reference_checker as ast_reference

    ast_reference()  # installs the small model registry the checker modules import
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker, multi_turn_irrelevance_checker

    runs = {"n": 0}

    def check(item: dict, turn_calls: list[list[str]]) -> bool:
        runs["n"] += 1  # BFCL keeps instances in module globals by model name: a fresh name per check
        decoded = [[t] if t else [] for t in turn_calls]
        entry = {"id": item["id"], "initial_config": item["initial_config"], "involved_classes": item["classes"]}
        try:
            if not multi_turn_irrelevance_checker(decoded, item["ground_truth"])["valid"]:
                return False
            return bool(multi_turn_checker(decoded, item["ground_truth"], entry, item["category"], f"agentworld_check_{runs['n']}")["valid"])
        except Exception:  # noqa: BLE001 - the checker raising on an answer is a failed answer
            return False

    return check


def _turn_of(item: dict, messages: list[dict]) -> int:
    """Which user turn the conversation is in (turns without a message add functions instead)."""
    users = sum(m["role"] == "user" for m in messages)
    seen, turn = 0, -1
    for t, msgs in enumerate(item["turns"]):
        seen += len([m for m in msgs if m.get("role") == "user"]) + (t in item["missed"])
        if seen >= users:
            return t
        turn = t
    return max(turn, 0)


def _bind(item: dict, name: str, args: tuple) -> dict:
    """Positional gold arguments as keywords (a JSON call has no positions)."""
    if not args:
        return {}
    doc = next((f for f in [*item["functions"], *(f for v in item["missed"].values() for f in v)] if f["name"] == name), None)
    order = list((doc or {}).get("parameters", {}).get("properties", {}))
    return dict(zip(order, args, strict=False))
