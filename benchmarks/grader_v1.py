"""The grader as it was before issue 33 (agentworld_gym/tasks.py at commit 61c0382), kept verbatim as
the baseline that benchmarks/bench_grader.py measures in the same run. Not used by the package."""

from __future__ import annotations

import math
import re
from typing import Any

_NUMBER = re.compile(r"[$€£]?\s*(-?\d[\d,]*(?:\.\d+)?|-?\.\d+)\s*%?\s*[A-Za-z]{0,4}\.?")
MAX_ANSWER_SIZE = 10_000


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        try:
            return float(x)
        except OverflowError:
            return None
    if isinstance(x, str) and len(x) <= 100:
        m = _NUMBER.fullmatch(x.strip())
        if m:
            try:
                return float(m.group(1).replace(",", ""))
            except ValueError:
                return None
    return None


def _text(x: Any) -> str:
    return " ".join(str(x).casefold().strip().strip(".").split())


def _items(x: Any) -> list[str]:
    if isinstance(x, (list, tuple, set)):
        return sorted(_text(i) for i in x)
    if isinstance(x, str):
        return sorted(_text(i) for i in re.split(r"[,;\n]", x.strip().strip("[]")) if i.strip())
    return [_text(x)]


# The types the old grader knew; the new ones were graded as these.
OLD_TYPE = {"date": "text", "id": "text", "percent": "number"}


def answers_match(expected: Any, got: Any, answer_type: str, tolerance: float = 0.01, context: str = "") -> bool:
    """`context` (the instruction) is taken and ignored: the old grader did not read it."""
    answer_type = OLD_TYPE.get(answer_type, answer_type)
    if got is None:  # the old verify() refused a missing answer before calling this
        return False
    if isinstance(got, (str, list, tuple, dict)) and len(got) > MAX_ANSWER_SIZE:
        return False
    if answer_type == "number":
        a, b = _number(expected), _number(got)
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=tolerance)
    if answer_type == "set":
        return _items(expected) == _items(got)
    if answer_type == "bool":
        yes = {"true", "yes", "1", "y"}
        no = {"false", "no", "0", "n"}
        g = _text(got)
        return (g in yes and bool(expected)) or (g in no and not expected)
    if answer_type == "text":
        return _text(expected) == _text(got)
    if answer_type == "facts":
        said = _text(" ".join(map(str, got)) if isinstance(got, (list, tuple)) else got)
        return bool(expected) and all(_text(f) in said for f in expected)
    return True
