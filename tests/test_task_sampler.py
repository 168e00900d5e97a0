"""TaskSampler schedules (fixed, linear, adaptive), per-theme weights, and the pool env."""

from __future__ import annotations

import collections
import json

import gymnasium as gym
import numpy as np
import pytest
from agentworld_gym.envs import entries
from agentworld_gym.envs.registry import category_slug
from agentworld_gym.wrappers import AdaptiveLevel, FixedLevel, TaskSampler, make_schedule
from hypothesis import given, settings
from hypothesis import strategies as st

import agentworld_gym
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import ConfigError
from agentworld_gym.policies import OraclePolicy, run_episode
from agentworld_gym.synthesis import synthesize_task

gym.register_envs(agentworld_gym)


class LevelDependentPolicy:
    """Scripted: solves the task (gold replay) with probability p[level], else submits a wrong answer."""

    def __init__(self, env, p: dict[int, float], seed: int = 0):
        self.oracle, self.p, self.rng = OraclePolicy(env), p, np.random.default_rng(seed)
        self.solving = True

    def act(self, observation, info):
        if info["turn"] == 0:
            self.solving = self.rng.random() < self.p[info["difficulty"]]
        if self.solving:
            return self.oracle.act(observation, info)
        return json.dumps({"name": "submit", "arguments": {"answer": "surely wrong"}})


# ------------------------------------------------------------------------------------ schedules


def test_fixed_and_linear_schedules():
    fixed = make_schedule(3)
    assert isinstance(fixed, FixedLevel) and fixed.level == 3
    ramp = make_schedule("linear", start=1, end=5, episodes=8)
    levels = []
    for _ in range(12):
        levels.append(ramp.level)
        ramp.update(True)
    assert levels[0] == 1 and levels[-1] == 5 and levels == sorted(levels) and len(set(levels)) == 5
    with pytest.raises(ConfigError):
        make_schedule(9)
    with pytest.raises(ConfigError):
        AdaptiveLevel(band=(0.8, 0.2))


@settings(max_examples=40, deadline=None)
@given(
    target=st.integers(1, 5),
    band=st.sampled_from([(0.4, 0.7), (0.3, 0.6), (0.5, 0.8)]),
    margin=st.floats(0.2, 0.3),
    seed=st.integers(0, 2**32 - 1),
)
def test_adaptive_schedule_converges_into_its_band(target, band, margin, seed):
    """Success depends on the level: levels below the target are too easy, above it too hard."""
    lo, hi = band
    mid = (lo + hi) / 2
    p = {lv: min(0.99, hi + margin) if lv < target else max(0.01, lo - margin) if lv > target else mid for lv in range(1, 6)}
    schedule = AdaptiveLevel(band=band, window=20, start=1 if target > 2 else 5)
    rng = np.random.default_rng(seed)
    outcomes, levels = [], []
    for _ in range(1500):
        levels.append(schedule.level)
        success = rng.random() < p[schedule.level]
        outcomes.append(success)
        schedule.update(success)
    late = levels[500:]
    assert collections.Counter(late).most_common(1)[0][0] == target
    assert sum(lv == target for lv in late) / len(late) > 0.6
    rate = float(np.mean(outcomes[500:]))
    assert lo - 0.1 <= rate <= hi + 0.1


# ------------------------------------------------------------------------------------ wrapper on a real env


def test_adaptive_sampler_on_a_real_env_with_a_scripted_policy():
    env = TaskSampler(gym.make("AgentWorld/finance-v0", max_turns=30), schedule="adaptive", band=(0.4, 0.8), window=6)
    policy = LevelDependentPolicy(env, {1: 1.0, 2: 1.0, 3: 0.6, 4: 0.0, 5: 0.0}, seed=1)
    seen = []
    for ep in range(90):
        result = run_episode(env, policy, seed=ep)
        seen.append(result["difficulty"])
        assert result["info"]["curriculum"]["level"] == result["difficulty"]  # the task really has that level
    assert seen[0] == 1 and max(seen) >= 3
    assert collections.Counter(seen[40:]).most_common(1)[0][0] == 3


def test_sampler_on_a_fixed_suite_picks_tasks_of_the_level():
    from agentworld_gym.envs import get_theme

    theme = get_theme("finance")
    tasks = [synthesize_task(theme, lv, s) for lv in (1, 2, 4) for s in range(3)]
    env = TaskSampler(AgentWorldEnv("finance", tasks=tasks), schedule=FixedLevel(4))
    for s in range(5):
        _, info = env.reset(seed=s)
        assert info["difficulty"] == 4
    env = TaskSampler(AgentWorldEnv("finance", tasks=tasks), schedule=FixedLevel(5))  # none at 5: the nearest
    assert env.reset(seed=0)[1]["difficulty"] == 4


