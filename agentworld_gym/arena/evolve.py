"""The self-evolving arena: evaluate -> diagnose -> target -> train, round after round.

    out/
      state.json                 config, arena/training themes, sampling weights, finished steps
      round_0/eval.jsonl         episode records of the round's fresh arena tasks
      round_0/diagnosis.json|md  the diagnosis report
      round_0/targets.json       shifted sampling weights and the targeted training tasks' cells
      round_0/train_tasks.jsonl  the targeted training tasks
      round_0/metrics.json       success overall / per category / per difficulty, training stats, times
      ckpt_1/ ...                the checkpoint trained in round 0 (evaluated in round 1)

Round r evaluates the current policy on tasks synthesized fresh for round r (seeds < 1,000,000 and
distinct per round; they depend on `eval_seed`, not on the training `seed`, so runs with different
training seeds, and the targeted and untargeted arms, are scored on the same arena tasks); training tasks use seeds >= 1,000,000 and are checked against every round's
arena task ids, so no arena task is ever trained on. Every step writes its files before the state
records it as done, so an interrupted run resumes at the first unfinished step.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ConfigError, TaskError
from ..suites.core import wilson
from ..tasks import Task, load_tasks, save_tasks
from . import diagnose as dg
from . import target as tg
from .learner import Learner, make_learner
from .records import load_records, play, save_records

log = logging.getLogger(__name__)

TASK_SOURCES = ("targeted", "untargeted")
EVAL_SEED_STRIDE = 10_007  # round r's arena seeds start at r * stride (all < TRAIN_SEED_BASE)


@dataclass
class EvolveConfig:
    """Everything an evolve run depends on (saved in state.json; a resumed run must match it)."""

    out: str
    rounds: int = 2  # training rounds; rounds 0..R are evaluated
    policy: str = "tiny"  # trainer model spec, or a fixed policy ('oracle', 'random')
    init: str | None = None  # checkpoint to start from (None: the learner's fresh model)
    arena_per_category: int = 5  # K held-out arena themes per L1 category (the paper uses 5)
    arena_themes: tuple[str, ...] = ()  # explicit arena themes (overrides arena_per_category)
    max_categories: int | None = None  # only the first N categories (small runs)
    eval_tasks_per_theme: int = 6
    train_tasks: int = 64  # targeted training tasks per round
    replay_share: float = 0.25  # share of each round's training tasks drawn uniformly (anti-forgetting)
    difficulties: tuple[int, ...] = (1, 2)
    kinds: tuple[str, ...] = ("graph",)
    max_turns: int = 6
    eta: float = 3.0  # targeting step size
    candidates: int = 3  # tasks synthesized per draw; the most on-target one is kept
    complexify: bool = False  # half of the targeted tasks one level harder on a fresh database variant
    seed: int = 0  # training seed: training tasks, model initialisation, sampling
    eval_seed: int | None = None  # arena split and arena tasks (None: `seed`); keep it fixed to compare training seeds
    method: str = "sft"  # how a round trains: "sft" on oracle trajectories or "grpo" on the tasks' rewards (the paper's loop)
    task_source: str = "targeted"  # "targeted" (from the diagnosis) or "untargeted": the ablation, same number of tasks uniform over the same cells
    device: str = "cpu"
    train_options: dict = field(default_factory=dict)  # passed to the trainer (steps, lr, batch size, ...)

    def __post_init__(self):
        if self.method not in ("sft", "grpo"):
            raise ConfigError(f"Expected method 'sft' or 'grpo', got {self.method!r}.")
        if self.task_source not in TASK_SOURCES:
            raise ConfigError(f"Expected task_source in {TASK_SOURCES}, got {self.task_source!r}.")

    @property
    def arena_seed(self) -> int:
        return self.seed if self.eval_seed is None else self.eval_seed

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["arena_themes"] = list(self.arena_themes)
        d["difficulties"] = list(self.difficulties)
        d["kinds"] = list(self.kinds)
        return d


# ---------------------------------------------------------------------------------------- arena


def split_arena(per_category: int, seed: int = 0, max_categories: int | None = None,
                themes: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(arena themes, training themes): K themes per L1 category held out, chosen by a seeded shuffle."""
    from ..envs import entries

    by_cat: dict[str, list[str]] = defaultdict(list)
    for e in entries():
        if themes is None or e.id in themes:
            by_cat[e.category].append(e.id)
    if not by_cat:
        raise ConfigError("Expected registered themes to build an arena from, got none.")
    rng = np.random.default_rng([seed, 31337])
    arena, train = [], []
    for i, cat in enumerate(sorted(by_cat)):
        ids = sorted(by_cat[cat])
        order = [ids[j] for j in rng.permutation(len(ids))]
        if max_categories is not None and i >= max_categories:
            train += order
            continue
        k = min(per_category, max(len(order) - 1, 1)) if len(order) > 1 else 1
        arena += order[:k]
        train += order[k:]
    held = {theme_family(a) for a in arena}  # a numbered sibling of an arena theme shares its schema archetype
    return sorted(arena), sorted(t for t in train if theme_family(t) not in held)


