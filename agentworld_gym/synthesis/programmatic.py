"""Programmatic task synthesis: the gold solution is a small Python program over tool calls.

A plan is read from Tool metadata alone: a *list* tool (a read tool that takes an entity key and
returns records), optionally reached through a *prefix* step that produces that key, optionally
followed by a *lookup* per listed entity (a loop of calls), then an aggregation over the records
(count / sum / argmax / argmin / top-k, with filter conditions = branches) or a conditional write
("<write> each of those <entities> whose <field> is over X"). The instruction is the user's goal
("What is the total amount of the transactions of the account of card CD-1001 with category
dining?"): the list, the lookups and the loop are the agent's to plan. Lookups are made only when
the answer needs a field the list does not show, so every call is needed. The plan becomes Python source
(stored as `Task.program`); executing that source on a fresh copy of the world gives the answer
and the call trace (`Task.solution`, what OraclePolicy replays), and, for writes, the final state.
"""

from __future__ import annotations

import operator
import typing
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import TaskError
from ..tasks import Task
from ..theme import Theme, humanize, noun_of
from ..tools import Tool
from . import depth as D
from . import persona as P
from . import wording as W
from .audit import pointer
from .facts import Facts, Run, facts
from .graph import (
    MAX_CALLS,
    VIABLE_SEEDS,
    Level,
    _phrase_rng,
    capped,
    few_items,
    find_key,
    knobs,
    level,
    lookalikes,
    output_kind,
    sample_key,
    sample_plain,
    state_check,
    task_id,
    viable,
)
from .quality import candidate_problems, guess_mode, guessed, thinned_answer
from .replay import execute

MAX_ITEMS = 20  # listed entities an aggregation may range over
MAX_RECORDS = 8  # entities a loop of calls (lookups, writes) may range over: the gold then fits in MAX_CALLS
AGGREGATES = ("count", "sum", "argmax", "argmin", "top")
REASON_DRAWS = 8  # tasks v3: reasons drawn for a request before its wording is left to the quality filter
MIN_CANDIDATES = 3  # records a sum, an argmax / argmin or a top-k ranges over, after its filters


def _label(records: list[dict], idf: str) -> str:
    """The field a person names a record by among `records` (a name or title none of them shares), else its id field."""
    for f in ("name", "title", "subject", "label", "username", "symbol", "code"):
        vals = [r.get(f) for r in records]
        if all(isinstance(v, str) and v.strip() for v in vals) and len(set(vals)) == len(vals):
            return f
    return idf


@lru_cache(maxsize=4096)
def _roles(theme: Theme) -> dict:
    """Which tools can play which part of a plan, from their metadata (cached per theme)."""
    reads = [t for t in theme.toolset if not t.writes]
    writes = [t for t in theme.toolset if t.writes]

    def required_keys(t: Tool) -> list[str]:
        req = t.parameters.get("required", ())
        return [p for p in t.consumes if p in req and theme.key_of(p)]

    lists = [t for t in reads if required_keys(t) and t.produces and output_kind(t) in (list, None)]
    lookups: dict[str, list[Tool]] = {}
    writers: dict[str, list[Tool]] = {}
    for group, out in ((reads, lookups), (writes, writers)):
        for t in group:
            keys = required_keys(t)
            if len(keys) == 1 and output_kind(t) in (dict, None):
                out.setdefault(theme.key_of(keys[0]), []).append(t)
    prefixes: dict[str, list[Tool]] = {}  # key -> read tools that produce it without taking it
    for t in reads:
        if output_kind(t) in (dict, None):
            for key in {theme.key_of(k) for k in t.produces} - {theme.key_of(p) for p in t.consumes} - {None}:
                prefixes.setdefault(key, []).append(t)
    return {"lists": lists, "lookups": lookups, "writers": writers, "prefixes": prefixes, "required_keys": required_keys}


def _pick(items: list, rng) -> Any:
    return items[int(rng.integers(len(items)))] if items else None


def _fill_plain(theme: Theme, fx: Facts, t: Tool, skip: set, rng) -> dict | None:
    """Required non-key arguments of `t` (examples / enum / a same-named column)."""
    args = {}
    for p in t.parameters.get("required", ()):
        if p in skip:
            continue
        sampled = sample_plain(theme, fx, t, p, t.parameters["properties"].get(p, {}), rng)
        if sampled is None:
            return None
        args[p] = sampled[0]
    return args


class _Plan:
    def __init__(self):
        self.lines: list[str] = []  # program body
        self.given: list[tuple] = []
        self.conditions: list[tuple] = []  # (field, op, value)
        self.branches = 0


def _condition_candidates(records: list[dict], skip: set) -> list[tuple]:
    """Filter conditions that keep some but not all records: (field, '==' | '>' | '<', value)."""
    out = []
    for f in sorted(records[0]):
        if f in skip or f.lower().endswith("id"):
            continue
        vals = [r.get(f) for r in records]
        if any(v is None or isinstance(v, bool) for v in vals):
            continue
        if all(isinstance(v, str) for v in vals):
            distinct = sorted(set(vals))
            if 2 <= len(distinct) < len(vals) and max(map(len, distinct)) <= 40:
                out += [(f, "==", v) for v in distinct]
        elif all(isinstance(v, (int, float)) for v in vals):
            distinct = sorted(set(vals))
            for a, b in zip(distinct, distinct[1:], strict=False):
                if all(isinstance(v, int) for v in vals):  # whole numbers read better as "at least 3"
                    out += [(f, ">=", b), (f, "<=", a)]
                    continue
                mid = round((a + b) / 2, 2)
                if a < mid < b:
                    out += [(f, ">", mid), (f, "<", mid)]
    return out


PAGE_MEMO_SIZE = 20_000  # record lists whose conditions / numeric fields a world remembers (cleared when full)


