"""Benchmark suites: the frozen held-out suite and the BFCL-style AST-match scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentworld_gym import envs
from agentworld_gym.cli import main
from agentworld_gym.errors import ConfigError
from agentworld_gym.suites.bfcl import gold_reply, load_bfcl, score_bfcl
from agentworld_gym.suites.core import (
    heldout_themes,
    load_heldout,
    markdown_table,
    run_bfcl,
    run_heldout,
    save_result,
)
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


# Read tasks whose answer is among today's answer prior (answers >= 2 times in 96 candidate tasks of the
# theme and level, `synthesis.answer_prior`): frozen before that prior grew to 96 candidates (a66642d),
# and 6 of them are in the 100-task sample the reproduction results report, so they stay. A guesser
# submits one answer; the prior holds several per theme and level, and the mode guess (the most frequent
# one) passes none of them. The list may shrink, never grow.
PRIOR_HITS_AT_FREEZE = frozenset((
    "compound-g1-2129f5bec2", "google-scholar-mcp-server-g1-5efdf52566", "nutrient-dws-mcp-server-g1-8d9109dab2",
    "stock-info-mcp-g1-22165d59b9", "x402-gateway-base-g1-a97cbf1eec", "ethora-mcp-server-g2-b22c003f6d",
    "google-scholar-mcp-server-g2-1a8195f308", "gtasks-mcp-g2-244920d447", "ignav-flights-g2-b3c6fb7f77",
    "loomle-g2-58d3317f58", "mcp-azuredevops-bridge-g2-992dff0242", "mcp-grafana-g2-74425296ce",
    "mcp-server-iqiyi-g2-41e956ff15", "netmind-parse-pdf-mcp-g2-a7ac13b9d0", "ns-mcp-server-g2-06f8de69a4",
    "sqlassistant-g2-c232f37f9e", "uniprot-mcp-server-g2-86423af58f", "compound-g3-c568ff2d4b",
    "ns-mcp-server-g3-d9dfd7d61f", "openpaper-mcp-p3-74854128f0", "osm-mcp-p3-8482db05f0",
    "brightdata-mcp-g4-3133ad502c", "compound-g4-ff760e0853", "dify-mcp-server-g4-c16e5a88c7",
))


def test_no_cheap_strategy_passes_a_heldout_task():
    """Issue 11: every cheap strategy <= 1% at every level of the held-out suite. For every task: the
    do-nothing answers, each constant and the instruction's first id fail its verifier, and so does the
    mode guess of benchmarks/bench_null_baselines.py (the most frequent answer of 6 other tasks of the
    theme and level; it passed bankbridge-plugin's level-3 task before that entry was re-drawn)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_null_baselines import mode_answer

    from agentworld_gym.policies.null import CONSTANT_ANSWERS, first_value
    from agentworld_gym.synthesis import DO_NOTHING, guessable
    from agentworld_gym.tasks import verify

    modes, won, prior = {}, [], set()
    for task in load_heldout():
        theme = envs.get_theme(task.theme)
        fixed = [*DO_NOTHING, *CONSTANT_ANSWERS, *([first_value(task.instruction)] if first_value(task.instruction) else [])]
        key = (task.theme, task.difficulty)
        if key not in modes:
            modes[key] = mode_answer(theme, task.difficulty, 6, 0)
        guesses = fixed + ([modes[key]] if modes[key] is not None else [])
        if task.state_hash is None and any(verify(task, g, None, True).passed for g in guesses):
            won.append(task.id)
        if guessable(theme, task):
            prior.add(task.id)
    assert won == []
    assert prior <= PRIOR_HITS_AT_FREEZE, sorted(prior - PRIOR_HITS_AT_FREEZE)


def test_redo_redraws_one_entry_in_place(tmp_path):
    """make_heldout_suite --redo: one line of one file changes (same theme, level and kind, a task no
    cheap strategy passes); every other byte and the positions --episodes samples by stay."""
    import shutil
    import sys

    from agentworld_gym.suites.core import suites_dir

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from make_heldout_suite import Args, cheap_wins, redo

    folder = tmp_path / "heldout"
    shutil.copytree(suites_dir() / "heldout", folder)
    before = {f.name: f.read_text() for f in folder.glob("*.jsonl")}
    sample = [(t.theme, t.difficulty) for t in run_sample(folder)]
    old, new = redo("bankbridge-plugin:3", Args(out=str(folder)))
    assert (old, new) == (0, 2)  # seed 1 made the entry there now, so the next one that passes
    after = {f.name: f.read_text() for f in folder.glob("*.jsonl")}
    changed = [n for n in before if before[n] != after[n]]
    assert changed == ["bankbridge-plugin.jsonl"]
    a, b = before[changed[0]].splitlines(), after[changed[0]].splitlines()
    assert [i for i in range(len(a)) if a[i] != b[i]] == [2]
    redrawn = next(t for t in load_heldout(folder) if t.theme == "bankbridge-plugin" and t.difficulty == 3)
    assert redrawn.kind == "graph" and not cheap_wins(redrawn)
    assert [(t.theme, t.difficulty) for t in run_sample(folder)] == sample
    with pytest.raises(SystemExit, match="THEME:LEVEL"):
        redo("bankbridge-plugin", Args(out=str(folder)))


def test_the_v3_freeze_asks_a_stepped_down_request_anew_at_the_level_it_reached():
    """A pool theme whose deep requests step down gave one level-1 question for all five levels in the first v3 freeze
    (gondola); `_distinct_tasks` keeps the level each request reached and asks each question once."""
    import sys

    from agentworld_gym.synthesis import person_requests, synthesize_task, task_key

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from make_heldout_suite import Args, _distinct_tasks, v3_seed

    theme = envs.get_theme("gondola")
    with person_requests():
        first_freeze = [synthesize_task(theme, d, 0, "mixed", 0, fallback=True) for d in range(1, 6)]
        reached = [synthesize_task(theme, d, v3_seed(theme.id, d, 0), "mixed", 0, fallback=True).difficulty for d in range(1, 6)]
        tasks = _distinct_tasks(theme, 0, Args())
    assert len({task_key(t) for t in first_freeze}) < len(first_freeze)  # one seed for every level: repeats
    assert len({task_key(t) for t in tasks}) == len(tasks) == 5
    assert [t.difficulty for t in tasks] == reached
    assert [t.features.get("requested_difficulty", t.difficulty) for t in tasks] == [1, 2, 3, 4, 5]
    assert not any(t.features.get("requests") == "classic" for t in tasks)


def run_sample(folder):
    from agentworld_gym.suites.core import heldout_suite

    return heldout_suite(100, 0, path=folder).items


def test_bench_picks_the_heldout_freeze(tmp_path):
    """`agentworld bench --suite heldout --heldout v3` plays the v3 freeze (a person's requests), v2 stays the default;
    an unknown freeze is a ConfigError naming the known ones."""
    from agentworld_gym.suites.core import HELDOUT_VERSIONS
    from agentworld_gym.synthesis import task_key

    v2, v3 = ({t.id for t in load_heldout(version=v)} for v in ("v2", "v3"))
    asked = [{task_key(t) for t in load_heldout(version=v)} for v in ("v2", "v3")]
    assert v2 and v3 and not asked[0] & asked[1]  # v3 asks none of v2's requests (a task id names its solution, not its words)
    assert not any(t.features.get("requests") == "classic" for t in load_heldout(version="v3"))
    assert {t.id for t in load_heldout()} == v2  # the default
    assert main(["bench", "--suite", "heldout", "--heldout", "v3", "--policy", "oracle", "--episodes", "6", "--no-nulls",
                 "--out", str(tmp_path / "v3")]) == 0
    rows = json.loads((tmp_path / "v3.json").read_text())
    assert rows["heldout_version"] == "v3" and rows["overall"]["all"]["success_mean"] == 1.0
    assert {r["id"] for r in rows["items"]} <= v3 and len(rows["items"]) == 6
    with pytest.raises(ConfigError, match="v2"):
        load_heldout(version="v4")
    parser_choices = next(a.choices for a in _bench_parser()._actions if a.dest == "heldout")
    assert tuple(parser_choices) == tuple(HELDOUT_VERSIONS)


def test_a_frozen_suite_asks_each_question_once(tmp_path):
    """Every shipped freeze holds distinct tasks (v3 first held a stepped-down request's lower-level task once per
    level it was asked for: 370 lines, 209 tasks), and a file that repeats one is refused with the fix."""
    from agentworld_gym.suites.core import HELDOUT_VERSIONS, suites_dir
    from agentworld_gym.synthesis import task_key

    for version in ("v2", "v3"):
        tasks = load_heldout(version=version)
        assert len({(t.theme, task_key(t)) for t in tasks}) == len(tasks), version
    source = sorted((suites_dir() / HELDOUT_VERSIONS["v3"]).glob("*.jsonl"))[0]
    lines = source.read_text().splitlines()
    (tmp_path / source.name).write_text("\n".join(lines + lines[:1]) + "\n")
    with pytest.raises(ConfigError, match=f"line {len(lines) + 1} .* repeating line 1.*make_heldout_suite"):
        load_heldout(tmp_path)


def test_the_v3_freeze_has_no_deep_task_that_goes_round_to_the_named_record():
    """The second v3 freeze held 31 level 3-5 tasks (of 56) like "refill each of the prescriptions of the patient of my
    prescription on 2025-04-29": the gold lists the patient's prescriptions once to find the one named and again to
    range over them. No deep task of the shipped freeze reads the same listing twice."""
    from agentworld_gym.synthesis.depth import outputs_of
    from agentworld_gym.synthesis.facts import facts

    deep = [t for t in load_heldout(version="v3") if t.difficulty >= 3]
    assert len(deep) >= 50
    for t in deep:
        outputs = outputs_of(facts(envs.get_theme(t.theme), t.db_seed), list(t.solution))
        assert outputs is not None, t.id
        listings = [(c["name"], repr(sorted(c["arguments"].items()))) for c, out in zip(t.solution, outputs, strict=True) if isinstance(out, list)]
        assert len(listings) == len(set(listings)), t.instruction


def _bench_parser():
    from agentworld_gym.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices["bench"]


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
