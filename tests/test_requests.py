"""Tasks v3 (issue 33): a person's request and depth that needs reasoning.

Checks `synthesis.persona` (records named by what a person knows, found by reads the gold then makes;
a speaker with a reason) and `synthesis.depth` (dependent lookups per request, the level floors, no
redundant read, no one-hop answer), on real flagship and pool worlds.
"""

from __future__ import annotations

import re

import pytest
from agentworld_gym.envs import entries, get_theme

import agentworld_gym  # noqa: F401  (registers the pool)
from agentworld_gym.errors import TaskError
from agentworld_gym.synthesis import depth as D
from agentworld_gym.synthesis import instruction_values, quality_problems, synthesize_task, writes_from_instruction
from agentworld_gym.synthesis import persona as P
from agentworld_gym.synthesis.audit import wording_problems
from agentworld_gym.synthesis.facts import facts
from agentworld_gym.tasks import Task

FLAGSHIPS = sorted(e.id for e in entries() if e.source == "flagship")


@pytest.fixture(autouse=True, scope="module")
def _person_requests():
    """Tasks v3 is opt-in (`persona.enabled`): these tests turn it on for themselves."""
    with P.person_requests():
        yield


@pytest.fixture(scope="module")
def sample() -> list[Task]:
    """Two tasks per flagship theme and level, mixed kinds, as env.reset asks (fallback)."""
    out = []
    for i, theme_id in enumerate(FLAGSHIPS):
        theme = get_theme(theme_id)
        for level in range(1, 6):
            for s in range(2):
                try:
                    out.append(synthesize_task(theme, level, 500 * i + s, "mixed", fallback=True))
                except TaskError:
                    continue
    return out


def test_a_record_is_found_by_what_a_person_knows_and_the_reads_find_it():
    theme = get_theme("clinic")
    fx = facts(theme, 0)
    appointment = fx.values("appointments", "appointment_id")[3]
    res = P.resolve(theme, fx, "appointment_id", appointment)
    assert res is not None and appointment not in res.phrase
    assert re.search(r"the appointment on \d{4}-\d{2}-\d{2} of the patient with email \S+@\S+", res.phrase), res.phrase
    assert res.mine.startswith("my appointment on ") and res.identity.startswith("My email is ")
    assert [c["name"] for c in res.calls] == ["find_patient_by_email", "list_appointments"]
    for table, column, value in res.unique:  # each value a person gives names one record
        assert fx.count(table, column, value) == 1
    # the reads, run, give back the record the phrase names (and so does the program source)
    outputs = D.outputs_of(fx, res.calls)
    assert any(x.get("appointment_id") == appointment for x in outputs[-1])
    program = "def solve(call):\n" + "\n".join(res.source) + f"\n    return {res.var}\n"
    from agentworld_gym.synthesis.replay import execute

    with fx.run() as run:
        answer, trace, ok = execute(theme, program, run)
    assert ok and answer == appointment and trace == res.calls


@pytest.mark.parametrize(("theme_id", "key", "column"), [
    ("sqlassistant", "enrollment_id", "student_email"),  # an email column named by its last word
    ("mcp-doc-forge", "crawl_id", "seed_url"),
    ("debridge-mcp", "wallet_account_id", "address"),  # a wallet's address: what its owner gives
    ("myssl-mcp-server-python", "vulnerability_id", "cve"),
    ("stock-info-mcp", "news_article_id", "headline"),
])
def test_a_record_is_found_by_a_column_a_person_knows_by_its_last_word(theme_id, key, column):
    """These records were named by row id in the v3 freeze: each kind is listed by a shared field (a status, a chain)
    and told apart by a column people know that `_KNOWN` did not name ('student_email', 'seed_url', an address, a CVE,
    a headline). Every record of the kind is now named by it, and the reads give back the record named."""
    theme = get_theme(theme_id)
    fx = facts(theme, 0)
    values = fx.values(*fx.key_column(key))
    assert P.named_values(theme, fx, key) == tuple(values)
    res = P.resolve(theme, fx, key, values[1])
    row = fx._conn.execute(f'SELECT "{column}" FROM "{fx.key_column(key)[0]}" WHERE "{key}" = ?', (values[1],)).fetchone()
    assert str(values[1]) not in res.phrase and str(row[0]) in res.phrase, res.phrase
    assert P.internal_ids(theme, fx, res.phrase) == []
    assert any(x.get(key) == values[1] for x in D.outputs_of(fx, res.calls)[-1])


