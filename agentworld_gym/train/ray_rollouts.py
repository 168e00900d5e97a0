"""Ray: GRPO rollouts spread over actors (`GRPOConfig.ray_workers > 0`, `--ray-workers N`), and env workers
(`EnvWorkers`) that play the evaluation episodes of `agentworld bench --ray` and the arena.

Each actor holds its own copy of the policy and plays its share of a step's episodes, every episode
in its own env, with the same batched generation as the single-process path (`grpo.rollout`). The
trainer puts the current weights in Ray's object store once per step, so actors always sample from
the policy being trained. Ray is found the way Ray users expect (`connect`): the cluster named by
RAY_ADDRESS, else one started on this machine with `ray start --head` (`ray.init("auto")`), else a local
one just for this run; the actors spread over the cluster's nodes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError, require
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


def connect(ray, workers: int, address: str | None = None) -> None:
    """Join Ray as its users expect: `address` (`--ray ADDRESS`), else RAY_ADDRESS's cluster; else a cluster running
    on this machine (`ray start --head`, found by ray.init("auto")); else a local one for this run, bound to the
    loopback interface, with a CPU per actor at least. A cluster that cannot be reached, or has fewer CPUs than
    actors (they would wait forever), is a ConfigError."""
    if ray.is_initialized():
        return
    where = "--ray" if address else "RAY_ADDRESS"
    address = address or os.environ.get("RAY_ADDRESS")
    common = {"include_dashboard": False, "log_to_driver": False}
    answered = False
    try:
        if address:
            _check_reachable(address)  # Ray itself retries an unreachable address for minutes
            answered = True
        ray.init(address=address or "auto", **common)  # an existing cluster sets its own resources: no num_cpus
    except OSError as exc:  # ConnectionError (refused, or no cluster for "auto"), a timeout, an unknown host
        if answered and os.environ.get("RAY_AUTH_MODE") != "token":
            # Ray 2.60's `ray start` turns token authentication on; a driver without RAY_AUTH_MODE=token is refused
            raise ConfigError(f"Expected to join the Ray cluster at {where}={address!r}, got refused ({exc}). If it uses token "
                              "authentication (Ray 2.60's `ray start` turns it on), set RAY_AUTH_MODE=token here and on every "
                              "node (the token is read from ~/.ray/auth_token or RAY_AUTH_TOKEN).") from exc
        if address:
            raise ConfigError(f"Expected a Ray cluster at {where}={address!r}, got none ({exc}). Start it "
                              f"(`ray start --head` prints the address), fix {where}, or unset it to start a local Ray "
                              "for this run.") from exc
        ray.init(num_cpus=max(workers, os.cpu_count() or 1), _node_ip_address="127.0.0.1", **common)
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < workers:
        ray.shutdown()
        raise ConfigError(f"Expected a Ray cluster with at least {workers} CPUs for --ray-workers {workers} (an actor each), "
                          f"got {cpus:g}. Use --ray-workers {int(cpus)} or fewer, or add nodes (`ray start --address=...`).")


def _check_reachable(address: str) -> None:
    """Raise ConnectionError when a host:port address (also ray://host:port) accepts no TCP connection."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if host and port.isdigit():
        with socket.create_connection((host, int(port)), timeout=5):
            pass


class RayRollouts:
    """`rollouts(model, tasks, seed)` -> trajectories in task order, as `grpo.rollout` returns them."""

    def __init__(self, cfg: Any, workers: int, rollout: Callable):
        """`rollout` is `grpo.rollout`, passed in (not imported) so that grpo and this module do not import each other."""
        self.ray = require("ray", "scale")
        connect(self.ray, workers)
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


class EnvWorker:
    """One Ray env worker. It plays whole episodes with policies built in the worker (`run`: null, scripted and
    random policies need no model), or holds envs that the driver steps (`RemoteEnv`) while a model policy
    generates for all of them in one batch where the model lives."""

    def __init__(self):
        self.envs: dict[int, Any] = {}

    def run(self, fn: Callable, items: list) -> list:
        return [fn(x) for x in items]

    def open(self, key: int, theme: str, kwargs: dict) -> None:
        from ..env import AgentWorldEnv

        self.envs[key] = AgentWorldEnv(theme, **kwargs)

    def call(self, key: int, method: str, *args, **kwargs):
        return getattr(self.envs[key], method)(*args, **kwargs)

    def close(self, key: int) -> None:
        self.envs.pop(key).close()


class RemoteEnv:
    """An env held by an `EnvWorker`, reset and stepped from the driver (each call one round trip)."""

    def __init__(self, ray, actor, key: int, theme: str, kwargs: dict):
        self.ray, self.actor, self.key = ray, actor, key
        ray.get(actor.open.remote(key, theme, kwargs))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        return self.ray.get(self.actor.call.remote(self.key, "reset", seed=seed, options=options))

    def step(self, action):
        return self.ray.get(self.actor.call.remote(self.key, "step", action))

    def close(self) -> None:
        self.ray.get(self.actor.close.remote(self.key))


def _wait_for_cpus(ray, workers: int, patience_s: float = 10.0) -> None:
    """Actors beyond the cluster's free CPUs would wait forever: wait a little for CPUs just given back (killed
    actors free theirs asynchronously), then raise a ConfigError."""
    import time

    deadline = time.monotonic() + patience_s
    while (free := ray.available_resources().get("CPU", 0)) < workers:
        if time.monotonic() > deadline:
            raise ConfigError(f"Expected {workers} free CPUs on the Ray cluster for {workers} env workers (one each), got {free:g}. "
                              f"Use --ray-workers {int(free)} or fewer, add nodes (`ray start --address=...`), or end the actors "
                              "holding them.")
        time.sleep(0.5)


class EnvWorkers:
    """`workers` env-worker actors on the Ray cluster `connect` finds (`address`, RAY_ADDRESS, a local head, or a
    local Ray for this run). Results come back in the order asked, so a run on Ray equals the serial one."""

    def __init__(self, workers: int, address: str | None = None, start_timeout_s: float = 300.0):
        if workers < 1:
            raise ConfigError(f"Expected --ray-workers >= 1 (env worker actors), got {workers}.")
        self.ray = require("ray", "scale")
        connect(self.ray, workers, address)
        _wait_for_cpus(self.ray, workers)
        remote = self.ray.remote(num_cpus=1)(EnvWorker)
        self.actors = [remote.remote() for _ in range(workers)]
        self._keys = 0
        try:  # started and holding their CPUs before any work goes out
            self.ray.get([actor.run.remote(len, []) for actor in self.actors], timeout=start_timeout_s)
        except self.ray.exceptions.GetTimeoutError as exc:
            self.close()
            raise ConfigError(f"Expected {workers} Ray env workers to start within {start_timeout_s:g} s, got a timeout. Check the "
                              "cluster (`ray status`) or use fewer --ray-workers.") from exc

    def map(self, fn: Callable, groups: list[list], desc: str = "ray env workers") -> list[list]:
        """`fn` on every item: a group's items in order on one worker (a policy a group shares keeps its state),
        groups dealt round-robin over the workers. Returns each group's results, groups in order."""
        from tqdm import tqdm

        refs = [self.actors[i % len(self.actors)].run.remote(fn, g) for i, g in enumerate(groups)]
        with tqdm(total=sum(map(len, groups)), desc=desc, leave=False, disable=None, dynamic_ncols=True) as bar:
            pending, size = list(refs), {ref: len(g) for ref, g in zip(refs, groups, strict=True)}
            while pending:  # episodes done so far, as groups finish
                done, pending = self.ray.wait(pending, num_returns=1)
                bar.update(size[done[0]])
        return self.ray.get(refs)

    def envs(self, specs: list[tuple[str, dict]]) -> list[RemoteEnv]:
        """One remote env per (theme, AgentWorldEnv keyword arguments), dealt round-robin over the workers."""
        out = []
        for i, (theme, kwargs) in enumerate(specs):
            self._keys += 1
            out.append(RemoteEnv(self.ray, self.actors[i % len(self.actors)], self._keys, theme, kwargs))
        return out

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


def add_ray_options(parser, what: str) -> None:
    """`--ray [ADDRESS]` and `--ray-workers N` on a command whose `what` plays env episodes."""
    parser.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                        help=f"{what} on Ray env worker actors (a model policy generates here, batched, and steps the envs "
                             "they hold); ADDRESS is a cluster's host:port (`ray start --head` prints it), else RAY_ADDRESS, a head "
                             "started on this machine, or a local Ray for this run (default: no Ray)")
    parser.add_argument("--ray-workers", type=int, default=2, help="with --ray: env worker actors, a CPU each (default: %(default)s)")


def env_workers(args) -> EnvWorkers | None:
    """The env workers `--ray [ADDRESS]` / `--ray-workers` ask for; None without --ray."""
    if getattr(args, "ray", None) is None:
        return None
    return EnvWorkers(args.ray_workers, args.ray or None)
