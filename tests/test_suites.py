"""Benchmark suites: the frozen held-out suite and the BFCL-style AST-match scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentworld_gym import envs
from agentworld_gym.bench import (
    heldout_themes,
    load_heldout,
    markdown_table,
    run_bfcl,
    run_heldout,
    save_result,
)
from agentworld_gym.bfcl import gold_reply, load_bfcl, score_bfcl
from agentworld_gym.cli import main
from agentworld_gym.errors import ConfigError
from agentworld_gym.train.common import training_themes


@pytest.fixture(scope="module")
def bfcl(shared_data):
    return shared_data / "bfcl"


# --------------------------------------------------------------------------------------------
# held-out suite


def test_heldout_suite_is_frozen_disjoint_from_training_and_spread():
    tasks = load_heldout()
    themes = heldout_themes()
    assert themes == {t.theme for t in tasks}
    assert not themes & set(training_themes())  # the trainer never sees them
    assert not themes & set(envs.FLAGSHIPS)  # flagships stay for training
    by_cat: dict[str, set[str]] = {}
    for t in themes:
        by_cat.setdefault(envs.registry.get_entry(t).category, set()).add(t)
    assert len(tasks) >= 300 and len(by_cat) == 20 and all(len(v) >= 2 for v in by_cat.values())
    assert {t.difficulty for t in tasks} == {1, 2, 3, 4, 5}


def test_training_on_a_heldout_theme_is_refused():
    with pytest.raises(ConfigError, match="held-out"):
        training_themes([sorted(heldout_themes())[0]])


def test_oracle_solves_the_heldout_suite_and_random_does_not():
    # every item, so the longest gold solutions (levels 4-5) must fit the suite's turn budget
    assert run_heldout("oracle", nulls=False)["overall"]["all"]["success_mean"] == 1.0
    oracle = run_heldout("oracle", episodes=14)
    assert oracle["overall"]["all"]["success_mean"] == 1.0
    assert sum(row["n"] for row in oracle["category"].values()) == 14
    assert oracle["overall"]["all"]["best_null"]["success"] < 0.5  # beside the best null baseline
    rnd = run_heldout("random", episodes=14, runs=2, seed=1, nulls=False)
    assert rnd["overall"]["all"]["success_mean"] < 0.5 and rnd["runs"] == 2
    lo, hi = rnd["overall"]["all"]["ci95"]
    assert 0 <= lo <= rnd["overall"]["all"]["success_mean"] <= hi <= 1


# --------------------------------------------------------------------------------------------
# BFCL suite (the grader's agreement with BFCL's own checker is in test_bfcl.py)


def test_gold_replies_score_and_the_scorer_rejects_mistakes(bfcl):
    items = load_bfcl(bfcl, ["simple_python", "multiple", "parallel", "parallel_multiple"], limit=25)
    assert {x["category"] for x in items} == {"simple_python", "multiple", "parallel", "parallel_multiple"}
    assert all(score_bfcl(gold_reply(x), x) for x in items)
    item = items[0]  # calculate_triangle_area(base=10, height=5, unit optional)
    (name, params), = item["ground_truth"][0].items()
    good = {k: v[0] for k, v in params.items() if v[0] != ""}
    assert score_bfcl(json.dumps({"name": name, "arguments": good}), item)
    assert not score_bfcl(json.dumps({"name": name, "arguments": {**good, "base": 11}}), item)  # wrong value
    assert not score_bfcl(json.dumps({"name": name, "arguments": {k: v for k, v in good.items() if k != "base"}}), item)
    assert not score_bfcl(json.dumps({"name": name, "arguments": {**good, "colour": "red"}}), item)  # unknown argument
    assert not score_bfcl(json.dumps({"name": name + "_x", "arguments": good}), item)
    assert score_bfcl(f"{name}(base=10, height=5)", item)  # Python-call syntax works too
    assert not score_bfcl("The area is 25.", item)


def test_parallel_calls_match_in_any_order(bfcl):
    item = next(x for x in load_bfcl(bfcl, ["parallel"], limit=10) if len(x["ground_truth"]) >= 2)
    calls = json.loads(gold_reply(item))
    assert score_bfcl(json.dumps(calls[::-1]), item)
    assert not score_bfcl(json.dumps(calls[:1]), item)


def test_run_bfcl_oracle_and_random(bfcl, tmp_path):
    cats = ["simple_python", "multiple", "parallel", "parallel_multiple"]
    oracle = run_bfcl("oracle", episodes=20, path=bfcl, categories=cats)
    assert oracle["overall"]["all"]["success_mean"] == 1.0 and oracle["n_items"] == 20
    assert {r["n"] for r in oracle["category"].values()} == {5}  # stratified over the categories
    assert oracle["overall"]["all"]["best_null"]["success"] < 0.3
    rnd = run_bfcl("random", episodes=20, path=bfcl, runs=2, categories=cats)
    assert rnd["overall"]["all"]["success_mean"] < 0.3
    files = save_result(rnd, tmp_path / "bfcl_random")
    saved = json.loads(Path(files["json"]).read_text())
    assert saved["suite"] == "bfcl" and len(saved["items"]) == 20 and len(saved["items"][0]["success"]) == 2
    assert "± " in markdown_table(rnd) and Path(files["png"]).read_bytes()[:4] == b"\x89PNG"


def test_cli_suite(bfcl, tmp_path, capsys):
    assert main(["bench", "--suite", "bfcl", "--policy", "oracle", "--episodes", "2", "--bfcl-path", str(bfcl),
                 "--categories", "simple_python", "--json", "--out", str(tmp_path / "r")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overall"]["all"]["success_mean"] == 1.0 and (tmp_path / "r.md").exists()
    assert main(["bench", "--suite", "bfcl", "--policy", "oracle", "--bfcl-path", str(tmp_path)]) == 2  # not BFCL data
    assert main(["bench", "--suite", "bfcl", "--categories", "simple_pyton", "--bfcl-path", str(bfcl)]) == 2
    assert "Did you mean 'simple_python'" in capsys.readouterr().err