def test_a_column_is_known_by_its_name_or_its_last_word_and_ties_keep_one_order():
    assert P._rank("student_email") == P._rank("email") < P._rank("name") < len(P._KNOWN)
    assert P._known("tracking_number") and P._known("seed_url") and not P._known("status") and not P._known("emails_sent")
    assert sorted({"student_email", "email", "status"}, key=P._known_order) == ["email", "student_email", "status"]


def test_first_person_only_for_the_speakers_own_records():
    theme = get_theme("clinic")
    fx = facts(theme, 0)
    pid = fx.values("patients", "patient_id")[0]
    res = P.resolve(theme, fx, "patient_id", pid)
    text, first = P.rephrase(f"What are the appointments of patient {pid}?", res, "patient")
    assert first and text == "What are my appointments?"
    text, first = P.rephrase(f"What is the phone of patient {pid} and the email of patient {pid}?", res, "patient")
    assert first and "my phone" in text and pid not in text
    text, first = P.rephrase(f"Book patient {pid} in with doctor DR-201.", res, "patient")  # not a possessive: third person
    assert not first and text.startswith("Book the patient with email ") and pid not in text


def test_codes_a_person_holds_are_not_internal_ids():
    """An order number, a booking reference, an issue or job id is what a person quotes back (`persona.held_code`): a
    request may name the record by it, and it is not counted as an internal id; a customer or product row id is."""
    import numpy as np

    theme = get_theme("retail")
    fx = facts(theme, 0)
    assert P.held_code("order_id") and P.held_code("finetune_job_id") and P.held_code("pull_request_id")
    assert not P.held_code("customer_id") and not P.held_code("model_id") and not P.held_code("product_id")
    order, product = fx.values("orders", "order_id")[0], fx.values("products", "product_id")[0]
    assert P.internal_ids(theme, fx, f"Where is my order {order}?") == []
    assert P.internal_ids(theme, fx, f"What does product {product} cost?") == [str(product)]
    rng = np.random.default_rng(0)  # first draw 0.64: past ID_KEPT, so a row id drops the candidate
    assert not P.keeps_ids(theme, f"Where is my order {order}?", [("order", "orders", "order_id", order)], rng)
    assert P.keeps_ids(theme, f"What does product {product} cost?", [("product", "products", "product_id", product)],
                       np.random.default_rng(0))


def test_synthesized_requests_are_a_persons(sample):
    assert len(sample) >= 150 and {t.kind for t in sample} >= {"graph", "programmatic"}
    for task in sample:
        theme = get_theme(task.theme)
        assert P.first_person_with_reason(task.instruction), task.instruction
        assert not P.identifier_names(theme, task.instruction), task.instruction
        assert "with query" not in task.instruction and "confirm when it is done" not in task.instruction
    fx = {t: facts(get_theme(t), 0) for t in FLAGSHIPS}
    with_ids = [t for t in sample if P.internal_ids(get_theme(t.theme), fx[t.theme], t.instruction)]
    # records no tool finds by a person's words keep their ids (a code the person was given): a minority
    assert len(with_ids) <= 0.15 * len(sample), [t.instruction for t in with_ids[:5]]
    assert sum(bool(t.features.get("resolved")) for t in sample) >= 0.4 * len(sample)


def test_levels_are_dependent_lookups_and_aggregates_range_over_three(sample):
    for task in sample:
        theme = get_theme(task.theme)
        depth = D.task_depth(theme, task)
        if task.kind in ("graph", "programmatic"):
            assert depth == task.features["dependent_lookups"], task.id
            assert depth >= D.MIN_DEPENDENT[task.difficulty], (task.difficulty, depth, task.instruction)
        if task.features.get("operation") in ("sum", "argmax", "argmin", "top"):
            assert task.features["candidates"] >= 3
    deep = [t for t in sample if t.difficulty >= 4]
    assert deep and all(t.features["dependent_lookups"] >= 3 for t in deep)


def test_independent_requests_joined_by_and_do_not_add_up():
    theme = get_theme("clinic")
    fx = facts(theme, 0)
    appointment = fx.values("appointments", "appointment_id")[3]
    res = P.resolve(theme, fx, "appointment_id", appointment)
    prescription = next(v for v in fx.values("prescriptions", "prescription_id")
                        if (r := P.resolve(theme, fx, "prescription_id", v)) and r.calls[0] != res.calls[0])
    other = P.resolve(theme, fx, "prescription_id", prescription)
    solution = [*res.calls, *other.calls, {"name": "cancel_appointment", "arguments": {"appointment_id": appointment}},
                {"name": "refill_prescription", "arguments": {"prescription_id": prescription}}]
    text = f"Please cancel {res.phrase} and refill {other.phrase}."
    with fx.run() as run:
        outputs = [run.call(c["name"], c["arguments"]).data for c in solution]
    assert sum(D.dependent(theme, solution, outputs, text)) == 2  # one list per request
    assert D.chain_lookups(theme, solution, outputs, text, sinks=[4, 5]) == 1  # but each request needs one