def _of_records(fx: Facts, what: str, records: list[dict], skip: frozenset, make) -> Any:
    """`make()` for a list of records, remembered per world: plans range over the same pages and looked-up records
    again and again, and a call answered from the read memo gives the very same objects (`Run.call`), never changed,
    so the list is known by its records' identities (the entry holds them, so no id is reused while remembered)."""
    cache = fx.derived.setdefault("records memo", {})
    key = (what, tuple(map(id, records)), skip)
    hit = cache.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], records, strict=True)):
        return hit[1]
    if len(cache) >= PAGE_MEMO_SIZE:
        cache.clear()
    value = make()
    cache[key] = (tuple(records), value)
    return value


def _kept(records: list[dict], skip: frozenset) -> list[tuple[tuple, list[dict]]]:
    """[(condition, the records it keeps)] for each of `_condition_candidates`."""
    out = []
    for c in _condition_candidates(records, skip):
        f, op, v = c
        test = _OPS[op]
        out.append((c, [r for r in records if test(r[f], v)]))
    return out


def _conditions(fx: Facts, records: list[dict], skip: frozenset) -> list[tuple[tuple, list[dict]]]:
    """`_kept`, remembered per world (`_of_records`)."""
    return _of_records(fx, "conditions", records, skip, lambda: _kept(records, skip))


def _numeric(fx: Facts, records: list[dict], skip: frozenset) -> list[str]:
    """`_numeric_fields`, remembered per world (`_of_records`)."""
    return _of_records(fx, "numeric", records, skip, lambda: _numeric_fields(records, skip))


def _early(op: str, records: list[dict], target: str | None, idf: str) -> Any:
    """The answer of a count, sum, argmax or argmin over `records` (a person's argmax names the winner by `_label`)."""
    if op == "count":
        return len(records)
    if op == "sum":
        return round(sum(r[target] for r in records), 2)
    return (max if op == "argmax" else min)(records, key=lambda r: r[target])[_label(records, idf)]


_OPS = {"==": operator.eq, ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le}


def _holds(r: dict, cond: tuple) -> bool:
    f, op, v = cond
    return _OPS[op](r[f], v)


def _cond_source(cond: tuple) -> str:
    f, op, v = cond
    return f"r[{f!r}] {op} {v!r}"


def _cond_text(conds: list[tuple]) -> str:
    """'category dining and amount over 120.5' ('' without conditions)."""
    words = {"==": "", ">": " over", "<": " under", ">=": " of at least", "<=": " of at most"}
    return " and ".join(f"{W.field_name(f)}{words[op]} {W.show(v)}" for f, op, v in conds)


def _numeric_fields(records: list[dict], skip: set) -> list[str]:
    return [f for f in sorted(records[0]) if f not in skip and not f.lower().endswith("id")
            and all(isinstance(r.get(f), (int, float)) and not isinstance(r.get(f), bool) for r in records)]


def synthesize_programmatic_task(theme: Theme, difficulty: int = 1, seed: int = 0, db_seed: int = 0, attempts: int = 60, check: bool = True,
                                 answers_only: bool = False) -> Task:
    """One verified programmatic task, deterministic in `seed`; TaskError after `attempts` plans.
    `answers_only`: no conditional writes (see `synthesis.synthesize_graph_task`)."""
    lv = level(difficulty)
    rng = np.random.default_rng([seed, difficulty, db_seed, 104729])
    fx = facts(theme, db_seed)
    roles = _roles(theme)
    if not roles["lists"]:
        raise TaskError(f"Expected theme {theme.id!r} to have a read tool that takes an entity key and lists entities, "
                        "got none; programmatic tasks need one. Use kind='graph'.")
    if not _lists(theme, fx, roles, _needs(roles, lv, answers_only, _guess_key(theme, difficulty, db_seed) if check else None)):
        raise TaskError(f"Expected theme {theme.id!r} to have a list a programmatic task at difficulty {difficulty} can range over "
                        "(2-20 records with a field to aggregate or filter on), got none. Try a lower difficulty or kind='graph'.")
    needs = _needs(roles, lv, answers_only, _guess_key(theme, difficulty, db_seed) if check else None)
    if (P.enabled() and D.MIN_DEPENDENT[difficulty] >= 1 and not lv.prefix and not lv.lookups and not _named_lists(theme, fx, roles, needs)
            and all(len(t.parameters.get("required", ())) == 1 for t in _lists(theme, fx, roles, needs))):
        # tasks v3: with no record a person can name at the start, the list's key is stated and the plan has no dependent lookup
        raise TaskError(f"Expected theme {theme.id!r} to have a list whose owner a person can name for a programmatic task at "
                        f"difficulty {difficulty}, got none. Try a lower difficulty or kind='graph'.")
    if P.enabled() and check and not viable(fx, ("programmatic", difficulty, attempts, answers_only), lambda s: synthesize_programmatic_task(
            theme, difficulty, s, db_seed, attempts, True, answers_only)):
        raise TaskError(f"Expected theme {theme.id!r} to yield a programmatic task at difficulty {difficulty} for some of "
                        f"{VIABLE_SEEDS} probe seeds, got none. Try a lower difficulty or kind='graph'.")
    problems: list[str] = []
    for _ in range(attempts):
        run = fx.run(memo=True)
        try:
            task = _attempt(theme, fx, roles, run, lv, difficulty, seed, db_seed, rng, answers_only, check)
            if task is None:
                continue
            if check:
                problems = candidate_problems(theme, task, run, seed)
                if problems:
                    continue
            return task
        finally:
            run.close()
    raise TaskError(f"Expected theme {theme.id!r} to yield a valid programmatic task at difficulty {difficulty}, got none in "
                    f"{attempts} plans (seed {seed}{'; last problems: ' + ', '.join(problems) if problems else ''}). "
                    "Try a lower difficulty, kind='graph', or pass fallback=True to synthesize_task.")


