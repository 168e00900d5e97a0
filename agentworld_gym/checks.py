"""Values checked at every door before any work or any write: one table of rules for the command line's
options and the public constructors' arguments, and atomic writes for what commands produce.

Each rule raises a one-line ConfigError (or MissingFileError) phrased "Expected X, got Y" with the fix,
naming the value as its user knows it (`--lr` on the command line, `lr` in Python).
The CLI applies `OPTION_RULES` to every subcommand's parsed options by name (a subcommand may narrow a
rule in `COMMAND_RULES`); the trainer configs apply the same rules in `__post_init__`.
"""

from __future__ import annotations

import math
import numbers
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError, MissingFileError


@dataclass(frozen=True)
class Number:
    """An int (or float) within [low, high]; `open_low` excludes low itself; None passes when `optional`."""

    integer: bool = True
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    optional: bool = False

    def check(self, name: str, value: Any) -> None:
        if value is None and self.optional:
            return
        kind = "an int" if self.integer else "a number"
        ok_type = isinstance(value, numbers.Integral) if self.integer else isinstance(value, numbers.Real)
        if isinstance(value, bool) or not ok_type:
            raise ConfigError(f"Expected {name} to be {kind}, got {value!r}.")
        if not math.isfinite(value):
            raise ConfigError(f"Expected {name} to be a finite number, got {value!r}.")
        below = self.low is not None and (value <= self.low if self.open_low else value < self.low)
        above = self.high is not None and value > self.high
        if below or above:
            raise ConfigError(f"Expected {name} {self.describe()}, got {value!r}.")

    def describe(self) -> str:
        if self.low is not None and self.high is not None and not self.open_low:
            return f"in {_num(self.low)}-{_num(self.high)}"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '>='} {_num(self.low)}")
        if self.high is not None:
            parts.append(f"<= {_num(self.high)}")
        return " and ".join(parts)


@dataclass(frozen=True)
class Levels:
    """Difficulty levels: a tuple of ints 1-5 (or the CLI's comma-separated text)."""

    def check(self, name: str, value: Any) -> None:
        levels = parse_levels(name, value) if isinstance(value, str) else value
        if not levels or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) and 1 <= x <= 5 for x in levels):
            raise ConfigError(f"Expected {name} to be difficulty levels 1-5 (e.g. 1,2), got {value!r}.")


@dataclass(frozen=True)
class ExistingPath:
    """A file or folder that must exist (None passes: the option was not given)."""

    def check(self, name: str, value: Any) -> None:
        if value is not None and not Path(value).exists():
            raise MissingFileError(f"Expected {name} to name an existing file or folder, got {str(value)!r}: no such file.")


def parse_levels(name: str, text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"Expected {name} to be comma-separated difficulty levels 1-5 (e.g. 1,2), got {text!r}.") from None


POSITIVE = Number(low=1)
NON_NEGATIVE = Number(low=0)
POSITIVE_OR_NONE = Number(low=1, optional=True)
SHARE = Number(integer=False, low=0, high=1)
RATE = Number(integer=False, low=0, open_low=True, high=10)  # a learning rate: > 0 (and nothing absurd)

