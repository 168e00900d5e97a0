"""The self-evolving arena: failure classification on hand-made trajectories, targeting, evolve rounds."""

from __future__ import annotations

import json

import pytest
from agentworld_gym.envs import get_theme
from hypothesis import given, settings
from hypothesis import strategies as st

from agentworld_gym.arena import diagnose as dg
from agentworld_gym.arena import target as tg
from agentworld_gym.arena.evolve import Evolution, EvolveConfig
from agentworld_gym.arena.learner import FixedLearner, TrainResult
from agentworld_gym.arena.records import load_records, make_record, save_records
from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.errors import ConfigError, TaskError
from agentworld_gym.synthesis import synthesize_task
from agentworld_gym.tasks import Task
from agentworld_gym.world import open_copy


def call(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def submit(answer) -> str:
    return call("submit", answer=answer)


def play_script(task: Task, actions: list[str], max_turns: int = 10) -> dict:
    """Play scripted actions in the real env; the episode record the arena would write."""
    env = AgentWorldEnv(task.theme, max_turns=max_turns)
    env.reset(seed=0, options={"task": task})
    total, turns, truncated = 0.0, 0, False
    for a in actions:
        _, reward, terminated, truncated, info = env.step(a)
        total += reward
        turns += 1
        if terminated or truncated:
            break
    else:
        raise AssertionError("the script did not end the episode")
    env.close()
    result = {"reward": total, "turns": turns, "success": bool(info["verification"]["passed"]), "truncated": truncated, "info": info}
    return make_record(result, task, policy="script")


def graph_task(difficulty: int, calls: int, seed0: int = 0) -> Task:
    theme = get_theme("finance")
    for seed in range(seed0, seed0 + 200):
        t = synthesize_task(theme, difficulty, seed)
        names = [s["name"] for s in t.solution]
        if len(t.solution) == calls and len(set(names)) == calls and t.answer_type in ("text", "number") and not t.state_hash:
            return t
    raise AssertionError("no suitable task")


def transfer_task() -> Task:
    """A hand-built write task: move 10.00 between two active USD accounts (gold state by replay)."""
    theme = get_theme("finance")
    conn = open_copy(theme.world(0).template)
    rows = conn.execute("SELECT account_id FROM accounts WHERE status='active' AND currency='USD' AND balance > 100 ORDER BY account_id LIMIT 2").fetchall()
    conn.close()
    gold = ({"name": "transfer_funds", "arguments": {"from_account_id": rows[0][0], "to_account_id": rows[1][0], "amount": 10.0}},)
    results, final = theme.replay(gold)
    assert results[0].ok
    return Task(id="hand-transfer", theme="finance", kind="graph", instruction=f"Move 10 from {rows[0][0]} to {rows[1][0]}.",
                difficulty=2, solution=gold, answer=None, answer_type="none",
                state_tables=tuple(t.name for t in theme.spec.tables), state_hash=final, features={"calls": 1, "writes": 1})


def gold_actions(task: Task) -> list[str]:
    return [json.dumps(s) for s in task.solution]


@pytest.fixture(scope="module")
def t1() -> Task:
    return graph_task(1, 1)


@pytest.fixture(scope="module")
def t2() -> Task:
    return graph_task(2, 2)


def cause(record: dict) -> str | None:
    return dg.classify(record)["cause"]


# ------------------------------------------------------------------ classification, one hand-made trajectory per class


def test_success_has_no_cause(t2):
    rec = play_script(t2, [*gold_actions(t2), submit(t2.answer)])
    assert rec["success"] and cause(rec) is None


def test_parse_error(t1):
    rec = play_script(t1, ['{"name": "get_account", "arguments": {', submit("x")])
    assert cause(rec) == "parse_error"


def test_unknown_tool(t1):
    rec = play_script(t1, [call("get_acount", account_id="AC-1001"), submit("x")])
    assert cause(rec) == "unknown_tool"


def test_bad_arguments(t1):
    name = t1.solution[0]["name"]
    rec = play_script(t1, [call(name, nonsense_argument=5), submit("x")])
    assert cause(rec) == "bad_arguments"


def test_ignored_tool_error(t1):
    rec = play_script(t1, [call("get_account", account_id="AC-0000"), submit("42")])
    c = dg.classify(rec)
    assert c["cause"] == "ignored_tool_error" and c["evidence"]["errors"] == {"tool_error": 1}


def test_premature_answer(t2):
    rec = play_script(t2, [gold_actions(t2)[0], submit("definitely wrong")])
    c = dg.classify(rec)
    assert c["cause"] == "premature_answer"
    assert c["evidence"]["missing_gold_tools"] == [t2.solution[1]["name"]]


def test_plain_text_answer_without_calls_is_premature(t1):
    rec = play_script(t1, ["I think the answer is 7."])
    assert cause(rec) == "premature_answer"


def test_wrong_tool_order(t2):
    rec = play_script(t2, [*reversed(gold_actions(t2)), submit("definitely wrong")])
    c = dg.classify(rec)
    assert c["cause"] == "wrong_tool_order" and "wrong_answer" in c["tags"]


def test_wrong_answer(t2):
    rec = play_script(t2, [*gold_actions(t2), submit("definitely wrong")])
    assert cause(rec) == "wrong_answer"


def test_state_mismatch():
    task = transfer_task()
    args = dict(task.solution[0]["arguments"], amount=20.0)
    rec = play_script(task, [call("transfer_funds", **args), submit("done")])
    assert cause(rec) == "state_mismatch"
    ok = play_script(task, [*gold_actions(task), submit("done")])
    assert ok["success"]


def test_truncated(t2):
    rec = play_script(t2, [gold_actions(t2)[0]] * 3, max_turns=3)
    assert rec["truncated"] and cause(rec) == "truncated"


def test_recovered_error_is_not_blamed(t2):
    rec = play_script(t2, ["{oops", call("nope"), *gold_actions(t2), submit("definitely wrong")])
    c = dg.classify(rec)
    assert c["cause"] == "wrong_answer" and "parse_error" not in c["tags"] and "unknown_tool" not in c["tags"]
    assert c["evidence"]["errors"] == {"parse_error": 1, "unknown_tool": 1}


def test_other_when_nothing_applies(t1):
    rec = play_script(t1, [*gold_actions(t1), submit(t1.answer)])
    rec = dict(rec, success=False, verification={"passed": False, "checks": {}})
    assert cause(rec) == "other"


# ------------------------------------------------------------------ aggregation


def test_diagnose_ranks_the_weak_cells_and_round_trips(tmp_path, t1, t2):
    good = [play_script(t1, [*gold_actions(t1), submit(t1.answer)]) for _ in range(3)]
    bad = [play_script(t2, [gold_actions(t2)[0], submit("x")]) for _ in range(3)]
    save_records(good + bad, tmp_path / "r.jsonl")
    report = dg.diagnose(load_records(tmp_path / "r.jsonl"))
    assert report["status"] == "ok" and report["n_episodes"] == 6 and report["n_success"] == 3
    assert report["failures"] == {"premature_answer": 3}
    assert report["weak"]["difficulty"][0]["key"] == "2"
    assert report["weak"]["tool"][0]["key"] in {s["name"] for s in t2.solution}
    md = dg.to_markdown(report)
    assert "premature_answer" in md and "## By tool" in md


def test_records_of_a_run_directory_skip_the_task_files_beside_them(tmp_path, t1, t2):
    from agentworld_gym.tasks import save_tasks

    (tmp_path / "round_0").mkdir()
    save_records([play_script(t1, [submit("x")])], tmp_path / "round_0" / "eval.jsonl")
    save_tasks([t1, t2], tmp_path / "round_0" / "train_tasks.jsonl")
    assert len(load_records(tmp_path)) == 1
    with pytest.raises(TaskError, match="episode-record fields"):  # named explicitly, a task file is still an error
        load_records(tmp_path / "round_0" / "train_tasks.jsonl")


def test_diagnose_reports_a_perfect_policy(t1):
    report = dg.diagnose([play_script(t1, [*gold_actions(t1), submit(t1.answer)])])
    assert report["status"] == "no_failures" and report["failures"] == {} and "no capability gap" in report["notes"]
    assert dg.diagnose([])["status"] == "no_episodes"


def test_diagnose_cli(tmp_path, t1, t2, capsys):
    from agentworld_gym.cli import main

    save_records([play_script(t2, [submit("x")]), play_script(t1, [*gold_actions(t1), submit(t1.answer)])], tmp_path / "r.jsonl")
    assert main(["diagnose", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "d")]) == 0
    assert "premature_answer" in capsys.readouterr().out
    assert json.loads((tmp_path / "d" / "diagnosis.json").read_text())["n_episodes"] == 2


