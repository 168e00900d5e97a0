"""Vector envs from factories: gymnasium Sync/AsyncVectorEnv and SB3 Dummy/SubprocVecEnv.

Factories (thunks), not live envs, cross the process boundary, so every worker builds its own
env and database. Text observations batch as tuples of str; async workers pass them by pickling
(`shared_memory=False`). Plain `gym.vector.AsyncVectorEnv(fns)` with its default shared memory works too
(text slots in files, see `agentworld_gym.spaces.TextSlots`).

    envs = make_vector_env("AgentWorld/finance-v0", 4, mode="async", difficulty=1)
    obs, infos = envs.reset(seed=0)          # obs: tuple of 4 transcripts
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym

from .errors import ConfigError

MODES = ("sync", "async")
def make_env(env_id: str, wrappers: Callable[[gym.Env], gym.Env] | None = None, **kwargs) -> Callable[[], gym.Env]:
    """A thunk that builds `gym.make(env_id, **kwargs)`, then applies `wrappers(env)`."""

    def thunk() -> gym.Env:
        from . import envs  # noqa: F401  (registers the env ids in a fresh worker process)

        env = gym.make(env_id, **kwargs)
        return wrappers(env) if wrappers is not None else env

    return thunk


def make_vector_env(env_id: str, num_envs: int, mode: str = "sync", wrappers: Callable[[gym.Env], gym.Env] | None = None,
                    autoreset_mode: str | gym.vector.AutoresetMode = "NextStep", **kwargs) -> gym.vector.VectorEnv:
    """`num_envs` copies of `env_id` in a gymnasium SyncVectorEnv ("sync") or AsyncVectorEnv ("async").

    Gymnasium's autoreset semantics apply ("NextStep" by default: the step after an episode ends
    resets that sub-env and ignores its action; "SameStep" and "Disabled" work too). `wrappers`
    is applied inside each worker.
    """
    if mode not in MODES:
        raise ConfigError(f"Expected mode in {MODES}, got {mode!r}.")
    if not isinstance(num_envs, int) or num_envs < 1:
        raise ConfigError(f"Expected num_envs >= 1, got {num_envs!r}.")
    fns = [make_env(env_id, wrappers, **kwargs) for _ in range(num_envs)]
    autoreset = gym.vector.AutoresetMode(autoreset_mode)
    if mode == "sync":
        return gym.vector.SyncVectorEnv(fns, autoreset_mode=autoreset)
    return gym.vector.AsyncVectorEnv(fns, shared_memory=False, autoreset_mode=autoreset)


def make_sb3_vec_env(env_id: str, num_envs: int, subprocess: bool = True, wrappers: Callable[[gym.Env], gym.Env] | None = None, **kwargs):
    """An SB3 SubprocVecEnv (or DummyVecEnv) of numeric-adapter envs; `wrappers` defaults to the SB3 adapters."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    if wrappers is None:
        from .wrappers.sb3 import CandidateChoiceAction, HashedTranscriptObservation

        def wrappers(env):
            return HashedTranscriptObservation(CandidateChoiceAction(env))

    fns = [make_env(env_id, wrappers, **kwargs) for _ in range(num_envs)]
    return SubprocVecEnv(fns) if subprocess else DummyVecEnv(fns)


__all__ = ["MODES", "make_env", "make_sb3_vec_env", "make_vector_env"]
