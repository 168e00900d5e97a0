"""Collect the SmolLM2 pipeline results (benchmarks/smollm2_pipeline.sh) into one markdown table.

    python benchmarks/smollm2_report.py   # writes benchmarks/results/smollm2/summary.md
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Args:
    results: str = "benchmarks/results/smollm2"


STAGES = [("untrained", "base"), ("after SFT", "sft"), ("after SFT+GRPO 3 steps", "sft_grpo"), ("after SFT+GRPO 6 steps", "sft_grpo6")]


def _pct(result: dict | None, key: str, name: str) -> str:
    if not result or name not in result.get(key, {}):
        return "—"
    row = result[key][name]
    return f"{100 * row['success_mean']:.1f}%" + (f" ± {100 * row['success_std']:.1f}" if result["runs"] > 1 else "")


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def _mean(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if key in r]
    return sum(vals) / len(vals) if vals else None


def main(args: Args) -> str:
    root = Path(args.results)
    held = {s: _load(root / f"heldout_{s}.json") for _, s in STAGES}
    bfcl = {s: _load(root / f"bfcl_{s}.json") for _, s in STAGES}
    cats = sorted({c for r in held.values() if r for c in r["category"]})
    lines = ["| held-out suite | " + " | ".join(label for label, _ in STAGES) + " |", "|---" * (len(STAGES) + 1) + "|"]
    rows = [("difficulty 1-2 (all)", "overall", "difficulty_1_2"), ("difficulty 1", "difficulty", "1"), ("difficulty 2", "difficulty", "2")]
    rows += [(c, "category", c) for c in cats]
    for label, key, name in rows:
        lines.append(f"| {label} | " + " | ".join(_pct(held[s], key, name) for _, s in STAGES) + " |")
    lines += ["", "| BFCL-style (AST match) | " + " | ".join(label for label, _ in STAGES) + " |", "|---" * (len(STAGES) + 1) + "|"]
    bcats = sorted({c for r in bfcl.values() if r for c in r["category"]})
    for label, key, name in [("overall", "overall", "all")] + [(c, "category", c) for c in bcats]:
        lines.append(f"| {label} | " + " | ".join(_pct(bfcl[s], key, name) for _, s in STAGES) + " |")
    lines += [""]
    for name in ("sft", "grpo"):
        p = root / f"{name}_metrics.jsonl"
        if p.exists():
            m = [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
            if name == "sft":
                lines.append(f"SFT: {len(m)} steps, loss {m[0]['loss']:.3f} -> {m[-1]['loss']:.3f}, "
                             f"training {_mean(m, 'tokens_per_s'):.0f} tokens/s")
            else:
                lines.append(f"GRPO: {len(m)} steps, reward per step {[round(r['reward'], 3) for r in m]}, "
                             f"rollout {_mean(m, 'rollout_tokens_per_s'):.1f} generated tokens/s, "
                             f"training {_mean(m, 'train_tokens_per_s'):.0f} tokens/s")
    wall = root / "wall_times.txt"
    if wall.exists():
        lines += ["", "Wall times (s):", "```", wall.read_text().strip(), "```"]
    text = "\n".join(lines) + "\n"
    (root / "summary.md").write_text(text)
    print(text)
    return text


if __name__ == "__main__":
    main(Args())
