"""`TaskSampler`: a curriculum wrapper that picks each episode's difficulty (and theme).

    env = TaskSampler(gym.make("AgentWorld/pool-v0"), schedule=AdaptiveLevel(band=(0.4, 0.7)))
    env.set_theme_weights({"finance": 2.0, "retail": 0.5})   # any time while training: these two, 4:1

Schedules are small objects with `level` and `update(success)`:
  * `FixedLevel(3)`                      - always level 3;
  * `LinearRamp(1, 5, episodes=10_000)`  - from level 1 to 5 over that many episodes;
  * `AdaptiveLevel(band=(0.4, 0.7))`     - keeps the moving success rate inside the band by
    moving the level up when the agent succeeds too often and down when it fails too often.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from agentworld_gym.errors import ConfigError

MIN_LEVEL, MAX_LEVEL = 1, 5


def _check_level(level: int, what: str = "level") -> int:
    if not isinstance(level, (int, np.integer)) or not MIN_LEVEL <= level <= MAX_LEVEL:
        raise ConfigError(f"Expected {what} to be an integer in {MIN_LEVEL}-{MAX_LEVEL}, got {level!r}.")
    return int(level)


class FixedLevel:
    """Always the same level."""

    def __init__(self, level: int = 1):
        self.level = _check_level(level)

    def update(self, success: bool) -> None:
        pass

    def __repr__(self) -> str:
        return f"FixedLevel({self.level})"


class LinearRamp:
    """From `start` to `end` in equal steps over `episodes` episodes, then stays at `end`."""

    def __init__(self, start: int = 1, end: int = 5, episodes: int = 1000):
        self.start, self.end = _check_level(start, "start"), _check_level(end, "end")
        if episodes < 1:
            raise ConfigError(f"Expected episodes >= 1, got {episodes!r}.")
        self.episodes, self.done = episodes, 0

    @property
    def level(self) -> int:
        frac = min(self.done / self.episodes, 1.0)
        return int(round(self.start + (self.end - self.start) * frac))

    def update(self, success: bool) -> None:
        self.done += 1

    def __repr__(self) -> str:
        return f"LinearRamp({self.start}, {self.end}, episodes={self.episodes})"


class AdaptiveLevel:
    """Moves the level to keep the success rate over the last `window` episodes inside `band`.

    Every `window` episodes the success rate of that block is compared with the band: above it
    moves one level up, below it one level down, inside it stays; then a new block starts.
    """

    def __init__(self, band: tuple[float, float] = (0.4, 0.7), window: int = 20, start: int = 1):
        lo, hi = band
        if not 0.0 <= lo < hi <= 1.0:
            raise ConfigError(f"Expected a band (lo, hi) with 0 <= lo < hi <= 1, got {band!r}.")
        if window < 1:
            raise ConfigError(f"Expected window >= 1, got {window!r}.")
        self.band, self.window = (float(lo), float(hi)), int(window)
        self.level = _check_level(start, "start")
        self.recent: deque[bool] = deque(maxlen=self.window)
        self.moves: list[tuple[int, int]] = []  # (episode, new level)
        self.episodes = 0
        self.last_rate: float | None = None  # success rate of the last full block

    @property
    def success_rate(self) -> float | None:
        return sum(self.recent) / len(self.recent) if self.recent else None

    def update(self, success: bool) -> None:
        self.episodes += 1
        self.recent.append(bool(success))
        if len(self.recent) < self.window:
            return
        rate = self.success_rate
        self.last_rate = rate
        step = 1 if rate > self.band[1] else -1 if rate < self.band[0] else 0
        new = min(MAX_LEVEL, max(MIN_LEVEL, self.level + step))
        self.recent.clear()  # decide once per block of `window` episodes: sliding checks overreact to noise
        if new != self.level:
            self.level = new
            self.moves.append((self.episodes, new))

    def __repr__(self) -> str:
        return f"AdaptiveLevel(band={self.band}, window={self.window}, level={self.level})"


SCHEDULES = {"fixed": FixedLevel, "linear": LinearRamp, "adaptive": AdaptiveLevel}


def make_schedule(schedule: Any = "fixed", **kwargs: Any):
    """A schedule from an object, an int level, or a name ('fixed', 'linear', 'adaptive') + kwargs."""
    if hasattr(schedule, "level") and hasattr(schedule, "update"):
        return schedule
    if isinstance(schedule, (int, np.integer)) and not isinstance(schedule, bool):
        return FixedLevel(int(schedule))
    if isinstance(schedule, str) and schedule in SCHEDULES:
        return SCHEDULES[schedule](**kwargs)
    raise ConfigError(f"Expected a schedule object, a level 1-5 or one of {sorted(SCHEDULES)}, got {schedule!r}.")


class TaskSampler(gym.Wrapper):
    """Chooses each episode's difficulty by a schedule and, on a pool env, its theme by weight.

    Works on a single-theme env (`AgentWorld/<theme>-v0`) and on the pool env
    (`AgentWorld/pool-v0`). The outcome of every finished episode (verification passed or not)
    updates the schedule; with `per_theme=True` each theme of a pool keeps its own schedule.
    `info["curriculum"]` reports the level, theme and moving success rate.

    Args:
        env: an AgentWorld env (or a wrapper around one).
        schedule: a schedule object, a level 1-5, or "fixed" | "linear" | "adaptive".
        theme_weights: initial per-theme draw weights (pool envs only): draw among the named themes with
            these weights, the others never (`set_theme_weights`).
        per_theme: keep one schedule per theme (pool envs only).
        **schedule_kwargs: passed to the named schedule (level=..., band=..., episodes=...).
    """

    def __init__(self, env: gym.Env, schedule: Any = "fixed", theme_weights: Mapping[str, float] | None = None,
                 per_theme: bool = False, **schedule_kwargs: Any):
        super().__init__(env)
        self.schedule = make_schedule(schedule, **schedule_kwargs)
        template = _clone(self.schedule)  # per-theme schedules start from the initial state
        self._make = lambda: _clone(template)
        self.per_theme = per_theme
        self.schedules: dict[str, Any] = {}
        self.pool = env.unwrapped if hasattr(env.unwrapped, "set_weights") else None
        if per_theme and self.pool is None:
            raise ConfigError("Expected a pool env (AgentWorld/pool-v0) for per_theme=True, got a single-theme env.")
        self._rng: np.random.Generator | None = None
        self.theme: str | None = None
        self.level: int = self.schedule.level
        self.episodes = 0
        self.successes: deque[bool] = deque(maxlen=100)
        if theme_weights:
            self.set_theme_weights(theme_weights)

    def schedule_for(self, theme: str | None):
        if not self.per_theme or theme is None:
            return self.schedule
        if theme not in self.schedules:
            self.schedules[theme] = self._make()
        return self.schedules[theme]

    def set_theme_weights(self, weights: Mapping[str, float], keep_others: bool = False) -> None:
        """Draw among the named themes with these weights (pool envs); allowed at any time while training.

        `{"finance": 3.0, "retail": 1.0}` draws finance three times as often as retail and no other theme;
        `keep_others=True` leaves the weights of the themes not named as they were (`PoolEnv.set_weights`)."""
        from agentworld_gym.checks import Number

        for theme, weight in weights.items():
            Number(integer=False, low=0).check(f"theme_weights[{theme!r}]", weight)
        if self.pool is None:
            own = getattr(self.env.unwrapped, "theme", None)
            own_id = getattr(own, "id", None)
            wrong = [t for t in weights if t != own_id]
            if wrong:
                raise ConfigError(f"Expected weights only for this env's theme {own_id!r}, got {wrong}. "
                                  "Wrap the pool env (AgentWorld/pool-v0) to weight several themes.")
            return
        self.pool.set_weights(weights, keep_others=keep_others)

    @property
    def theme_weights(self) -> dict[str, float]:
        return self.pool.weights if self.pool is not None else {}

    @property
    def success_rate(self) -> float | None:
        return sum(self.successes) / len(self.successes) if self.successes else None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        options = dict(options or {})
        if self.pool is not None and "theme" not in options:
            options["theme"] = self.pool.draw_theme(self._rng)
        self.theme = options.get("theme")
        self.level = options.setdefault("difficulty", self.schedule_for(self.theme).level)
        suite = self._suite(self.theme)
        if suite and "task" not in options:  # a fixed task suite: a task of the level (or the nearest one)
            gap = min(abs(t.difficulty - self.level) for t in suite)
            near = [t for t in suite if abs(t.difficulty - self.level) == gap]
            options["task"] = near[int(self._rng.integers(len(near)))]
        obs, info = self.env.reset(seed=seed, options=options)
        self.theme = info.get("theme", self.theme)
        return obs, self._report(info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            success = bool(info.get("verification", {}).get("passed"))
            self.schedule_for(self.theme).update(success)
            self.successes.append(success)
            self.episodes += 1
        return obs, reward, terminated, truncated, self._report(info)

    def _suite(self, theme: str | None) -> list | None:
        base = self.pool.env_for(theme) if self.pool is not None and theme is not None else self.env.unwrapped
        return getattr(base, "tasks", None)

    def _report(self, info: dict) -> dict:
        info["curriculum"] = {"level": self.level, "next_level": self.schedule_for(self.theme).level,
                              "theme": self.theme, "episodes": self.episodes, "success_rate": self.success_rate}
        return info


def _clone(schedule):
    """A fresh copy of a schedule object (per-theme schedules must not share state)."""
    import copy

    return copy.deepcopy(schedule)
