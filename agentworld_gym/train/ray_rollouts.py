"""GRPO rollouts spread over Ray actors (`GRPOConfig.ray_workers > 0`, `--ray-workers N`).

Each actor holds its own copy of the policy and plays its share of a step's episodes, every episode
in its own env, with the same batched generation as the single-process path (`grpo.rollout`). The
trainer puts the current weights in Ray's object store once per step, so actors always sample from
the policy being trained. Without a running cluster a local one is started; on a cluster, start Ray
first (`ray start --head`, then `RAY_ADDRESS=auto`) and the actors spread over its nodes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from ..errors import require
from ..tasks import Task


class RolloutActor:
    """One Ray worker: a policy copy and the envs of its share of the episodes."""

    def __init__(self, cfg: Any, rollout: Callable):
        import torch

        from .common import load_start_model

        torch.set_num_threads(1)  # one core per actor; Ray gives each actor one CPU
        self.cfg, self.rollout = cfg, rollout
        self.model, self.tok = load_start_model(cfg.model, None, cfg.lora, cfg.lora_r, "cpu")

    def play(self, weights: dict, tasks: list[Task], seed: int) -> list[dict]:
        import torch

        torch.manual_seed(seed)
        self.model.load_state_dict(weights)
        return self.rollout(self.model, self.tok, tasks, self.cfg)


class RayRollouts:
    """`rollouts(model, tasks, seed)` -> trajectories in task order, as `grpo.rollout` returns them."""

    def __init__(self, cfg: Any, workers: int, rollout: Callable):
        """`rollout` is `grpo.rollout`, passed in (not imported) so that grpo and this module do not import each other."""
        self.ray = require("ray", "scale")
        if not self.ray.is_initialized():
            address = os.environ.get("RAY_ADDRESS")
            local = {} if address else {"num_cpus": max(workers, os.cpu_count() or 1)}  # never fewer CPUs than actors
            self.ray.init(address=address, include_dashboard=False, log_to_driver=False, **local)
        # the actors need neither the task pool nor the sampler: they get their tasks per call
        actor_cfg = dataclasses.replace(cfg, tasks=None, sampler=None, progress=False)
        remote = self.ray.remote(num_cpus=1)(RolloutActor)
        self.actors = [remote.remote(actor_cfg, rollout) for _ in range(workers)]

    def __call__(self, model, tasks: list[Task], seed: int) -> list[dict]:
        weights = self.ray.put({k: v.detach().cpu() for k, v in model.state_dict().items()})
        shares = [list(range(i, len(tasks), len(self.actors))) for i in range(len(self.actors))]
        busy = [(actor, share) for actor, share in zip(self.actors, shares, strict=True) if share]
        results = self.ray.get([actor.play.remote(weights, [tasks[j] for j in share], seed + i) for i, (actor, share) in enumerate(busy)])
        out: list[dict] = []
        for (_, share), result in zip(busy, results, strict=True):
            for traj in result:
                traj["group"] = share[traj["group"]]  # an actor numbers its own share's tasks from 0
            out += result
        return sorted(out, key=lambda traj: traj["group"])  # stable: the group's rollouts keep their order

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
