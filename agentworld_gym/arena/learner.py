"""What the arena needs from a policy that learns: play with a checkpoint, train a new one.

`Learner` is the arena's small adapter over the trainer (agentworld_gym.train); a non-learning
policy (oracle, random, an HTTP endpoint) is a `FixedLearner`: the arena evaluates and diagnoses
it every round, and reports the training step as skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..tasks import Task
from .train_result import PolicyFactory, TrainResult

__all__ = ["FIXED_POLICIES", "FixedLearner", "Learner", "PolicyFactory", "TrainResult", "make_learner"]


class Learner(Protocol):
    name: str
    trainable: bool

    def policy_for(self, checkpoint: str | None) -> PolicyFactory: ...

    def train(self, checkpoint: str | None, tasks: Sequence[Task], out_dir: Path, seed: int) -> TrainResult: ...


class FixedLearner:
    """A policy spec that does not learn ('oracle', 'random', 'openai:...'): evaluate-only rounds."""

    trainable = False

    def __init__(self, spec: str, seed: int = 0):
        self.name = spec
        self.seed = seed

    def policy_for(self, checkpoint: str | None) -> PolicyFactory:
        from ..policies import make_policy

        return lambda env: make_policy(self.name, env=env, seed=self.seed)

    def train(self, checkpoint, tasks, out_dir, seed) -> TrainResult:
        return TrainResult(checkpoint, {"tasks": len(tasks)}, skipped=f"policy {self.name!r} does not learn")


FIXED_POLICIES = ("oracle", "random")


def make_learner(policy: str, *, seed: int = 0, **train_kwargs) -> Learner:
    """'oracle' | 'random' | 'openai:...' -> FixedLearner; anything else is a model for the trainer."""
    if policy in FIXED_POLICIES or policy.startswith("openai:"):
        return FixedLearner(policy, seed)
    from .trainer_adapter import TrainerLearner

    return TrainerLearner(policy, seed=seed, **train_kwargs)
