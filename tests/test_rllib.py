"""RLlib: examples/rllib_pool.py trains PPO on the candidate adapter in RLlib's own venv (.venv/rllib, gymnasium
1.2.2, built by `make test`) and scores it beside the random and first-candidate policies."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / ".venv" / "rllib" / "bin" / "python"


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_rllib_example_trains_ppo_and_scores_it_beside_the_nulls():
    if not PY.exists():
        pytest.skip(f"RLlib's venv is absent ({PY}); `make install-all` builds it (ray[rllib] pins gymnasium 1.2.2)")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # a local Ray for this run, on 127.0.0.1
    cmd = [str(PY), str(ROOT / "examples" / "rllib_pool.py"), "--iterations", "1", "--batch", "64", "--episodes", "12"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=720, cwd=ROOT, env={**env, "HF_HUB_OFFLINE": "1"})
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        if "ray started" not in out:  # ray.init has blocked for minutes on some CI machines: not the adapter's fault
            pytest.skip("Ray did not start within 720 s on this machine")
        pytest.fail(f"the RLlib example ran past 720 s after Ray started: {out[-2000:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any("gymnasium 1.2.2" in line for line in lines)  # RLlib's pinned gymnasium, not the project venv's
    steps = [float(line.split("env steps ")[1].split(",")[0]) for line in lines if line.startswith("iteration 1:")]
    assert steps and steps[0] >= 64  # PPO sampled a train batch through the adapter
    scores = json.loads(next(line for line in lines if line.startswith("scores "))[len("scores "):])
    assert set(scores) == {"ppo", "random", "first-candidate"}
    for row in scores.values():
        assert row["n"] == 12 and 0.0 <= row["ci95"][0] <= row["success"] <= row["ci95"][1] <= 1.0
