"""PPO (stable-baselines3) on the candidate-action / hashed-observation adapters, vs its null baselines.

Does a stock RL library learn on the pool? Trains SB3 PPO on difficulty-1 tasks of one flagship
theme, then on a pool of several themes (one theme per vector-env slot), and every `eval_every`
steps measures the greedy policy's success rate on held-out task seeds next to the null baselines on the
same seeds: a random real candidate (the `action_masks()` slots), always the first candidate, and the
best constant candidate slot (`--only-baselines 1` measures only these).

    .venv/bin/python benchmarks/ppo_candidates.py                       # default budget (< 15 min)
    .venv/bin/python benchmarks/ppo_candidates.py --total-timesteps 20000 --pool ""   # quick look

Prints a table per run, writes <out>.json and a learning-curve <out>.png.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np


@dataclass
class Args:
    theme: str = "finance"
    """flagship theme of the single-theme run"""
    pool: str = "finance,retail,travel"
    """comma-separated themes of the pool run ('' skips it)"""
    difficulty: int = 1
    """task difficulty (1-5)"""
    total_timesteps: int = 16_000
    """PPO environment steps per run"""
    pool_timesteps: int = 32_000
    """PPO environment steps for the pool run"""
    eval_every: int = 4_000
    """steps between evaluations"""
    train_tasks: int = 500
    """difficulty-`difficulty` tasks per theme to train on (synthesis seeds 0..n-1)"""
    eval_episodes: int = 60
    """held-out tasks per evaluation (synthesis seeds from 1_000_000, unseen in training)"""
    n_envs: int = 8
    """vector-env width (a pool run uses at least one env per theme)"""
    max_turns: int = 4
    """turns before an episode is truncated"""
    dim: int = 512
    """hashed observation size"""
    slots_per_tool: int = 2
    """candidate slots per tool in the Discrete action space"""
    latest_slots: int = 4
    """slots for submitting a field of the latest tool output"""
    extra_slots: int = 2
    """slots for submitting "done" or another observed value"""
    learning_rate: float = 2.5e-3
    """PPO learning rate"""
    n_steps: int = 32
    """PPO rollout length per env"""
    n_epochs: int = 10
    """PPO epochs per rollout"""
    ent_coef: float = 0.01
    """PPO entropy bonus"""
    seed: int = 0
    """training seed"""
    out: str = "benchmarks/results/ppo_candidates"
    """output prefix for the .json and .png"""
    only_baselines: int = 0
    """1: measure the null baselines only (no PPO), written to <out>_baselines.json"""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        parser.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    return Args(**vars(parser.parse_args()))


def ensure_registered(theme: str) -> None:
    """Themes not yet in the registry's flagship list are registered from envs/themes/<id>.py."""
    from agentworld_gym.envs import register_theme, theme_ids

    if theme not in theme_ids():
        register_theme(importlib.import_module(f"agentworld_gym.envs.themes.{theme}").THEME, replace=True)


def task_set(theme: str, difficulty: int, n: int, first_seed: int) -> list:
    from agentworld_gym.envs import get_theme

    from agentworld_gym.synthesis import synthesize_task

    return [synthesize_task(get_theme(theme), difficulty, first_seed + i) for i in range(n)]


def make_env(theme: str, args: Args, max_tools: int, tasks: list):
    def thunk():
        from agentworld_gym.wrappers import make_sb3_env

        ensure_registered(theme)
        env = make_sb3_env(f"AgentWorld/{theme}-v0", dim=args.dim, tasks=tasks, max_turns=args.max_turns,
                           action_kwargs={"slots_per_tool": args.slots_per_tool, "latest_slots": args.latest_slots,
                                          "extra_slots": args.extra_slots, "max_tools": max_tools})
        return gym.wrappers.RecordEpisodeStatistics(env)

    return thunk


