"""The release's own tasks, determinism inside the worker, and persistence across processes (real-layout fixture)."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from release_fixture import PUBLISHED_QUESTIONS, write_published_release, write_release

from agentworld_gym.actions import ToolCall
from agentworld_gym.cli import main as cli_main
from agentworld_gym.mcp.release import ReleaseBackend, find_environments, load_spec
from agentworld_gym.policies.base import OraclePolicy, run_episode
from agentworld_gym.suites.release import load_release_tasks, mask_volatile, questions_file
from agentworld_gym.tasks import verify

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed (.ci/run installs it)")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("release"), hostile=False)


@pytest.fixture(scope="module")
def crm(release):
    b = ReleaseBackend(release, "crm_logger")
    tasks, report = load_release_tasks(b, questions_file(release, "crm_logger"))
    yield b, {t.id.rsplit("-", 1)[1]: t for t in tasks}, report
    b.close()


def test_taxonomy_names_are_read(release):
    spec = load_spec(*find_environments(release.parent)["crm_logger"])  # the release's top folder works too
    assert spec["taxonomy"] == {"L1": "Business & Productivity", "L2": "CRM & Sales", "L3": "Contact Management"}


def test_questions_become_tasks_and_the_report_says_why_others_dropped(crm):
    _, tasks, report = crm
    assert sorted(tasks) == ["q1", "q2", "q3", "q4", "q5"]
    assert report.loaded == 5 and report.replayed == 5
    assert report.state_excluded == ["tool_call_logs.json"]
    assert "'delete_contact', which the environment does not have" in report.dropped["bad-tool"]
    assert "gold call 1 (get_contact) failed" in report.dropped["bad-call"]
    assert "no verified tool chain" in report.dropped["no-chain"]
    assert "do-nothing" in report.dropped["no-check"]
    assert tasks["q1"].solution == ({"name": "get_contact", "arguments": {"contact_id": "C-2"}},)
    assert (tasks["q1"].answer_type, tasks["q1"].answer) == ("facts", ["ada@analytical.example"])
    assert (tasks["q3"].answer_type, tasks["q3"].answer) == ("number", 2.0)
    # write tasks are graded on their end state; the record the reference echoes (random time and token) is not asked for
    assert tasks["q4"].answer_type == "none" and tasks["q4"].state_hash
    assert tasks["q2"].answer_type == "none" and tasks["q2"].state_hash
    assert (tasks["q5"].answer_type, tasks["q5"].answer) == ("number", 1)  # a write, and a count the user asked for
    assert all(t.features["state_excluded"] == ["tool_call_logs.json"] for t in tasks.values())


def test_masking_of_random_ids_and_times():
    text = "note 3f2b8c1e-9d4a-4e6b-8a7c-1b2c3d4e5f60 at 2025-06-01T10:22:33.123456Z token 9f8e7d6c5b4a3f2e ts 1767225600"
    assert mask_volatile(text) == "note <volatile> at <volatile> token <volatile> ts <volatile>"


def test_answers_checked_by_the_normaliser_and_do_nothing_fails(crm):
    _, tasks, _ = crm
    q1, q3 = tasks["q1"], tasks["q3"]
    def answer_ok(task, said):
        return verify(task, said, None).checks["answer"]

    assert answer_ok(q1, "Her address is ADA@analytical.example.") and not answer_ok(q1, "grace@navy.example")
    assert answer_ok(q3, "2") and not answer_ok(q3, "3")
    b = crm[0]
    for task in tasks.values():  # a do-nothing agent fails every task
        b.reset(task)
        assert not verify(task, "done", b.state_hash() if task.state_hash else None).passed


def test_frozen_clock_and_seeded_ids_make_state_deterministic(crm):
    b, tasks, _ = crm
    hashes, notes = [], []
    for extra_read in (False, True, False):
        b.reset(tasks["q2"])
        if extra_read:  # a call before the write changes neither the note's id nor its time
            b.call(ToolCall("count_notes", {"contact_id": "C-1"}))
        note = b.call(ToolCall("add_note", {"contact_id": "C-1", "text": "call back Monday"})).data
        notes.append(note)
        hashes.append(b.state_hash())
    assert notes[0] == notes[1] == notes[2] and notes[0]["created_at"] == "2026-01-01T00:00:00"
    assert len(set(hashes)) == 1 and hashes[0] == tasks["q2"].state_hash
    logs = b.state(include_excluded=True)["tool_call_logs.json"]["logs"]
    assert logs[0]["timestamp"] == "2026-01-01T00:00:00" and len(logs[0]["log_id"]) == 36
    b.reset(tasks["q2"])
    first = b.call(ToolCall("add_note", {"contact_id": "C-1", "text": "x"})).data["note_id"]
    second = b.call(ToolCall("add_note", {"contact_id": "C-1", "text": "x"})).data["note_id"]
    assert first != second  # the same call twice still gets two ids
    r = b.call(ToolCall("update_email", {"contact_id": "C-2", "email": "a@b.example"})).data  # utcnow and secrets too
    b.reset(tasks["q2"])
    b.call(ToolCall("add_note", {"contact_id": "C-1", "text": "x"}))
    b.call(ToolCall("add_note", {"contact_id": "C-1", "text": "x"}))
    assert b.call(ToolCall("update_email", {"contact_id": "C-2", "email": "a@b.example"})).data == r


def test_import_remembers_taxonomy_and_list_shows_it(release, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    assert cli_main(["import", "agentworld-release", str(release.parent), "--no-tasks"]) == 0
    index = json.loads((tmp_path / "data" / "release-index.json").read_text())["environments"]
    assert index["crm_logger"] == {"path": str(release.parent), "taxonomy": {"L1": "Business & Productivity", "L2": "CRM & Sales",
                                                                      "L3": "Contact Management"}, "n_tools": 5}
    capsys.readouterr()
    assert cli_main(["list", "--source", "release"]) == 0
    assert capsys.readouterr().out.split()[:3] == ["AgentWorld/release-crm_logger-v0", "5", "tools"]


def test_docs_release_example_runs_and_a_new_process_makes_the_env(tmp_path):
    """docs/release.md's commands as written: write the published-shape fixture, import, list, then gym.make in a fresh process."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "release.md").read_text()
    block = re.search(r"## Import.*?```bash\n(.*?)```", doc, flags=re.S).group(1)
    shims = tmp_path / "bin"  # `agentworld` and `python` as this interpreter (console-script shebangs may point elsewhere)
    shims.mkdir()
    (shims / "agentworld").write_text(f'#!/bin/sh\nexec {sys.executable} -m agentworld_gym.cli "$@"\n')
    (shims / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    for shim in shims.iterdir():
        shim.chmod(0o755)
    env = {**os.environ, "AGENTWORLD_DATA": str(tmp_path / "data"), "PATH": f"{shims}:{os.environ['PATH']}"}
    script = "set -e\n" + block.replace("/tmp/aw-release", str(tmp_path / "aw-release"))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "release-2040117-v0: 4 questions, 4 release tasks loaded, 4 replayed to 1.0, 0 dropped, 0 not deterministic" in out
    assert ("release-3115020-v0: 4 questions, 3 release tasks loaded, 2 replayed to 1.0, 1 dropped (3: the chain calls 'refund_payment', "
            "which the environment does not have), 1 not deterministic (2: the gold replay failed state") in out
    assert "release-5066731-v0: 2 questions, 2 release tasks loaded, 2 replayed to 1.0, 0 dropped, 0 not deterministic" in out
    assert "Business & Productivity / CRM & Sales / Contact Management  [release]" in out
    assert out.strip().splitlines()[-1].startswith("release-2040117-")  # the task id gym.make's env started


def test_gym_env_oracle_scores_and_original_untouched(release, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    original = {p.name: p.read_bytes() for p in (release / "crm_logger").iterdir()}
    from agentworld_gym.mcp.release import make_release_env

    env = make_release_env(str(release), "crm_logger", n_tasks=0)
    assert len(env.unwrapped.tasks) == 5
    for t in env.unwrapped.tasks:
        assert run_episode(env, OraclePolicy(env), options={"task": t})["reward"] == 1.0
    env.reset(options={"task": env.unwrapped.tasks[3]})
    _, reward, *_ = env.step('submit(answer="C-3 alan@manchester.example")')
    assert reward == 0.0  # the answer is right but the email was never changed
    env.close()
    assert {p.name: p.read_bytes() for p in (release / "crm_logger").iterdir()} == original


def test_synthesized_tasks_on_a_logging_env_without_questions(release, tmp_path, monkeypatch):
    """No questions file: call logs are found on the synthesized chains, and an extra read does not fail a task."""
    from agentworld_gym.mcp.release import make_release_env

    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    bare = tmp_path / "bare"
    shutil.copytree(release, bare)
    shutil.rmtree(bare / "questions")
    known_ids = {tool: {"contact_id": ["C-1", "C-2", "C-3"]} for tool in ("add_note", "update_email", "get_contact", "count_notes")}
    env = make_release_env(str(bare), "crm_logger", n_tasks=6, examples=known_ids)
    tasks = env.unwrapped.tasks
    assert tasks and all(t.features["source"] == "discovery" for t in tasks)
    assert all(t.features["state_excluded"] == ["tool_call_logs.json"] for t in tasks)
    writing = [t for t in tasks if t.state_hash]
    assert writing
    for t in tasks:
        assert run_episode(env, OraclePolicy(env), options={"task": t})["reward"] == 1.0
    for t in writing:  # a look-up first, then the gold: still 1.0 (the log entry it adds is not graded)
        env.reset(options={"task": t})
        env.step('{"name": "search_contacts", "arguments": {"city": "Nowhere"}}')
        for call in t.solution:
            env.step(json.dumps(call))
        answer = t.answer if t.answer_type != "none" else "done"
        *_, reward, _, _, _ = env.step(json.dumps({"name": "submit", "arguments": {"answer": answer}}))
        assert reward == 1.0
    clone = pickle.loads(pickle.dumps(env.unwrapped))  # the detected call logs travel with the env
    assert clone.backend.excluded == {"tool_call_logs.json"}
    clone.close()
    env.close()


def test_a_release_id_never_replaces_a_catalog_theme(tmp_path, monkeypatch):
    """The catalog has themes named release-tracker-1 …: a release environment `tracker-1` must not hide them."""
    import gymnasium as gym

    from agentworld_gym.mcp.release import register_release

    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    taken = next((k for k in gym.registry if k.startswith("AgentWorld/release-") and "mcp.release" not in str(gym.registry[k].entry_point)), None)
    if taken is None:
        pytest.skip("no catalog theme id starts with release- in this pool")
    clash = taken[len("AgentWorld/release-"):-len("-v0")]
    mix = write_release(tmp_path / "r", hostile=False)
    shutil.move(mix / "crm_logger", mix / clash)
    shutil.move(mix / "crm_logger_step4_checkpoint.json", mix / f"{clash}_step4_checkpoint.json")
    before = gym.registry[taken].entry_point
    report = register_release(mix)
    assert "already the id of another environment" in report["failed"][clash]
    assert gym.registry[taken].entry_point == before


# ------------------------------------------------------------------ the release as published (issue 35)
@pytest.fixture(scope="module")
def published(tmp_path_factory):
    return write_published_release(tmp_path_factory.mktemp("published"))


@pytest.fixture(scope="module")
def loaded(published):
    out = {}
    for env_id in ("2040117", "3115020", "5066731"):
        b = ReleaseBackend(published, env_id)
        try:
            out[env_id] = load_release_tasks(b, questions_file(published, env_id))
        finally:
            b.close()
    return out


def test_published_questions_load_with_their_request_verbatim_and_chain_as_gold(loaded):
    for env_id, (_, report) in loaded.items():
        doc = PUBLISHED_QUESTIONS[env_id][2]
        assert report.questions == len(doc)
    crm, report = loaded["2040117"]
    assert (report.loaded, report.replayed, report.dropped, report.not_replayed) == (4, 4, {}, {})
    for task, q in zip(crm, PUBLISHED_QUESTIONS["2040117"][2], strict=True):
        assert task.instruction == q["task"]  # verbatim
        assert task.solution == tuple({"name": s["tool"], "arguments": s["args"]} for s in q["grading_rubric"]["verified_tool_chain"])
    assert [(t.answer_type, t.answer, bool(t.state_hash)) for t in crm] == [
        ("facts", ["ada@analytical.example"], False),  # answer task: what the user did not already say, as the criterion names it
        ("none", None, True), ("none", None, True),  # write tasks: the end state, generated ids and times included
        ("number", 0.0, False)]  # {"contact_id": "C-1", "notes": 0}: the one number asked for
    shop, report = loaded["3115020"]
    assert report.loaded == 3 and report.replayed == 2 and len(shop) == 2
    assert "'refund_payment', which the environment does not have" in report.dropped["3"]
    assert "not deterministic" in report.not_replayed["2"] and "state" in report.not_replayed["2"]  # reads /dev/urandom itself
    library, report = loaded["5066731"]
    assert (report.loaded, report.replayed) == (2, 2)
    assert (library[0].answer_type, library[0].answer) == ("number", 2.0)
    assert library[1].state_hash and library[1].answer_type == "none"


def test_success_criteria_that_name_a_step_become_checks_and_the_others_are_listed(loaded):
    crm, _ = loaded["2040117"]
    criteria = crm[2].features["criteria"]
    assert [c["graded"] for c in criteria] == [True, True, False]
    assert criteria[0]["steps"] == {"1": {"tool": "update_email", "facts": ["C-3", "alan@manchester.example"], "keys": ["email", "updated_at"]}}
    assert criteria[1]["steps"]["2"]["facts"] == ["moved to Manchester", "C-3"]  # a quoted value counts as a fact
    assert criteria[2]["why"] == "it names no step of the chain"
    shop, report = loaded["3115020"]
    assert shop[0].features["criteria"][2]["steps"]["3"] == {"tool": "cancel_order", "facts": ["cancelled", "O-7"],
                                                             "keys": ["cancelled_at", "refund_id", "status"]}
    assert (report.criteria_graded, report.criteria_not_graded) == (5, 1)


def play(env, task, calls, answer):
    env.reset(options={"task": task})
    for name, arguments in calls:
        env.step(json.dumps({"name": name, "arguments": arguments}))
    *_, reward, _, _, info = env.step(json.dumps({"name": "submit", "arguments": {"answer": answer}}))
    return reward, info["verification"]


def test_the_env_grades_end_state_answer_and_criteria_on_the_agents_tool_results(published, tmp_path, monkeypatch):
    from agentworld_gym.mcp.release import make_release_env

    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    env = make_release_env(str(published), "3115020", n_tasks=0)
    cancel, cost = env.unwrapped.tasks
    for t in (cancel, cost):
        assert run_episode(env, OraclePolicy(env), options={"task": t})["reward"] == 1.0
        assert play(env, t, [], "done")[0] == 0.0  # do nothing
    lookup = [("find_customer", {"email": "lena.fischer@example.com"}), ("list_orders", {"customer_id": "CU-204"})]
    reward, v = play(env, cancel, [*lookup, ("cancel_order", {"order_id": "O-7"})], "Cancelled; your refund is on its way.")
    assert reward == 1.0 and v["criteria_not_graded"] == ["The assistant tells Lena that her refund is on its way."]
    reward, v = play(env, cancel, [("cancel_order", {"order_id": "O-7"})], "Cancelled.")  # right end state, steps 1-2 never looked up
    assert reward == 0.0 and v["checks"] == {"state": True, "criterion 1": False, "criterion 2": False, "criterion 3": True}
    reward, v = play(env, cancel, [*lookup, ("cancel_order", {"order_id": "O-9"})], "Cancelled.")  # someone else's order
    assert reward == 0.0 and not v["checks"]["state"]
    assert play(env, cost, lookup, "Your latest order, O-7, cost 39.90.")[0] == 1.0
    assert play(env, cost, lookup, "Your latest order, O-3, cost 12.50.")[0] == 0.0
    env.close()


def test_a_judge_policy_grades_the_criteria_no_check_covers(published, tmp_path, monkeypatch):
    """The judge is any policy (an LLM in real use); this stand-in says yes when the answer mentions the refund."""
    from agentworld_gym.mcp.release import make_release_env

    class RefundJudge:
        prompts: list = []

        def act(self, observation, info):
            self.prompts.append(info["messages"][-1]["content"])
            return "yes" if "refund" in observation.split("final answer:")[1].split("Criterion:")[0] else "no"

    monkeypatch.setenv("AGENTWORLD_DATA", str(tmp_path / "data"))
    judge = RefundJudge()
    env = make_release_env(str(published), "3115020", n_tasks=0, judge=judge)
    cancel = env.unwrapped.tasks[0]
    calls = [("find_customer", {"email": "lena.fischer@example.com"}), ("list_orders", {"customer_id": "CU-204"}),
             ("cancel_order", {"order_id": "O-7"})]
    reward, v = play(env, cancel, calls, "Done, the refund is on its way.")
    assert reward == 1.0 and v["checks"]["criterion 4 (judge)"] and v["criteria_not_graded"] == []
    assert "Criterion: The assistant tells Lena that her refund is on its way." in judge.prompts[-1]
    assert "cancel_order" in judge.prompts[-1]  # the judge sees the agent's tool results
    reward, v = play(env, cancel, calls, "Done.")
    assert reward == 0.0 and v["checks"]["criterion 4 (judge)"] is False
    env.close()


def test_the_benchmark_calls_a_release_whose_questions_do_not_load_unhealthy(tmp_path):
    """bench_release.py exits 1 and says UNHEALTHY when no question loads, however many synthesized tasks there are."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_release.py"
    mix = write_published_release(tmp_path / "ok")

    def bench(folder, out):
        return subprocess.run([sys.executable, str(script), str(folder), "--limit", "1", "--starts", "1", "--synthesized", "0",
                               "--out", str(tmp_path / out)], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "AGENTWORLD_DATA": str(tmp_path / f"data-{out}")})

    done = bench(mix, "ok")
    assert done.returncode == 0 and "**HEALTHY**" in done.stdout, done.stdout[-1500:] + done.stderr[-1500:]
    assert "| 2040117 | 4 | 4 | 4 | 0 | 0 |" in done.stdout
    questions = mix / "questions" / "2040117.json"  # the chain under a key no loader knows: nothing loads
    questions.write_text(questions.read_text().replace("verified_tool_chain", "chain_withheld"))
    done = bench(mix, "bad")
    assert done.returncode == 1 and "**UNHEALTHY**: 0 of 4 release questions loaded" in done.stdout, done.stdout[-1500:]


def test_criteria_wording_steps_ranges_ordinals_and_what_cannot_be_checked():
    from agentworld_gym.suites.release import compile_criteria, criterion_met

    chain = [{"name": "find", "arguments": {}}, {"name": "lend", "arguments": {}}, {"name": "notify", "arguments": {}}]
    outputs = [('{"isbn": "978-0441013593", "copies": 2}', {"isbn": "978-0441013593", "copies": 2}),
               ('{"loan_id": "L-0001", "due": "2026-01-22"}', {"loan_id": "L-0001", "due": "2026-01-22"}),
               ('{"sent": true}', {"sent": True})]
    c = compile_criteria(["Steps 1-2 return the isbn 978-0441013593 and loan L-0001.",
                          "The last step returns sent.",
                          "Step 7 returns a receipt.",
                          "Step 2 returns something useful.",
                          "The user is thanked."], chain, outputs)
    assert c[0]["steps"] == {"1": {"tool": "find", "facts": ["978-0441013593"], "keys": ["isbn"]},
                             "2": {"tool": "lend", "facts": ["L-0001"], "keys": []}}
    assert c[1]["steps"] == {"3": {"tool": "notify", "facts": [], "keys": ["sent"]}}
    assert [x.get("why") for x in c[2:]] == ["it names step 7, but the chain has 3",
                                             "it names no value or field that the step's result holds",
                                             "it names no step of the chain"]
    log = [{"name": "find", "ok": True, "text": outputs[0][0]}, {"name": "lend", "ok": True, "text": '{"loan_id": "L-00012"}'}]
    assert not criterion_met(c[0], log)  # L-00012 is not L-0001
    assert criterion_met(c[0], [*log, {"name": "lend", "ok": True, "text": outputs[1][0]}])
    assert not criterion_met(c[0], [log[0], {"name": "lend", "ok": False, "text": outputs[1][0]}])  # an error result does not count


def test_the_release_questions_are_a_suite_with_null_baselines(published):
    """`suites.release_suite`: the questions that replay are the items (the loader's own counts), the oracle solves
    every one through the release envs, and no null baseline solves any."""
    from agentworld_gym.suites import BUILDERS, evaluate

    suite = BUILDERS["release"](published)
    assert len(suite.items) == 8 and {env for env, _ in suite.items} == {"2040117", "3115020", "5066731"}
    assert suite.notes["environments"]["3115020"] == {"questions": 4, "loaded": 3, "replayed": 2, "dropped": 1, "not_replayed": 1}
    result = evaluate(suite, "oracle")
    assert result["overall"]["all"]["success_mean"] == 1.0 and result["n_items"] == 8
    assert result["overall"]["all"]["best_null"]["success"] == 0.0
    assert set(result["category"]) == {"2040117", "3115020", "5066731"}


def test_a_folder_without_questions_is_one_config_error(tmp_path):
    from agentworld_gym.errors import ConfigError
    from agentworld_gym.suites import release_suite

    (tmp_path / "environment_mix").mkdir()
    with pytest.raises(ConfigError, match="Expected release questions"):
        release_suite(tmp_path)
