"""Ray RLlib on agentworld-gym: register a pool env with `tune.register_env` and train PPO briefly.

    .venv/bin/pip install "ray[rllib]"
    .venv/bin/python examples/rllib_pool.py --iterations 1

RLlib needs numeric spaces, so the env goes through the SB3 adapters (Discrete candidate actions,
hashed Box observations); any theme id, or several, can stand in for "finance".
"""

from __future__ import annotations

import argparse


def env_creator(config: dict):
    from agentworld_gym.wrappers import make_sb3_env

    import agentworld_gym  # noqa: F401  (registers the env ids inside each RLlib worker)

    return make_sb3_env(f"AgentWorld/{config.get('theme', 'finance')}-v0", difficulty=config.get("difficulty", 1),
                        max_turns=config.get("max_turns", 4))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--theme", default="finance")
    args = parser.parse_args()

    import ray
    from ray import tune
    from ray.rllib.algorithms.ppo import PPOConfig

    from agentworld_gym.train.ray_rollouts import connect

    tune.register_env("agentworld", env_creator)
    connect(ray, 1)  # RAY_ADDRESS's cluster, a `ray start --head` one on this machine, or a local one
    config = (
        PPOConfig()
        .environment("agentworld", env_config={"theme": args.theme, "difficulty": 1})
        .env_runners(num_env_runners=0, rollout_fragment_length=64)
        .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
    )
    algo = config.build_algo() if hasattr(config, "build_algo") else config.build()
    for i in range(args.iterations):
        result = algo.train()
        runners = result.get("env_runners", {})
        print(f"iteration {i + 1}: env steps {runners.get('num_env_steps_sampled_lifetime')}, "
              f"episode return mean {runners.get('episode_return_mean')}")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
