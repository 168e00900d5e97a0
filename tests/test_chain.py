"""Dependent chains built on the world (`synthesis.chain`, tasks v3): level k reached by construction.

Each chain task's gold is a run of reads each fed by the one before (up to a record a field points at,
down to a listed record picked by a field), on real flagship worlds; the depth rules count its dependent
lookups, and the quality filter (gold replay, cheap strategies, wording) has passed it.
"""

from __future__ import annotations

import pytest
from agentworld_gym.envs import get_theme

import agentworld_gym  # noqa: F401  (registers the themes)
from agentworld_gym.errors import TaskError
from agentworld_gym.synthesis import depth as D
from agentworld_gym.synthesis import persona as P
from agentworld_gym.synthesis import quality_problems, synthesize_task
from agentworld_gym.synthesis.chain import hops_needed, reachable, synthesize_chain_task
from agentworld_gym.synthesis.replay import answer_of


@pytest.fixture(autouse=True, scope="module")
def _person_requests():
    with P.person_requests():
        yield


@pytest.mark.parametrize(("theme_id", "level"), [("finance", 2), ("finance", 3), ("music", 3), ("cloud", 3), ("news", 4), ("social", 5)])
def test_a_chain_reaches_its_level_by_dependent_lookups(theme_id, level, monkeypatch):
    import agentworld_gym.synthesis.quality as S

    # the chain's depth, whatever seen answers another test worked out (`synthesis.thinned` passes over most seeds of a
    # theme whose chains give few answers, such as cloud level 3, and which seeds depends on what was sampled before)
    monkeypatch.setattr(S, "_SEEN", {})
    theme = get_theme(theme_id)
    made = []
    for seed in range(3):
        try:
            made.append(synthesize_chain_task(theme, level, seed))
        except TaskError:
            continue
    assert made, f"{theme_id} made no chain task at level {level}"
    for task in made:
        assert task.difficulty == level and task.features["chain"]
        depth = D.task_depth(theme, task)
        assert depth is not None and D.deep_enough(level, depth, task.features["aggregation"] > 0), (depth, task.instruction)
        assert task.features["dependent_lookups"] >= D.MIN_DEPENDENT[level]
        assert quality_problems(theme, task) == [], task.instruction
        assert P.first_person_with_reason(task.instruction) or "I " in task.instruction
        # no key a read takes is stated: each came from the read before it
        for call in task.solution[1:]:
            tool = theme.toolset[call["name"]]
            for p, v in call["arguments"].items():
                if not tool.writes and p in tool.consumes and theme.key_of(p):
                    assert str(v) not in task.instruction, (v, task.instruction)


def test_chain_tasks_are_deterministic_and_what_graph_synthesis_gives():
    theme = get_theme("finance")
    a = synthesize_chain_task(theme, 3, 7)
    assert a == synthesize_chain_task(theme, 3, 7)
    assert synthesize_task(theme, 3, 7, "graph").features.get("chain")  # tasks v3: graph synthesis builds chains first


def test_answer_paths_of_listed_records():
    rows = [{"id": "A", "n": 3, "x": "p"}, {"id": "B", "n": 9, "x": "q"}, {"id": "C", "n": 1, "x": "r"}]
    assert answer_of(rows, [0, "#where", "id", "B", "x"]) == "q"
    assert answer_of(rows, [0, "#where", "id", "Z", "x"]) is None  # the record is gone: no answer, the replay check fails
    assert answer_of(rows, [0, "#max", "n", "id"]) == "B" and answer_of(rows, [0, "#min", "n", "id"]) == "C"


def test_a_level_the_world_cannot_chain_says_so():
    theme = get_theme("retail")  # customers -> orders: no chain of four records
    assert hops_needed(5) == 4 and hops_needed(3) == 2
    with pytest.raises(TaskError, match="chain task at difficulty 5"):
        synthesize_chain_task(theme, 5, 0, attempts=3)
    assert reachable(theme, 2)


def test_a_theme_with_no_persons_request_at_any_level_gets_the_classic_one():
    theme = get_theme("mcp-server-test-2")  # a pool theme none of whose candidates survive as a person's request
    with pytest.raises(TaskError):
        synthesize_task(theme, 1, 0, "mixed")
    task = synthesize_task(theme, 3, 0, "mixed", fallback=True)  # as env.reset asks: a task, marked
    assert task.features["requests"] == "classic"
    with P.person_requests(False):
        classic = synthesize_task(theme, 3, 0, "mixed", fallback=True)
    assert classic.instruction == task.instruction and "requests" not in classic.features
