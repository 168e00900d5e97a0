"""BFCL from the installed bfcl-eval package: categories, bad items, and the grader proven against
BFCL's own AST checker on every item of every single-turn category."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed (pip install 'agentworld-gym[bfcl]')")

from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.suites import bfcl  # noqa: E402
from agentworld_gym.suites.core import run_bfcl  # noqa: E402


def test_every_shipped_category_is_selectable_and_single_turn_is_the_default():
    cats = bfcl.categories()
    assert {"simple_python", "irrelevance", "live_simple", "live_irrelevance", "multi_turn_base"} <= set(cats)
    default = bfcl.single_turn()
    assert "live_multiple" in default and "irrelevance" in default
    assert not any(c.startswith("multi_turn") or c in bfcl.AGENTIC for c in default)
    items = bfcl.load_bfcl(cats=["live_irrelevance"], limit=3)
    assert [x["category"] for x in items] == ["live_irrelevance"] * 3
    with pytest.raises(ConfigError, match="Did you mean 'live_simple'"):
        bfcl.load_bfcl(cats=["live_simpel"])


def test_a_bad_item_is_reported_and_skipped(tmp_path):
    src = bfcl.bfcl_dir()
    (tmp_path / "possible_answer").mkdir()
    questions = (src / "BFCL_v4_simple_python.json").read_text().splitlines()[:3]
    answers = (src / "possible_answer" / "BFCL_v4_simple_python.json").read_text().splitlines()[:3]
    broken = json.loads(questions[1])
    broken["function"] = "not a list"  # the kind of item that used to crash the whole run
    answers[2] = json.dumps({"id": json.loads(answers[2])["id"], "ground_truth": {"oops": 1}})
    (tmp_path / "BFCL_v4_simple_python.json").write_text("\n".join([questions[0], json.dumps(broken), questions[2], "{not json"]))
    (tmp_path / "possible_answer" / "BFCL_v4_simple_python.json").write_text("\n".join(answers))
    skipped: dict = {}
    items = bfcl.load_bfcl(tmp_path, skipped=skipped)
    assert [x["id"] for x in items] == [json.loads(questions[0])["id"]]
    assert set(skipped) == {broken["id"], json.loads(answers[2])["id"], "BFCL_v4_simple_python:line4"}
    result = run_bfcl("oracle", path=tmp_path)
    assert result["n_items"] == 1 and result["overall"]["all"]["success_mean"] == 1.0
    assert set(result["notes"]["skipped_items"]) == set(skipped)


def test_missing_package_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bfcl_eval" else real(name, *a))
    with pytest.raises(ConfigError, match=r"agentworld-gym\[bfcl\]"):
        bfcl.bfcl_dir()


def test_grader_agrees_with_bfcls_own_checker_on_every_single_turn_item():
    """Oracle answers, other acceptable answers and perturbed wrong ones (wrong value, type, name,
    count; missing, extra or dropped-optional parameters) on every item: zero disagreements."""
    reference = bfcl.reference_checker()
    skipped: dict = {}
    items = bfcl.load_bfcl(skipped=skipped)
    rng = np.random.default_rng(0)
    verdicts, disagreements, oracle_fail = Counter(), [], []
    for item in items:
        for label, calls in bfcl.perturbations(item, rng):
            ours, theirs = bfcl.safe_grade(calls, item), reference(calls, item)
            verdicts[theirs] += 1
            if ours != theirs:
                disagreements.append((item["id"], label, ours, theirs))
            if label == "oracle" and not (ours and theirs):
                oracle_fail.append(item["id"])
    assert disagreements == []
    assert oracle_fail == []  # the reference answer passes every gradable item
    assert len(items) > 3500 and len({x["category"] for x in items}) == len(bfcl.single_turn())
    assert verdicts[True] > 5000 and verdicts[False] > 20000  # both verdicts well exercised
    assert len(skipped) <= 20 and all(skipped.values())


def test_text_replies_are_decoded_then_graded():
    item = bfcl.load_bfcl(cats=["simple_python"], limit=1)[0]
    (name, params), = item["ground_truth"][0].items()
    good = {k: v[0] for k, v in params.items() if v[0] != ""}
    assert bfcl.score_bfcl(f"<tool_call>{json.dumps({'name': name, 'arguments': good})}</tool_call>", item)
    assert bfcl.score_bfcl(f"{name}({', '.join(f'{k}={v!r}' for k, v in good.items())})", item)
    assert not bfcl.score_bfcl("I would call the function.", item)
    irrelevant = bfcl.load_bfcl(cats=["irrelevance"], limit=1)[0]
    assert bfcl.score_bfcl("No function fits this request.", irrelevant)
    assert not bfcl.score_bfcl(json.dumps({"name": irrelevant["functions"][0]["name"], "arguments": {}}), irrelevant)


def test_multi_turn_episodes_agree_with_bfcls_multi_turn_checker():
    """A seeded sample per multi-turn category (benchmarks/bfcl_agreement.py runs every item): the gold
    turns pass, perturbed ones (a call dropped, a turn late, a call where none can serve, nothing)
    get BFCL's verdict."""
    from agentworld_gym.suites import bfcl_multi_turn as mt

    reference = mt.reference_checker()
    rng = np.random.default_rng(0)
    checked, disagreements = Counter(), []
    for cat in [c for c in bfcl.categories() if c.startswith(mt.PREFIX)]:
        items = mt.load_multi_turn(None, cat)
        for i in rng.choice(len(items), size=6, replace=False):
            for label, turns in mt.perturbations(items[i], rng):
                ours = mt.play(items[i], mt.oracle_act(items[i], turns))["passed"]
                theirs = reference(items[i], turns)
                checked[(label, theirs)] += 1
                if ours != theirs:
                    disagreements.append((items[i]["id"], label, ours, theirs))
    assert disagreements == []
    assert checked[("oracle", True)] == 24 and checked[("do-nothing", False)] == 24 and checked[("drop-last-call", False)] > 10


