"""Checks a task's instruction and gold solution against the rules of tasks v2, by check, not by eye.

`quality.audit(theme, task)` names each rule a task breaks; the quality filter rejects on the wording rules
(`wording_problems`) and `benchmarks/bench_task_quality.py` reports the rate of each over samples.
The rules: the instruction is a goal (no numbered steps, no "step N", no "then" narration, no tool
identifiers), has no decoy sentences, every gold call is needed, writes do not cancel out, references
are unambiguous, no answer is the length of a page of a listing, and no column is named as stored where
a user would name it otherwise ("column_phrase": "the started at of", "duration min"; see
`wording.field_name`), and no search argument is used as a locator ("query_locator": "the page with query travel").
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..tasks import Task
from ..theme import Theme, humanize
from . import wording as W
from .persona import LOCATOR, enabled

RULES = ("step_leak", "decoy", "unused_call", "self_cancelling", "ambiguous_reference", "page_size_answer", "column_phrase",
         "query_locator")

_STEPS = re.compile(r"(?:^|\n)\s*\d+[.)]\s|\bsteps?\s+\d+\b|\b(?:then|after that|afterwards|next,|finally,)\b|\bthe (?:first|second|third|last) step\b", re.I)
_DECOY = re.compile(r"\bcareful\b|\bleave (?:it|them) out\b|\bis a different \w+ from\b|\bdo not confuse\b", re.I)
# "that account" / "those orders" / "the first order listed": pointers whose referent the user never named
_POINTER = re.compile(r"\b(?:that|those|this|these)\s+(?!(?:have|has|had|cannot|can|are|is|was|were|will|would|does|do|did|it|they|we|you|i|he|she|the|a|an|its|their|each|every|all)\b)[a-z]+"
                      r"|\bthe first \w+(?: \w+)? (?:listed|it lists)\b|\bfrom (?:the )?(?:previous|earlier) (?:step|result)\b", re.I)


def blanked(task: Task) -> str:
    """The instruction with the values of its gold calls blanked out (an id may hold any word)."""
    text = task.instruction
    for c in task.solution:
        for v in c.get("arguments", {}).values():
            if isinstance(v, (str, int, float)) and len(str(v)) > 2:
                text = text.replace(str(v), " ")
    return text


def column_phrases(theme: Theme, text: str) -> list[str]:
    """The columns `text` names as stored although a user names them otherwise: each column whose
    humanized name ('started at', 'duration min') is not its `wording.field_name` ('start time',
    'duration in minutes'), found as whole words."""
    raw = {humanize(c.name) for t in theme.spec.tables for c in t.columns}
    return sorted(r for r in raw if len(r.split()) > 1 and r != W.field_name(r.replace(" ", "_"))
                  and re.search(rf"\b{re.escape(r)}\b", text, re.I))


def pointer(text: str) -> bool:
    """Whether `text` points at something it never introduced ("those items", "this number"): the ambiguous_reference rule."""
    return bool(_POINTER.search(text))


def wording_problems(theme: Theme, task: Task) -> list[str]:
    """The wording rules a task's instruction breaks (its values blanked out first: an id may hold any word)."""
    text = blanked(task)
    problems = []
    names = _tool_names(theme)
    if _STEPS.search(text) or (names is not None and names.search(text)):
        problems.append("step_leak")
    if _DECOY.search(text):
        problems.append("decoy")
    if pointer(text):
        problems.append("ambiguous_reference")
    if enabled() and LOCATOR.search(task.instruction):  # tasks v3 (opt-in): classic tasks keep their search locators
        problems.append("query_locator")
    return problems


@lru_cache(maxsize=4096)
def _tool_names(theme: Theme) -> re.Pattern | None:
    """One pattern for the theme's tool identifiers (names with an underscore) as whole words."""
    names = [re.escape(t.name) for t in theme.toolset if "_" in t.name]
    return re.compile(r"\b(?:" + "|".join(names) + r")\b") if names else None


__all__ = ["RULES", "blanked", "column_phrases", "pointer", "wording_problems"]
