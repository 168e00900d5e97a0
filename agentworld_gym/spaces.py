"""Text spaces for observations (transcripts) and actions (tool calls)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from .actions import MAX_ACTION_CHARS

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
    """Text actions up to the parser's limit; `sample()` returns a well-formed JSON call to one of the env's tools.
    (A longer action is not an error of the caller: the env answers it with an error observation.)"""

    def __init__(self, tools: list[dict] | None = None, max_length: int = MAX_ACTION_CHARS, seed=None):
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
#
# AsyncVectorEnv's default shared_memory=True wants a fixed-size buffer per observation; a transcript has no
# fixed size. So the "shared memory" of a TextSpace is one file per sub-env in a private folder (on /dev/shm,
# i.e. RAM, where there is one): the worker writes its observation there before it answers the step, and
# the main process reads it back on access. Any length fits; nothing is truncated.


class TextSlots:
    """One file per sub-env holding its latest observation; made by the main process, written by workers."""

    def __init__(self, n: int):
        import tempfile
        import weakref

        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.folder = tempfile.mkdtemp(prefix="agentworld-obs-", dir=base)
        self.n = n
        for i in range(n):
            self.write(i, "")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)  # only the owner removes it

    def __getstate__(self) -> dict:
        return {"folder": self.folder, "n": self.n}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)  # a worker's copy: no cleanup of its own

    def path(self, i: int) -> str:
        return os.path.join(self.folder, str(i))

    def write(self, i: int, text: str) -> None:
        tmp = self.path(i) + ".tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        os.replace(tmp, self.path(i))  # a reader never sees half a transcript

    def read(self, i: int) -> str:
        with open(self.path(i), encoding="utf-8", errors="surrogatepass") as f:
            return f.read()


class SharedTextBatch(Sequence):
    """The batch AsyncVectorEnv keeps as its observations: a tuple-like view that reads the slots when
    indexed; copying it (AsyncVectorEnv's default copy=True) gives a plain tuple of str."""

    def __init__(self, slots: TextSlots):
        self.slots = slots

    def __len__(self) -> int:
        return self.slots.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self)[i]
        if not -self.slots.n <= i < self.slots.n:
            raise IndexError(i)
        return self.slots.read(i % self.slots.n)

    def __deepcopy__(self, memo) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


def _register_vector_handlers() -> None:
    from gymnasium.vector.utils import create_empty_array, create_shared_memory, read_from_shared_memory, write_to_shared_memory

    @create_empty_array.register(TextSpace)
    def _empty_text(space: TextSpace, n: int = 1, fn: Any = np.zeros) -> tuple[str, ...]:
        return tuple("" for _ in range(n))

    @create_shared_memory.register(TextSpace)
    def _text_slots(space: TextSpace, n: int = 1, ctx: Any = None) -> TextSlots:
        return TextSlots(n)

    @read_from_shared_memory.register(TextSpace)
    def _read_text(space: TextSpace, shared_memory: TextSlots, n: int = 1) -> SharedTextBatch:
        return SharedTextBatch(shared_memory)

    @write_to_shared_memory.register(TextSpace)
    def _write_text(space: TextSpace, index: int, value: str, shared_memory: TextSlots) -> None:
        shared_memory.write(index, value)


_register_vector_handlers()