def evaluate(envs: list[tuple[gym.Env, list]], act, episodes: int) -> float:
    """Success rate of `act(env, obs)` over `episodes` held-out tasks, spread over the themes' envs."""
    wins = 0
    for i in range(episodes):
        env, tasks = envs[i % len(envs)]
        obs, _ = env.reset(seed=i, options={"task": tasks[(i // len(envs)) % len(tasks)]})
        while True:
            obs, reward, terminated, truncated, _ = env.step(act(env, obs))
            if terminated or truncated:
                wins += reward >= 1.0
                break
    return wins / episodes


def random_candidate(rng: np.random.Generator):
    """The baseline: a uniformly random real candidate (a filled slot) at every step."""

    def act(env, obs):
        mask = env.get_wrapper_attr("action_masks")()
        return int(rng.choice(np.flatnonzero(mask)))

    return act


def constant_candidate(slot: int):
    """A constant policy: always the same slot of the Discrete candidate space (slot 0: the first candidate)."""
    return lambda env, obs: slot


def null_baselines(eval_envs: list[tuple[gym.Env, list]], n_actions: int, episodes: int, seed: int) -> dict:
    """The cheap policies a PPO figure must beat, each on the held-out tasks with a 95% Wilson interval: a random
    real candidate (4 passes), always the first candidate, and the best constant slot (chosen on these same
    tasks, so an upper bound for any constant policy)."""
    from agentworld_gym.suites.core import wilson

    def scored(rate: float, n: int) -> dict:
        wins = round(rate * n)
        return {"rate": rate, "n": n, "ci95": list(wilson(wins, n))}

    constants = [evaluate(eval_envs, constant_candidate(k), episodes) for k in range(n_actions)]
    best = int(np.argmax(constants))
    return {"random": scored(evaluate(eval_envs, random_candidate(np.random.default_rng(seed)), 4 * episodes), 4 * episodes),
            "first_candidate": scored(constants[0], episodes),
            "best_constant": {**scored(constants[best], episodes), "slot": best}}


def run(name: str, themes: list[str], timesteps: int, args: Args) -> dict:
    from agentworld_gym.envs import get_theme
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    for t in themes:
        ensure_registered(t)
    max_tools = max(len(get_theme(t).toolset) for t in themes)
    n_envs = max(args.n_envs, len(themes))
    train = {t: task_set(t, args.difficulty, args.train_tasks, 0) for t in themes}
    held_out = {t: task_set(t, args.difficulty, -(-args.eval_episodes // len(themes)), 1_000_000) for t in themes}
    venv = DummyVecEnv([make_env(themes[i % len(themes)], args, max_tools, train[themes[i % len(themes)]]) for i in range(n_envs)])
    venv.seed(args.seed)
    eval_envs = [(make_env(t, args, max_tools, held_out[t])(), held_out[t]) for t in themes]
    model = PPO("MlpPolicy", venv, learning_rate=args.learning_rate, n_steps=args.n_steps, batch_size=128, n_epochs=args.n_epochs,
                gamma=0.95, ent_coef=args.ent_coef, policy_kwargs={"net_arch": [128, 128]}, seed=args.seed, verbose=0)
    # The baselines are cheap (short episodes): the random one on 4 passes over the held-out tasks.
    baselines = null_baselines(eval_envs, venv.action_space.n, args.eval_episodes, args.seed)
    random_rate = baselines["random"]["rate"]
    print(f"\n== {name}: null baselines " + ", ".join(f"{k} {v['rate']:.2f} [{v['ci95'][0]:.2f}, {v['ci95'][1]:.2f}]"
                                                    for k, v in baselines.items()), flush=True)
    if args.only_baselines:
        return {"name": name, "themes": themes, "baselines": baselines}
    greedy = lambda env, obs: int(model.predict(obs, deterministic=True)[0])  # noqa: E731
    print(f"\n== {name}: themes={','.join(themes)} difficulty={args.difficulty} actions=Discrete({venv.action_space.n}) "
          f"obs=Box({args.dim}) envs={n_envs} train tasks={args.train_tasks}/theme")
    print(f"{'timesteps':>10} {'PPO success':>12} {'random':>8} {'ratio':>7} {'seconds':>8}", flush=True)
    curve: list[dict] = []
    start = time.perf_counter()
    done = 0
    while True:
        rate = evaluate(eval_envs, greedy, args.eval_episodes)
        row = {"timesteps": done, "ppo": rate, "random": random_rate, "seconds": round(time.perf_counter() - start, 1)}
        curve.append(row)
        ratio = rate / random_rate if random_rate else float("inf")
        print(f"{done:>10} {rate:>12.2f} {random_rate:>8.2f} {ratio:>7.1f} {row['seconds']:>8.1f}", flush=True)
        if done >= timesteps:
            break
        chunk = min(args.eval_every, timesteps - done)
        model.learn(chunk, reset_num_timesteps=False)
        done += chunk
    venv.close()
    final = curve[-1]["ppo"]
    return {"name": name, "themes": themes, "curve": curve, "final_ppo": final, "random": random_rate, "baselines": baselines,
            "ratio": final / random_rate if random_rate else None, "seconds": curve[-1]["seconds"]}


def plot(results: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for r in results:
        xs = [p["timesteps"] for p in r["curve"]]
        line = ax.plot(xs, [p["ppo"] for p in r["curve"]], marker="o", label=f"PPO - {r['name']}")[0]
        ax.axhline(r["random"], ls="--", color=line.get_color(), label=f"random candidate - {r['name']}")
        if "baselines" in r:
            ax.axhline(r["baselines"]["best_constant"]["rate"], ls=":", color=line.get_color(),
                       label=f"best constant candidate - {r['name']}")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate (held-out tasks)")
    ax.set_ylim(0, 1.02)
    ax.set_title("SB3 PPO on agentworld-gym candidate actions (difficulty 1)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    args = parse_args()
    import torch

    import agentworld_gym  # noqa: F401  (registers the envs)

    torch.set_num_threads(1)  # small MLP: threads only add contention
    results = [run(f"{args.theme} d{args.difficulty}", [args.theme], args.total_timesteps, args)]
    pool = [t.strip() for t in args.pool.split(",") if t.strip()]
    if pool:
        results.append(run(f"pool of {len(pool)} d{args.difficulty}", pool, args.pool_timesteps, args))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if args.only_baselines:
        with open(args.out + "_baselines.json", "w") as f:
            json.dump({"args": dataclasses.asdict(args), "results": results}, f, indent=1)
        print(f"wrote {args.out}_baselines.json")
        return
    with open(args.out + ".json", "w") as f:
        json.dump({"args": dataclasses.asdict(args), "results": results}, f, indent=1)
    plot(results, args.out + ".png")
    print("\nsummary:")
    for r in results:
        print(f"  {r['name']:<20} PPO {r['final_ppo']:.2f} vs random {r['random']:.2f} "
              f"(x{r['ratio']:.1f}) in {r['seconds']:.0f}s" if r["ratio"] else f"  {r['name']}: PPO {r['final_ppo']:.2f}, random 0")
    print(f"wrote {args.out}.json and {args.out}.png")


if __name__ == "__main__":
    main()
