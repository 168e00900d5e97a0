"""Text spaces for observations (transcripts) and actions (tool calls)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from gymnasium import spaces

_WORDS = ("alpha", "bravo", "delta", "north", "blue", "42", "1001", "AC-1001", "open", "paid")


class TextSpace(spaces.Space[str]):
    """Any Python string up to `max_length` characters (any Unicode, including control chars).

    gymnasium's `Text` space only admits a fixed charset; a transcript holds whatever tools and
    agents wrote, so membership here is "a str that is not absurdly long".
    """

    def __init__(self, max_length: int = 1_000_000, seed: int | np.random.Generator | None = None):
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        n = int(self.np_random.integers(1, 8))
        return " ".join(str(self.np_random.choice(_WORDS)) for _ in range(n))

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TextSpace) and other.max_length == self.max_length

    def to_jsonable(self, sample_n):
        return list(sample_n)

    def from_jsonable(self, sample_n):
        return list(sample_n)


class ToolCallSpace(TextSpace):
    """Text actions; `sample()` returns a well-formed JSON call to one of the env's tools."""

    def __init__(self, tools: list[dict] | None = None, max_length: int = 1_000_000, seed=None):
        self.tools = [t.get("function", t) for t in tools or []]  # accept OpenAI-format or bare schemas
        super().__init__(max_length=max_length, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if not self.tools:
            return super().sample()
        tool = self.tools[int(self.np_random.integers(len(self.tools)))]
        params = tool.get("parameters", {})
        args = {}
        for name, prop in params.get("properties", {}).items():
            if name in params.get("required", ()) or self.np_random.random() < 0.5:
                args[name] = sample_value(prop, self.np_random)
        return json.dumps({"name": tool["name"], "arguments": args})

    def __repr__(self) -> str:
        return f"ToolCallSpace({len(self.tools)} tools)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ToolCallSpace) and other.tools == self.tools


def sample_value(prop: dict, rng: np.random.Generator) -> Any:
    """A random value that satisfies a (simple) JSON Schema property."""
    if "enum" in prop:
        return prop["enum"][int(rng.integers(len(prop["enum"])))]
    kind = prop.get("type", "string")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "integer":
        return int(rng.integers(0, 100))
    if kind == "number":
        return round(float(rng.uniform(0, 100)), 2)
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "array":
        return [sample_value(prop.get("items", {}), rng) for _ in range(int(rng.integers(1, 3)))]
    if kind == "object":
        return {}
    return str(rng.choice(_WORDS))


# ---------------------------------------------------------------------------------------------
# Vector envs: a batch of text is a tuple of str (gymnasium's convention for Text spaces).


def _register_vector_handlers() -> None:
    from gymnasium.vector.utils import create_empty_array, create_shared_memory

    @create_empty_array.register(TextSpace)
    def _empty_text(space: TextSpace, n: int = 1, fn: Any = np.zeros) -> tuple[str, ...]:
        return tuple("" for _ in range(n))

    @create_shared_memory.register(TextSpace)
    def _no_shared_text(space: TextSpace, n: int = 1, ctx: Any = None):
        from .errors import ConfigError

        raise ConfigError(
            f"Expected shared_memory=False for {space!r}: transcripts have no fixed size to share. "
            "Use gymnasium.vector.AsyncVectorEnv(fns, shared_memory=False), or agentworld_gym.vector.make_vector_env."
        )


_register_vector_handlers()