def _attempt(theme: Theme, fx: Facts, roles: dict, run: Run, lv: Level, difficulty: int, seed: int, db_seed: int, rng,
             answers_only: bool = False, check: bool = True) -> Task | None:
    person = P.enabled()  # tasks v3 (opt-in): a person's request with a depth floor
    plan = _Plan()
    needs = _needs(roles, lv, answers_only, _guess_key(theme, difficulty, db_seed) if check else None)
    # tasks v3: plans start from a list of a record a person can name where the theme has one (built so, not filtered)
    named = _named_lists(theme, fx, roles, needs) if person else []
    lt: Tool = _pick(named or _lists(theme, fx, roles, needs), rng)
    kparam = roles["required_keys"](lt)[0]
    key = theme.key_of(kparam)
    largs = _fill_plain(theme, fx, lt, {kparam}, rng)  # the list's other arguments
    if largs is None:
        return None
    # 1. the entity whose list is aggregated: given directly, or reached through a prefix step
    prefixes = [t for t in roles["prefixes"].get(key, ()) if t is not lt]
    if person:  # a prefix given only stated values (a finder) is a lookup no earlier result feeds: it adds no depth
        prefixes = [t for t in prefixes if roles["required_keys"](t)]
    pt = _pick(prefixes, rng) if lv.prefix and prefixes else None
    starts = _prefix_starts(theme, fx, roles, pt, lt, needs) if pt is not None and person and not largs else None
    if starts == ():
        # tasks v3: no record a person can name leads through this prefix to a list a plan can range over; the list's
        # owner, named by the person, is found first instead (as deep: the finding read and the list depend)
        pt = prefixes = None
    if pt is not None:
        pargs = {}
        for p in pt.parameters.get("required", ()):
            pk = theme.key_of(p) if p in pt.consumes else None
            value = (_pick(starts, rng) if starts else _named_key(theme, fx, pk, rng) if person else sample_key(fx, pk, rng)) if pk else None
            if pk and value is not None:
                pargs[p] = value
                plan.given.append((noun_of(pk), *fx.key_column(pk), value))
            elif pk:
                return None
        plain = _fill_plain(theme, fx, pt, set(pargs), rng)
        if plain is None:
            return None
        pargs.update(plain)
        res = run.call(pt.name, pargs)
        found = find_key(res.data, key) if res.ok and isinstance(res.data, dict) else None
        if found is None or (pargs.get(kparam) == found[1]):
            return None
        plan.lines.append(f"    ref = call({pt.name!r}, **{pargs!r})[{found[0]!r}]")
        pfacts = [W.labelled_text(theme, pt, p, v) for p, v in pargs.items()]
        pkeys = [W.labelled_text(theme, pt, p, v) for p, v in pargs.items() if p in pt.consumes and theme.key_of(p)]
        of = pkeys[0] if pkeys else None
        kvalue, ksource, ktext = found[1], "ref", W.described(noun_of(key), of, [f for f in pfacts if f != of])
    else:
        listable = _listable(theme, fx, lt, kparam, key, largs, needs)
        if person and listable:  # tasks v3: start from a record a person can name, where the list has one
            listable = _nameable(theme, fx, key, listable) or listable
        kvalue = (_named_key(theme, fx, key, rng) if person else sample_key(fx, key, rng)) if listable is None else _pick(listable, rng)
        if kvalue is None:
            return None
        ksource, ktext = repr(kvalue), W.labelled_text(theme, lt, kparam, kvalue)
        plan.given.append((noun_of(key), *fx.key_column(key), kvalue))
    # 2. the list
    res = run.call(lt.name, {kparam: kvalue, **largs})
    items = res.data
    if not (res.ok and isinstance(items, list) and 2 <= len(items) <= MAX_ITEMS and all(isinstance(x, dict) for x in items)):
        return None
    if capped(lt, {kparam: kvalue, **largs}, items):
        return None
    entities = _listed_entities(theme, lt, key, items)
    if entities is None:
        return None
    ekey, idf, ids = entities
    noun = noun_of(ekey)
    nouns = W.plural(noun)
    arg_src = ", ".join([f"{kparam}={ksource}", *(f"{p}={v!r}" for p, v in largs.items())])
    plan.lines.append(f"    items = call({lt.name!r}, {arg_src})")
    subject = W.described(nouns, ktext, [W.labelled_text(theme, lt, p, v) for p, v in largs.items()])
    # 3. optionally one lookup call per listed entity (a loop)
    records = items
    lookups = [g for g in roles["lookups"].get(ekey, []) if g is not lt]
    if lv.lookups and lookups:
        if len(items) > MAX_RECORDS:
            return None
        g = _pick(lookups, rng)
        gparam = roles["required_keys"](g)[0]
        gargs = _fill_plain(theme, fx, g, {gparam}, rng)
        if gargs is None:
            return None
        records = []
        for i in ids:
            r = run.call(g.name, {gparam: i, **gargs})
            if not (r.ok and isinstance(r.data, dict)):
                return None
            records.append(r.data)
        extra = "".join(f", {p}={v!r}" for p, v in gargs.items())
        plan.lines.append(f"    records = [call({g.name!r}, {gparam}=item[{idf!r}]{extra}) for item in items]")
        listed = set(items[0])  # the answer must need a field only the lookups give, or they are not needed
    else:
        listed = set()
        plan.lines.append("    records = items")
    if any(idf not in r or r[idf] != i for r, i in zip(records, ids, strict=True)):
        return None
    if listed and not _numeric(fx, records, frozenset({idf} | listed)) and not _conditions(fx, records, frozenset({idf} | listed)):
        if not person:
            return None  # the lookups add nothing an answer could use
        # tasks v3: the plan goes on over the list alone
        records, listed = items, set()
        plan.lines[-1] = "    records = items"
    if person and _most_dependent(theme, fx, plan.given, pt is not None, len(records) if listed else 0) < D.MIN_DEPENDENT[difficulty]:
        return None  # tasks v3: too shallow for the level whatever comes next (dropped before its filters are drawn and run)
    # 4. what to do with them: a conditional write or an aggregation
    writers = [] if answers_only else roles["writers"].get(ekey, [])
    numeric = _numeric(fx, records, frozenset({idf} | listed)) or _numeric(fx, records, frozenset({idf}))  # a field only the lookups give, if any
    # only aggregations the records allow (sum, argmax, argmin and top need a numeric field; a count, enough items)
    # tasks v3: a sum, argmax / argmin or top compares at least MIN_CANDIDATES records, after a filter (which leaves
    # some out) where the level asks for one; a filtered count keeps more than a few of them
    # a whole list's count is what a probe of a list asked by a stated key gives: such a count takes a filter
    stated = person and not named and not (lv.prefix and prefixes)
    least = (MIN_CANDIDATES + (lv.conditions > 0)) if person else 1
    countable = not few_items(len(records) - (person and (lv.conditions > 0 or stated)))
    aggregates = [a for a in AGGREGATES if (a == "count" and countable) or (a != "count" and numeric and len(records) >= least)]
    # (tasks v3: records no aggregate fits take the write they were listed for, rather than the plan dropped)
    op = "write" if writers and (rng.random() < lv.writes or (person and not aggregates)) else _pick(aggregates, rng)
    if op is None:
        return None
    n_conds = max(lv.conditions, 1) if op in ("write", "count") and lv.conditions == 0 and (listed or rng.random() < 0.5) else lv.conditions
    if person and op == "count" and stated:
        n_conds = max(n_conds, 1)
    elif person and op == "count" and n_conds > lv.conditions and not listed and few_items(len(records) - 1):
        n_conds = 0  # tasks v3: an optional filter no short list allows is left out rather than the plan dropped
    writable = None
    if op == "write":
        n_conds = 1  # one filter plus the "skip what the system refuses" branch
        if len(records) > 2 * MAX_RECORDS:
            return None
        w = _pick(writers, rng)
        wparam = roles["required_keys"](w)[0]
        wargs = _fill_plain(theme, fx, w, {wparam}, rng)
        writable = _Writable(run, w, wparam, wargs or {})
        if wargs is None or not any(i in writable for i in ids):
            return None
    target = _pick(numeric, rng) if op in ("sum", "argmax", "argmin", "top") else None
    if op in ("sum", "argmax", "argmin", "top") and target is None:
        return None
    matched = records

    def top_sizes(matched: list[dict]) -> list[int]:
        """Tasks v3: `_top_sizes` whose answer is not passed over (`_passed_over`), for a checked plan."""
        return [k for k in _top_sizes(matched, target)
                if not (check and _passed_over(theme, difficulty, db_seed, seed, _top(matched, target, _label(matched, idf), k), "set"))]

    def answers_well(matched: list[dict]) -> bool:
        """Whether `matched` is enough to count or compare; tasks v3: and its answer one a plan can end on (built so)."""
        enough = not few_items(len(matched)) if op == "count" else not person or op == "write" or len(matched) >= MIN_CANDIDATES
        if enough and person and check and op in ("count", "sum"):  # tasks v3: built to miss a guesser (not filtered after)
            early = _early(op, matched, target, idf)
            enough = not (op == "sum" and _small_total(early)) and not _passed_over(
                theme, difficulty, db_seed, seed, early, "number")
        elif enough and person and op in ("argmax", "argmin"):  # no tie for the first place, named by what no guesser says
            vals = sorted((r[target] for r in matched), reverse=op == "argmax")
            enough = (len(vals) < 2 or vals[0] != vals[1]) and not (check and _passed_over(
                theme, difficulty, db_seed, seed, _early(op, matched, target, idf), "text"))
        elif enough and person and op == "top":
            enough = bool(top_sizes(matched))
        return enough

    if person and check and not n_conds and op != "write" and not answers_well(records):
        n_conds = 1  # tasks v3: the whole list's answer is a guess, a tie or a small total; a filter makes another (built, not dropped)
    if n_conds:
        kept = _conditions(fx, records, frozenset({idf, target}))  # each condition with the records it keeps
        cands = [c for c, _ in kept]
        keeps, kept_ids = dict(kept), {}
        fields = sorted({c[0] for c in cands})
        n_conds = min(n_conds, len(fields))  # "up to" the level's conditions: fewer when the records lack fields
        if not n_conds:
            return None
        def fits(chosen: list[tuple], matched: list[dict] | None = None) -> list[dict] | None:
            """The records `chosen` keeps (`matched`, if known), if they make a task: some but not all, enough to
            count, each lookup needed, at least one the write accepts."""
            if matched is None:  # the records each condition keeps, in order (by identity: the same record objects)
                for c in chosen[1:]:
                    if c not in kept_ids:
                        kept_ids[c] = {id(r) for r in keeps[c]}
                matched = [r for r in keeps[chosen[0]] if all(id(r) in kept_ids[c] for c in chosen[1:])]
            needs_lookups = not listed or bool(({target} | {c[0] for c in chosen}) - listed - {None})
            if not (0 < len(matched) < len(records) and needs_lookups):
                return None  # (checked first: the checks below read the grader)
            if answers_well(matched) and (writable is None or any(r[idf] in writable for r in matched)):
                return matched
            return None

        if op == "count" and few_items(len(records) - 1):
            return None  # no filter can keep more than a few items and leave some out
        if n_conds == 1:  # one condition: pick among those that fit (no draw is wasted)
            fitting = [(c, m) for c, kept_by in kept if (m := fits([c], kept_by)) is not None]
            if not fitting and person and op in ("sum", "argmax", "argmin", "top"):
                # tasks v3: another comparison or field over the same records, rather than the plan thrown away
                others = [(o, t) for o in aggregates if o != "count" for t in numeric if (o, t) != (op, target)]
                for j in rng.permutation(len(others)):
                    op, target = others[j]  # (`fits` reads them)
                    kept = _conditions(fx, records, frozenset({idf, target}))
                    fitting = [(c, m) for c, kept_by in kept if (m := fits([c], kept_by)) is not None]
                    if fitting:
                        break
            if not fitting:
                return None
            chosen, matched = fitting[int(rng.integers(len(fitting)))]
            plan.conditions = [chosen]
        else:
            for _ in range(8):  # a few draws of n_conds conditions on distinct fields
                chosen = [_pick([c for c in cands if c[0] == f], rng) for f in rng.choice(fields, n_conds, replace=False)]
                matched = fits(chosen)
                if matched is not None:
                    plan.conditions = chosen
                    break
            else:
                return None
    cond_src = " and ".join(_cond_source(c) for c in plan.conditions) or "True"
    plan.lines.append(f"    matched = [r for r in records if {cond_src}]")
    plan.branches = len(plan.conditions)
    cond = _cond_text(plan.conditions)
    cond_text = f" that have {cond}" if cond else ""
    if person and op in ("sum", "argmax", "argmin", "top") and len(matched) < MIN_CANDIDATES:
        return None  # an aggregate over one or two records is a lookup, not a comparison
    answer_type = "number"
    if person and op in ("argmax", "argmin", "top"):
        idf = _label(matched, idf)  # a person names the winner by its name or title where the records have one
    idtext = humanize(idf)
    field = W.field_name(target) if target is not None else None  # as a user names it: "duration in minutes"
    requests: list[str] = []
    early = None  # the answer, worked out from the records before the program is written and run
    if op == "count":
        if few_items(len(matched)):
            return None
        plan.lines.append("    return len(matched)")
        early = len(matched)
        question = f"How many of {subject} have {cond}?" if cond else f"How many {nouns} are there of {ktext}?"
    elif op == "sum":
        plan.lines.append(f"    return round(sum(r[{target!r}] for r in matched), 2)")
        early = _early(op, matched, target, idf)
        total = field if field.startswith(("total", "sum")) else f"total {field}"
        if W.is_plural(field) and not field.startswith(("total", "sum")):
            question = f"How many {field} do {subject}{cond_text} have in total?"
        else:  # "What are the total minutes of ..." (a plural total agrees with its verb)
            question = f"What {'are' if W.is_plural(total) else 'is'} the {total} of {subject}{cond_text}?"
    elif op in ("argmax", "argmin"):
        vals = sorted((r[target] for r in matched), reverse=op == "argmax")
        if len(vals) > 1 and vals[0] == vals[1]:
            return None  # a tie would make the answer ambiguous
        fn = "max" if op == "argmax" else "min"
        plan.lines.append(f"    return {fn}(matched, key=lambda r: r[{target!r}])[{idf!r}]")
        early = (max if op == "argmax" else min)(matched, key=lambda r: r[target])[idf]
        which = ("most" if op == "argmax" else "fewest") if W.is_plural(field) else ("highest" if op == "argmax" else "lowest")
        question = f"Among {subject}{cond_text}, which has the {which} {field}? Answer with its {idtext}."
        answer_type = "text"
    elif op == "top":
        # tasks v3: k drawn among the sizes with no tie at the edge (rather than the plan dropped after a tie)
        k = (_pick(top_sizes(matched), rng) or 0) if person else min(len(matched) - 1, int(rng.integers(2, 4)))
        vals = sorted((r[target] for r in matched), reverse=True)
        if k < 2 or vals[k - 1] == vals[k]:
            return None
        plan.lines.append(f"    return [r[{idf!r}] for r in sorted(matched, key=lambda r: r[{target!r}], reverse=True)[:{k}]]")
        early = _top(matched, target, idf, k)
        most = "most" if W.is_plural(field) else "highest"
        question = f"Which {k} of {subject}{cond_text} have the {most} {field}? Answer with their {W.plural(idtext)}."
        answer_type = "set"
    else:
        extra = "".join(f", {p}={v!r}" for p, v in wargs.items())
        plan.lines += ["    changed = 0", "    for r in matched:",
                       f"        if call({w.name!r}, {wparam}=r[{idf!r}]{extra}) is not None:",
                       "            changed += 1", "    return changed"]
        plan.branches += 1
        parts = {wparam: f"each of {subject}{cond_text}", **{p: W.argument_text(theme, w, p, v) for p, v in wargs.items()}}
        requests.append(W.clause(theme, w, parts))
        question = f"Skip any {noun} that cannot be changed, and tell me how many you changed."
    if check and early is not None and (guessed(theme, difficulty, db_seed, early, answer_type)
                                        or person and thinned_answer(theme, difficulty, db_seed, seed, early)):
        return None  # the quality filter would reject it: a guesser's answer, a seen one (checked here, before the program runs)
    if op == "sum" and _small_total(early):
        return None
    instruction, found, identity = W.goal(requests, question), [], None
    if person:  # tasks v3: records named by what a person knows, found by reads that open the program
        instruction, found, identity = P.personalize(theme, fx, instruction, plan.given)
        if named and P.keeps_ids(theme, instruction, plan.given, rng):  # (a theme with no such list keeps its codes)
            return None  # a record named by its row id: most such candidates give way to one a person can name
    program = "def solve(call):\n" + "\n".join(P.program_lines(found, plan.lines) if person else plan.lines) + "\n"
    outputs: list = []
    answer, trace, ok = execute(theme, program, run, outputs=outputs, classic=not person)
    if not ok or answer in (None, [], 0) and op == "write":
        return None
    if isinstance(answer, list):
        answer = [W.show(a) if not isinstance(a, str) else a for a in answer]
    tables, final = (), None
    if op == "write":
        changed = state_check(fx, run)
        if changed is None:
            return None
        tables, final = changed
    solution = tuple({"name": c["name"], "arguments": c["arguments"]} for c in trace)
    if len(solution) > MAX_CALLS:
        return None
    v3: dict = {}
    if person:  # tasks v3: the level's depth floor, and a speaker with a reason
        shown = answer if op in ("argmax", "argmin") else None  # a computed total or count is in no output
        # one request over every listed record (an aggregate, or a change to each that fits): all its lookups count
        deep, dependent = D.problems(theme, difficulty, solution, outputs, instruction, shown, aggregate=op != "write",
                                     probe=None if op == "write" or isinstance(answer, list) else answer)
        if deep:
            return None
        kind = {"count": "count", "sum": "count", "argmax": "pick", "argmin": "pick", "top": "pick"}.get(op, "change")
        # a reason the wording rules refuse ("... for this number") is drawn again, rather than the finished task thrown away
        for i in range(REASON_DRAWS):
            framed = P.frame(instruction, kind, _phrase_rng(program if i == 0 else (program, i)), identity)
            if not pointer(framed[:len(framed) - len(instruction)]):
                break
        instruction = framed
        v3 = {"candidates": len(matched), "dependent_lookups": dependent, "resolved": len(found),
              "unique": [list(u) for r in found for u in r.unique]}
    features = {
        "calls": len(solution),
        "distinct_tools": len({c["name"] for c in solution}),
        "writes": sum(1 for c in solution if theme.toolset[c["name"]].writes),
        "weak_share": 0.0,
        "chained_args": len(solution) - 1,
        "aggregation": 1,
        "operation": op,
        "branching": plan.branches,
        "loop": len(records),
        **v3,
        "distractors": lookalikes(fx, plan.given),
        "knobs": knobs(lv),
    }
    return Task(
        id=task_id(theme, "programmatic", difficulty, seed, db_seed, program), theme=theme.id, kind="programmatic",
        instruction=instruction, difficulty=difficulty, solution=solution, answer=answer, answer_type=answer_type,
        state_tables=tables, state_hash=final, db_seed=db_seed, program=program, features=features,
    )


