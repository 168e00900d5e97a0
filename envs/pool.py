"""The multi-theme pool: one gymnasium env whose every reset draws a theme from the registry.

`AgentWorld/pool-v0` covers every registered theme; `AgentWorld/pool-<category>-v0` the themes of
one L1 category (slug of its name, e.g. `pool-finance-markets-v0`). The theme list is read from
the registry when the env is made, so it covers whatever is registered at that time; each
theme's `AgentWorldEnv` is built lazily on its first draw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentworld_gym.errors import ConfigError, ResetNeededError, did_you_mean
from agentworld_gym.spaces import TextSpace, ToolCallSpace
from agentworld_gym.tasks import Task, load_tasks

from .registry import category_slug


class PoolEnv(gym.Env[str, str]):
    """Episodes across many themes: each `reset()` draws a theme (by weight) and runs its env.

    Args:
        themes: theme ids to pool (default: every built-in registered theme, or those of `category`; themes from
            `load_pool` only when named here).
        category: an L1 category name or slug; only its themes.
        weights: {theme: weight} (default equal): draw among the named themes with these weights, the others
            never (see `set_weights`); change them while training with `set_weights`.
        tasks: a JSONL path or a list of tasks of several themes: each theme runs its own tasks,
            and only themes with tasks are pooled.
        **env_kwargs: passed to every theme's `AgentWorldEnv` (difficulty, task_kind, max_turns, ...).

    `reset(options={"theme": id})` picks the theme explicitly; other options go to the theme's env.
    """

    metadata = {"render_modes": ["ansi", "human"]}

    def __init__(self, themes: Sequence[str] | None = None, category: str | None = None,
                 weights: Mapping[str, float] | None = None, tasks: str | Path | Sequence[Task | dict] | None = None,
                 render_mode: str | None = None, **env_kwargs: Any):
        from .registry import entries

        registered = {e.id: e for e in entries()}

        import inspect

        from agentworld_gym.env import AgentWorldEnv, check_env_args

        # checked now, not when a theme's env is first built at some later reset
        passed_on = [p for p in inspect.signature(AgentWorldEnv.__init__).parameters if p not in ("self", "unknown", "theme", "tasks", "render_mode")]
        own = [p for p in inspect.signature(PoolEnv.__init__).parameters if p not in ("self", "env_kwargs")]
        check_env_args({**env_kwargs, "render_mode": render_mode}, "PoolEnv", [*own, *passed_on])
        by_theme: dict[str, list[Task]] = {}
        if tasks is not None:
            loaded = load_tasks(tasks) if isinstance(tasks, (str, Path)) else [t if isinstance(t, Task) else Task.from_dict(t) for t in tasks]
            for t in loaded:
                by_theme.setdefault(t.theme, []).append(t)
        if themes is None:
            slug = category_slug(category) if category else None
            # themes a user loaded (`load_pool`) join a pool only when named, so built-in pool ids stay the same suite
            themes = [k for k, e in registered.items() if e.source != "local" and (slug is None or category_slug(e.category) == slug)]
            if by_theme:
                themes = [k for k in themes if k in by_theme]
        from .registry import bare_id

        themes = [bare_id(t) for t in themes]  # `finance` or `AgentWorld/finance-v0`, as in every subcommand
        unknown = [t for t in themes if t not in registered]
        if unknown:
            raise ConfigError(f"Expected registered theme ids, got {unknown[:5]}.{did_you_mean(unknown[0], registered)}")
        if not themes:
            raise ConfigError(f"Expected at least one theme in the pool, got none (category={category!r}). "
                              "Run `agentworld list` to see the registered themes and categories.")
        self.theme_ids: list[str] = list(themes)
        self._weights = np.ones(len(self.theme_ids))
        self._tasks = by_theme
        self.env_kwargs = env_kwargs
        self.render_mode = render_mode
        self._envs: dict[str, gym.Env] = {}
        self.current: gym.Env | None = None
        self.observation_space = TextSpace(max_length=2**26)
        self.action_space = ToolCallSpace()  # themes differ in tools; any text is a valid action
        if weights:
            self.set_weights(weights)

    # ------------------------------------------------------------------ weights
    @property
    def weights(self) -> dict[str, float]:
        return dict(zip(self.theme_ids, self._weights.tolist(), strict=True))

    def set_weights(self, weights: Mapping[str, float], keep_others: bool = False) -> None:
        """Draw among the named themes with these weights: `{"finance": 3.0, "retail": 1.0}` draws finance
        three times as often as retail and no other theme. With `keep_others=True` the themes not named keep
        their weights instead (`{"retail": 0.0}` then leaves one theme out of a pool that goes on as before)."""
        index = {t: i for i, t in enumerate(self.theme_ids)}
        new = self._weights.copy() if keep_others else np.zeros(len(self.theme_ids))
        for theme, w in weights.items():
            if theme not in index:
                raise ConfigError(f"Expected a theme of this pool, got {theme!r}.{did_you_mean(theme, index)}")
            if not (w >= 0 and np.isfinite(w)):
                raise ConfigError(f"Expected a finite weight >= 0 for {theme!r}, got {w!r}.")
            new[index[theme]] = w
        if new.sum() <= 0:
            raise ConfigError("Expected at least one theme with a positive weight, got all zero. To leave some themes "
                              "out of a pool that otherwise goes on as before, pass keep_others=True.")
        self._weights = new

    def draw_theme(self, rng: np.random.Generator) -> str:
        p = self._weights / self._weights.sum()
        return self.theme_ids[int(rng.choice(len(self.theme_ids), p=p))]

    # ------------------------------------------------------------------ gymnasium API
    def env_for(self, theme: str) -> gym.Env:
        """The theme's env (built on first use)."""
        env = self._envs.get(theme)
        if env is None:
            if theme not in self.theme_ids:
                raise ConfigError(f"Expected a theme of this pool, got {theme!r}.{did_you_mean(theme, self.theme_ids)}")
            from agentworld_gym.env import AgentWorldEnv

            env = self._envs[theme] = AgentWorldEnv(theme, tasks=self._tasks.get(theme), render_mode=self.render_mode, **self.env_kwargs)
        return env

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        options = dict(options or {})
        theme = options.pop("theme", None) or self.draw_theme(self.np_random)
        self.current = self.env_for(theme)
        return self.current.reset(seed=int(self.np_random.integers(2**31)), options=options)

    def step(self, action: str):
        if self.current is None:
            raise ResetNeededError("Expected reset() before step() on the pool env. Call env.reset().")
        return self.current.step(action)

    def render(self):
        return self.current.render() if self.current is not None else None

    def close(self) -> None:
        for env in self._envs.values():
            env.close()

    # ------------------------------------------------------------------ what policies and wrappers read
    @property
    def task(self) -> Task | None:
        return getattr(self.current, "task", None)

    @property
    def theme(self):
        return getattr(self.current, "theme", None)

    @property
    def difficulty(self) -> int | None:
        return getattr(self.current, "difficulty", None)
