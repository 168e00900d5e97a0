"""Ray RLlib on agentworld-gym: PPO on the candidate adapter, scored beside its null baselines.

RLlib pins its own gymnasium (ray[rllib] 2.60: gymnasium 1.2.2; the project venv has 1.4), so it runs in its own
venv, which `make test` builds like the verifiers one:

    .venv/rllib/bin/python examples/rllib_pool.py --iterations 2 --episodes 40

RLlib needs numeric spaces, so the env goes through the SB3 adapters (`make_sb3_env`: Discrete candidate actions,
hashed Box observations), registered with `tune.register_env`; any theme id can stand in for "finance". After
training, the greedy PPO policy plays `--episodes` fresh episodes, beside the random and always-first-candidate
policies on the same seeds (success rate, n and a 95% Wilson interval each).
"""

from __future__ import annotations

import argparse
import json


def env_creator(config: dict):
    from agentworld_gym.wrappers import make_sb3_env

    import agentworld_gym  # noqa: F401  (registers the env ids inside each RLlib worker)

    return make_sb3_env(f"AgentWorld/{config.get('theme', 'finance')}-v0", difficulty=config.get("difficulty", 1),
                        max_turns=config.get("max_turns", 4))


def success_rate(env, act, episodes: int, seed: int) -> dict:
    """Success of `act(obs, rng) -> action` on `episodes` episodes seeded seed, seed+1, ...: rate, n, 95% interval."""
    import numpy as np

    from agentworld_gym.suites.core import wilson

    rng = np.random.default_rng(seed)
    wins = 0
    for i in range(episodes):
        obs, info = env.reset(seed=seed + i)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(act(obs, rng))
            done = terminated or truncated
        wins += bool(info.get("verification", {}).get("passed"))
    return {"success": round(wins / episodes, 4), "n": episodes, "ci95": [round(v, 4) for v in wilson(wins, episodes)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1, help="PPO training iterations (default: %(default)s)")
    parser.add_argument("--batch", type=int, default=128, help="env steps per iteration (default: %(default)s)")
    parser.add_argument("--episodes", type=int, default=40, help="evaluation episodes per policy (default: %(default)s)")
    parser.add_argument("--theme", default="finance")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import gymnasium
    import ray
    import torch
    from ray import tune
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns

    from agentworld_gym.train.ray_rollouts import connect

    tune.register_env("agentworld", env_creator)
    connect(ray, 1)  # RAY_ADDRESS's cluster, a `ray start --head` one on this machine, or a local one
    print(f"ray started (ray {ray.__version__}, gymnasium {gymnasium.__version__})", flush=True)
    env_config = {"theme": args.theme, "difficulty": 1}
    config = (
        PPOConfig()
        .environment("agentworld", env_config=env_config)
        .env_runners(num_env_runners=0, rollout_fragment_length=args.batch // 2)
        .training(train_batch_size=args.batch, minibatch_size=args.batch // 2, num_epochs=2)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo() if hasattr(config, "build_algo") else config.build()
    for i in range(args.iterations):
        result = algo.train()
        runners = result.get("env_runners", {})
        print(f"iteration {i + 1}: env steps {runners.get('num_env_steps_sampled_lifetime')}, "
              f"episode return mean {runners.get('episode_return_mean')}", flush=True)
    module = algo.get_module()

    def ppo(obs, rng):  # greedy: the most likely candidate
        with torch.no_grad():
            logits = module.forward_inference({Columns.OBS: torch.as_tensor(obs[None], dtype=torch.float32)})[Columns.ACTION_DIST_INPUTS]
        return int(logits.argmax(-1)[0])

    env = env_creator(env_config)
    scores = {"ppo": success_rate(env, ppo, args.episodes, 10_000 + args.seed),
              "random": success_rate(env, lambda obs, rng: int(rng.integers(env.action_space.n)), args.episodes, 10_000 + args.seed),
              "first-candidate": success_rate(env, lambda obs, rng: 0, args.episodes, 10_000 + args.seed)}
    env.close()
    print("scores " + json.dumps(scores), flush=True)
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
