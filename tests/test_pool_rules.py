"""Business rules of pool themes (issue 12 item 4): each rule kind refuses a violating call with a
clear error and writes nothing; every pool theme's write tools enforce at least two kinds of rule,
stated in its prompt; rule tasks (refusal, allowed, path) replay and beat do-nothing and constants."""

from __future__ import annotations

import numpy as np
import pytest
from agentworld_gym.envs import catalog, get_theme

from agentworld_gym.actions import ToolCall
from agentworld_gym.discovery.build import RULE_KINDS
from agentworld_gym.discovery.pipeline import MIN_RULES, rule_count
from agentworld_gym.discovery.validate import _coerce, _valid_case, rule_cases
from agentworld_gym.synthesis import DO_NOTHING, cheap_answers, quality_problems, synthesize_task
from agentworld_gym.tasks import verify
from agentworld_gym.world import open_copy

# a pool theme carrying each rule kind (found by scanning the index; any theme with the mark would do)
KIND_THEMES = {
    "terminal": "a11y-mcp", "unchanged": "academic-author-network", "children": "task-manager",
    "ownership": "firestore-server", "balance": "ccxt-cryptocurrency-exchange-server", "nonneg": "add-test",
    "textcap": "memory-bank", "unique": "gmail-mcp", "references": "youtube-knowledge-assistant",
}
MARKS = {"ref": "references"}


def test_every_rule_kind_has_a_theme_here():
    assert {MARKS.get(k, k) for k in RULE_KINDS} == set(KIND_THEMES)


@pytest.mark.parametrize("kind", sorted(KIND_THEMES))
def test_a_call_breaking_the_rule_is_refused_clearly_and_writes_nothing(kind):
    theme = get_theme(KIND_THEMES[kind])
    blob = theme.world(0).template
    tried = 0
    for t in theme.templates:
        if kind not in t.get("rules", ()):
            continue
        ref = open_copy(blob)
        valid = next((c for c in (_valid_case(t, theme.spec, ref, np.random.default_rng(s)) for s in range(8)) if c is not None), None)
        if valid is None:
            continue
        for case in (c for c in rule_cases(t, theme.spec, ref, _coerce(t, valid.args)) if c.rule == kind):
            conn = open_copy(blob)
            before = conn.execute("SELECT total_changes()").fetchone()[0]
            result = theme.toolset.call(theme.db(conn), ToolCall(t["name"], dict(case.args)))
            assert not result.ok, (t["name"], case.args)
            assert conn.execute("SELECT total_changes()").fetchone()[0] == before  # nothing written
            assert len(result.content) > 20 and "Traceback" not in result.content  # an observation that says why
            # and the same call with the valid arguments goes through (the refusal is the rule's, not a broken tool)
            ok = theme.toolset.call(theme.db(open_copy(blob)), ToolCall(t["name"], dict(_coerce(t, valid.args))))
            assert ok.ok, ok.content
            tried += 1
    assert tried, f"no {kind} case built on {KIND_THEMES[kind]}"


@pytest.mark.parametrize("theme_id", ["a11y-mcp", "academic-author-network"])
def test_the_prompt_states_the_rules_the_tools_enforce(theme_id):
    theme = get_theme(theme_id)
    assert len(theme.spec.rules) >= MIN_RULES
    assert all(r in theme.system_prompt for r in theme.spec.rules)


def test_every_pool_theme_carries_at_least_two_kinds_of_rule():
    from agentworld_gym.discovery.pipeline import prepare
    from agentworld_gym.discovery.pool import load_facts, recipe_source

    facts = load_facts()
    below = []
    for tid, row in catalog._ROWS.items():
        prep = prepare(recipe_source(row, facts), tid)
        kept = [t for t in prep.templates if t["name"] in set(row[5])]
        assert len(kept) == len(row[5]), f"{tid}: the index lists tools its recipe no longer makes"
        if rule_count(prep.spec, kept) < MIN_RULES:  # held-out suite themes included
            below.append(tid)
    assert not below, below[:10]


REFUSAL_THEMES = ["task-manager", "academic-author-network"]


@pytest.mark.parametrize("theme_id", REFUSAL_THEMES)
def test_refusal_task_needs_the_looked_up_fact_and_an_unchanged_world(theme_id):
    theme = get_theme(theme_id)
    task = synthesize_task(theme, 1, 0, kind="rules")
    assert task.features["rule_task"] == "refusal" and task.state_hash is None
    assert quality_problems(theme, task) == []
    # the refused write really is refused by the tool, on a fresh copy, and writes nothing
    conn = open_copy(theme.world(0).template)
    before = conn.execute("SELECT total_changes()").fetchone()[0]
    call = task.features["refused_call"]
    assert not theme.toolset.call(theme.db(conn), ToolCall(call["name"], call["arguments"])).ok
    assert conn.execute("SELECT total_changes()").fetchone()[0] == before
    # the verifier: the gold answer in an untouched world passes; a changed world, do-nothing and constants fail
    assert verify(task, task.answer, None, untouched=True).passed
    assert not verify(task, task.answer, None, untouched=False).passed
    assert not any(verify(task, a, None, untouched=True).passed for a in DO_NOTHING)
    assert not any(verify(task, a, None, untouched=True).passed for a in cheap_answers(theme, task))


PATH_THEME = "video-overlay-kit"  # a composed theme given its removal-path tools by `pool --refresh-paths`


