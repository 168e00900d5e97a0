"""benchmarks/readme_tables.py's reproduction block: stages over seeds beside the best null, from bench result files
(fixtures written here in the bench JSON format), and the evolve report regenerated from evolution.json."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from agentworld_gym.suites.core import wilson

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def bench_file(folder: Path, name: str, successes: int, n: int = 100, null: tuple[str, int] = ("constant:1", 5)) -> None:
    """A held-out result in `agentworld bench --suite heldout --out` format (only the fields the table reads)."""
    row = {"success_mean": successes / n, "success_std": 0.0, "n": n, "ci95": [round(v, 4) for v in wilson(successes, n)],
           "best_null": {"name": null[0], "success": null[1] / n, "ci95": [round(v, 4) for v in wilson(null[1], n)]}}
    (folder / f"heldout_{name}.json").write_text(json.dumps({"suite": "heldout", "policy": name, "runs": 1, "n_items": n,
                                                             "overall": {"all": row}}))


def test_stage_table_over_seeds_with_the_null_verdict(tmp_path):
    for seed, (sft, grpo) in enumerate([(20, 30), (24, 33), (22, 36)]):
        bench_file(tmp_path, f"sft_s{seed}", sft)
        bench_file(tmp_path, f"sft_grpo_s{seed}", grpo)
    bench_file(tmp_path, "base", 1, n=40, null=("do-nothing", 0))
    bench_file(tmp_path, "null_oracle", 100)
    scaling = load("arena_scaling")  # an evolution.json as arena_scaling.py writes it
    runs = {f"{arm}_s{s}": [{"round": r, "successes": k, "n": 20, "gain": None if r == 0 else 0.0, "weaknesses_moved": []}
                            for r, k in enumerate(ks)] for arm, s, ks in (("targeted", 0, (4, 9)), ("untargeted", 0, (4, 5)))}
    evo = {"method": "grpo", "train_tasks_per_round": 8, "start": "N=4 checkpoint", "seeds": [0], "runs": runs,
           **scaling.summarize_evolution(runs, ["targeted", "untargeted"], [0], rounds=1)}
    (tmp_path / "arena").mkdir()
    (tmp_path / "arena" / "evolution.json").write_text(json.dumps(evo))

    proc = subprocess.run([sys.executable, str(BENCH / "readme_tables.py"), "--summary", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "summary.md").read_text()
    # SFT: 66/300 pooled, mean 22.0% over seeds 20, 24, 22; null 5% [2.1, 11.2]; pooled [17.7, 27.0] -> no overlap
    assert "| SFT | 0, 1, 2 | 22.0% | 20.0%, 24.0%, 22.0% | [17.7%, 27.0%] (300) | 5.0% constant:1 [2.1%, 11.2%] | " \
           "beats null by 17.0 pts; intervals overlap: no |" in table
    assert "| untrained | - | 2.5% | 2.5% | [0.4%, 12.9%] (40) | 0.0% do-nothing [0.0%, 8.8%] | beats null by 2.5 pts; intervals overlap: yes |" in table
    assert table.index("| untrained") < table.index("| SFT |") < table.index("| SFT + GRPO") < table.index("| oracle (reference)")
    summary = json.loads((tmp_path / "summary.json").read_text())
    grpo = summary["stages"]["sft_grpo"]
    assert grpo["mean"] == 0.33 and grpo["successes"] == 99 and grpo["ci95_seeds"][0] < 0.33 < grpo["ci95_seeds"][1]
    diff = {tuple(d["stages"]): d for d in summary["differences"]}
    assert diff["sft_grpo", "sft"]["difference"] == 0.11 and diff["sft_grpo", "sft"]["beyond_noise"]  # 99/300 vs 66/300
    assert "| SFT + GRPO - SFT | +11.0 [" in table
    # the evolve ablation: table in the summary, HTML report regenerated beside evolution.json
    assert "| 1 | 45.0% | 25.0% | +20.0 pts" in table
    html = (tmp_path / "arena" / "evolve_report.html").read_text()
    assert "Targeted minus untargeted" in html and "45.0%" in html and "<svg" in html


def test_an_empty_results_folder_says_so(tmp_path):
    tables = load("readme_tables")
    assert tables.reproduce_table(tmp_path)[0].startswith("No held-out results in")
    assert tables.evolve_report(tmp_path) is None


def test_diversity_points_are_labelled_ordered_compared_and_plotted(tmp_path):
    for n, ks in ((256, (9, 7, 8)), (1, (2, 3, 1)), (16, (4, 6, 5))):
        for seed, k in enumerate(ks):
            bench_file(tmp_path, f"div{n}_s{seed}", k)
    for seed, k in enumerate((8, 12, 10)):  # a bigger SFT budget on 16 themes
        bench_file(tmp_path, f"div16e256_s{seed}", k)
    for seed, k in ((0, 12), (2, 15)):  # GRPO from that SFT stage (run_grpo.sh), two of its three seeds
        bench_file(tmp_path, f"div16e256_grpo_s{seed}", k)
    bench_file(tmp_path, "div16e256_grpo12_s0", 20)  # a longer GRPO run (run_grpo.sh div16e256:0:12), one seed
    bench_file(tmp_path, "div16e256_grpo12_l12_s0", 14)  # the same length in recipe variant l12 (div16e256:0:12:l12)
    bench_file(tmp_path, "sft_s0", 4)
    bench_file(tmp_path, "null_oracle", 100)
    proc = subprocess.run([sys.executable, str(BENCH / "readme_tables.py"), "--summary", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    table = (tmp_path / "summary.md").read_text()
    order = ["| SFT |", "| SFT, 1 pool theme |", "| SFT, 16 pool themes |", "| SFT, 16 pool themes, 256 dialogues |",
             "| SFT, 16 pool themes, 256 dialogues + GRPO |", "| SFT, 16 pool themes, 256 dialogues + GRPO (12 steps) |",
             "| SFT, 16 pool themes, 256 dialogues + GRPO (12 steps, levels 1-2, 4 tasks x G=4) |",
             "| SFT, 256 pool themes |", "| oracle (reference)"]
    assert [table.index(label) for label in order] == sorted(table.index(label) for label in order)
    diff = {tuple(d["stages"]): d for d in json.loads((tmp_path / "summary.json").read_text())["differences"]}
    assert diff["div256", "div1"]["difference"] == 0.06  # 24/300 - 6/300
    assert "| SFT, 256 pool themes - SFT, 1 pool theme | +6.0 [" in table
    assert diff["div16e256", "div16"]["difference"] == 0.05  # the budget question: 30/300 - 15/300, same themes
    assert "| SFT, 16 pool themes, 256 dialogues - SFT, 16 pool themes | +5.0 [" in table
    # what GRPO adds, on the seeds both ran: (12 + 15)/200 - (8 + 10)/200 (over all seeds it would be 27/200 - 30/300)
    assert diff["div16e256_grpo", "div16e256"]["difference"] == 0.045 and diff["div16e256_grpo", "div16e256"]["seeds"] == [0, 2]
    assert "| SFT, 16 pool themes, 256 dialogues + GRPO - SFT, 16 pool themes, 256 dialogues (seeds 0, 2) | +4.5 [" in table
    assert diff["div16e256_grpo12", "div16e256"]["difference"] == 0.12 and diff["div16e256_grpo12", "div16e256"]["seeds"] == [0]
    assert diff["div16e256_grpo12_l12", "div16e256"]["difference"] == 0.06  # 14/100 - 8/100 on seed 0
    assert (tmp_path / "diversity.png").stat().st_size > 0
