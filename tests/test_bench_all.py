"""`agentworld bench --suite all --policy openai:<model>@<url>` against a local stand-in server."""

from __future__ import annotations

import json
import re

import pytest
from openai_standin import StandInServer

from agentworld_gym.cli import main
from agentworld_gym.suites.tau2 import installed_domains

pytest.importorskip("bfcl_eval", reason="bfcl-eval not installed (pip install 'agentworld-gym[bfcl]')")
pytestmark = pytest.mark.skipif("mock" not in installed_domains(), reason="tau2 packages not installed")


def test_one_command_evaluates_an_endpoint_over_every_suite(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    out = tmp_path / "run"
    with StandInServer() as server:
        code = main(["bench", "--suite", "all", "--policy", f"openai:standin-model@{server.url}", "--episodes", "6",
                     "--categories", "mock", "simple_python", "irrelevance", "--out", str(out)])
    assert code == 0
    results = {s: json.loads((out / f"{s}.json").read_text()) for s in ("heldout", "bfcl", "tau2")}
    assert {r["n_items"] for r in results.values()} == {6}
    # every item of every suite went through the endpoint (env episodes end at the first reply: it submits)
    assert len(server.requests) == 18 and all(r["model"] == "standin-model" and r["path"] == "/v1/chat/completions" for r in server.requests)
    # the stand-in calls the first function: it passes exactly the BFCL items where that is right
    bfcl = results["bfcl"]
    assert {row["category"] for row in bfcl["items"]} == {"simple_python", "irrelevance"}
    for row in bfcl["items"]:
        assert row["success"] == [row["null"]["constant:first-function"]]
    # on the env suites it submits "done" at once, which is exactly the constant:done baseline
    for row in results["heldout"]["items"]:
        assert row["success"] == [row["null"]["constant:done"]]
    assert {row["category"] for row in results["tau2"]["items"]} == {"mock"}
    for r in results.values():
        overall = r["overall"]["all"]
        assert set(overall) >= {"success_mean", "success_std", "n", "ci95", "best_null"}
        assert overall["ci95"][0] <= overall["success_mean"] <= overall["ci95"][1]
        assert (out / f"{r['suite']}.png").read_bytes()[:4] == b"\x89PNG" and "| best null |" in (out / f"{r['suite']}.md").read_text()
    page = (out / "index.html").read_text()
    assert page.startswith("<!doctype html>") and all(f"<img src='{s}.png'" in page for s in results)
    assert len(re.findall(r"<tr>", page)) > 10 and "standin-model" in page
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["suites"]) == {"heldout", "bfcl", "tau2"}
    assert "index.html" in capsys.readouterr().out


def test_every_bench_option_has_help_with_its_default():
    from agentworld_gym.cli import build_parser

    parser = build_parser()
    bench = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "bench")[1]
    options = [a for a in bench._actions if a.dest != "help"]
    assert len(options) >= 12
    for action in options:
        assert action.help and "default" in action.help, action.dest


def test_episodes_are_sampled_stratified_over_categories_and_levels():
    from agentworld_gym.suites.core import heldout_suite, stratified_sample

    items = [(c, d, i) for c in "abc" for d in (1, 2) for i in range(10)]
    picked = stratified_sample(items, lambda x: x[:2], 12, seed=0)
    assert sorted((c, d) for c, d, _ in picked) == sorted([(c, d) for c in "abc" for d in (1, 2)] * 2)
    assert stratified_sample(items, lambda x: x[:2], 12, seed=1) != picked  # seeded, not the first N
    suite = heldout_suite(episodes=7, seed=0)
    cats = {suite.groups(t)["category"] for t in suite.items}
    assert len(suite.items) == 7 and len(cats) == 7  # seven categories, one task each


def test_stratified_at_every_n_on_the_heldout_suite():
    """Levels within one task of each other at every N (N=10 once drew no level-1 task), categories within two,
    and N=100 one task per category and level."""
    from collections import Counter

    from agentworld_gym.suites.core import _category, heldout_suite, stratified_sample

    items = heldout_suite().items
    strata = lambda t: (_category(t.theme), t.difficulty)  # noqa: E731
    categories, levels = {_category(t.theme) for t in items}, {t.difficulty for t in items}
    for seed in (0, 1):
        for n in (*range(1, 41), 60, 99, 100, 150):
            picked = stratified_sample(items, strata, n, seed)
            by_level, by_category = Counter(t.difficulty for t in picked), Counter(_category(t.theme) for t in picked)
            assert max(by_level[v] for v in levels) - min(by_level[v] for v in levels) <= 1, (seed, n, by_level)
            assert max(by_category[c] for c in categories) - min(by_category[c] for c in categories) <= 2, (seed, n)
        assert Counter(map(strata, stratified_sample(items, strata, 100, seed))) == Counter({cell: 1 for cell in set(map(strata, items))})


def test_readme_suite_tables_are_the_generated_ones():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "readme_tables.py"
    assert subprocess.run([sys.executable, str(script), "--check"]).returncode == 0, "run benchmarks/readme_tables.py"
