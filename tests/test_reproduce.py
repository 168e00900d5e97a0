"""benchmarks/reproduce.sh: real stages at a minimal size with the tiny model, logging, and stage-by-stage resume."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "reproduce.sh"
STAGES = ["sft_s0", "grpo_s0", "eval_sft_s0", "eval_sft_grpo_s0", "sft_s1", "grpo_s1", "eval_sft_s1", "eval_sft_grpo_s1",
          "eval_base", "eval_null_oracle", "scaling", "evolve"]


def run(*args: str, env_cache: Path) -> subprocess.CompletedProcess:
    # the session's world cache when there is one (worlds are built once), else a fresh one
    env = {**os.environ, "AGENTWORLD_CACHE": os.environ.get("AGENTWORLD_CACHE", str(env_cache)), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(["bash", str(SCRIPT), "--python", sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)


def logged(out: Path) -> list[list[str]]:
    return [line.split("\t") for line in (out / "wall_times.tsv").read_text().splitlines()]


def test_finished_stages_are_skipped_and_logged(tmp_path):
    out, work = tmp_path / "out", tmp_path / "work"
    for d in ("sft-s0", "grpo-s0", "sft-s1", "grpo-s1"):
        (work / d / "final").mkdir(parents=True)
        (work / d / "final" / "config.json").write_text("{}")
    (out / "arena").mkdir(parents=True)
    for name in ("base", "sft_s0", "sft_grpo_s0", "sft_s1", "sft_grpo_s1", "null_oracle"):
        (out / f"heldout_{name}.json").write_text("{}")
    for name in ("scaling", "evolution"):
        (out / "arena" / f"{name}.json").write_text("{}")
    proc = run("--model", "no-such-model", "--seeds", "0,1", "--out", str(out), "--work", str(work), env_cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    rows = logged(out)
    assert [r[0] for r in rows] == STAGES and all(r[2].startswith("skipped") for r in rows)
    assert "--model no-such-model" in rows[0][3] and "--seed 1" in rows[4][3] and "--seeds 0,1" in rows[-1][3]


def test_unknown_option_is_refused(tmp_path):
    proc = run("--modle", "x", env_cache=tmp_path)
    assert proc.returncode == 2 and "unknown option --modle" in proc.stderr


def test_smoke_stages_train_evaluate_and_resume(tiny, tmp_path):
    """SFT -> GRPO -> held-out eval of the result, for real with the tiny model; a second run skips them all."""
    pytest.importorskip("torch")
    out, work = tmp_path / "out", tmp_path / "work"
    args = ("--smoke", "--model", tiny, "--out", str(out), "--work", str(work), "--only", "sft,grpo,eval_sft_grpo",
            "--signal-groups", "1")  # seed 0, GRPO with dynamic sampling
    proc = run(*args, env_cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (work / "grpo-s0" / "final" / "config.json").exists() and (work / "grpo-s0" / "metrics.jsonl").exists()
    assert (out / "heldout_sft_grpo_s0.json").exists() and not (out / "heldout_base.json").exists()
    rows = logged(out)
    assert [(r[0], r[2]) for r in rows] == [("sft_s0", "done"), ("grpo_s0", "done"), ("eval_sft_grpo_s0", "done")]
    assert all(int(r[1]) >= 0 for r in rows) and f"--out-dir {work}/grpo-s0" in rows[1][3] and "--seed 0" in rows[1][3]
    assert "--signal-groups 1" in rows[1][3] and "sample_rounds" in (work / "grpo-s0" / "metrics.jsonl").read_text()
    assert run(*args, env_cache=tmp_path / "cache").returncode == 0
    assert [r[2].split()[0] for r in logged(out)[3:]] == ["skipped"] * 3