def test_single_theme_env_rejects_weights_for_other_themes():
    env = TaskSampler(gym.make("AgentWorld/finance-v0"))
    env.set_theme_weights({"finance": 1.0})
    with pytest.raises(ConfigError, match="pool"):
        env.set_theme_weights({"retail": 1.0})
    with pytest.raises(ConfigError, match="pool"):
        TaskSampler(gym.make("AgentWorld/finance-v0"), per_theme=True)


# ------------------------------------------------------------------------------------ the pool


def test_pool_ids_cover_every_category():
    categories = {category_slug(e.category) for e in entries()}
    for slug in categories:
        assert f"AgentWorld/pool-{slug}-v0" in gym.registry
    assert "AgentWorld/pool-v0" in gym.registry
    slug = category_slug(entries()[0].category)
    env = gym.make(f"AgentWorld/pool-{slug}-v0")
    themes = {env.reset(seed=s)[1]["theme"] for s in range(6)}
    assert themes <= {e.id for e in entries() if category_slug(e.category) == slug}


def test_pool_draws_themes_by_weight_and_weights_change_while_training():
    assert len(gym.make("AgentWorld/pool-v0").unwrapped.theme_ids) == len(entries())
    flagships = sorted(e.id for e in entries() if e.source == "flagship")
    env = TaskSampler(gym.make("AgentWorld/pool-v0", themes=flagships, max_turns=20), schedule=2)
    env.set_theme_weights({t: 0.0 for t in ("retail", "music")}, keep_others=True)
    oracle = OraclePolicy(env)
    first = collections.Counter()
    for s in range(30):
        r = run_episode(env, oracle, seed=s)
        assert r["reward"] == 1.0 and r["difficulty"] == 2
        first[r["info"]["theme"]] += 1
    assert len(first) >= 5 and not {"retail", "music"} & set(first)
    env.set_theme_weights({"retail": 1.0, "music": 3.0})  # only these two, 1:3
    later = collections.Counter(env.reset(seed=100 + s)[1]["theme"] for s in range(40))
    assert set(later) == {"retail", "music"} and later["music"] > later["retail"]
    with pytest.raises(ConfigError):
        env.set_theme_weights({"no-such-theme": 1.0})
    with pytest.raises(ConfigError, match="keep_others=True"):
        env.set_theme_weights({"retail": 0.0})


def test_weights_naming_some_themes_of_the_whole_pool_draw_only_those():
    """The issue's case: weights for two themes on AgentWorld/pool-v0 (2,000+ themes) draw those two, 3:1."""
    import numpy as np

    env = TaskSampler(gym.make("AgentWorld/pool-v0"), theme_weights={"finance": 3.0, "retail": 1.0})
    rng = np.random.default_rng(0)
    drawn = collections.Counter(env.unwrapped.draw_theme(rng) for _ in range(4000))
    assert set(drawn) == {"finance", "retail"} and 2.6 < drawn["finance"] / drawn["retail"] < 3.4
    assert env.theme_weights["finance"] == 3.0 and env.theme_weights["clinic"] == 0.0


def test_pool_is_deterministic_and_per_theme_schedules_are_separate():
    a = gym.make("AgentWorld/pool-v0")
    b = gym.make("AgentWorld/pool-v0")
    for s in range(4):
        assert a.reset(seed=s)[0] == b.reset(seed=s)[0]
    env = TaskSampler(gym.make("AgentWorld/pool-v0", max_turns=20), schedule="adaptive", per_theme=True, window=2,
                      theme_weights={t: float(t in ("finance", "retail")) for t in a.unwrapped.theme_ids})
    policy = LevelDependentPolicy(env, {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0})
    for s in range(12):
        run_episode(env, policy, seed=s)
    assert set(env.schedules) == {"finance", "retail"}
    assert all(sch.level > 1 for sch in env.schedules.values())
    assert env.schedules["finance"] is not env.schedules["retail"]


def test_pool_runs_a_multi_theme_task_file(tmp_path):
    from agentworld_gym.envs import get_theme

    from agentworld_gym.tasks import save_tasks

    tasks = [synthesize_task(get_theme(t), 2, s, "mixed") for t in ("finance", "weather") for s in range(3)]
    save_tasks(tasks, tmp_path / "suite.jsonl")
    env = gym.make("AgentWorld/pool-v0", tasks=str(tmp_path / "suite.jsonl"))
    assert sorted(env.unwrapped.theme_ids) == ["finance", "weather"]
    ids = {t.id for t in tasks}
    for s in range(8):
        r = run_episode(env, OraclePolicy(env), seed=s)
        assert r["task_id"] in ids and r["reward"] == 1.0
