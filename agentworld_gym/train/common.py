"""What SFT and GRPO share: task sources, model setup (full or LoRA), checkpoints, RNG state, metrics."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, TaskError
from ..prompt import PROMPT_VERSION, record_prompt_version
from ..tasks import Task

CKPT_PREFIX = "ckpt-"
STATE_FILE = "trainer_state.pt"


# --------------------------------------------------------------------------------------------
# Task sources: anything with sample_tasks(n, rng) -> list[Task]


def training_themes(themes: Sequence[str] | None = None) -> list[str]:
    """The given themes, or every registered flagship; held-out suite themes are always removed."""
    from .. import envs
    from ..suites.core import heldout_themes

    held = heldout_themes()
    # a name in any form (`finance`, `AgentWorld/finance-v0`) is the theme's id before the held-out check, which compares ids
    chosen = [envs.registry.get_entry(t).id for t in themes] if themes else [t for t in envs.theme_ids(source="flagship")]
    leaked = [t for t in chosen if t in held] if themes else []
    if leaked:
        raise ConfigError(f"Expected training themes outside the held-out suite, got {leaked}. Pick other themes.")
    chosen = [t for t in chosen if t not in held]
    if not chosen:
        raise ConfigError("Expected at least one training theme, got none (all are held out?).")
    return chosen


class SynthesizedTasks:
    """Tasks synthesized on demand: a uniform theme, then a uniform difficulty, then a task seed."""

    def __init__(self, themes: Sequence[str] | None = None, difficulties: Sequence[int] = (1, 2), kind: str = "graph",
                 requests: str | None = None):
        from ..synthesis import KINDS
        from ..synthesis.persona import check_requests

        if kind not in KINDS:
            raise ConfigError(f"Expected a task kind in {KINDS}, got {kind!r}.")
        check_requests(requests)
        self.themes = training_themes(themes)
        self.difficulties = tuple(difficulties)
        self.kind = kind
        self.requests = requests  # person / classic wording; None: the process's (`synthesis.persona.enabled`)

    def sample_tasks(self, n: int, rng: np.random.Generator) -> list[Task]:
        from ..envs import get_theme
        from ..synthesis import synthesize_task
        from ..synthesis.persona import requests_as

        out: list[Task] = []
        tries = 0
        with requests_as(self.requests):
            while len(out) < n:
                tries += 1
                if tries > 20 * n + 20:
                    raise TaskError(f"Expected to synthesize {n} tasks from {self.themes}, got only {len(out)}.")
                theme = self.themes[int(rng.integers(len(self.themes)))]
                level = self.difficulties[int(rng.integers(len(self.difficulties)))]
                try:
                    out.append(synthesize_task(get_theme(theme), level, int(rng.integers(2**31)), self.kind))
                except TaskError:
                    continue
        return out


class TaskList:
    """Sampling (with replacement) from a fixed list of tasks."""

    def __init__(self, tasks: Sequence[Task]):
        if not tasks:
            raise ConfigError("Expected a non-empty task list, got none.")
        self.tasks = list(tasks)

    def sample_tasks(self, n: int, rng: np.random.Generator) -> list[Task]:
        return [self.tasks[int(i)] for i in rng.integers(len(self.tasks), size=n)]


class SamplerTasks:
    """Tasks drawn through a `TaskSampler`-wrapped env (single theme or pool): its schedule picks each
    level and its pool weights pick each theme; `report` feeds rollout outcomes back to the schedule."""

    def __init__(self, env):
        self.env = env

    def sample_tasks(self, n: int, rng: np.random.Generator) -> list[Task]:
        out = []
        for _ in range(n):
            self.env.reset(seed=int(rng.integers(2**31)))
            base = self.env.unwrapped
            current = getattr(base, "current", None)  # a pool env runs the drawn theme's env
            out.append((current.unwrapped if current is not None else base).task)
        return out

    def report(self, task: Task, success: bool) -> None:
        if hasattr(self.env, "schedule_for"):
            self.env.schedule_for(task.theme).update(success)


def task_source(tasks=None, sampler=None, themes=None, difficulties=(1, 2), kind="graph", requests=None):
    """The trainer's task source: a sampler object, a TaskSampler-wrapped env, a task list, or synthesis."""
    if sampler is not None and not hasattr(sampler, "sample_tasks") and hasattr(sampler, "schedule_for"):
        return SamplerTasks(sampler)
    if sampler is not None:
        if not hasattr(sampler, "sample_tasks"):
            raise ConfigError(f"Expected a sampler with sample_tasks(n, rng), got {type(sampler).__name__}.")
        return sampler
    if tasks is not None:
        return TaskList(tasks)
    return SynthesizedTasks(themes, difficulties, kind, requests)


