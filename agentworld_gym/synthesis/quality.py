"""The checks a synthesized task passes before it is kept (`quality_problems`), and what they guard against: the
answers a guesser who never looks at the world would give (`cheap_answers`: do-nothing, constants, the instruction's
values, and the answers frequent for the theme and level, `answer_prior`), and, with person requests, the answers
checked tasks repeat (`seen_answers`, thinned per seed by `thinned`). `audit` names the rules a task breaks.

Those frequent answers are sampled from the synthesizer itself. It sits above these checks and calls them, so the
package hands it down on import (`sample_from`) instead of this module importing it back: imports run one way.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from ..errors import TaskError
from ..policies.null import CONSTANT_ANSWERS, first_value
from ..tasks import Task, _items, _number, _text, answers_match, verify
from ..theme import Theme
from . import persona as P
from .audit import blanked, column_phrases, wording_problems
from .facts import Run, capped, facts, same_rows, same_tables
from .replay import answer_of, execute
from .wording import show

DO_NOTHING = (None, "done", "")  # what an agent that did nothing submits; no task may accept it
PRIOR_SAMPLE = 96  # candidate tasks per (theme, level, world) from which the frequent answers are read
PRIOR_REPEATS = 2  # an answer seen this often in that sample is one a guesser would try

_synthesize: Callable[..., Task] | None = None  # `synthesis.synthesize_task`, handed down by `sample_from`


def sample_from(synthesize: Callable[..., Task]) -> None:
    """The synthesizer whose tasks `answer_prior` and `seen_answers` sample (the package passes its `synthesize_task`
    when it is imported, which importing any of its modules does first)."""
    global _synthesize
    _synthesize = synthesize


def quality_problems(theme: Theme, task: Task, reference: dict | None = None) -> list[str]:
    """Why a task should be dropped (empty list = keep).

    * its gold solution replays on a fresh copy with every call succeeding, to the same answer
      (graph: the recorded answer path; programmatic: the program re-executed gives the same answer
      and the same trace) and the same final state;
    * every gold call is needed: each lookup's result feeds a later call (or is what the answer is
      read from), each table the gold writes ends changed, and no single write can be left out;
    * the values it states directly identify one row each (the answer is unique);
    * its verifier rejects a do-nothing attempt, a wrong answer, and (for a task that changes nothing)
      every answer of a cheap strategy (`cheap_answers`).
    `reference` is the synthesis run's final rows of the task's state tables ({table: Counter of rows,
    `Facts.rows`}), if at hand: a replay that ends with the same rows needs no second state hash.
    """
    problems = []
    fx = facts(theme, task.db_seed)
    skips = _write_skips(theme, task) if task.state_hash is not None else []
    removable = False
    # a savepoint before each gold write a skip starts at: the left-out-write variants run from there
    # once the replay is checked (`_removable_from`), not from a second replay
    starts = {min(skip) for skip in skips}
    with fx.run() as run:
        if task.program:
            answer, trace, ok = execute(theme, task.program, run, savepoints=starts)
            if not ok or [dict(c) for c in task.solution] != trace:
                problems.append("gold program does not replay to the same calls")
            results = run.results
        else:
            results = []
            for i, c in enumerate(task.solution):
                if i in starts:
                    run.conn.execute(f"SAVEPOINT w{i}")
                results.append(run.call(c["name"], c.get("arguments", {})))
            ok = all(r.ok for r in results)
            if not ok:
                problems.append("gold solution has a failing call")
            path = task.features.get("answer_path")
            answer = answer_of(results[path[0]].data, path) if path and ok else task.answer
            if ok and _unused_lookup(theme, task, [r.data for r in results]):
                problems.append("a gold lookup's result is never used")
        if task.answer_type != "none" and not answers_match(task.answer, answer, task.answer_type, task.tolerance):
            problems.append("gold replay gives a different answer")
        final_rows = None
        if task.state_hash is not None:
            # a table no gold write changed (one a refused write touched) is as in the pristine world
            final_rows = {t: fx.rows(run.conn, t) if t in run.changed else fx.initial_rows(t) for t in task.state_tables}
            same = reference is not None and same_tables(final_rows, reference)
            if not same and fx.state_hash(run.conn, task.state_tables) != task.state_hash:
                problems.append("gold replay gives a different final state")
            initial = fx.initial_hash(task.state_tables)
            if initial == task.state_hash or any(verify(task, nothing, initial, True).passed for nothing in DO_NOTHING):
                problems.append("a do-nothing attempt passes")
            if any(same_rows(final_rows[t], fx.initial_rows(t)) for t in task.state_tables):
                problems.append("gold writes cancel each other out")
            if skips and not problems:
                removable = _removable_from(task, fx, run, skips, final_rows, _gold_changes(run, task.solution))
    if removable:
        problems.append("a gold write can be left out")
    if any(fx.count(*u) != 1 for u in task.features.get("unique", ())):
        problems.append("a value in the instruction matches several rows")
    if task.state_hash is None and any(verify(task, nothing, None, True).passed for nothing in DO_NOTHING):
        problems.append("a do-nothing attempt passes")
    if guessable(theme, task):
        problems.append("a cheap strategy's answer passes")
    if P.enabled() and writes_from_instruction(theme, task):
        problems.append("its writes can be made from the instruction alone, with no read")
    problems += [f"the instruction breaks the wording rule {rule!r}" for rule in wording_problems(theme, task)]
    if task.answer_type != "none" and answers_match(task.answer, _wrong(task), task.answer_type, task.tolerance):
        problems.append("a wrong answer passes")
    if not task.checks:
        problems.append("the task checks nothing")
    return problems


def _scalars(data) -> set:
    """Every scalar value in a tool output (fields of a record, of each listed record)."""
    items = data if isinstance(data, list) else [data]
    return {v for x in items if isinstance(x, dict) for v in x.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


def _unused_lookup(theme: Theme, task: Task, outputs: list) -> bool:
    """A read before the last call none of whose output values reaches a later call's arguments
    (other than values the instruction states anyway): the agent would never need it."""
    calls = task.solution
    for i, c in enumerate(calls[:-1]):
        if theme.toolset[c["name"]].writes:
            continue
        later = {v for d in calls[i + 1:] for v in d.get("arguments", {}).values() if isinstance(v, (str, int, float))}
        if not any(str(v) not in task.instruction for v in _scalars(outputs[i]) & later):
            return True
    return False


def _write_skips(theme: Theme, task: Task) -> list[set[int]]:
    """The sets of gold writes to try leaving out: each write alone, and two writes on the same entity
    (a write and its undo). Empty for a task with fewer than two writes."""
    calls = task.solution
    writes = [i for i, c in enumerate(calls) if theme.toolset[c["name"]].writes]
    if len(writes) < 2:
        return []

    def values(i: int) -> set:
        return {str(v) for v in calls[i].get("arguments", {}).values()}

    return [{i} for i in writes] + [{i, j} for i in writes for j in writes if i < j and values(i) & values(j)]


def _gold_changes(run, calls: list[dict]) -> list[frozenset]:
    """Per gold call, from it on: the tables the gold's writes there changed on the replay `run`
    (whose successful calls are the gold's: a program's refused writes are not in its solution)."""
    changes = [ch for ch, r in zip(run.changes, run.results, strict=True) if r.ok][:len(calls)]
    after = [frozenset()] * (len(calls) + 1)
    for i in range(len(changes) - 1, -1, -1):
        after[i] = after[i + 1] | changes[i]
    return after


def _variant_reaches(fx, run, calls: list[dict], start: int, skip: set[int], final_rows: dict, after: list[frozenset]) -> bool:
    """Whether the gold writes from `start` on, less the `skip` ones, all succeed on the run's copy and end
    at the gold's end state (stops at the first failing write). The gold's reads are left out: they
    change nothing and the writes' arguments are fixed, so a variant reaches the end state with them
    only if it does without (leaving them out can only find more writes removable). Both start from the
    gold's state before call `start`, so only the tables the gold changed from there (`after[start]`)
    or the variant changed can differ: the others are not read."""
    mark = len(run.changes)
    toolset = run.theme.toolset
    if not all(run.call(d["name"], d.get("arguments", {})).ok for j, d in enumerate(calls[start:], start)
               if j not in skip and toolset[d["name"]].writes):
        return False
    return fx.same_state(run.conn, final_rows, after[start].union(*run.changes[mark:]))


def _removable_from(task: Task, fx, run, skips: list[set[int]], final_rows: dict, after: list[frozenset]) -> bool:
    """A task with several writes whose end state is reached with one of them left out, or with two
    writes on the same entity left out (a write and its undo). Run on the replay's own copy, which
    holds a savepoint `w<i>` before each gold write a skip starts at: latest first, each variant rolls
    back to its savepoint (the gold's state just before the first left-out write), runs the rest of
    the gold without the left-out writes, stops at its first failing call, and is compared with the
    gold's end state. The variants' calls may be answered from the read memo (`Run.use_memo`: the
    replay itself ran every call)."""
    calls, conn = task.solution, run.conn
    run.use_memo()
    for i in sorted({min(s) for s in skips}, reverse=True):
        for skip in (s for s in skips if min(s) == i):
            conn.execute(f"ROLLBACK TO w{i}")  # inner savepoints go; this one and the outer ones stay
            if _variant_reaches(fx, run, calls, i, skip, final_rows, after):
                return True
    return False


def _answer_key(answer) -> str:
    """A normal form under which two answers that grade the same are equal (for counting them)."""
    number = _number(answer)
    if number is not None:
        return f"n:{number:.6g}"
    if isinstance(answer, bool):
        return f"b:{answer}"
    if isinstance(answer, (list, tuple)):
        return "s:" + "|".join(_items(answer))
    return "t:" + _text(answer)


def answer_prior(theme: Theme, level: int, db_seed: int = 0) -> tuple:
    """The answers a guesser who knows the theme and level would try: those at least PRIOR_REPEATS times
    in a fixed sample of PRIOR_SAMPLE candidate tasks (both kinds, before the quality filter, which is
    what makes it cheap; built once per theme, level and world, deterministic). Returns answers as
    they were given."""
    return _answer_prior(theme, level, db_seed, P.enabled())


@lru_cache(maxsize=8192)
def _answer_prior(theme: Theme, level: int, db_seed: int, person: bool) -> tuple:  # `person`: one cache per mode
    return _repeated_answers(theme, level, db_seed, [(2**30 + s, ("graph", "programmatic")[s % 2]) for s in range(PRIOR_SAMPLE)],
                             attempts=8, check=False, answers_only=True)


def _repeated_answers(theme: Theme, level: int, db_seed: int, draws: list[tuple[int, str]], **kwargs) -> tuple:
    """The answers given at least PRIOR_REPEATS times by the questions (tasks that change nothing) synthesized at
    the (seed, kind) draws, most common first."""
    counts, first = _answer_counts(theme, level, db_seed, draws, **kwargs)
    return tuple(first[k] for k, n in counts.most_common() if n >= PRIOR_REPEATS)


def _answer_counts(theme: Theme, level: int, db_seed: int, draws: list[tuple[int, str]], **kwargs) -> tuple[Counter, dict]:
    """(times each answer key was given, the answer as first given) by the questions synthesized at the (seed, kind)
    draws at `level` (with fallback=True, those made at another level or as the classic request are not counted)."""
    counts: Counter = Counter()
    first: dict[str, object] = {}
    for seed, kind in draws:
        try:
            t = _synthesize(theme, level, seed, kind, db_seed, **kwargs)
        except TaskError:
            continue
        if t.state_hash is None and t.answer_type != "none" and t.difficulty == level and "requests" not in t.features:
            key = _answer_key(t.answer)
            counts[key] += 1
            first.setdefault(key, t.answer)
    return counts, first


def guessable(theme: Theme, task: Task) -> bool:
    """A task that changes nothing whose answer one of `cheap_answers` passes (checked before the
    replays of the quality filter too, since it is cheap and rejects the most candidates)."""
    if task.state_hash is not None:
        return False
    if isinstance(task.answer, (list, dict)):
        return any(answers_match(task.answer, c, task.answer_type, task.tolerance) for c in cheap_answers(theme, task))
    # the same answers `cheap_answers` gives
    return (guessed(theme, task.difficulty, task.db_seed, task.answer, task.answer_type, task.tolerance)
            or any(answers_match(task.answer, c, task.answer_type, task.tolerance) for c in _echoed(task)))


def guessed(theme: Theme, level: int, db_seed: int, answer, answer_type: str, tolerance: float = 0.01) -> bool:
    """Whether a guesser who never looks at the world gives `answer` (`guesses`: the instruction-free part of
    `cheap_answers`). Programmatic plans ask it of the answer they work out, before the program is written."""
    if isinstance(answer, dict):
        return any(answers_match(answer, c, answer_type, tolerance) for c in guesses(theme, level, db_seed))
    key = tuple(answer) if isinstance(answer, list) else answer  # remembered as a tuple, graded as the list it is
    return _guessed(theme, level, db_seed, key, answer_type, tolerance, guess_mode(theme, level, db_seed))


@lru_cache(maxsize=65536)
def _guessed(theme: Theme, level: int, db_seed: int, answer, answer_type: str, tolerance, mode: str) -> bool:  # `mode`: `guess_mode`
    """`guessed`, remembered: plans ask about the same small counts and totals again and again, and the grader's parse
    of every guess is the costliest part of a plan."""
    answer = list(answer) if isinstance(answer, tuple) else answer
    return any(answers_match(answer, c, answer_type, tolerance) for c in guesses(theme, level, db_seed))


def _echoed(task: Task) -> list:
    """The instruction's values an echoing strategy submits (see `cheap_answers`)."""
    # tasks v3 echoes every value of the instruction; classic tasks, its first id or quoted value
    return instruction_values(task.instruction) if P.enabled() else [v for v in [first_value(task.instruction)] if v]


def cheap_answers(theme: Theme, task: Task) -> list:
    """What strategies that never look at the world would submit for `task`: nothing, each constant of
    `CONSTANT_ANSWERS`, the instruction's first id or quoted value (tasks v3: each id, quoted value, email,
    date or number of it, an echo), and the answers frequent for the task's theme and level (`answer_prior`)."""
    return [*guesses(theme, task.difficulty, task.db_seed)[:_N_CONSTANT], *_echoed(task),
            *guesses(theme, task.difficulty, task.db_seed)[_N_CONSTANT:]]


_NUMBER_OR_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-])")