LISTABLE_SWEEP = 500  # a key column with more values is sampled blind (listing each would cost too much up front)


def _guess_key(theme: Theme, difficulty: int, db_seed: int) -> tuple:
    """(difficulty, db_seed, `synthesis.guess_mode`): what a checked plan's guess verdicts depend on (cache keys)."""
    return difficulty, db_seed, guess_mode(theme, difficulty, db_seed)


def _needs(roles: dict, lv: Level, answers_only: bool, guess: tuple | None = None) -> tuple:
    """What a plan at this level needs of a listing (see `_aggregatable`): the entities a lookup per
    listed entity may add fields to, the filter conditions asked for, the entities a conditional write
    may change, and `guess` ((difficulty, db_seed) of a checked plan, whose answer a guesser must miss;
    None when the plan is not checked, as for the answer prior's own samples)."""
    writable = frozenset(roles["writers"]) if lv.writes > 0 and not answers_only else frozenset()
    looked_up = frozenset(roles["lookups"]) if lv.lookups else frozenset()
    return looked_up, lv.conditions, writable, guess, P.enabled()


def _listable(theme: Theme, fx: Facts, lt: Tool, kparam: str, key: str, largs: dict, needs: tuple) -> tuple | None:
    """The values of entity `key` whose list (`lt` with `largs`) a plan can range over: those of
    `_listings` that `_aggregatable` accepts for `needs`. None when the key column is too long to sweep.
    Plans then start only from lists that can make a task."""
    cache_key = ("listable", lt.name, kparam, repr(sorted(largs.items())), needs)
    if cache_key not in fx.derived:
        listings = _listings(theme, fx, lt, kparam, key, largs, bool(needs[0]) and needs[4])
        fx.derived[cache_key] = None if listings is None else tuple(v for v, shape in listings if _aggregatable(theme, shape, needs))
    return fx.derived[cache_key]