# ------------------------------------------------------------------ targeting


def _rec(theme: str, difficulty: int, success: bool) -> dict:
    return {"theme": theme, "success": success, "task": {"theme": theme, "kind": "graph", "difficulty": difficulty}}


def test_retarget_moves_mass_to_the_weak_cells():
    w = tg.uniform_weights(["a", "b", "c"], difficulties=(1, 2))
    records = [_rec("a", 2, False)] * 8 + [_rec("a", 1, True)] * 8 + [_rec("b", d, True) for d in (1, 2)] * 8
    new = tg.retarget(w, records)
    weak = [("a", "graph", 2)]
    assert tg.mass_on(new, weak) > 2 * tg.mass_on(w, weak)
    assert new[("b", "graph", 1)] < w[("b", "graph", 1)]
    # theme c was not evaluated: it keeps (about) the weighted-average score, so it moves least
    assert abs(new[("c", "graph", 1)] - w[("c", "graph", 1)]) < abs(new[("a", "graph", 2)] - w[("a", "graph", 2)])
    assert sum(new.values()) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 2), st.booleans()), min_size=1, max_size=40))
def test_retarget_never_moves_mass_toward_stronger_cells(outcomes):
    themes = ["t0", "t1", "t2", "t3"]
    w = tg.uniform_weights(themes, difficulties=(1, 2))
    records = [_rec(themes[i], d, ok) for i, d, ok in outcomes]
    new = tg.retarget(w, records, floor=0.0)
    by_cell, by_theme = tg.cell_weakness(records)
    seen = {c: s for c in w if (s := by_cell.get(c, by_theme.get(c[0]))) is not None}
    # stochastic dominance: for every threshold, the cells weaker than it gain mass together
    for threshold in set(seen.values()):
        upper = [c for c, s in seen.items() if s >= threshold]
        assert tg.mass_on(new, upper) >= tg.mass_on(w, upper) - 1e-12
    # the weakest cell gains, the strongest loses (when they differ)
    hi, lo = max(seen.values()), min(seen.values())
    if hi > lo + 1e-9:
        assert all(new[c] > w[c] for c, s in seen.items() if s == hi)
        assert all(new[c] < w[c] for c, s in seen.items() if s == lo)
    # and the order of the weights follows the order of weakness
    for a in seen:
        for b in seen:
            if seen[a] > seen[b] + 1e-9:
                assert new[a] > new[b]