def instruction_values(text: str) -> list[str]:
    """Every value an echoing strategy could submit: ids, quoted values and emails (`first_value`'s
    kinds, all of them), dates and numbers; in order, each once."""
    out: list[str] = []
    rest = text or ""
    while (v := first_value(rest)) is not None:
        out.append(v)
        rest = rest[rest.index(v) + len(v):]
    out += _NUMBER_OR_DATE.findall(text or "")
    return list(dict.fromkeys(out))


def writes_from_instruction(theme: Theme, task: Task) -> bool:
    """A task that changes the world whose every gold write takes only values the instruction states:
    a parser that makes those writes with no read reaches the gold end state (reads change nothing)."""
    writes = [c for c in task.solution if theme.toolset[c["name"]].writes]
    return bool(writes) and task.state_hash is not None and all(
        show(v) in task.instruction for c in writes for v in c.get("arguments", {}).values())


_N_CONSTANT = len([a for a in DO_NOTHING if a is not None]) + len(CONSTANT_ANSWERS)


def guesses(theme: Theme, level: int, db_seed: int = 0) -> tuple:
    """`cheap_answers` without the instruction's first value: do-nothing answers, the constants, then
    the theme and level's frequent answers (cached with the answer prior)."""
    return _guesses(theme, level, db_seed, guess_mode(theme, level, db_seed))