def test_cheap_strategy_rules():
    task = Task(id="x", theme="clinic", kind="graph", instruction='Cancel appointment AP-3001 on 2025-06-02, "soon", 12.5 or a@b.org please.',
                difficulty=1, solution=({"name": "cancel_appointment", "arguments": {"appointment_id": "AP-3001"}},),
                state_tables=("appointments",), state_hash="h")
    assert instruction_values(task.instruction) == ["AP-3001", "soon", "a@b.org", "2025-06-02", "12.5"]
    assert writes_from_instruction(get_theme("clinic"), task)
    hidden = Task.from_dict({**task.to_dict(), "instruction": "Cancel my appointment on 2025-06-02.",
                              "features": {}})
    assert not writes_from_instruction(get_theme("clinic"), hidden)
    located = Task.from_dict({**hidden.to_dict(), "instruction": "What is the title of the page with query travel?", "solution": [],
                               "state_tables": [], "state_hash": None})
    assert "query_locator" in wording_problems(get_theme("websearch"), located)


def test_pool_and_rule_tasks_follow_the_same_rules():
    ids = sorted(e.id for e in entries() if e.source == "catalog")[:40]
    made = 0
    for theme_id in ids[::4]:
        theme = get_theme(theme_id)
        for kind in ("mixed", "rules"):
            try:
                task = synthesize_task(theme, 1, 3, kind)
            except TaskError:
                continue
            made += 1
            assert P.first_person_with_reason(task.instruction) and not writes_from_instruction(theme, task), task.instruction
            assert quality_problems(theme, task) == []
    assert made >= 5


@pytest.mark.parametrize("theme_id", ["gtasks-mcp", "mcp-build-toolchain"])
def test_a_refused_change_asks_for_a_field_not_the_owners_row_id(theme_id):
    """A refusal task asks, in place of the forbidden change, for a fact of the record. Classic tasks ask for its owner
    first ("tell me the task list id of the task titled ..."): no person asks for that, and where a world has few owners a
    guesser who has seen other tasks gives it (the third v3 freeze: mode and probe-and-mode wins). Tasks v3 asks for
    another field."""
    theme = get_theme(theme_id)
    for seed in range(0, 16, 2):  # even seeds: refusals
        task = synthesize_task(theme, 1, seed, "rules")
        assert theme.key_of(task.features["answer_path"][1]) is None, task.instruction
    with P.person_requests(False):  # classic tasks are kept as they were: some ask for the owner
        classic = [synthesize_task(theme, 1, seed, "rules").features["answer_path"][1] for seed in range(0, 16, 2)]
    assert any(theme.key_of(column) is not None for column in classic), classic


def test_the_switch_is_off_by_default_and_set_by_env_or_block(monkeypatch):
    import contextvars

    from agentworld_gym.errors import ConfigError

    fresh = contextvars.Context  # a context outside this module's `person_requests()` fixture
    monkeypatch.delenv("AGENTWORLD_REQUESTS", raising=False)
    assert fresh().run(P.enabled) is False
    monkeypatch.setenv("AGENTWORLD_REQUESTS", "person")
    assert fresh().run(P.enabled) is True

    def forced_classic() -> bool:
        with P.person_requests(False):
            return P.enabled()

    assert fresh().run(forced_classic) is False  # the block wins over the environment
    monkeypatch.setenv("AGENTWORLD_REQUESTS", "persons")
    with pytest.raises(ConfigError, match="AGENTWORLD_REQUESTS"):
        fresh().run(P.enabled)
    monkeypatch.delenv("AGENTWORLD_REQUESTS")
    theme = get_theme("calendar")
    classic = fresh().run(synthesize_task, theme, 2, 0, "graph")
    person = synthesize_task(theme, 2, 0, "graph", fallback=True)
    assert "dependent_lookups" not in classic.features and "dependent_lookups" in person.features