def test_path_task_removes_the_children_first_and_the_direct_delete_is_refused():
    from agentworld_gym.discovery.forge import path_companions
    from agentworld_gym.discovery.pipeline import prepare
    from agentworld_gym.discovery.pool import recipe_source
    from agentworld_gym.synthesis.facts import facts

    row = catalog._ROWS[PATH_THEME]
    prep = prepare(recipe_source(row), PATH_THEME)
    added = [t["name"] for t in prep.templates if t.get("companion") == "paths"]
    assert added and set(added) <= set(row[5])  # the index keeps the whole path
    assert path_companions(prep.spec, prep.templates) == []  # a theme that has a path gets no more
    theme = get_theme(PATH_THEME)
    task = synthesize_task(theme, 3, 0, kind="rules")
    assert task.features["rule_task"] == "path" and quality_problems(theme, task) == []
    names = [c["name"] for c in task.solution]
    assert names[0].startswith("list_") and len(names) >= 3 and names[-1] == task.features["refused_call"]["name"]
    # deleting the parent first is refused and writes nothing
    conn = open_copy(theme.world(0).template)
    before = conn.execute("SELECT total_changes()").fetchone()[0]
    call = task.features["refused_call"]
    assert not theme.toolset.call(theme.db(conn), ToolCall(call["name"], call["arguments"])).ok
    assert conn.execute("SELECT total_changes()").fetchone()[0] == before
    # the gold path reaches the task's end state; doing nothing does not
    for c in task.solution:
        assert theme.toolset.call(theme.db(conn), ToolCall(c["name"], c["arguments"])).ok
    fx = facts(theme, 0)
    assert fx.state_hash(conn, task.state_tables) == task.state_hash != fx.initial_hash(task.state_tables)


def test_refresh_paths_adds_the_whole_path_and_leaves_held_out_themes_alone(tmp_path):
    import json

    from agentworld_gym.discovery.pool import DATA, FACTS, FROZEN, INDEX, refresh_paths

    row = list(catalog._ROWS[PATH_THEME])
    frozen = list(catalog._ROWS[sorted(FROZEN)[0]])
    before = [*row[:5], [n for n in row[5] if not n.startswith(("delete_", "list_videos"))], *row[6:]]
    assert len(before[5]) < len(row[5])
    (tmp_path / FACTS).symlink_to(DATA / FACTS)
    (tmp_path / INDEX).write_text(json.dumps({"version": 1, "stats": {}, "themes": [before, frozen]}))
    out = refresh_paths(tmp_path, progress=False, journal=tmp_path / "journal.jsonl")
    rows = json.loads((tmp_path / INDEX).read_text())["themes"]
    assert out["given"] == 1 and set(rows[0][5]) == set(row[5]) and rows[1] == frozen


def test_allowed_twin_needs_the_change():
    theme = get_theme(REFUSAL_THEMES[0])
    allowed = synthesize_task(theme, 1, 1, kind="rules")
    assert allowed.features["rule_task"] == "allowed" and allowed.state_hash is not None
    assert "If the rules do not allow that" in allowed.instruction  # worded like the refusals
    assert quality_problems(theme, allowed) == []
    # do-nothing (the initial world) fails the state check; the gold end state passes
    from agentworld_gym.synthesis.facts import facts

    fx = facts(theme, 0)
    assert not verify(allowed, "done", fx.initial_hash(allowed.state_tables), True).passed
    assert verify(allowed, "done", allowed.state_hash, True).passed


def test_rule_tasks_play_in_the_env_with_the_oracle():
    import gymnasium as gym

    from agentworld_gym.policies.base import OraclePolicy

    env = gym.make(f"AgentWorld/{REFUSAL_THEMES[0]}-v0", task_kind="rules", difficulty=1)
    try:
        shapes = set()
        for seed in range(4):
            obs, info = env.reset(seed=seed)
            shapes.add(env.unwrapped.task.features["rule_task"])
            policy = OraclePolicy(env.unwrapped)
            done, reward = False, 0.0
            while not done:
                obs, reward, term, trunc, info = env.step(policy.act(obs, info))
                done = term or trunc
            assert reward == 1.0, info.get("verification")
        assert shapes  # rule tasks were played
    finally:
        env.close()


def test_refresh_rules_grows_a_theme_below_the_floor_and_drops_a_read_only_server(tmp_path):
    import json

    from agentworld_gym.discovery.infer import slugify
    from agentworld_gym.discovery.pipeline import prepare
    from agentworld_gym.discovery.pool import DATA, FACTS, INDEX, load_facts, recipe_source, refresh_rules

    facts = load_facts()
    grown = list(catalog._ROWS["webcheck-mcp"])  # a catalog theme the refresh gave rule companions
    companions = {t["name"] for t in prepare(recipe_source(grown, facts), grown[0]).templates if t.get("companion") == "rules"}
    assert companions & set(grown[5])
    before = [*grown[:5], [n for n in grown[5] if n not in companions], *grown[6:]]
    i = next(i for i, f in enumerate(facts) if slugify(f[0]) == "exa-search")  # a search API: read tools only
    read_only = ["exa-search", grown[1], "search", "toucan", str(i), [t[0] for t in facts[i][2]], 1.0, "x"]
    (tmp_path / FACTS).symlink_to(DATA / FACTS)
    (tmp_path / INDEX).write_text(json.dumps({"version": 1, "stats": {}, "themes": [before, read_only]}))
    out = refresh_rules(tmp_path, progress=False, journal=tmp_path / "journal.jsonl")
    assert out["dropped"] == 1 and out["given_companions"] == 1
    rows = json.loads((tmp_path / INDEX).read_text())["themes"]
    assert [r[0] for r in rows] == ["webcheck-mcp"] and set(rows[0][5]) == set(grown[5])