@lru_cache(maxsize=8192)
def _guesses(theme: Theme, level: int, db_seed: int, mode: str) -> tuple:  # `mode`: one cache per `guess_mode`
    return (*(a for a in DO_NOTHING if a is not None), *CONSTANT_ANSWERS, *answer_prior(theme, level, db_seed))


SEEN_SAMPLE = 24  # tasks v3: checked tasks per (theme, level, world) and round a guesser is taken to have seen (`seen_answers`)
SEEN_ROUNDS = 4  # at most this many rounds of that sample, each drawn with the thinning the rounds before found
SEEN_QUESTIONS = 12  # ... and rounds go on (up to SEEN_ROUNDS) until they hold this many questions, or a round holds none
_SEEN: dict = {}  # (theme, level, db_seed) -> {answer key: times given in the rounds so far}; {} while the first is drawn
_SEEN_ANSWERS: dict = {}  # (theme, level, db_seed) -> `seen_answers`, as given


def seen_answers(theme: Theme, level: int, db_seed: int = 0) -> tuple:
    """Tasks v3: the answers at least PRIOR_REPEATS times among the checked tasks of the theme and level that rounds of
    SEEN_SAMPLE draws give (fixed seeds, mixed kinds, drawn as env.reset draws them and made at that level), most common
    first, worked out once per world. Plans built to miss the answer prior's guesses gather on the few records and
    filters left (the same count of the one user with many invitations, seed after seed), and a guesser who has seen
    training tasks answers with those (the mode guess of bench_null_baselines.py). Rejecting them outright moved the
    seeds onto the next few records, which then repeated as much; `thinned` instead keeps a task whose answer was
    given n times for 1 seed in n. Passing over some tasks brings others forward, so each round is drawn with the
    thinning of the rounds before, until a round repeats no answer (at most SEEN_ROUNDS). The rounds' seeds are
    fixed, so the result does not depend on what was asked before."""
    key = (theme, level, db_seed)
    if key not in _SEEN:
        _SEEN[key] = {}
        total: Counter = Counter()
        given: dict = {}
        questions = 0
        for r in range(SEEN_ROUNDS):
            # fallback as env.reset asks (level 1's last kind gets more tries and reaches records a draw without it
            # misses); a task that fell back to another level or to the classic request is not counted
            draws = [(2**28 + SEEN_SAMPLE * r + s, "mixed") for s in range(SEEN_SAMPLE)]
            counts, first = _answer_counts(theme, level, db_seed, draws, fallback=True)
            # an answer given while thinned to 1 seed in n stands for n: counted once, a frequent answer
            # thinned in the first round looked rare after it and was kept far more than 1 in its true count
            total += Counter({k: n * max(_SEEN[key].get(k, 1), 1) for k, n in counts.items()})
            given = {**first, **given}
            _SEEN[key] = {k: n for k, n in total.most_common() if n >= PRIOR_REPEATS}
            questions += sum(counts.values())
            # a level that asks few questions among many writes (clinic level 3: 8 in 60 tasks, one answer) shows
            # under two a round, so no single round repeats an answer: its rounds go on until they hold enough
            if not any(n >= PRIOR_REPEATS for n in counts.values()) and (questions >= SEEN_QUESTIONS or not counts):
                break
        _SEEN_ANSWERS[key] = tuple(given[k] for k in _SEEN[key])
    return _SEEN_ANSWERS.get(key, ())


