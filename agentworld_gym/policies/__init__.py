"""Policies: anything with `act(observation, info) -> str`.

Built in: `OraclePolicy` (replays the task's gold solution, then submits), `RandomPolicy`
(well-formed random tool calls); the null baselines (do-nothing, constants, first id) are in
`agentworld_gym.policies.null`. LLM policies live in `agentworld_gym.policies.llm`.
"""

from __future__ import annotations

from .base import OraclePolicy, Policy, RandomPolicy, make_policy, run_episode

__all__ = ["OraclePolicy", "Policy", "RandomPolicy", "make_policy", "run_episode"]
