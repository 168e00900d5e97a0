"""SB3: the MaskablePPO example trains and, with the adapter's masks, never picks an empty candidate slot;
the PPO benchmark's null baselines (random, first candidate, best constant) are what they claim to be."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("sb3_contrib", reason="MaskablePPO: sb3-contrib is not installed (in the `rl` extra)")

from integration_parity import example_lines, run_example  # noqa: E402


def test_maskable_ppo_example_trains_and_only_picks_real_candidates(tmp_path):
    out = run_example("maskable_ppo.py", "256", tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    found = re.search(r"success (\d+)/30 = [\d.]+; invalid picks (\d+)", out.stdout)
    assert found and int(found.group(2)) == 0 and 0 <= int(found.group(1)) <= 30
    assert example_lines("maskable_ppo.py") <= 25


def test_null_baselines_of_the_ppo_benchmark():
    import importlib.util
    import sys

    from agentworld_gym.envs import get_theme
    from integration_parity import ROOT

    spec = importlib.util.spec_from_file_location("ppo_candidates", ROOT / "benchmarks" / "ppo_candidates.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["ppo_candidates"] = bench  # its dataclass looks its module up
    spec.loader.exec_module(bench)
    args = bench.Args(eval_episodes=12)
    tasks = bench.task_set("finance", 1, 12, 1_000_000)
    env = bench.make_env("finance", args, len(get_theme("finance").toolset), tasks)()
    got = bench.null_baselines([(env, tasks)], env.action_space.n, 12, seed=0)
    constants = [bench.evaluate([(env, tasks)], bench.constant_candidate(k), 12) for k in range(env.action_space.n)]
    assert got["first_candidate"]["rate"] == constants[0]
    assert got["best_constant"]["rate"] == max(constants) and constants[got["best_constant"]["slot"]] == max(constants)
    assert got["random"]["n"] == 48 and got["random"]["ci95"][0] <= got["random"]["rate"] <= got["random"]["ci95"][1]