def thinned(theme: Theme, task: Task, seed: int) -> bool:
    """Tasks v3: whether synthesis passes over a question, drawn for `seed`, whose answer `seen_answers` gave n times:
    for all but 1 seed in n (drawn from the seed and the answer, so deterministic in the seed, and the same for every
    candidate of that seed with that answer: a seed tries many plans, several of which may give it). A selection rule
    of synthesis, not a flaw of the task: the quality filter (`quality_problems`) does not apply it."""
    if not P.enabled() or task.state_hash is not None or task.answer_type == "none":
        return False
    return thinned_answer(theme, task.difficulty, task.db_seed, seed, task.answer)


def thinned_answer(theme: Theme, level: int, db_seed: int, seed: int, answer) -> bool:
    """`thinned` of a question with this answer (programmatic plans ask it of the answer they worked out, before the
    program is written and run)."""
    key = _answer_key(answer)
    times = _SEEN.get((theme, level, db_seed), {}).get(key, 0)
    if times < PRIOR_REPEATS:  # (the draw is only read for a frequent answer)
        return False
    draw = int(hashlib.sha1(f"{theme.id}|{level}|{db_seed}|{seed}|{key}".encode()).hexdigest()[:8], 16)
    return draw % times != 0


def guess_mode(theme: Theme, level: int, db_seed: int = 0) -> str:
    """Which guesses a task is checked against, for the caches that remember the verdicts: "classic" or "person"
    (the answer prior of that mode)."""
    return "person" if P.enabled() else "classic"


