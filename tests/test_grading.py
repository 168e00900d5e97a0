"""The grader reads answers the way models write them (agentworld_gym.grading), on the paraphrase corpus
and on the cases issue 33 names; the reply of a write task is read too."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentworld_gym.errors import TaskError
from agentworld_gym.grading import ANSWER_TYPES, MAX_ANSWER_SIZE, answer_type_of, answers_match, reply_claim
from agentworld_gym.tasks import Task, expected_outcome, load_tasks, verify

FIXTURES = Path(__file__).parent / "fixtures"


def _load(name: str) -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _grade(r: dict) -> bool:
    return answers_match(r["gold"], r["answer"], r["declared"], 0.01, r["context"])


def test_the_corpus_is_big_enough_and_covers_every_type():
    corpus = _load("grader_corpus.jsonl")
    sides = Counter(r["correct"] for r in corpus)
    assert sides[True] >= 1000 and sides[False] >= 1000
    types = {t for t in ANSWER_TYPES if t not in ("facts", "none")}
    for correct in (True, False):
        assert {r["type"] for r in corpus if r["correct"] is correct} == types
    assert len({r["template"] for r in corpus}) >= 60  # varied wording, not one template per type


def test_false_negatives_and_false_positives_on_the_corpus_are_within_the_targets():
    corpus = _load("grader_corpus.jsonl")
    fn = [r for r in corpus if r["correct"] and not _grade(r)]
    fp = [r for r in corpus if not r["correct"] and _grade(r)]
    right, wrong = sum(r["correct"] for r in corpus), sum(not r["correct"] for r in corpus)
    assert len(fn) / right <= 0.02, [(r["gold"], r["answer"]) for r in fn[:10]]
    assert len(fp) / wrong <= 0.005, [(r["gold"], r["answer"]) for r in fp[:10]]


@pytest.mark.parametrize("case", _load("grader_hand.jsonl"), ids=lambda c: f"{c['n']}-{c['template']}")
def test_every_hand_written_case(case):
    assert _grade(case) is case["correct"], (case["gold"], case["answer"])


# The examples of issue 33 item 4, as written there.
@pytest.mark.parametrize(("gold", "answer", "kind", "right"), [
    (4638, "The answer is 4638.", "number", True),
    (4638, "**4,638**", "number", True),
    ("AC-1001", "It's `AC-1001`.", "text", True),
    ("2026-03-04", "March 4, 2026", "text", True),
    ("2026-03-04", "4 Mar 2026", "text", True),
    ("2026-03-04", "2026/03/04", "text", True),
    ("2026-03-04", "03/04/2026", "text", True),
    (1523.4, "$1,523.40", "number", True),
    (1523.4, "1,523.40 USD", "number", True),
    (True, "yes", "bool", True),
    (False, "false", "bool", True),
    ("AC-1001", "ac-1001", "id", True),
    (["TS-1008", "TS-1020"], "TS-1020 and TS-1008", "set", True),
    (["TS-1008", "TS-1020"], "TS-1020, TS-1008", "set", True),
    ("Calvin Lewis", "Calvin Lewis or Daniel Smith", "text", False),
    (3, "either 3 or 4", "number", False),
    (["TS-1008", "TS-1020"], "TS-1008, TS-1020 and TS-1011", "set", False),
    (7140, "7140 mayb", "number", False),
    (7140, "7140%", "number", False),
    (7140, "7140", "number", True),
    # and a few more doubts seen in model replies
    (4638, "4638 (unverified)", "number", False),
    (4638, "4638 is wrong", "number", False),
    ("QU-1081", "QU-1081 (not QU-1080)", "id", False),
    (4638, "Assuming the filter is right, 4,638.", "number", False),
])
def test_issue_examples(gold, answer, kind, right):
    assert answers_match(gold, answer, kind) is right


def test_a_structured_answer_is_compared_directly():
    assert answers_match(4638, 4638.0, "number") and not answers_match(4638, 4639, "number")
    assert answers_match(["b", "a"], ["A", "B"], "set") and not answers_match(["a", "b"], ["a", "b", "c"], "set")
    assert answers_match(True, True, "bool") and not answers_match(True, 1.5, "bool")
    assert not answers_match(4638, None, "number") and not answers_match(4638, {"answer": 4638}, "number")


def test_values_the_instruction_states_are_no_answer():
    ask = "Among the quotes of stock ST-1012, which has the highest price? Answer with its quote id."
    assert answers_match("QU-1081", "For ST-1012 it is QU-1081.", "id", context=ask)
    assert not answers_match("QU-1081", "ST-1012", "id", context=ask)
    assert not answers_match("QU-1081", "For ST-1012 it is QU-1081.", "id")  # without the instruction: two ids


def test_the_type_comes_from_the_task_or_its_gold():
    assert answer_type_of("2024-01-21", "text") == "date" and answer_type_of("QU-1081", "text") == "id"
    assert answer_type_of("Calvin Lewis", "text") == "text" and answer_type_of(12.5, "percent") == "percent"
    assert [answer_type_of(v) for v in (3, True, ["a"], None)] == ["number", "bool", "set", "none"]


def test_an_unknown_answer_type_in_a_task_file_is_a_one_line_typed_error(tmp_path):
    path = tmp_path / "tasks.jsonl"
    good = {"id": "t1", "theme": "finance", "instruction": "What is the balance of account AC-1001?", "solution": [], "answer": 5.0, "answer_type": "number"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, id="t2", answer_type="numbr")) + "\n")
    with pytest.raises(TaskError) as err:
        load_tasks(path)
    message = str(err.value)
    assert "\n" not in message and "line 2" in message and "'numbr'" in message and "Did you mean 'number'" in message
    with pytest.raises(TaskError):
        Task(id="t", theme="finance", kind="graph", instruction="x", difficulty=1, solution=(), answer=1, answer_type="integer")


def test_a_task_file_without_a_type_gets_it_from_the_gold(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [{"id": f"t{i}", "theme": "finance", "instruction": "q", "solution": [], "answer": a} for i, a in enumerate([5.0, "2024-01-21", ["a", "b"], None])]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [t.answer_type for t in load_tasks(path)] == ["number", "date", "set", "none"]


# --------------------------------------------------------------------------------------------
# The reply of a write task

FAILURE_REPLIES = [
    "I could not make any of these changes.",
    "I'm sorry, but I wasn't able to update the booking: the system returned an error.",
    "Unfortunately the rules do not allow cancelling a closed order, so I left it as it is.",
    "The transfer failed because the source account is frozen.",
    "I tried to mark ticket TK-1003 as resolved, but the request was rejected.",
    "No changes were made.",
    "I updated the first two records, but could not change the third one.",
    "That isn't allowed: the account still has open cards.",
]
SUCCESS_REPLIES = [
    "Done! I've updated the status of sprint SP-1004 to active.",
    "All set — the booking has been cancelled.",
    "I have refunded the duplicate charge.",
    "The card is now blocked.",
    "Successfully transferred $10.00 from AC-1001 to AC-1002.",
    "done",
    "I changed the email address and there were no errors.",
    "Your order OR-1002 has been marked as shipped.",
]
NEUTRAL_REPLIES = ["4638", "", "The balance is $1,523.40.", "QU-1081"]


@pytest.mark.parametrize("reply", FAILURE_REPLIES)
def test_a_reply_that_says_the_request_failed(reply):
    assert reply_claim(reply) == "failure"


@pytest.mark.parametrize("reply", SUCCESS_REPLIES)
def test_a_reply_that_says_the_request_succeeded(reply):
    assert reply_claim(reply) == "success"


@pytest.mark.parametrize("reply", NEUTRAL_REPLIES)
def test_a_reply_that_claims_nothing(reply):
    assert reply_claim(reply) is None


def test_a_status_the_request_asks_for_is_no_failure():
    assert reply_claim("Payment PA-1002 has been marked as failed.", "Mark payment PA-1002 as failed.") == "success"
    assert reply_claim("Card CA-1003 is blocked now.", "Block card CA-1003.") == "success"
    assert reply_claim("The payment failed.", "Refund payment PA-1002.") == "failure"


def _write_task(**kw) -> Task:
    base = {"id": "w", "theme": "finance", "kind": "graph", "instruction": "Block card CA-1003 and tell me when it is done.", "difficulty": 1,
            "solution": ({"name": "set_card_status", "arguments": {"card_id": "CA-1003", "status": "blocked"}},),
            "state_tables": ("cards",), "state_hash": "h"}
    return Task(**{**base, **kw})


def test_verify_fails_a_reply_that_denies_a_change_that_was_made():
    task = _write_task()
    assert expected_outcome(task) == "success"
    assert verify(task, "Done, the card is blocked.", "h", True).passed
    assert verify(task, "done", "h", True).passed
    said_failed = verify(task, "I could not make any of these changes.", "h", True)
    assert not said_failed.passed and said_failed.checks == {"state": True, "reply": False}
    assert verify(task, "ok", "h", True).checks == {"state": True}  # no claim: nothing to check


def test_a_reply_too_long_to_read_fails_the_reply_check():
    """A write task's reply is read like an answer: over MAX_ANSWER_SIZE characters it is refused, not
    scanned (a 100,000-character reply would otherwise cost a step ~65 ms)."""
    task = _write_task()
    padded = "Done, the card is blocked. " + "x" * MAX_ANSWER_SIZE
    assert verify(task, padded, "h", True).checks == {"state": True, "reply": False}
    assert verify(task, padded[:MAX_ANSWER_SIZE], "h", True).passed


def test_markdown_is_read_in_linear_time_over_blank_lines():
    """A run of blank lines once made the list-marker pattern quadratic (300 ms for 5,000 newlines)."""
    assert answers_match(4638, "\n" * 5000 + "- **4638**", "number")
    assert answers_match(4638, "\n\n  1. 4638", "number")


def test_verify_fails_a_reply_that_claims_a_refused_change():
    task = _write_task(instruction="Close account AC-1001. If the rules do not allow that, tell me its owner instead.", state_tables=(), state_hash=None,
                       answer="CU-1003", answer_type="id", features={"refusal": "account has open cards"})
    assert expected_outcome(task) == "failure"
    assert verify(task, "The rules don't allow closing it; the owner is CU-1003.", None, True).passed
    assert verify(task, "CU-1003", None, True).passed
    assert not verify(task, "Done, I closed it. The owner is CU-1003.", None, True).passed


@pytest.mark.parametrize("shape", ["refusal", "allowed", "path"])
def test_the_gold_reply_of_every_rule_task_shape_passes(shape):
    """Rule tasks of a pool theme (business rules forged on its tools), played by the oracle: its reply
    ("done", or the looked-up fact) claims the outcome the task expects."""
    from agentworld_gym.envs import get_theme

    from agentworld_gym.env import AgentWorldEnv
    from agentworld_gym.policies import OraclePolicy, run_episode
    from agentworld_gym.synthesis.rules import synthesize_rule_task

    theme = get_theme("video-overlay-kit")
    env = AgentWorldEnv("video-overlay-kit")
    seen = 0
    for seed in range(40):
        try:  # levels 1-2: a refusal (even seeds) or its allowed twin (odd); level 3: a path task
            task = synthesize_rule_task(theme, 3 if shape == "path" else 1, seed, 0)
        except TaskError:
            continue
        if task.features["rule_task"] != shape:
            continue
        seen += 1
        result = run_episode(env, OraclePolicy(env), seed=0, options={"task": task})
        assert result["success"], (task.instruction, result["info"]["verification"])
        if seen == 2:
            break
    env.close()
    assert seen, f"no {shape} task in 40 seeds"


def test_an_imported_benchmark_task_keeps_its_own_grading():
    task = _write_task(kind="imported", features={"source_id": "7", "changes_state": True})
    assert expected_outcome(task) is None
    assert expected_outcome(_write_task(kind="imported", features={"source": "discovery"})) == "success"  # our own MCP discovery tasks
    assert verify(task, "I'm sorry, I can't cancel this reservation.", "h", True).passed


def test_a_conditional_request_leaves_the_reply_free_to_report_what_it_skipped():
    task = _write_task(instruction="Cancel each open order of customer CU-1002. Skip any order that cannot be changed, and tell me how many you changed.",
                       answer=3, answer_type="number")
    assert expected_outcome(task) is None
    assert verify(task, "I changed 3 orders; 1 could not be changed.", "h", True).checks["answer"] is False  # two numbers: no answer
    assert verify(task, "3", "h", True).passed


def test_the_examples_of_docs_grading_md_hold():
    """Each `answers_match(...)  # True|False` line of docs/grading.md gives what its comment says."""
    import re

    doc = (Path(__file__).resolve().parents[1] / "docs" / "grading.md").read_text(encoding="utf-8")
    lines = re.findall(r"^(answers_match\(.*\))\s+# (True|False)", doc, flags=re.M)
    assert len(lines) >= 6
    for call, said in lines:
        assert eval(call, {"answers_match": answers_match}) is (said == "True"), call
    error = re.search(r"^tasks\.jsonl, line 2: (.*)$", doc, flags=re.M).group(1)
    assert error.startswith("Expected answer_type in ('number', 'percent'") and "Did you mean 'number'?" in error


@pytest.mark.parametrize("junk", ["*" * 9999, "AB-12 " * 1600, "2024-01-02 " * 900, "1," * 4999, "a or " * 1999, "March 4, 2026 " * 700])
def test_a_huge_answer_is_no_answer(junk):
    """Answers up to MAX_ANSWER_SIZE characters are read (in linear time: benchmarks/bench_grader.py times
    the worst of these) and none of these passes."""
    for gold, kind in ((4638, "number"), ("AC-1001", "id"), ("2024-01-01", "date"), ("Calvin Lewis", "text"), (["A-10", "B-20"], "set")):
        assert not answers_match(gold, junk, kind, context="What is the x of AC-1002?")