class _Shape(typing.NamedTuple):
    """What `_aggregatable` reads off one listed page (worked out once per world and listing)."""

    n: int  # records listed
    ekey: str  # the listed entities' key
    splits: bool  # some filter condition keeps some records but not all
    numeric: bool  # a numeric field to aggregate
    numeric_split: bool  # ... and a filter condition on another field
    kept: frozenset  # how many records each single filter condition keeps
    looked: tuple | None = None  # tasks v3: the `_Shape` of the records each lookup gives (None: not known)


def _listings(theme: Theme, fx: Facts, lt: Tool, kparam: str, key: str, largs: dict, looked: bool = False) -> list | None:
    """[(value, _Shape)] of each value of entity `key` whose list (`lt` with `largs`) has 2 to MAX_ITEMS
    records of distinct entities, not cut to a page. Found once per world by listing each value (reads
    of the pristine world, so the plans that follow answer these calls from the read memo); None when
    the key column is too long to sweep. `looked` (tasks v3): each shape also tells what the lookups of
    its records give (`_looked`), so plans start only from lists whose lookups leave something to aggregate."""
    cache_key = ("listings", lt.name, kparam, repr(sorted(largs.items())), looked)
    if cache_key not in fx.derived:
        where = fx.key_column(key)
        values = fx.values(*where) if where else ()
        found = None
        if len(values) <= LISTABLE_SWEEP:
            found = []
            with fx.run(memo=True) as run:
                for v in values:
                    args = {kparam: v, **largs}
                    res = run.call(lt.name, args)
                    items = res.data
                    if (res.ok and isinstance(items, list) and 2 <= len(items) <= MAX_ITEMS and all(isinstance(x, dict) for x in items)
                            and not capped(lt, args, items)):
                        listed = _listed_entities(theme, lt, key, items)
                        if listed is not None:
                            shape = _shape(items, *listed[:2])
                            if looked and shape.n <= MAX_RECORDS:
                                shape = shape._replace(looked=_looked(theme, run, lt, items, *listed))
                            found.append((v, shape))
        fx.derived[cache_key] = found
    return fx.derived[cache_key]


