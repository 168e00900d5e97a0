"""Targeting: turn a diagnosis into a new sampling distribution and new training tasks.

The sampling distribution lives over cells (theme, kind, difficulty). One targeting step multiplies
each cell's weight by exp(eta * (w_c - mean w)), where w_c is the cell's smoothed failure rate on
the arena (its theme's rate where the cell itself was not seen), then renormalises. The factor
grows with w_c, so the new distribution has a monotone likelihood ratio over the old one: for every
weakness threshold the cells at least that weak gain mass together (first-order stochastic
dominance), the weakest cell gains and the strongest loses, and equal-prior cells end up ordered by
weakness -- the shift provably points at the diagnosed weak cells (tests check these properties).

New training tasks are then drawn from the shifted distribution, synthesized with seeds disjoint
from the arena's evaluation seeds, and among candidates the ones that use the diagnosed weak tools
and difficulty features are preferred.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import AgentWorldError, ConfigError
from ..tasks import Task
from .diagnose import cells_of, weakness

Cell = tuple[str, str, int]  # (theme, kind, difficulty)

TRAIN_SEED_BASE = 1_000_000  # training-task seeds start here; arena evaluation seeds stay below it


def cell_key(cell: Cell) -> str:
    return f"{cell[0]}|{cell[1]}|{cell[2]}"


def parse_cell(key: str) -> Cell:
    theme, kind, difficulty = key.rsplit("|", 2)
    return theme, kind, int(difficulty)


def uniform_weights(themes: Sequence[str], kinds: Sequence[str] = ("graph",), difficulties: Sequence[int] = (1, 2, 3)) -> dict[Cell, float]:
    cells = [(t, k, d) for t in themes for k in kinds for d in difficulties]
    if not cells:
        raise ConfigError("Expected at least one theme, kind and difficulty to build sampling weights, got none.")
    return {c: 1.0 / len(cells) for c in cells}


def cell_weakness(records: Iterable[dict]) -> tuple[dict[Cell, float], dict[str, float]]:
    """Smoothed failure rate per (theme, kind, difficulty) cell and per theme, from episode records."""
    counts: dict[Cell, list[int]] = {}
    themes: dict[str, list[int]] = {}
    for rec in records:
        task = rec.get("task") or {}
        cell = (rec.get("theme") or task.get("theme"), str(task.get("kind", "graph")), int(task.get("difficulty", 1)))
        failed = 0 if rec.get("success") else 1
        for table, key in ((counts, cell), (themes, cell[0])):
            n_f = table.setdefault(key, [0, 0])
            n_f[0] += 1
            n_f[1] += failed
    return ({c: weakness(f, n) for c, (n, f) in counts.items()}, {t: weakness(f, n) for t, (n, f) in themes.items()})


def retarget(weights: dict[Cell, float], records: Sequence[dict], eta: float = 3.0, floor: float = 1e-3) -> dict[Cell, float]:
    """One exponentiated-gradient step of the sampling weights toward the weak cells.

    Cells the records never visited take their theme's weakness, or the average when the theme was
    not seen either (so they keep their share). `floor` keeps every cell reachable.
    """
    if not weights:
        raise ConfigError("Expected sampling weights over at least one cell, got none.")
    by_cell, by_theme = cell_weakness(records)
    total = sum(weights.values())
    p = {c: w / total for c, w in weights.items()}
    seen = {c: s for c in p if (s := by_cell.get(c, by_theme.get(c[0]))) is not None}
    if not seen:
        return p
    mean = sum(p[c] * s for c, s in seen.items()) / max(sum(p[c] for c in seen), 1e-12)  # weighted, over seen cells
    scores = {c: seen.get(c, mean) for c in p}
    new = {c: p[c] * math.exp(eta * (scores[c] - mean)) for c in p}
    z = sum(new.values())
    new = {c: max(v / z, floor / len(new)) for c, v in new.items()}
    z = sum(new.values())
    return {c: v / z for c, v in new.items()}


def theme_weights(weights: dict[Cell, float]) -> dict[str, float]:
    """The per-theme marginal of cell weights (what a per-theme TaskSampler takes)."""
    out: dict[str, float] = {}
    for (theme, _, _), w in weights.items():
        out[theme] = out.get(theme, 0.0) + w
    return out


def apply_to_sampler(sampler, weights: dict[Cell, float]) -> dict[str, float]:
    """Set a `TaskSampler` (agentworld_gym.wrappers) over a pool env to the per-theme marginal of
    `weights` (themes outside that pool are skipped); returns the weights it set."""
    pool = set(sampler.theme_weights)
    marginal = {t: w for t, w in theme_weights(weights).items() if t in pool}
    sampler.set_theme_weights(marginal)
    return marginal


def focus_of(diagnosis: dict) -> dict[str, dict[str, float]]:
    """Diagnosed weak tools and difficulty features with their weakness (what tasks should exercise)."""
    return {dim: {r["key"]: r["weakness"] for r in diagnosis.get("weak", {}).get(dim, [])} for dim in ("tool", "feature")}


def _aim_score(task: Task, focus: dict[str, dict[str, float]]) -> float:
    cells = cells_of({"task": task.to_dict(), "theme": task.theme})
    return sum(focus["tool"].get(t, 0.0) for t in cells["tool"]) + sum(focus["feature"].get(f, 0.0) for f in cells["feature"])


@dataclass
class TargetedTasks:
    tasks: list[Task]
    per_cell: dict[str, int]
    failed_cells: dict[str, str]  # cells where synthesis found no task, and why


def synthesize_targeted(weights: dict[Cell, float], n: int, *, focus: dict[str, dict[str, float]] | None = None,
                        seed: int = 0, candidates: int = 3, complexify: bool = False) -> TargetedTasks:
    """`n` training tasks with cells drawn from `weights`; of `candidates` tasks synthesized per
    draw, the one that best exercises the `focus` tools/features is kept.

    complexify: also draw tasks one level harder on a fresh database variant (db_seed 1) of the cell's theme.
    """
    from ..envs.registry import get_theme
    from ..synthesis import synthesize_task

    if n <= 0:
        return TargetedTasks([], {}, {})
    focus = focus or {"tool": {}, "feature": {}}
    rng = np.random.default_rng([seed, 4243])
    cells = list(weights)
    p = np.array([weights[c] for c in cells], float)
    p /= p.sum()
    draws = rng.choice(len(cells), size=n, p=p)
    tasks: list[Task] = []
    per_cell: dict[str, int] = {}
    failed: dict[str, str] = {}
    seen_ids: set[str] = set()
    for j, i in enumerate(draws):
        theme_id, kind, difficulty = cells[i]
        db_seed = 0
        if complexify and j % 2 == 1:
            difficulty, db_seed = min(difficulty + 1, 5), 1
        best, best_score = None, -1.0
        for k in range(candidates):
            task_seed = TRAIN_SEED_BASE + seed * 100_003 + j * candidates + k
            try:
                task = synthesize_task(get_theme(theme_id), difficulty, task_seed, kind, db_seed, fallback=True)  # tasks v2 rejects more candidates
            except AgentWorldError as exc:  # a theme that cannot make a task at this level is reported, not fatal
                failed[cell_key(cells[i])] = str(exc)
                continue
            score = _aim_score(task, focus) if task.id not in seen_ids else -0.5
            if score > best_score:
                best, best_score = task, score
        if best is not None:
            tasks.append(best)
            seen_ids.add(best.id)
            key = cell_key((theme_id, kind, difficulty))
            per_cell[key] = per_cell.get(key, 0) + 1
    return TargetedTasks(tasks, per_cell, failed)


def mass_on(weights: dict[Cell, float], cells: Iterable[Cell]) -> float:
    """Probability mass the weights put on `cells`."""
    total = sum(weights.values())
    return sum(weights.get(c, 0.0) for c in cells) / total