# Options and constructor arguments by name, wherever they appear.
OPTION_RULES: dict[str, Any] = {
    # counts of things to do: at least one
    "episodes": POSITIVE_OR_NONE, "runs": POSITIVE, "n": POSITIVE, "n_examples": POSITIVE, "epochs": POSITIVE,
    "steps": POSITIVE, "batch_size": POSITIVE, "group_size": Number(low=2), "tasks_per_step": POSITIVE,
    "save_every": POSITIVE, "max_turns": POSITIVE, "max_seq_len": Number(low=16), "max_new_tokens": POSITIVE,
    "max_context": Number(low=16), "max_sample_rounds": POSITIVE, "updates_per_step": POSITIVE, "rollout_batch": POSITIVE,
    "lora_r": POSITIVE, "top": POSITIVE, "min_count": POSITIVE, "eval_tasks": POSITIVE, "train_tasks": POSITIVE,
    "arena_per_category": POSITIVE, "max_categories": POSITIVE_OR_NONE, "limit": POSITIVE_OR_NONE, "max_sessions": POSITIVE,
    "rounds": POSITIVE, "sessions_per_client": POSITIVE, "max_connections": POSITIVE,
    "idle_timeout": Number(integer=False, low=0, open_low=True), "read_timeout": Number(integer=False, low=0, open_low=True),
    "keep_alive": Number(integer=False, low=0, open_low=True),
    # counts that may be zero
    "micro_batch": NON_NEGATIVE, "signal_groups": NON_NEGATIVE, "ray_workers": NON_NEGATIVE, "ray_env_workers": NON_NEGATIVE,
    "seed": NON_NEGATIVE, "db_seed": NON_NEGATIVE, "eval_seed": Number(low=0, optional=True),
    # ranges
    "difficulty": Number(low=1, high=5, optional=True), "difficulties": Levels(), "port": Number(low=0, high=65535),  # difficulty None: the env's own
    "lr": RATE, "weight_decay": Number(integer=False, low=0, high=1), "max_grad_norm": Number(integer=False, low=0, open_low=True),
    "temperature": Number(integer=False, low=0, high=10), "clip_low": Number(integer=False, low=0, high=1),
    "clip_high": Number(integer=False, low=0, high=10), "kl_coef": Number(integer=False, low=0),
    "recovery_share": SHARE, "call_share": SHARE, "replay_share": SHARE, "eta": Number(integer=False, low=0),
    # inputs that must exist
    "tasks_file": ExistingPath(), "bfcl_path": ExistingPath(), "results": ExistingPath(), "dir": ExistingPath(),
    "catalog": ExistingPath(), "init": ExistingPath(), "checkpoint": ExistingPath(),
}

# Where a subcommand means something else by a name.
COMMAND_RULES: dict[str, dict[str, Any]] = {
    "discover": {"rounds": NON_NEGATIVE},  # 0: no LLM refinement rounds
    "record": {"difficulty": Levels(), "ray_workers": POSITIVE},  # comma-separated levels to cycle through
    "bench": {"ray_workers": POSITIVE},  # env worker actors of --ray (the trainer's --ray-workers may be 0: none)
    "evolve": {"ray_workers": POSITIVE},
    "sft": {"micro_batch": NON_NEGATIVE},  # 0: the whole batch
    "grpo": {"micro_batch": POSITIVE},
    "serve-openenv": {"tasks": NON_NEGATIVE, "workers": POSITIVE},  # tasks 0: a fresh task every reset
}


def check_values(values: dict[str, Any], command: str | None = None, labels: dict[str, str] | None = None) -> None:
    """Apply the rules to every value whose name has one (names without a rule pass). `labels` names a value
    as its user knows it (the command line passes its option strings, e.g. lr -> --lr)."""
    rules = {**OPTION_RULES, **COMMAND_RULES.get(command or "", {})}
    for name, value in values.items():
        rule = rules.get(name)
        if rule is not None:
            rule.check((labels or {}).get(name, name), value)


def _num(x: float) -> str:
    return f"{x:g}"


@contextmanager
def atomic_output(path: str | Path, keep_partial_on_interrupt: bool = False) -> Iterator[Any]:
    """A text file opened beside `path` and renamed onto it when the block ends: a failure leaves `path`
    as it was (or absent) and no temporary file behind. With `keep_partial_on_interrupt`, Ctrl-C still
    moves what was written into place (work already done is not lost)."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"Expected an output file, got the folder {str(path)!r}. Name a file inside it.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise MissingFileError(f"Expected the output's folder {str(parent)!r} to exist, got no such folder. Create it first.")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            try:
                yield f
            except KeyboardInterrupt:
                if keep_partial_on_interrupt:
                    f.close()
                    os.replace(tmp, path)
                raise
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    """`path` holds `text` whole, or is left as it was: written beside it, then renamed onto it."""
    with atomic_output(path) as f:
        f.write(text)