def test_an_env_words_its_tasks_as_asked(monkeypatch):
    """gym.make(..., requests="person") makes the env's synthesized tasks a person's requests whatever the process
    says, "classic" the classic ones, None follows the process; the process's switch is left as it was."""
    import contextvars

    import gymnasium as gym

    from agentworld_gym.errors import ConfigError

    def first_task(requests):
        env = gym.make("AgentWorld/calendar-v0", difficulty=2, task_kind="graph", requests=requests)
        env.reset(seed=0)
        return env.unwrapped.task, P.enabled()

    fresh = contextvars.Context  # outside this module's `person_requests()` fixture
    monkeypatch.delenv("AGENTWORLD_REQUESTS", raising=False)
    (person, after), (classic, _), (default, _) = (fresh().run(first_task, r) for r in ("person", "classic", None))
    assert "dependent_lookups" in person.features and "dependent_lookups" not in classic.features
    assert default.instruction == classic.instruction and after is False
    monkeypatch.setenv("AGENTWORLD_REQUESTS", "person")
    assert fresh().run(first_task, "classic")[0].instruction == classic.instruction
    assert fresh().run(first_task, None)[0].instruction == person.instruction
    with pytest.raises(ConfigError, match="requests"):
        gym.make("AgentWorld/calendar-v0", requests="persons")


def test_a_trainer_words_its_tasks_as_asked(monkeypatch):
    """`train sft/grpo --requests person` (SynthesizedTasks): the trainer's tasks are a person's requests whatever
    the process says; a misspelt value is a typed error before any work."""
    import contextvars

    import numpy as np

    from agentworld_gym.errors import ConfigError
    from agentworld_gym.train.common import SynthesizedTasks
    from agentworld_gym.train.sft import SFTConfig

    monkeypatch.delenv("AGENTWORLD_REQUESTS", raising=False)

    def sample(requests):
        return SynthesizedTasks(["calendar"], (2,), "graph", requests).sample_tasks(3, np.random.default_rng(0)), P.enabled()

    (person, after), (classic, _) = (contextvars.Context().run(sample, r) for r in ("person", None))
    assert all("dependent_lookups" in t.features for t in person) and after is False
    assert not any("dependent_lookups" in t.features for t in classic)
    with pytest.raises(ConfigError, match="requests"):
        SFTConfig(requests="persons")


def test_synth_writes_the_wording_asked_for(tmp_path, monkeypatch):
    """`agentworld synth THEME --requests person` writes a person's requests whatever the process says."""
    import contextvars

    from agentworld_gym import cli
    from agentworld_gym.tasks import load_tasks

    monkeypatch.delenv("AGENTWORLD_REQUESTS", raising=False)
    out = {r: tmp_path / f"{r}.jsonl" for r in ("person", "classic")}
    for r, path in out.items():
        assert contextvars.Context().run(cli.main, ["synth", "calendar", "-d", "2", "-n", "3", "--fallback", "--requests", r, "-o", str(path)]) == 0
    person, classic = (load_tasks(out[r]) for r in ("person", "classic"))
    assert len(person) == 3 and all("dependent_lookups" in t.features for t in person)
    assert not any("dependent_lookups" in t.features for t in classic)


