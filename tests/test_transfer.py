"""benchmarks/transfer.py: stages scored in one harness, pooled over seeds, differences with intervals,
BFCL V4's weighting, resumable runs and the overlap audit."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("transfer", ROOT / "benchmarks" / "transfer.py")
transfer = importlib.util.module_from_spec(spec)
sys.modules["transfer"] = transfer
spec.loader.exec_module(transfer)


def test_bfcl_v4_weighting_by_hand():
    # non-live: mean of 2 categories (0.5, 1.0) = 0.75; live: item-weighted (1+3)/(2+4) = 0.667; multi-turn 0.0
    by_cat = {"simple_python": (5, 10), "multiple": (10, 10), "live_simple": (1, 2), "live_multiple": (3, 4), "multi_turn_base": (0, 5)}
    out = transfer.bfcl_v4_overall(by_cat)
    expected = (10 * 0.75 + 10 * 4 / 6 + 30 * 0.0) / 50  # irrelevance and agentic were not run: weights renormalised
    assert out["accuracy"] == pytest.approx(expected, abs=1e-4)
    assert set(out["left_out"]) == {"irrelevance", "agentic"}
    assert out["ci95"][0] < out["accuracy"] < out["ci95"][1]


def test_stage_specs_expand_per_seed_and_bad_specs_are_typed_errors():
    from agentworld_gym.errors import ConfigError

    args = transfer.parse_args(["--stage", "untrained=smollm2-135m", "--stage", "sft=hf:runs/sft-s{seed}/final", "--seeds", "0,2"])
    assert transfer.stage_runs(args) == [("untrained", None, "smollm2-135m"), ("sft", 0, "hf:runs/sft-s0/final"),
                                         ("sft", 2, "hf:runs/sft-s2/final")]
    for bad in (["--stage", "no-equals-sign"], ["--suites", "bfcl,mmlu"], ["--episodes", "0"], ["--seeds", "0;1"]):
        with pytest.raises(ConfigError):
            transfer.parse_args(bad)


def test_stages_are_scored_pooled_and_compared_and_a_rerun_resumes(tmp_path, monkeypatch):
    argv = ["--stage", "untrained=random", "--stage", "sft=oracle", "--suites", "heldout", "--episodes", "6", "--out", str(tmp_path / "transfer")]
    tmp_path = tmp_path / "transfer"
    assert transfer.main(argv) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    rows = {r["name"]: r for r in summary["stages"]}
    assert rows["sft"]["mean"] == 1.0 and rows["sft"]["n"] == 6  # the gold replay solves every held-out task
    assert rows["untrained"]["best_null"]["name"]  # the base stage carries the null baselines of the same items
    (diff,) = summary["differences"]
    assert diff["a"] == "sft" and diff["b"] == "untrained" and diff["suite"] == "heldout"
    assert diff["points"] == pytest.approx(100 * (1.0 - rows["untrained"]["mean"]), abs=0.1)
    assert diff["ci95"][0] <= diff["points"] <= diff["ci95"][1]
    # a finished run file is never recomputed: a rerun only rebuilds the summary
    f = transfer.run_file(tmp_path, "sft", None, "heldout")
    stamp = f.stat().st_mtime_ns
    assert transfer.main(argv) == 0
    assert f.stat().st_mtime_ns == stamp
    assert len((tmp_path / "wall_times.tsv").read_text().splitlines()) == 2
    # the docs table (readme_tables.py) is written from that summary: every stage, its interval, the difference
    spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "benchmarks" / "readme_tables.py")
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    monkeypatch.setattr(tables, "RESULTS", tmp_path.parent)
    text = "\n".join(tables.transfer_table())
    assert "| sft | heldout | - | 100.0% | 100.0% | [" in text and f"({rows['sft']['n']})" in text
    assert f"| sft - untrained | heldout | {diff['points']:+.1f} [" in text
    assert rows["untrained"]["best_null"]["name"] in text
    # the remedy is compared with the recipe it varies, beside its gain over the base (which alone reaches the README)
    assert transfer.main([*argv[:2], "--stage", "sft_callmix=random", *argv[4:]]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    pairs = {(d["a"], d["b"]): d for d in summary["differences"]}
    assert set(pairs) == {("sft", "untrained"), ("sft_callmix", "untrained"), ("sft_callmix", "sft")}
    d = pairs[("sft_callmix", "sft")]
    assert d["points"] == pytest.approx(100 * (rows["untrained"]["mean"] - 1.0), abs=0.1) and d["beyond_noise"]  # random = untrained
    assert "sft_callmix vs sft" not in "\n".join(tables.transfer_line())


def test_overlap_audit_excludes_themes_sharing_a_benchmark_tool(tmp_path):
    from agentworld_gym.envs.registry import get_theme

    import agentworld_gym  # noqa: F401

    finance_tools = {t.name.lower() for t in get_theme("finance").toolset}
    domains = {"bench:a": {"tools": {sorted(finance_tools)[0]}, "args": set(), "entities": set(), "grams": set()},
               "bench:b": {"tools": {"no_such_tool_anywhere"}, "args": set(), "entities": set(), "grams": set()}}
    report = transfer.audit(tmp_path, theme_ids=["finance", "travel"], domains=domains)
    assert report["excluded"] == ["finance"]
    assert list(report["rows"][0]["overlaps"]) == ["bench:a"]
    assert json.loads((tmp_path / "overlap.json").read_text())["n_excluded"] == 1
