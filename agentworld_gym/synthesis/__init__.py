"""Verifiable task synthesis. `synthesize_task` is the entry point envs use on reset.

Two kinds: `graph` (with person requests from level 2, a chain of dependent lookups built on the world, chain.py;
else weight-biased walks over the tool dependency graph, graph.py) and `programmatic` (a generated Python program
with loops, branches and aggregation, programmatic.py); `mixed` picks one per task, and themes with business rules
also get `rules` tasks (rules.py). Every task is checked by `quality.quality_problems` before it is returned:
its gold solution replays to the same answer/state, the entities it names are unambiguous, every
gold call is needed, and no cheap strategy passes it (a do-nothing attempt, a wrong answer, a
constant, the first id of the instruction, the answers most frequent for its theme and level), and
its instruction is a goal (`audit.wording_problems`: no narrated steps, no decoys, no dangling pointers).
"""

from __future__ import annotations

import dataclasses
import hashlib
from functools import lru_cache

import numpy as np

from ..errors import TaskError
from ..tasks import Task, answer_type_of
from ..theme import Theme
from . import persona as P
from . import quality
from .chain import reachable, synthesize_chain_task
from .graph import LEVELS, WALKS_UP_TO, Level, dependency_graph, start_tools, start_weights, synthesize_walk_task
from .persona import person_requests
from .programmatic import synthesize_programmatic_task
from .quality import (
    DO_NOTHING,
    answer_prior,
    audit,
    cheap_answers,
    guess_mode,
    guessable,
    instruction_values,
    quality_problems,
    seen_answers,
    thinned,
    thinned_answer,
    writes_from_instruction,
)

KINDS = ("graph", "programmatic", "mixed", "rules")  # rules: tasks that exercise business rules (rules.py)
RULE_SHARE = 1 / 3  # of "mixed" tasks, on themes whose write tools carry business rules
DEEP_LEVEL = 4  # from this level, "mixed" tries a programmatic task first (see synthesize_task)
DEEP_TRIES = 3  # tasks v3: from level 3, walks and rule tasks get this many times fewer attempts (see _tries)
CHAIN_ATTEMPTS = 12  # tasks v3: chains tried (`chain.synthesize_chain_task`) before the walks, from level 2


def synthesize_task(theme: Theme, difficulty: int = 1, seed: int = 0, kind: str = "graph", db_seed: int = 0,
                    *, check: bool = True, fallback: bool = False, attempts: int = 60, answers_only: bool = False) -> Task:
    """One verified task, deterministic in (theme, difficulty, seed, kind, db_seed).

    Bounded: each kind tries at most `attempts` candidates. When none is valid a TaskError says so;
    with `fallback=True` the next lower difficulty is tried instead (the task's
    `features["requested_difficulty"]` records what was asked for), down to level 1.
    `answers_only` makes only tasks that change nothing (what `answer_prior` samples).
    """
    with P.settled():  # the environment's switch read once per task
        return _synthesize_task(theme, difficulty, seed, kind, db_seed, check, fallback, attempts, answers_only)


@lru_cache(maxsize=4096)
def _theme_number(theme_id: str) -> int:
    """A number for the theme that is the same in every process (`hash` of a str is not)."""
    return int(hashlib.sha1(theme_id.encode()).hexdigest()[:12], 16)