def test_targeting_shifts_a_task_sampler_pool_toward_the_weak_theme():
    import numpy as np
    from agentworld_gym.envs.pool import PoolEnv
    from agentworld_gym.wrappers import TaskSampler

    sampler = TaskSampler(PoolEnv(themes=["finance", "retail"]))
    w = tg.uniform_weights(["finance", "retail"], difficulties=(1,))
    records = [_rec("finance", 1, False)] * 6 + [_rec("retail", 1, True)] * 6

    def share_of_finance(n=2000):
        rng = np.random.default_rng(0)
        return sum(sampler.pool.draw_theme(rng) == "finance" for _ in range(n)) / n

    before = share_of_finance()
    set_to = tg.apply_to_sampler(sampler, tg.retarget(w, records))
    after = share_of_finance()
    assert set_to["finance"] > set_to["retail"] and after > before + 0.2


def test_diagnose_reads_recorded_trajectories(tmp_path, t1):
    from agentworld_gym.wrappers import RecordTrajectory

    env = RecordTrajectory(AgentWorldEnv("finance"), tmp_path / "traj.jsonl")
    env.reset(seed=0, options={"task": t1})
    env.step(call("get_acount"))
    env.step(submit("x"))
    env.close()
    report = dg.diagnose(load_records(tmp_path / "traj.jsonl"))
    assert report["n_episodes"] == 1 and report["failures"] == {"unknown_tool": 1}


def test_synthesized_training_tasks_follow_the_shifted_weights():
    w = {("finance", "graph", 1): 0.1, ("finance", "graph", 2): 0.9}
    out = tg.synthesize_targeted(w, 40, seed=3)
    levels = [t.difficulty for t in out.tasks]
    assert len(out.tasks) == 40 and levels.count(2) > 3 * levels.count(1)
    assert all(t.theme == "finance" for t in out.tasks) and not out.failed_cells


def test_focus_prefers_tasks_that_use_the_weak_tools():
    w = {("finance", "graph", 1): 1.0}
    plain = tg.synthesize_targeted(w, 30, seed=1, candidates=1)
    focus = {"tool": {"get_card": 0.9}, "feature": {}}
    aimed = tg.synthesize_targeted(w, 30, seed=1, candidates=6, focus=focus)
    uses = lambda ts: sum(any(s["name"] == "get_card" for s in t.solution) for t in ts)  # noqa: E731
    assert uses(aimed.tasks) > uses(plain.tasks)