def _counting_attempts(monkeypatch) -> list[int]:
    from agentworld_gym.synthesis import programmatic

    count = [0]
    real = programmatic._attempt

    def attempt(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(programmatic, "_attempt", attempt)
    return count


def test_programmatic_plans_are_built_from_what_a_person_can_name(monkeypatch):
    """Tasks v3 programmatic plans start from a list whose owner a person can name and choose filters that keep
    three or more candidates and an answer no guesser gives: few plans are thrown away (sample-and-filter took
    323 plans for these 8 tasks)."""
    theme = get_theme("music")
    count = _counting_attempts(monkeypatch)
    tasks = [synthesize_task(theme, 2, s, "programmatic") for s in range(8)]
    assert count[0] <= 150, count[0]
    fx = facts(theme, 0)
    for task in tasks:
        assert task.difficulty == 2 and task.features["resolved"] >= 1, task.instruction
        assert not P.internal_ids(theme, fx, task.instruction), task.instruction
        if task.features["operation"] in ("sum", "argmax", "argmin", "top"):
            assert task.features["candidates"] >= 3
        assert quality_problems(theme, task) == [], task.instruction
    assert tasks[3] == synthesize_task(theme, 2, 3, "programmatic")  # deterministic in the seed, whatever was asked before


@pytest.mark.parametrize("theme_id", ["clinic", "security"])
def test_a_deep_plan_does_not_go_round_to_the_record_the_person_named(theme_id):
    """"Refill each of the prescriptions of the patient of my prescription on 2025-04-29" is "refill each of my
    prescriptions": the prefix read found the patient the resolving reads had already listed. 123 of 174 flagship
    programmatic tasks at levels 3-5 went round so (their listing read twice with the same arguments)."""
    theme = get_theme(theme_id)
    for seed in range(4):
        task = synthesize_task(theme, 4, seed, "programmatic", fallback=True)
        outputs = D.outputs_of(facts(theme, task.db_seed), list(task.solution))
        listings = [(c["name"], repr(sorted(c["arguments"].items()))) for c, out in zip(task.solution, outputs, strict=True) if isinstance(out, list)]
        assert len(listings) == len(set(listings)), task.instruction
        assert not re.search(r"\bof my \w+ (on|named|titled|with)\b", task.instruction), task.instruction


def test_a_level_no_probe_seed_can_make_fails_at_once(monkeypatch):
    theme = get_theme("retail")  # its lists hold too few records (or guessable answers) for a level-2 plan
    with pytest.raises(TaskError):
        synthesize_task(theme, 2, 0, "programmatic")
    count = _counting_attempts(monkeypatch)
    with pytest.raises(TaskError, match="probe seeds"):
        synthesize_task(theme, 2, 1, "programmatic")
    assert count[0] == 0


def test_a_deep_request_that_steps_down_draws_its_kinds_as_that_level_does():
    """From DEEP_LEVEL a mixed request tries a programmatic plan first; crypto makes nothing above level 2, so every one
    of its level 4-5 requests was one of its few level-2 programmatic plans (one question in 5 of 30). Below DEEP_LEVEL
    the request tries the kinds drawn for it, as a request of that level would: both kinds appear."""
    theme = get_theme("crypto")
    made = [synthesize_task(theme, 5, s, "mixed", fallback=True) for s in range(12)]
    assert all(t.difficulty == 2 for t in made)
    assert {t.program is None for t in made} == {True, False}  # graph tasks (no program) beside programmatic ones


def test_one_seed_asked_of_many_themes_draws_their_kinds_apart():
    """A mixed request's kind was drawn from (seed, level) alone, so a benchmark that asks every theme with seed 0 (or a
    suite frozen that way) got one kind for all of them at a level. The theme is now in the draw."""
    with P.person_requests(False):
        kinds = {synthesize_task(get_theme(t), 1, 0, "mixed", check=False).kind for t in FLAGSHIPS}
    assert {"graph", "programmatic"} <= kinds, kinds


def test_a_level_that_asks_few_questions_still_has_its_answers_seen():
    """Clinic level 3 asked a question in about 1 task in 8 (the rest were writes), and all of them had one answer (the
    same two prescriptions): one round of the seen sample held a single question, so nothing repeated and nothing was
    thinned. Rounds now go on until they hold SEEN_QUESTIONS questions (or one holds none). (Clinic level 3 asks no
    question since its deep plans stopped going round through the named record; testing level 3 asks 6 in 40.)"""
    from agentworld_gym.synthesis.quality import _answer_key, seen_answers

    theme = get_theme("testing")
    seen = seen_answers(theme, 3)
    assert seen, "the answers testing's few level-3 questions repeat are not among the seen answers"
    asked = [t for s in range(40) if (t := synthesize_task(theme, 3, s, "mixed", fallback=True)).state_hash is None and t.difficulty == 3]
    assert len(asked) <= 10  # still a level of few questions
    assert max(sum(_answer_key(t.answer) == _answer_key(a) for t in asked) for a in seen) <= 1


def test_answers_repeated_among_checked_tasks_are_thinned():
    """Plans built to miss the answer prior gather on the few records left (calendar level 1 asked for the same user's
    accepted invitations, answer 10, in 9 of 15 seeds): `seen_answers` finds the answers checked tasks repeat, and
    synthesis keeps a task whose answer was given n times for 1 seed in n (`thinned`), so no answer gathers the seeds
    and the rest keep their share (rejecting them outright moved the seeds onto the next few records)."""
    import dataclasses
    from collections import Counter

    from agentworld_gym.synthesis.quality import _SEEN, _answer_key, seen_answers, thinned

    theme = get_theme("calendar")
    seen = seen_answers(theme, 1)
    assert seen, "the sample repeats some answers"
    asked = [t for s in range(15) if (t := synthesize_task(theme, 1, 1100 + s, "mixed", fallback=True)).state_hash is None]
    counts = Counter(repr(t.answer) for t in asked)
    assert asked and counts.most_common(1)[0][1] <= 3, counts.most_common(3)
    times = _SEEN[theme, 1, 0][_answer_key(seen[0])]
    variant = dataclasses.replace(asked[0], answer=seen[0])
    kept = sum(not thinned(theme, variant, s) for s in range(300)) / 300  # drawn from the seed and the answer
    assert times >= 2 and abs(kept - 1 / times) < 0.08, (times, kept)
    assert thinned(theme, variant, 7) == thinned(theme, dataclasses.replace(variant, id="another candidate"), 7)
    with P.person_requests(False):
        assert not any(thinned(theme, variant, s) for s in range(20))  # classic tasks are never thinned


def test_an_answer_given_while_thinned_counts_for_its_thinning(monkeypatch):
    """`seen_answers` rounds: an answer given once in a round where it was thinned to 1 seed in n counts as n (the
    seeds it would have taken); counted as 1, an answer thinned early looked rare in later rounds and stayed common."""
    from collections import Counter

    import agentworld_gym.synthesis.quality as S

    # the second round repeats nothing and the two hold SEEN_QUESTIONS (12) questions: the last one drawn
    rounds = iter([Counter(a=10), Counter(a=1, b=1)])
    monkeypatch.setattr(S, "_answer_counts", lambda *a, **k: (next(rounds), {"a": "A", "b": "B"}))
    monkeypatch.setattr(S, "_SEEN", {})
    monkeypatch.setattr(S, "_SEEN_ANSWERS", {})
    theme = get_theme("calendar")
    assert S.seen_answers(theme, 1, 99) == ("A",)
    assert S._SEEN[theme, 1, 99] == {"a": 10 + 1 * 10}


def test_the_switch_is_read_once_per_task(monkeypatch):
    """`persona.settled` holds the environment's switch for a block (synthesize_task reads it once, not on every
    check); outside the block a changed variable is read again, and a block already set is kept."""
    import contextvars

    monkeypatch.setenv("AGENTWORLD_REQUESTS", "person")

    def inside() -> tuple[bool, bool]:
        with P.settled():
            monkeypatch.setenv("AGENTWORLD_REQUESTS", "classic")
            held = P.enabled()
        return held, P.enabled()

    assert contextvars.Context().run(inside) == (True, False)
    with P.person_requests(True), P.settled():
        assert P.enabled()  # the set block wins over the environment ("classic" now)


def test_identifier_names_patterns_are_compiled_once_per_theme():
    theme = get_theme("calendar")
    names = [n for n, _ in P._identifiers(theme)]
    assert names and all("_" in n or re.search(r"[a-z][A-Z]", n) for n in names)
    assert P._identifiers(theme) is P._identifiers(theme)
    name = names[0]
    assert P.identifier_names(theme, f"What is the {name} of it?") == [name]
    assert P.identifier_names(theme, f"What is the x{name} of it?") == []


def test_that_before_each_every_or_all_is_a_clause_not_a_pointer():
    """A write tool worded "record that <the records> cites ..." made every scholar level-5 plan break the pointer rule
    ("that each of the papers ..."): "that" there opens a clause; a pointer ("that paper") stays one."""
    from agentworld_gym.synthesis.audit import pointer

    for clause in ("Please record that each of the papers of my author cites it.", "Confirm that every order shipped.",
                   "Check that all of my bookings are paid."):
        assert not pointer(clause)
    for pointing in ("Please record that paper as cited.", "Cancel those bookings.", "Refund this order."):
        assert pointer(pointing)
    with P.person_requests():
        task = synthesize_task(get_theme("scholar"), 5, 0, "programmatic")
    assert task.difficulty == 5 and "record that each" in task.instruction


def test_a_reason_the_pointer_rule_refuses_is_drawn_again():
    """The phrasebook's "this number" / "this week" break the ambiguous-reference rule; programmatic plans redraw such
    a reason rather than throw the finished task away, so no person programmatic task is lost to it."""
    from agentworld_gym.synthesis.audit import pointer

    assert pointer("My manager asked me for this number before the meeting.")
    assert not pointer("How many of my events that have duration in minutes of at most 60 are there?")
    theme = get_theme("calendar")
    for s in range(6):
        task = synthesize_task(theme, 3, s, "programmatic", fallback=True)
        assert "ambiguous_reference" not in wording_problems(theme, task)