def _looked(theme: Theme, run: Run, lt: Tool, items: list[dict], ekey: str, idf: str, ids: list) -> tuple | None:
    """Tasks v3: the `_Shape` of the records each lookup of entity `ekey` (other than `lt`) gives for `ids`, or of
    the list itself where a lookup fails; None where a lookup takes other required arguments (sampled per plan)."""
    roles = _roles(theme)
    out = []
    for g in roles["lookups"].get(ekey, []):
        if g is lt:
            continue
        required = list(g.parameters.get("required", ()))
        if len(required) != 1:
            return None
        records = []
        for i in ids:
            r = run.call(g.name, {required[0]: i})
            if not (r.ok and isinstance(r.data, dict) and r.data.get(idf) == i):
                records = None
                break
            records.append(r.data)
        if records:  # merged as `_attempt` reads them: the list's fields where the lookups add nothing
            out.append(_shape(records, ekey, idf))
    return tuple(out)


def _shape(items: list[dict], ekey: str, idf: str) -> _Shape:
    cands = _condition_candidates(items, {idf})
    numeric = _numeric_fields(items, {idf})
    fields = {c[0] for c in cands}
    return _Shape(len(items), ekey, bool(cands), bool(numeric), any(fields - {t} for t in numeric),
                  frozenset(sum(1 for r in items if _holds(r, c)) for c in cands))