def test_multi_turn_suite_runs_episodes_with_null_baselines():
    result = run_bfcl("oracle", episodes=4, categories=["multi_turn_base", "multi_turn_miss_param"])
    row = result["overall"]["all"]
    assert result["n_items"] == 4 and row["success_mean"] == 1.0 and row["best_null"]["success"] == 0.0


@pytest.mark.parametrize("item_id", ["multiple_29", "parallel_multiple_80"])
def test_a_function_named_with_a_functions_prefix_keeps_it(item_id):
    """BFCL names two functions `functions.intersect`: the parser's `functions.` stripping must not eat it."""
    category = item_id.rsplit("_", 1)[0]
    item = next(x for x in bfcl.load_bfcl(cats=[category]) if x["id"] == item_id)
    assert any(f["name"] == "functions.intersect" for f in item["functions"])
    assert bfcl.score_bfcl(bfcl.gold_reply(item), item)
    assert "functions.intersect" in {next(iter(c)) for c in bfcl.decode(bfcl.gold_reply(item), ["functions.intersect"])}
    bare = bfcl.gold_reply(item).replace("functions.intersect", "intersect")  # not the function BFCL offered
    assert not bfcl.score_bfcl(bare, item)


def test_batched_model_replies_come_back_in_item_order(tiny):
    """BFCL prompts are batched by length (a batch pads to its longest prompt); each reply must still be its own
    item's: the batched replies equal generating for each item alone (greedy)."""
    from agentworld_gym.policies.llm import make_llm_policy
    from agentworld_gym.suites.core import _bfcl_replies

    items = bfcl.load_bfcl(cats=["simple_python"])[:3] + bfcl.load_bfcl(cats=["parallel"])[:2]
    assert len({len(json.dumps(x["functions"])) for x in items}) > 1  # prompts of different lengths, so the order changes
    policy = make_llm_policy(f"hf:{tiny}", max_new_tokens=6, device="cpu")
    together = _bfcl_replies(items, f"hf:{tiny}", policy, seed=0)
    alone = [_bfcl_replies([x], f"hf:{tiny}", policy, seed=0)[0] for x in items]
    assert together == alone