# --------------------------------------------------------------------------------------------
# Model setup


def device_of(name: str | None) -> str:
    import torch

    return name or ("cuda" if torch.cuda.is_available() else "cpu")


def add_lora(model, r: int = 16, alpha: int = 32, dropout: float = 0.0):
    from ..errors import require

    peft = require("peft", "llm")
    config = peft.LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, task_type="CAUSAL_LM",
                             target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    return peft.get_peft_model(model, config)


def is_lora(model) -> bool:
    return hasattr(model, "peft_config")


def save_model(model, tokenizer, path: Path, merge: bool = False) -> Path:
    """Save as a from_pretrained-able dir; a LoRA model saves its adapter, or merged weights with `merge`."""
    tmp = path.with_name(path.name + ".part")
    shutil.rmtree(tmp, ignore_errors=True)
    if merge and is_lora(model):
        import copy

        model = copy.deepcopy(model).merge_and_unload()
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    record_prompt_version(tmp)
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)
    return path


# --------------------------------------------------------------------------------------------
# Checkpoints and exact resume


def rng_state() -> dict:
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


MANIFEST = "manifest.json"


def _manifest(path: Path) -> dict:
    return {str(f.relative_to(path)): {"size": f.stat().st_size, "sha256": _sha256(f)}
            for f in sorted(path.rglob("*")) if f.is_file() and f.name != MANIFEST}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checkpoint_problem(path: Path, hashes: bool = True) -> str | None:
    """Why `path` is not a checkpoint to resume from (None when it is): its manifest, written last, must list
    the state file, and every listed file must be there with its size and (with `hashes`) its SHA-256, so a
    file damaged in place, even at the same size, is caught. Manifests from before hashes were recorded are
    checked by size."""
    try:
        listed = json.loads((path / MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return "its manifest is missing or unreadable"
    if not isinstance(listed, dict) or STATE_FILE not in listed:
        return f"its manifest does not list {STATE_FILE}"
    for name, entry in listed.items():
        file = path / name
        size, digest = (entry.get("size"), entry.get("sha256")) if isinstance(entry, dict) else (entry, None)
        if not file.is_file():
            return f"{name} is missing"
        if file.stat().st_size != size:
            return f"{name} has {file.stat().st_size} bytes, the manifest says {size}"
        if hashes and digest is not None and _sha256(file) != digest:
            return f"{name} does not match its content hash"
    return None


def checkpoint_complete(path: Path, hashes: bool = True) -> bool:
    """True when `path` holds every file its manifest lists, at the listed sizes and content hashes."""
    return checkpoint_problem(path, hashes) is None


def cleans_up_new_run_folder(train):
    """Decorate train(cfg): when it fails (or is interrupted) before its first checkpoint, the run folder it
    created is removed, so a failed command leaves nothing behind; a folder that existed, or that holds a
    checkpoint to resume from, is kept."""
    import functools

    @functools.wraps(train)
    def run(cfg, *args, **kwargs):
        out = Path(cfg.out_dir)
        existed = out.exists()
        try:
            return train(cfg, *args, **kwargs)
        except BaseException:
            if not existed and out.is_dir() and not any(p.is_dir() for p in out.glob(CKPT_PREFIX + "*")):
                shutil.rmtree(out, ignore_errors=True)
            raise

    return run


def latest_checkpoint(out_dir: str | Path) -> Path | None:
    """The newest complete checkpoint under out_dir (a manifest vouches for it); broken ones are skipped with a warning."""
    for path in sorted(Path(out_dir).glob(CKPT_PREFIX + "*"), reverse=True):
        if not path.is_dir() or path.name.endswith(".part"):
            continue
        problem = checkpoint_problem(path)
        if problem is None:
            return path
        warnings.warn(f"Skipping the incomplete checkpoint {path} ({problem}); resuming from an older one.", stacklevel=2)
    return None


def save_checkpoint(out_dir: Path, step: int, model, tokenizer, optimizer, extra: dict[str, Any], keep: int = 1) -> Path:
    """model (or LoRA adapter) + optimizer + RNG + step (+ extra) under out_dir/ckpt-<step>; older ones pruned.

    Everything is written to a hidden temporary folder, a manifest (file names, sizes, SHA-256) last, and the folder
    is renamed into place, so a kill at any moment leaves either the whole checkpoint or none of it."""
    import torch

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / f"{CKPT_PREFIX}{step:06d}"
    tmp = out_dir / f".{final.name}.part"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    record_prompt_version(tmp)
    torch.save({"step": step, "optimizer": optimizer.state_dict(), "rng": rng_state(), "prompt_version": PROMPT_VERSION, **extra},
               tmp / STATE_FILE)
    _write_synced(tmp / MANIFEST, json.dumps({"step": step, "files": _manifest(tmp)}))
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    complete = [p for p in sorted(out_dir.glob(CKPT_PREFIX + "*")) if checkpoint_complete(p, hashes=False)]  # sizes suffice to prune
    for old in complete[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _write_synced(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def load_state(path: Path) -> dict:
    import torch

    return torch.load(path / STATE_FILE, weights_only=False)


def load_start_model(start: str, resume_from: Path | None, lora: bool, lora_r: int, device: str):
    """The model to train: from a checkpoint when resuming, else `start` (+ a fresh LoRA adapter)."""
    from ..policies.llm import load_model

    if resume_from is not None and lora:
        from ..errors import require

        peft = require("peft", "llm")
        base, tok = load_model(start, device)
        return peft.PeftModel.from_pretrained(base, str(resume_from), is_trainable=True).to(device), tok
    model, tok = load_model(str(resume_from) if resume_from is not None else start, device)
    if lora and resume_from is None:
        model = add_lora(model, lora_r, 2 * lora_r)
    return model, tok


class MetricsLog:
    """Append-only JSONL metrics; on resume, rows after the checkpoint step are dropped."""

    def __init__(self, path: Path, resume_step: int):
        self.path = path
        rows = self.read(path) if path.exists() else []
        kept = [r for r in rows if r.get("step", 0) <= resume_step]
        path.write_text("".join(json.dumps(r) + "\n" for r in kept))

    @staticmethod
    def read(path: Path) -> list[dict]:
        """The rows; a line that is not a JSON object (a write torn by a kill) is skipped with a warning."""
        rows, torn = [], []
        for number, line in enumerate(Path(path).read_text(errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if isinstance(row, dict):
                rows.append(row)
            else:
                torn.append(number)
        if torn:
            warnings.warn(f"Skipping {len(torn)} unreadable line(s) of {path} (line {', '.join(map(str, torn[:5]))}): "
                          "a write cut short by a kill; the rows around them are kept.", stacklevel=2)
        return rows

    def write(self, row: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")


def plot_metrics(jsonl: Path, png: Path, keys: Sequence[str]) -> Path | None:
    """One small panel per metric against step."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = MetricsLog.read(jsonl)
    keys = [k for k in keys if any(k in r for r in rows)]
    if not rows or not keys:
        return None
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 2.8), squeeze=False)
    for ax, k in zip(axes[0], keys, strict=True):
        pts = [(r["step"], r[k]) for r in rows if k in r]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3)
        ax.set_title(k)
        ax.set_xlabel("step")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png