# ------------------------------------------------------------------ evolve end to end


class CountingLearner(FixedLearner):
    """A fixed policy that records what the arena asked it to train on (no model needed)."""

    trainable = True

    def __init__(self, spec):
        super().__init__(spec)
        self.trained: list[int] = []

    def train(self, checkpoint, tasks, out_dir, seed):
        self.trained.append(len(tasks))
        return TrainResult(f"{out_dir}", {"final_loss": 1.0 / (len(self.trained) + 1)})


def _config(tmp_path, **kw) -> EvolveConfig:
    base = dict(out=str(tmp_path / "run"), rounds=2, policy="random", arena_themes=("finance",), eval_tasks_per_theme=6,
                train_tasks=8, difficulties=(1, 2), max_turns=3)
    return EvolveConfig(**{**base, **kw})


def test_evolve_rounds_write_reports_and_resume(tmp_path):
    learner = CountingLearner("random")
    history = Evolution(_config(tmp_path), learner).run()
    out = tmp_path / "run"
    assert [m["round"] for m in history] == [0, 1, 2] and learner.trained == [8, 8]
    for r in range(3):
        assert (out / f"round_{r}" / "diagnosis.md").read_text().startswith(f"# Round {r} diagnosis")
        assert json.loads((out / f"round_{r}" / "metrics.json").read_text())["n"] == 6
    targets = json.loads((out / "round_0" / "targets.json").read_text())
    assert targets["mass_on_weak_after"] >= targets["mass_on_weak_before"]
    train_ids = {json.loads(line)["id"] for r in range(2) for line in (out / f"round_{r}" / "train_tasks.jsonl").read_text().splitlines()}
    arena_ids = {json.loads(line)["task"]["id"] for r in range(3) for line in (out / f"round_{r}" / "eval.jsonl").read_text().splitlines()}
    assert not train_ids & arena_ids
    # resume: a finished run does nothing again; an extra round continues from the saved state
    Evolution(_config(tmp_path, rounds=3), learner).run()
    # round 3 may drop a training task that collides with an arena task (finance d1-2 has fewer tasks under tasks v2)
    assert learner.trained[:2] == [8, 8] and 6 <= learner.trained[2] <= 8 and (out / "round_3" / "eval.jsonl").exists()
    with pytest.raises(Exception, match="same settings"):
        Evolution(_config(tmp_path, train_tasks=9), learner)


class CrashOnSecondTrain(CountingLearner):
    def train(self, checkpoint, tasks, out_dir, seed):
        if self.trained:
            raise KeyboardInterrupt  # the run is stopped in round 1's training step
        return super().train(checkpoint, tasks, out_dir, seed)