def theme_family(theme_id: str) -> str:
    """A theme id without its variant number: 'coin-price-tracker-3' -> 'coin-price-tracker'."""
    return re.sub(r"-\d+$", "", theme_id)


def arena_tasks(themes: list[str], round: int, per_theme: int, difficulties, kinds, seed: int = 0) -> list[Task]:
    """Fresh evaluation tasks for one round: per theme, cycling through difficulties and kinds."""
    from ..envs.registry import get_theme
    from ..synthesis import synthesize_task

    tasks = []
    for theme_id in themes:
        theme = get_theme(theme_id)
        for i in range(per_theme):
            d = difficulties[i % len(difficulties)]
            k = kinds[(i // len(difficulties)) % len(kinds)]
            task_seed = round * EVAL_SEED_STRIDE + seed * 101 + i
            assert task_seed < tg.TRAIN_SEED_BASE
            try:
                tasks.append(synthesize_task(theme, d, task_seed, k))
            except TaskError as exc:
                log.warning("arena: no %s task for %s at difficulty %d: %s", k, theme_id, d, exc)
    return tasks


def play_arena_round(themes: list[str], round: int, per_theme: int, difficulties, kinds, arena_seed: int, policy_for, *,
                     policy: str, max_turns: int, workers=None) -> list[dict]:
    """Episode records of round `round`'s fresh arena tasks: how every evolve run, and any control scored beside it,
    plays a round (same tasks and episode seeds for the same `arena_seed`)."""
    tasks = arena_tasks(themes, round, per_theme, difficulties, kinds, arena_seed)
    if not tasks:
        raise TaskError(f"Expected arena tasks for round {round}, got none from themes {themes}.")
    return play(tasks, policy_for, policy=policy, round=round, max_turns=max_turns, seed=arena_seed + round * 1000, workers=workers)


def _metrics(records: list[dict], report: dict) -> dict:
    def rates(key) -> dict:
        acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in records:
            k = str(key(r))
            acc[k][0] += 1
            acc[k][1] += int(bool(r["success"]))
        return {k: {"n": n, "success_rate": round(s / n, 4)} for k, (n, s) in sorted(acc.items())}

    return {
        "n": len(records),
        "success_rate": report["success_rate"],
        "per_category": rates(lambda r: r.get("category") or "?"),
        "per_difficulty": rates(lambda r: r["task"].get("difficulty")),
        "per_theme": rates(lambda r: r["theme"]),
        "failures": report["failures"],
    }


# ---------------------------------------------------------------------------------------- the loop


class Evolution:
    """One evolve run in `config.out`; `run()` does (or resumes) every round."""

    def __init__(self, config: EvolveConfig, learner: Learner | None = None, workers=None):
        """`workers` (`train.ray_rollouts.EnvWorkers`): the arena rounds play on Ray (the same records)."""
        self.config, self.workers = config, workers
        self.out = Path(config.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.state_path = self.out / "state.json"
        self.state = self._load_or_init()
        method = {"method": config.method} if config.method != "sft" else {}
        self.learner = learner or make_learner(config.policy, seed=config.seed, device=config.device,
                                               exclude_themes=self.state["arena"], **method, **config.train_options)

    # ---- state
    def _load_or_init(self) -> dict:
        if self.state_path.exists():
            state = json.loads(self.state_path.read_text())
            defaults = EvolveConfig(out="").to_dict()  # a setting added after the run started has its default there
            old = {k: state["config"].get(k, defaults[k]) for k in defaults if k not in ("rounds", "out")}
            new = {k: v for k, v in self.config.to_dict().items() if k not in ("rounds", "out")}
            if old != new:
                diff = sorted(k for k in new if old.get(k) != new[k])
                raise ConfigError(f"Expected the same settings to resume {self.out}, got different {diff}. "
                                  "Use a new --out directory or the original settings.")
            state["config"]["rounds"] = self.config.rounds
            return state
        c = self.config
        if c.arena_themes:
            from ..envs import entries, get_theme

            arena = sorted(c.arena_themes)
            for t in arena:
                get_theme(t)  # an unknown id fails here, with a did-you-mean
            train = sorted(e.id for e in entries() if e.id not in arena)
        else:
            arena, train = split_arena(c.arena_per_category, c.arena_seed, c.max_categories)
        weights = tg.uniform_weights(arena, c.kinds, c.difficulties)
        state = {"config": c.to_dict(), "arena": arena, "train_themes": train, "checkpoint": c.init,
                 "weights": {tg.cell_key(k): v for k, v in weights.items()}, "done": [], "history": []}
        self._save(state)
        return state

    def _save(self, state: dict | None = None) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state or self.state, indent=1, default=str))
        tmp.replace(self.state_path)

    def _mark(self, step: str, **updates) -> None:
        self.state.update(updates)
        self.state["done"].append(step)
        self._save()

    def _done(self, step: str) -> bool:
        return step in self.state["done"]

    @property
    def weights(self) -> dict[tg.Cell, float]:
        return {tg.parse_cell(k): v for k, v in self.state["weights"].items()}

    # ---- steps
    def _arena_ids(self) -> set[str]:
        c = self.config
        return {t.id for r in range(c.rounds + 1)
                for t in arena_tasks(self.state["arena"], r, c.eval_tasks_per_theme, c.difficulties, c.kinds, c.arena_seed)}

    def evaluate(self, r: int) -> tuple[list[dict], dict]:
        c, d = self.config, self.out / f"round_{r}"
        if not self._done(f"eval_{r}"):
            t0 = time.perf_counter()
            records = play_arena_round(self.state["arena"], r, c.eval_tasks_per_theme, c.difficulties, c.kinds, c.arena_seed,
                                       self.learner.policy_for(self.state["checkpoint"]), policy=self.learner.name, max_turns=c.max_turns,
                                       workers=self.workers)
            save_records(records, d / "eval.jsonl")
            report = dg.diagnose(records)
            (d / "diagnosis.json").write_text(dg.as_json(report))
            (d / "diagnosis.md").write_text(dg.to_markdown(report, f"Round {r} diagnosis ({self.learner.name})"))
            successes = sum(bool(x["success"]) for x in records)
            metrics = {"round": r, "checkpoint": self.state["checkpoint"], **_metrics(records, report), "successes": successes,
                       "ci95": [round(v, 4) for v in wilson(successes, len(records))],
                       "eval_seconds": round(time.perf_counter() - t0, 2)}
            (d / "metrics.json").write_text(json.dumps(metrics, indent=1))
            self._mark(f"eval_{r}")
            log.info("round %d: %s", r, dg.summary_line(report))
        return load_records(d / "eval.jsonl"), json.loads((d / "diagnosis.json").read_text())

    def target(self, r: int, records: list[dict], report: dict) -> list[Task]:
        c, d = self.config, self.out / f"round_{r}"
        if not self._done(f"target_{r}"):
            before = self.weights
            note = ""
            if c.task_source == "untargeted":  # the ablation: the diagnosis is not read; uniform over the same cells
                report = {**report, "status": "untargeted", "weak": {}, "notes": ""}
                note = "Untargeted ablation: training tasks drawn uniformly over the arena cells, without the diagnosis."
            elif report["status"] == "no_failures":
                before, note = self._escalate(before)
            after = tg.retarget(before, records, eta=c.eta) if report["status"] == "ok" else before
            weak_cells = [cell for cell in after if after[cell] > before.get(cell, 0.0) + 1e-12]
            if report["status"] == "ok" and not weak_cells:
                note = ("Every arena cell is equally weak (the same smoothed failure rate), so the sampling weights stay; "
                        "the training tasks are aimed only by the diagnosed weak tools and features.")
            n_replay = int(round(c.train_tasks * c.replay_share))
            focus = tg.focus_of(report)
            targeted = tg.synthesize_targeted(after, c.train_tasks - n_replay, focus=focus, seed=c.seed * 7 + r + 1,
                                              candidates=c.candidates if c.task_source == "targeted" else 1,
                                              complexify=c.complexify and c.task_source == "targeted")
            replay = tg.synthesize_targeted(tg.uniform_weights(self._replay_themes(), c.kinds, c.difficulties), n_replay,
                                            seed=c.seed * 7 + r + 500, candidates=1)
            forbidden = self._arena_ids()
            tasks = [t for t in targeted.tasks + replay.tasks if t.id not in forbidden]
            dropped = len(targeted.tasks) + len(replay.tasks) - len(tasks)
            save_tasks(tasks, d / "train_tasks.jsonl")
            targets = {
                "round": r, "task_source": c.task_source, "status": report["status"], "note": note or report["notes"],
                "weights_before": {tg.cell_key(k): round(v, 5) for k, v in before.items()},
                "weights_after": {tg.cell_key(k): round(v, 5) for k, v in after.items()},
                "theme_weights_after": {k: round(v, 5) for k, v in tg.theme_weights(after).items()},
                "mass_on_weak_before": round(tg.mass_on(before, weak_cells), 4),
                "mass_on_weak_after": round(tg.mass_on(after, weak_cells), 4),
                "focus": focus, "targeted_per_cell": targeted.per_cell, "replay_tasks": len(replay.tasks),
                "dropped_as_arena_tasks": dropped, "synthesis_failures": {**targeted.failed_cells, **replay.failed_cells},
                "n_train_tasks": len(tasks),
            }
            (d / "targets.json").write_text(json.dumps(targets, indent=1))
            self._mark(f"target_{r}", weights={tg.cell_key(k): v for k, v in after.items()})
        return load_tasks(d / "train_tasks.jsonl") if (d / "train_tasks.jsonl").stat().st_size else []

    def _replay_themes(self) -> list[str]:
        return self.state["train_themes"] or self.state["arena"]

    def _escalate(self, weights: dict[tg.Cell, float]) -> tuple[dict[tg.Cell, float], str]:
        """Every arena episode passed: move the weights one difficulty level up (nothing to diagnose)."""
        top = max(d for _, _, d in weights)
        if top >= 5:
            return weights, "Every arena episode passed at the hardest level: the arena is solved; training continues on the same cells."
        harder = {(t, k, min(d + 1, 5)): w for (t, k, d), w in weights.items()}
        z = sum(harder.values())
        return ({c: w / z for c, w in harder.items()},
                f"Every arena episode passed: no capability gap to target, so training tasks move one difficulty level up (to <= {top + 1}).")

    def train(self, r: int, tasks: list[Task]) -> dict:
        d = self.out / f"round_{r}"
        if not self._done(f"train_{r}"):
            t0 = time.perf_counter()
            if not tasks:
                result_stats, skipped, ckpt = {}, "no training tasks could be synthesized for the weak cells", self.state["checkpoint"]
            else:
                res = self.learner.train(self.state["checkpoint"], tasks, self.out / f"ckpt_{r + 1}", seed=self.config.seed + r)
                result_stats, skipped = res.stats, res.skipped
                ckpt = res.checkpoint or self.state["checkpoint"]
            info = {"round": r, "n_tasks": len(tasks), "skipped": skipped, "stats": result_stats, "checkpoint": ckpt,
                    "train_seconds": round(time.perf_counter() - t0, 2)}
            if skipped:
                log.warning("round %d: training skipped: %s", r, skipped)
            metrics_path = d / "metrics.json"
            metrics = json.loads(metrics_path.read_text())
            metrics["train"] = info
            metrics_path.write_text(json.dumps(metrics, indent=1))
            self._mark(f"train_{r}", checkpoint=ckpt)
        return json.loads((d / "metrics.json").read_text())["train"]

    def run(self) -> list[dict]:
        """Every round (resuming where a previous run stopped); returns the per-round metrics."""
        for r in range(self.config.rounds + 1):
            records, report = self.evaluate(r)
            if r == self.config.rounds:
                break
            tasks = self.target(r, records, report)
            self.train(r, tasks)
        history = [json.loads((self.out / f"round_{r}" / "metrics.json").read_text()) for r in range(self.config.rounds + 1)]
        for r, (prev, cur) in enumerate(zip(history, history[1:], strict=False)):
            cur["gain"] = round(cur["success_rate"] - prev["success_rate"], 4)
            cur["weaknesses_moved"] = weakness_moves(*(json.loads((self.out / f"round_{q}" / "diagnosis.json").read_text()) for q in (r, r + 1)))
        self.state["history"] = [{k: m.get(k) for k in ("round", "success_rate", "gain", "n", "ci95")} for m in history]
        self._save()
        (self.out / "summary.json").write_text(json.dumps({"config": self.state["config"], "arena": self.state["arena"],
                                                           "rounds": self.state["history"]}, indent=1))
        return history


def weakness_moves(before: dict, after: dict, dims: tuple[str, ...] = ("theme", "tool", "difficulty", "feature")) -> list[dict]:
    """For every weak cell diagnosed in one round (`before`), its success then and in the next round's
    arena (`after`, fresh tasks): did training on it move it? A cell the next round's tasks do not
    touch has `after_n` 0 and no delta."""
    moves = []
    for dim in dims:
        later = {row["key"]: row for row in after.get("by", {}).get(dim, [])}
        for row in before.get("weak", {}).get(dim, []):
            now = later.get(row["key"])
            moves.append({"dim": dim, "key": row["key"], "before_n": row["n"], "before_success": row["success_rate"],
                          "before_cause": row["top_cause"], "after_n": now["n"] if now else 0,
                          "after_success": now["success_rate"] if now else None,
                          "delta": round(now["success_rate"] - row["success_rate"], 4) if now else None})
    return moves
