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
from release_fixture import write_release

from agentworld_gym.actions import ToolCall
from agentworld_gym.cli import main as cli_main
from agentworld_gym.mcp.release import ReleaseBackend, find_environments, load_spec
from agentworld_gym.mcp.release_tasks import load_release_tasks, mask_volatile, questions_file
from agentworld_gym.policies.base import OraclePolicy, run_episode
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


def test_readme_release_example_runs_and_a_new_process_makes_the_env(tmp_path):
    """The README's commands as written: import, list, then gym.make in a fresh process."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = re.search(r"### The official Agent-World release.*?```bash\n(.*?)```", readme, flags=re.S).group(1)
    shims = tmp_path / "bin"  # `agentworld` and `python` as this interpreter (console-script shebangs may point elsewhere)
    shims.mkdir()
    (shims / "agentworld").write_text(f'#!/bin/sh\nexec {sys.executable} -m agentworld_gym.cli "$@"\n')
    (shims / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    for shim in shims.iterdir():
        shim.chmod(0o755)
    env = {**os.environ, "AGENTWORLD_DATA": str(tmp_path / "data"), "PATH": f"{shims}:{os.environ['PATH']}"}
    script = "set -e\n" + block.replace("/tmp/aw-release", str(tmp_path / "aw-release"))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=240,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "release-crm_logger-v0: 5 release tasks loaded, 5 replayed to 1.0, 4 dropped" in out
    assert "Business & Productivity / CRM & Sales / Contact Management  [release]" in out
    assert out.strip().splitlines()[-1].startswith("release-crm_logger-")  # the task id gym.make's env started


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