def _synthesize_task(theme: Theme, difficulty: int, seed: int, kind: str, db_seed: int, check: bool, fallback: bool, attempts: int,
                     answers_only: bool) -> Task:
    if kind not in KINDS:
        raise TaskError(f"Expected kind in {KINDS}, got {kind!r}.")
    if difficulty not in LEVELS:
        raise TaskError(f"Expected difficulty 1-5, got {difficulty!r}.")
    order = shallow = [kind]
    if kind == "mixed":  # one kind by the seed and theme; the other if the theme cannot make the first
        # the theme is in the draw so that one seed asked of many themes (a benchmark's sample, a suite's freeze) does not
        # give every theme the same kind at a level
        rng = np.random.default_rng([seed, difficulty, 31, _theme_number(theme.spec.id)])
        drawn = ("graph", "programmatic")[int(rng.integers(2))]
        # a theme with business rules (forged tools) gives rule tasks a share of its tasks (drawn after
        # the kind above, so themes without rules keep their tasks)
        rules = ["rules"] if not answers_only and has_rules(theme) and rng.random() < RULE_SHARE else []
        shallow = [*rules, drawn, "programmatic" if drawn == "graph" else "graph"]
        # a loop of lookups over several records is where depth comes easiest
        order = [*rules, "programmatic", "graph"] if P.enabled() and difficulty >= DEEP_LEVEL else shallow
    errors = []
    for level in range(difficulty, 0 if fallback else difficulty - 1, -1):
        if check and P.enabled():
            seen_answers(theme, level, db_seed)  # worked out before any world copy is open (it synthesizes tasks itself)
        # tasks v3: a deep request that steps below DEEP_LEVEL tries the kinds drawn for it, as a request of that level
        # would; programmatic first there made every deep request of a theme without deep tasks one of the few level-2
        # plans (crypto: one question in 5 of 30 level-5 requests)
        kinds = order if level >= DEEP_LEVEL else shallow
        for k in kinds:
            options = {"check": check}
            if k == "rules":  # rule tasks ask for a change or, where a rule forbids it, for a fact: no answers-only mode
                from .rules import synthesize_rule_task as make
            else:
                make = synthesize_graph_task if k == "graph" else synthesize_programmatic_task
                options["answers_only"] = answers_only
            tries = _tries(k, level, attempts, fallback and k == kinds[-1])
            try:
                task = make(theme, level, seed, db_seed, attempts=max(tries, 1), **options)
            except TaskError as exc:
                errors.append(str(exc))
                continue
            if level != difficulty:
                task.features["requested_difficulty"] = difficulty
            # record the type the grader reads the gold as ("text" that is a date or an id says so)
            return dataclasses.replace(task, answer_type=answer_type_of(task.answer, task.answer_type))
    if fallback and P.enabled():
        # a theme whose tools let no person's request through at any level (about 1 pool theme in 7: its records are
        # found by nothing a person knows, or its answers are all guessable once worded so) gets the classic request
        # of the level, marked, rather than no task (env.reset would raise)
        with person_requests(False):
            try:
                task = synthesize_task(theme, difficulty, seed, kind, db_seed, check=check, fallback=True, attempts=attempts,
                                       answers_only=answers_only)
            except TaskError as exc:
                errors.append(str(exc))
            else:
                task.features["requests"] = "classic"
                return task
    raise TaskError(errors[-1] if len(errors) == 1 else " / ".join(errors))


def _tries(kind: str, level: int, attempts: int, last: bool) -> int:
    """Candidates `synthesize_task` tries of `kind` at `level` (`last`: the last kind before a lower level or the classic
    request)."""
    if not P.enabled():
        return attempts * (3 if kind == "programmatic" else 1)  # programmatic plans are cheap and more of them fail the rules
    if kind == "programmatic":
        # tasks v3: plans are built to pass, so a seed that passes does so early (every kept plan within 51 of them in 1,000
        # flagship requests, levels 1-5) and the rest of a larger budget is spent only by themes that cannot make the level
        return attempts
    if level >= 3:  # the depth floor rejects most walks a theme without deep chains makes: fewer reach the fallback sooner
        return attempts // DEEP_TRIES
    return attempts * (3 if level == 1 and last else 1)  # the last try before the classic request (a level-1 walk is cheap)


def synthesize_graph_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 60, check: bool = True,
                          answers_only: bool = False) -> Task:
    """One verified graph task: with person requests from level 2, a chain of dependent lookups built on the world
    (chain.py), else weight-biased walks over the tool dependency graph (graph.py). `answers_only`: no writes (the
    tasks `answer_prior` samples: only tasks that change nothing are guessed)."""
    if P.enabled() and difficulty >= 2:
        # walks past level 2 almost never meet the depth floor: without a chain the level steps down sooner
        if not reachable(theme, difficulty) and difficulty >= WALKS_UP_TO:
            raise TaskError(f"Expected theme {theme.id!r} to hold a chain of {difficulty} records for a level-{difficulty} graph task, "
                            "got none by its tools; try a lower difficulty, or pass fallback=True to synthesize_task.")
        if reachable(theme, difficulty):
            try:
                return synthesize_chain_task(theme, difficulty, seed, db_seed, attempts=CHAIN_ATTEMPTS, check=check, answers_only=answers_only)
            except TaskError:
                if difficulty >= WALKS_UP_TO:
                    raise
    return synthesize_walk_task(theme, difficulty, seed, db_seed, attempts=attempts, check=check, answers_only=answers_only)


def has_rules(theme: Theme) -> bool:
    """Whether the theme's write tools carry business rules a rule task can exercise (forged themes)."""
    return any(t.get("rules") for t in theme.templates)


def task_key(task: Task) -> str:
    """What makes two tasks the same task to a user: their instruction (case and spacing aside).
    Per-theme dedupe (`synth_tasks`, env resets) compares these; a task's id also holds its seed."""
    return " ".join(task.instruction.split()).lower()


# the checks sample this package's tasks for the answers a guesser would give (`quality.answer_prior`, `seen_answers`)
quality.sample_from(synthesize_task)

__all__ = ["DO_NOTHING", "KINDS", "LEVELS", "Level", "answer_prior", "audit", "cheap_answers", "dependency_graph", "guess_mode", "guessable",
           "has_rules", "instruction_values", "person_requests", "quality_problems", "seen_answers", "start_tools", "start_weights",
           "synthesize_graph_task", "synthesize_task", "task_key", "thinned", "thinned_answer", "writes_from_instruction"]
