"""What a learner's methods return: a policy factory (`policy_for`) and a TrainResult (`train`).

Their own module so that the learners (`learner.FixedLearner`, `trainer_adapter.TrainerLearner`) and the factory that
picks one (`learner.make_learner`) import them without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PolicyFactory = Callable[[Any], Any]  # env -> Policy


@dataclass
class TrainResult:
    checkpoint: str | None  # None: nothing was trained (the previous checkpoint stays current)
    stats: dict = field(default_factory=dict)
    skipped: str | None = None  # why training did not happen