def test_evolve_resumes_an_interrupted_run_at_the_unfinished_step(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        Evolution(_config(tmp_path), CrashOnSecondTrain("random")).run()
    out = tmp_path / "run"
    done = json.loads((out / "state.json").read_text())["done"]
    assert done == ["eval_0", "target_0", "train_0", "eval_1", "target_1"]
    first_eval = (out / "round_0" / "eval.jsonl").stat().st_mtime_ns
    learner = CountingLearner("random")
    history = Evolution(_config(tmp_path), learner).run()
    assert learner.trained == [8] and len(history) == 3  # only round 1's training was redone
    assert (out / "round_0" / "eval.jsonl").stat().st_mtime_ns == first_eval


def test_evolve_handles_a_perfect_policy(tmp_path):
    learner = CountingLearner("oracle")
    history = Evolution(_config(tmp_path, rounds=1, difficulties=(1,)), learner).run()
    assert history[0]["success_rate"] == 1.0
    targets = json.loads((tmp_path / "run" / "round_0" / "targets.json").read_text())
    assert targets["status"] == "no_failures" and "one difficulty level up" in targets["note"]
    assert set(targets["weights_after"]) == {"finance|graph|2"}


def test_evolve_with_a_non_learning_policy_reports_the_skip(tmp_path):
    Evolution(_config(tmp_path, rounds=1)).run()
    metrics = json.loads((tmp_path / "run" / "round_0" / "metrics.json").read_text())
    assert metrics["train"]["skipped"] == "policy 'random' does not learn"


class NothingToLearn(CountingLearner):
    """A learner whose trainer finds no signal (e.g. every GRPO group all-0 or all-1)."""

    def train(self, checkpoint, tasks, out_dir, seed):
        self.trained.append(len(tasks))
        return TrainResult(None, {"groups_with_signal": 0}, skipped="no learnable tasks: every GRPO group had equal rewards")


def test_evolve_reports_rounds_with_nothing_to_learn(tmp_path):
    history = Evolution(_config(tmp_path, rounds=2, init="start-ckpt"), NothingToLearn("random")).run()
    for r in (0, 1):
        train = json.loads((tmp_path / "run" / f"round_{r}" / "metrics.json").read_text())["train"]
        assert train["skipped"].startswith("no learnable tasks") and train["checkpoint"] == "start-ckpt"
    assert [m["checkpoint"] for m in history] == ["start-ckpt"] * 3  # the policy stays the one it had


def test_tiny_evolve_with_a_trained_model(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("agentworld_gym.train")
    cfg = _config(tmp_path, policy="tiny:1x64", eval_tasks_per_theme=2, train_tasks=4, max_turns=2, difficulties=(1,),
                  train_options={"epochs": 1, "batch_size": 4, "max_seq_len": 2048, "max_new_tokens": 12})
    history = Evolution(cfg).run()
    assert len(history) == 3 and all(0.0 <= m["success_rate"] <= 1.0 for m in history)
    trained = json.loads((tmp_path / "run" / "round_1" / "metrics.json").read_text())["train"]
    assert trained["skipped"] is None and trained["checkpoint"]


def test_arena_split_holds_out_whole_theme_families():
    from agentworld_gym.envs import entries

    from agentworld_gym.arena.evolve import split_arena, theme_family

    arena, train = split_arena(2, seed=0)
    categories = {e.category for e in entries() if e.id in arena}
    assert len(categories) == 20 and not set(arena) & set(train)
    assert not {theme_family(t) for t in train} & {theme_family(a) for a in arena}
    assert theme_family("coin-price-tracker-3") == "coin-price-tracker" and theme_family("finance") == "finance"


def test_untargeted_arm_ignores_the_diagnosis_and_sees_the_same_arena(tmp_path):
    """The ablation: same arena tasks (eval_seed fixed across training seeds and arms), same number of
    training tasks, uniform over the same cells instead of the diagnosis' weights."""
    runs = {}
    for arm, seed in (("targeted", 0), ("untargeted", 0), ("untargeted", 1)):
        learner = CountingLearner("random")
        history = Evolution(_config(tmp_path / f"{arm}{seed}", rounds=1, seed=seed, eval_seed=0, task_source=arm), learner).run()
        out = tmp_path / f"{arm}{seed}" / "run"
        runs[arm, seed] = (learner.trained, history, json.loads((out / "round_0" / "targets.json").read_text()),
                           [json.loads(line)["task"]["id"] for line in (out / "round_1" / "eval.jsonl").read_text().splitlines()])
    (t_trained, t_hist, t_targets, t_arena), (u_trained, _, u_targets, u_arena) = runs["targeted", 0], runs["untargeted", 0]
    assert t_arena == u_arena == runs["untargeted", 1][3] and len(t_arena) == 6
    assert t_trained == u_trained == [8]
    assert t_targets["task_source"] == "targeted" and t_targets["focus"]["tool"]  # aimed at the diagnosed weak tools
    assert u_targets["task_source"] == "untargeted" and u_targets["weights_after"] == u_targets["weights_before"]
    assert len(set(u_targets["weights_after"].values())) == 1 and u_targets["focus"] == {"tool": {}, "feature": {}}
    for m in t_hist:  # every round's success carries its interval
        lo, hi = m["ci95"]
        assert lo <= m["success_rate"] <= hi and m["successes"] == round(m["success_rate"] * m["n"])
    moved = t_hist[1]["weaknesses_moved"]
    before = json.loads((tmp_path / "targeted0" / "run" / "round_0" / "diagnosis.json").read_text())
    assert {(x["dim"], x["key"]) for x in moved} == {(d, r["key"]) for d in ("theme", "tool", "difficulty", "feature") for r in before["weak"][d]}
    for x in moved:
        assert x["delta"] is None if x["after_n"] == 0 else x["delta"] == round(x["after_success"] - x["before_success"], 4)


def test_evolve_settings_are_checked():
    with pytest.raises(ConfigError, match="task_source"):
        EvolveConfig(out="x", task_source="random")
    with pytest.raises(ConfigError, match="method"):
        EvolveConfig(out="x", method="ppo")