def _lists(theme: Theme, fx: Facts, roles: dict, needs: tuple) -> list[Tool]:
    """The list tools a plan can start from: those with other required arguments (sampled per plan),
    and those without whose listing of some key value can make a task (`_listable`). Empty when none
    can: every plan would fail, so the theme makes no programmatic task at this level."""
    cache_key = ("lists", needs)
    if cache_key not in fx.derived:
        keep = []
        for lt in roles["lists"]:
            kparam = roles["required_keys"](lt)[0]
            plain = [p for p in lt.parameters.get("required", ()) if p != kparam]
            if plain or _listable(theme, fx, lt, kparam, theme.key_of(kparam), {}, needs) != ():
                keep.append(lt)
        fx.derived[cache_key] = keep
    return fx.derived[cache_key]


def _prefix_starts(theme: Theme, fx: Facts, roles: dict, pt: Tool, lt: Tool, needs: tuple) -> tuple | None:
    """Tasks v3: the values of prefix `pt`'s one (key) argument, named by a person where the theme can, whose prefix read
    gives a key whose list (`lt`, no other arguments) a plan can range over (`_listable`); remembered per world. None
    when `pt` takes other arguments or its key column is too long to sweep (values are then sampled as before)."""
    required = list(pt.parameters.get("required", ()))
    if len(required) != 1 or required[0] not in pt.consumes or not theme.key_of(required[0]):
        return None
    cache_key = ("prefix starts", pt.name, lt.name, needs)
    if cache_key not in fx.derived:
        p, pk = required[0], theme.key_of(required[0])
        kparam = roles["required_keys"](lt)[0]
        key = theme.key_of(kparam)
        listable = _listable(theme, fx, lt, kparam, key, {}, needs)
        where = fx.key_column(pk)
        values = tuple(fx.values(*where)) if where else ()
        out = None
        if listable is not None and len(values) <= LISTABLE_SWEEP:
            values = _nameable(theme, fx, pk, values) or values  # named where the theme can (else the ids it has)
            targets, out = set(listable), []
            with fx.run(memo=True) as run:
                for v in values:
                    res = run.call(pt.name, {p: v})
                    found = find_key(res.data, key) if res.ok and isinstance(res.data, dict) else None
                    if found is not None and found[1] != v and found[1] in targets and not _round_trip(theme, fx, pk, v, found[1]):
                        out.append(v)
            out = tuple(out)
        fx.derived[cache_key] = out
    return fx.derived[cache_key]


def _round_trip(theme: Theme, fx: Facts, key: str, value, parent) -> bool:
    """Whether the reads that find the record a person names (`persona.resolve`) already pass through `parent`: "the
    prescriptions of the patient of my prescription on 2025-04-29" is "my prescriptions", and the prefix read that finds
    the patient again adds a lookup, not a step of reasoning."""
    found = P.resolve(theme, fx, key, value)
    return found is not None and any(parent in call["arguments"].values() for call in found.calls)


def _named_lists(theme: Theme, fx: Facts, roles: dict, needs: tuple) -> list[Tool]:
    """Those of `_lists` without other required arguments some of whose listable records a person can name (`_nameable`)."""
    cache_key = ("named lists", needs)
    if cache_key not in fx.derived:
        keep = []
        for lt in _lists(theme, fx, roles, needs):
            kparam = roles["required_keys"](lt)[0]
            if [p for p in lt.parameters.get("required", ()) if p != kparam]:
                continue
            listable = _listable(theme, fx, lt, kparam, theme.key_of(kparam), {}, needs)
            if listable and _nameable(theme, fx, theme.key_of(kparam), listable):
                keep.append(lt)
        fx.derived[cache_key] = keep
    return fx.derived[cache_key]


def _listed_entities(theme: Theme, lt: Tool, key: str, items: list[dict]) -> tuple[str, str, list] | None:
    """(entity key, its id field, the ids) of a listed page whose items carry an entity key other than the
    one the list was asked by, with distinct ids; None when there is no such key or the ids repeat."""
    ekey = next((theme.key_of(k) for k in lt.produces if theme.key_of(k) and find_key(items[0], theme.key_of(k))
                 and theme.key_of(k) != key), None)
    if ekey is None:
        return None
    idf = find_key(items[0], ekey)[0]
    ids = [x.get(idf) for x in items]
    return (ekey, idf, ids) if len(set(ids)) == len(ids) else None


