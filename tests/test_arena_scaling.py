"""benchmarks/arena_scaling.py: evolve rounds by GRPO in the targeted and untargeted arms, for real with the tiny
model, resumed without redoing finished rounds; and the aggregation over training seeds."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "arena_scaling.py"


def load_script():
    spec = importlib.util.spec_from_file_location("arena_scaling", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_grpo_evolve_arms_run_and_resume(tiny, tmp_path):
    pytest.importorskip("torch")
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--model", f"hf:{tiny}", "--theme-counts", "0", "--eval-tasks", "1", "--n-arena", "2",
           "--arena-per-category", "100", "--rounds", "1", "--evolve-train-tasks", "2", "--evolve-steps", "1", "--evolve-group-size", "2",
           "--evolve-tasks-per-step", "1", "--max-new-tokens", "4", "--max-turns", "2", "--seeds", "3", "--out", str(out), "--work", str(work)]
    main = load_script().main  # in this process: the real script, without a second torch import
    assert main(argv) == 0
    evo = json.loads((out / "evolution.json").read_text())
    assert evo["method"] == "grpo" and evo["arms"] == ["targeted", "untargeted"] and evo["seeds"] == [3]
    for arm in ("targeted", "untargeted"):
        run = evo["runs"][f"{arm}_s3"]
        assert [r["round"] for r in run] == [0, 1] and all(r["n"] == 2 for r in run)
        assert run[0]["train_skipped"] in (None, "no learnable tasks: every GRPO group had equal rewards (all-0 or all-1)")
        grpo = json.loads((work / "evolve" / f"{arm}_s3" / "ckpt_1" / "metrics.jsonl").read_text().splitlines()[0])
        assert grpo["step"] == 1  # GRPO really ran a step on the round's tasks
        assert [r["round"] for r in evo["rounds"][arm]] == [0, 1] and evo["rounds"][arm][1]["ci95_pooled"]
        targets = json.loads((out / "evolve_run" / f"{arm}_s3" / "round_0_targets.json").read_text())
        assert targets["task_source"] == arm and targets["n_train_tasks"] == 2
    assert [x["round"] for x in evo["ablation"]] == [0, 1] and evo["ablation"][0]["difference"] == 0.0  # same start, same tasks
    assert "targeted - untargeted" in (out / "README.md").read_text() and (out / "evolve_report.html").stat().st_size > 1000
    nulls = evo["null_baselines"]  # every cheap strategy played on each round's arena tasks; the best one reported
    assert [x["round"] for x in nulls] == [0, 1] and all(x["n"] == 2 for x in nulls)
    assert {"do-nothing", "constant:1", "first-id", "random"} <= set(nulls[0]["successes"])
    assert all(x["success"] * x["n"] == max(x["successes"].values()) for x in nulls)
    assert "Best null baseline on the same arena tasks: round 0 " in (out / "README.md").read_text()
    assert "Best null baseline (do-nothing" in (out / "evolve_report.html").read_text()
    state = work / "evolve" / "targeted_s3" / "state.json"
    before = (json.loads(state.read_text())["done"], (work / "evolve" / "targeted_s3" / "round_1" / "eval.jsonl").stat().st_mtime_ns)
    assert main(argv) == 0
    after = (json.loads(state.read_text())["done"], (work / "evolve" / "targeted_s3" / "round_1" / "eval.jsonl").stat().st_mtime_ns)
    assert before == after and before[0] == ["eval_0", "target_0", "train_0", "eval_1"]


def _round(r: int, successes: int, n: int = 10, moved=()) -> dict:
    return {"round": r, "successes": successes, "n": n, "gain": None if r == 0 else 0.1, "weaknesses_moved": list(moved)}


def test_evolution_summary_aggregates_seeds_and_compares_arms():
    mod = load_script()
    move = {"dim": "tool", "key": "get_x", "before_n": 4, "before_success": 0.25, "after_n": 2, "after_success": 1.0, "delta": 0.75}
    runs = {"targeted_s0": [_round(0, 2), _round(1, 6, moved=[move])], "targeted_s1": [_round(0, 2), _round(1, 8, moved=[move])],
            "untargeted_s0": [_round(0, 2), _round(1, 2)], "untargeted_s1": [_round(0, 2), _round(1, 3)]}
    summary = mod.summarize_evolution(runs, ["targeted", "untargeted"], [0, 1], rounds=1)
    t1 = summary["rounds"]["targeted"][1]
    assert t1["per_seed"] == [0.6, 0.8] and t1["mean"] == 0.7 and t1["successes"] == 14 and t1["n"] == 20
    assert t1["ci95_pooled"][0] < 0.7 < t1["ci95_pooled"][1] and t1["ci95_seeds"][0] < 0.7 < t1["ci95_seeds"][1]
    assert t1["weaknesses_moved"] == [{"dim": "tool", "key": "get_x", "before": 0.25, "before_n": 8, "after": 1.0, "after_n": 4, "delta": 0.75}]
    a0, a1 = summary["ablation"]
    assert a0["difference"] == 0.0 and not a0["beyond_noise"]
    assert a1["difference"] == 0.45 and a1["ci95"][0] > 0 and a1["beyond_noise"]  # 14/20 vs 5/20
    from agentworld_gym.arena.report import evolution_markdown, moved_text

    assert "tool get_x 25% -> 100%" in moved_text(t1["weaknesses_moved"])
    evo = {"method": "grpo", "train_tasks_per_round": 8, "start": "N=4 checkpoint", "seeds": [0, 1], **summary}
    table = "\n".join(evolution_markdown(evo))
    assert "| targeted | 1 | 70.0% | 60.0, 80.0 | [48.1, 85.5] (n=20) | +10.0 pts | tool get_x 25% -> 100% |" in table
    assert "| 1 | 70.0% | 25.0% | +45.0 pts" in table and "| yes |" in table


def test_scaling_configs_of_every_seed_are_merged(tmp_path):
    mod = load_script()
    (tmp_path / "configs").mkdir()
    row = {"n": 10, "readable_call_rate": 0.5, "working_call_rate": 0.2, "right_first_tool_rate": 0.1, "failures": {"truncated": 3}}
    for name, success in (("n4_s0", 0.2), ("n4_s1", 0.4), ("n0", 0.1)):  # n0.json: an older single-seed run
        (tmp_path / "configs" / f"{name}.json").write_text(json.dumps({**row, "success": success}))
    per_seed = mod.load_configs(tmp_path, default_seed=7)
    assert sorted(per_seed) == [0, 4] and sorted(per_seed[4]) == [0, 1] and list(per_seed[0]) == [7]
    agg = mod.aggregate(list(per_seed[4].values()))
    assert agg["mean"] == pytest.approx(0.3) and agg["n"] == 20 and agg["failures"] == {"truncated": 6}


def test_evolve_from_given_checkpoints_needs_no_scaling_stage(tiny, tmp_path):
    pytest.importorskip("torch")
    out, work = tmp_path / "out", tmp_path / "work"
    argv = ["--model", f"hf:{tiny}", "--theme-counts", "4", "--skip-scaling", "--eval-tasks", "1", "--n-arena", "2",
            "--arena-per-category", "100", "--rounds", "1", "--evolve-arms", "untargeted,frozen", "--evolve-train-tasks", "2",
            "--evolve-steps", "1", "--evolve-group-size", "2", "--evolve-tasks-per-step", "1", "--max-new-tokens", "4",
            "--max-turns", "2", "--seeds", "5", "--out", str(out), "--work", str(work)]
    main = load_script().main
    assert main(argv) == 1  # no N=4 configuration was run, and no --evolve-from: the error says so
    assert not (out / "evolution.json").exists()
    (tmp_path / "sft-s5").symlink_to(tiny, target_is_directory=True)  # one checkpoint per training seed
    template = str(tmp_path / "sft-s{seed}")
    assert main([*argv, "--evolve-from", template]) == 0
    evo = json.loads((out / "evolution.json").read_text())
    assert evo["start"] == f"checkpoint {template} of each seed" and evo["arms"] == ["untargeted", "frozen"]
    frozen = evo["runs"]["frozen_s5"]  # the control: never trained, played as the evolve run plays its rounds
    assert [r["round"] for r in frozen] == [0, 1] and all(r["n"] == 2 and r["train_skipped"] for r in frozen)
    assert [r["successes"] for r in frozen][:1] == [r["successes"] for r in evo["runs"]["untargeted_s5"]][:1]  # same start
    assert [x["round"] for x in evo["versus_frozen"]["untargeted"]] == [0, 1] and evo["versus_frozen"]["untargeted"][0]["difference"] == 0
    assert "| arm - frozen (never trained, same tasks) | round |" in (out / "README.md").read_text()
    state = json.loads((work / "evolve" / "untargeted_s5" / "state.json").read_text())
    assert state["config"]["init"] == str(tmp_path / "sft-s5") and [r["round"] for r in evo["runs"]["untargeted_s5"]] == [0, 1]