def _wrong(task: Task):
    if task.answer_type == "bool":
        return not task.answer
    if task.answer_type == "number":
        return (float(task.answer) if task.answer is not None else 0.0) + 1000
    if task.answer_type == "set":
        return [*(task.answer or []), "definitely-wrong"]
    return f"{task.answer} definitely-wrong"


def candidate_problems(theme: Theme, task: Task, run: Run, seed: int | None = None) -> list[str]:
    """`quality_problems` of a candidate task made on `run`, whose cheap rules are checked first: a rule
    the task breaks whatever its replay shows rejects it before the replay (the same tasks are kept).
    `seed`: the synthesis seed the candidate was drawn for (tasks v3: `thinned`)."""
    if guessable(theme, task):
        return ["a cheap strategy's answer passes"]
    if seed is not None and thinned(theme, task, seed):
        return ["its answer is one seen tasks give often (passed over for this seed)"]
    wording = wording_problems(theme, task)
    if wording:
        return [f"the instruction breaks the wording rule {rule!r}" for rule in wording]
    if any(run.fx.count(*u) != 1 for u in task.features.get("unique", ())):
        return ["a value in the instruction matches several rows"]
    reference = None
    if task.state_hash:  # the run's end state, read when it was hashed (nothing wrote since)
        reference = run.state_rows if run.state_rows is not None and tuple(run.state_rows) == task.state_tables else \
            {t: run.fx.rows(run.conn, t) for t in task.state_tables}
        if any(same_rows(reference[t], run.fx.initial_rows(t)) for t in task.state_tables):
            # a replay that ends elsewhere breaks another rule: rejected either way
            return ["gold writes cancel each other out"]
    return quality_problems(theme, task, reference=reference)


def audit(theme: Theme, task: Task) -> list[str]:
    """Every rule of RULES the task breaks (replays its gold solution once)."""
    problems = wording_problems(theme, task)
    if column_phrases(theme, blanked(task)):
        problems.append("column_phrase")
    found = quality_problems(theme, task)
    if "a gold lookup's result is never used" in found:
        problems.append("unused_call")
    if "gold writes cancel each other out" in found or "a gold write can be left out" in found:
        problems.append("self_cancelling")
    if "a value in the instruction matches several rows" in found and "ambiguous_reference" not in problems:
        problems.append("ambiguous_reference")
    if task.answer_type == "number":
        with facts(theme, task.db_seed).run() as run:
            for c in task.solution:
                result = run.call(c["name"], c.get("arguments", {}))
                if result.ok and capped(theme.toolset[c["name"]], c.get("arguments", {}), result.data):
                    problems.append("page_size_answer")
                    break
    return problems


__all__ = ["DO_NOTHING", "answer_prior", "audit", "candidate_problems", "cheap_answers", "guess_mode", "guessable", "guessed", "guesses",
           "instruction_values", "quality_problems", "sample_from", "seen_answers", "thinned", "thinned_answer", "writes_from_instruction"]