def _aggregatable(theme: Theme, shape: _Shape, needs: tuple) -> bool:
    """What `_attempt` needs of a listed page (`_Shape`) before it can plan on it (a necessary condition):
    with a lookup per entity (which may add fields) no more than MAX_RECORDS of them; without, the
    entities can take a conditional write (a field to filter on, at most 2 * MAX_RECORDS of them), or
    an aggregation has a numeric field (and, where the level asks for a filter, a field other than it
    to filter on), or a count can be asked: enough items, a field to filter on where the level asks for
    one, and some count a guesser misses (`_countable`)."""
    looked_up, conditions, writable, guess, person = needs
    if shape.ekey in looked_up:
        if shape.n > MAX_RECORDS:
            return False
        if not person or shape.looked is None:
            return True
        # tasks v3: the records the lookups give, or the list alone (a plan goes on over it where they add nothing)
        plain = (frozenset(), conditions, writable, guess, person)
        if any(_aggregatable(theme, s, plain) for s in shape.looked):
            return True
    if shape.ekey in writable and shape.splits and shape.n <= 2 * MAX_RECORDS:
        return True
    # tasks v3: an aggregate compares at least MIN_CANDIDATES records, more where a filter leaves some out
    if shape.numeric and (not conditions or shape.numeric_split) and (
            not person or (shape.n >= MIN_CANDIDATES + (conditions > 0) and (not conditions or any(MIN_CANDIDATES <= k < shape.n for k in shape.kept)))):
        return True
    if person:  # tasks v3: a whole list's count is what a probe of the list gives, unless its owner is found first
        conditions = max(conditions, 1)
    if few_items(shape.n) or (conditions and not shape.splits):
        return False
    return guess is None or _countable(theme, shape, conditions, guess)


def _countable(theme: Theme, shape: _Shape, conditions: int, guess: tuple[int, int]) -> bool:
    """Whether a plan that can only count the listed records (no numeric field, no write) can ask for a
    count a guesser misses: the whole list's (where the level may ask without a condition), or what one
    filter condition keeps (some but not all, more than a few); with two conditions, any count in that range."""
    difficulty, db_seed, _mode = guess

    def unguessed(n: int) -> bool:
        return not few_items(n) and not guessed(theme, difficulty, db_seed, n, "number")

    if not conditions and unguessed(shape.n):
        return True
    if conditions >= 2:
        return any(unguessed(n) for n in range(1, shape.n))
    return any(n < shape.n and unguessed(n) for n in shape.kept)


def _small_total(total: float) -> bool:
    """A small whole total is a guess among few values, like a small count."""
    return total == int(total) and few_items(abs(int(total)))


def _top_sizes(matched: list[dict], target: str) -> list[int]:
    """Tasks v3: the sizes k (2 or 3, fewer than the records) of a top-k of `matched` by `target` whose k-th record ties
    with none left out (a tie there would make the answer ambiguous)."""
    vals = sorted((r[target] for r in matched), reverse=True)
    return [k for k in (2, 3) if k < len(vals) and vals[k - 1] != vals[k]]


def _top(matched: list[dict], target: str, name: str, k: int) -> list:
    """The answer of a top-k: the `name` field of the k records with the highest `target`."""
    return [W.show(r[name]) if not isinstance(r[name], str) else r[name] for r in sorted(matched, key=lambda r: r[target], reverse=True)[:k]]


def _passed_over(theme: Theme, difficulty: int, db_seed: int, seed: int, answer: Any, answer_type: str) -> bool:
    """Tasks v3: `quality.guessed`, or `quality.thinned_answer` for this seed (asked of the answer a plan works out, before
    its program is written and run; the quality filter asks both again of the finished task): a plan draws another
    filter rather than end on either."""
    return guessed(theme, difficulty, db_seed, answer, answer_type) or thinned_answer(theme, difficulty, db_seed, seed, answer)


def _most_dependent(theme: Theme, fx: Facts, given: list[tuple], prefixed: bool, lookups: int) -> int:
    """Tasks v3: the most dependent lookups (`depth.chain_lookups`) a plan can reach whatever it goes on to do: each read
    but the first of those that find a record a person names (`persona.resolve`), the prefix step, the list when a read
    before it gives its key, and each lookup (writes count none). Below the level's floor the plan cannot pass."""
    found = [r for _, table, column, value in given if column == theme.spec.table(table).pk and (r := P.resolve(theme, fx, column, value))]
    return sum(len(r.calls) - 1 for r in found) + prefixed + (prefixed or bool(found)) + lookups


def _nameable(theme: Theme, fx: Facts, key: str, values: tuple) -> tuple:
    """Those of `values` (of entity `key`) whose record a person can name (`persona.named_values`)."""
    named = set(P.named_values(theme, fx, key))
    return tuple(v for v in values if v in named) if named else ()


def _named_key(theme: Theme, fx: Facts, key: str, rng) -> Any:
    """A key value of `key` a person can name where the world has one, else any (`sample_key`): tasks v3 builds
    from records a request can name instead of dropping the rest."""
    named = P.named_pool(theme, fx, key)
    return _pick(named, rng) if named else sample_key(fx, key, rng)


class _Writable:
    """The ids on which write `w` would succeed now, each tried inside a savepoint, then rolled back
    (`Run.would_succeed`) when first asked about (`i in writable`), so conditions can be chosen that
    select at least one entity the write accepts without trying every listed one."""

    def __init__(self, run: Run, w: Tool, param: str, args: dict):
        self.run, self.w, self.param, self.args = run, w, param, args
        self._known: dict = {}

    def __contains__(self, i) -> bool:
        if i not in self._known:
            self._known[i] = self.run.would_succeed(self.w.name, {self.param: i, **self.args})
        return self._known[i]
