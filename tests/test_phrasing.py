"""Optional language-model phrasing of task requests (synthesis.phrasing), over real HTTP.

The model is a STAND-IN: tests/openai_standin.py's OpenAI-compatible server (no model runs here),
answering with a deterministic rewrite, so the checks on a rewrite can be exercised; a real run passes
any policy spec (`openai:<model>@<url>`, `hf:<model>`).
"""

from __future__ import annotations

import re

import pytest
from agentworld_gym.envs import get_theme
from openai_standin import StandInServer

import agentworld_gym  # noqa: F401
from agentworld_gym.errors import PhrasingError
from agentworld_gym.synthesis import person_requests, synthesize_task
from agentworld_gym.synthesis.phrasing import forbidden, needed, rephrase_task


@pytest.fixture(autouse=True, scope="module")
def _person_requests():
    """Tasks v3 is opt-in (`persona.enabled`): these tests turn it on for themselves."""
    with person_requests():
        yield


class RewritingStandIn(StandInServer):
    """A stand-in for a model: rewrites the request deterministically (`mode`: keep the values, drop one, or leak one)."""

    mode = "keep"
    leak = ""

    def answer(self, messages: list[dict]) -> str:
        request = messages[-1]["content"].split("Request: ", 1)[1]
        values = re.search(r"Keep each of these values exactly as written: (.*?)\. Do not", messages[-1]["content"]).group(1).split(", ")
        if self.mode == "drop":
            request = request.replace(values[0], "that one")
        if self.mode == "leak":
            request += f" I think it is {self.leak}."
        return "Hi! " + request


@pytest.fixture(scope="module")
def task():
    t = synthesize_task(get_theme("clinic"), 3, 4, "mixed", fallback=True)
    assert needed(t) and forbidden(t)  # a request that states values and a gold that finds others
    return t


def test_a_rewrite_that_keeps_every_value_is_used_and_cached(task, tmp_path):
    with RewritingStandIn() as server:
        spec = f"openai:standin@{server.url}"
        phrased = rephrase_task(task, spec, cache=tmp_path)
        assert phrased.instruction.startswith("Hi! ") and all(v in phrased.instruction for v in needed(task))
        assert phrased.solution == task.solution and phrased.answer == task.answer
        assert len(server.requests) == 1
        again = rephrase_task(task, spec, cache=tmp_path)  # from the cache: no second request
        assert again.instruction == phrased.instruction and len(server.requests) == 1
    assert [p.name for p in tmp_path.iterdir()] == [f"{task.id}.json"]


@pytest.mark.parametrize("mode", ["drop", "leak"])
def test_a_rewrite_that_drops_or_leaks_a_value_is_a_typed_error_and_writes_nothing(task, tmp_path, mode):
    RewritingStandIn.mode, RewritingStandIn.leak = mode, forbidden(task)[0]
    try:
        with RewritingStandIn() as server, pytest.raises(PhrasingError) as err:
            rephrase_task(task, f"openai:standin@{server.url}", cache=tmp_path)
    finally:
        RewritingStandIn.mode = "keep"
    message = str(err.value)
    assert "\n" not in message and task.id in message
    assert (needed(task)[0] if mode == "drop" else forbidden(task)[0]) in message
    assert list(tmp_path.iterdir()) == []
