"""`agentworld bench --ray`: the held-out suite's episodes on Ray env worker actors give the serial run's results
for a fixed seed, with policies played in the workers and with a model policy generating in the driver."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from agentworld_gym.cli import main
from agentworld_gym.errors import ConfigError
from agentworld_gym.suites.core import _play_tasks, evaluate, heldout_suite

LOCAL = dict(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")


def one_error_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("agentworld: error: Expected")
    return err


def test_ray_with_a_suite_or_env_that_has_no_env_episodes_is_a_config_error(capsys):
    assert "--suite heldout or all with --ray" in one_error_line(capsys, ["bench", "--env", "finance", "--ray"])
    assert "--ray-workers" in one_error_line(capsys, ["bench", "--suite", "heldout", "--ray", "--ray-workers", "0"])
    from agentworld_gym.suites.core import run_suite

    with pytest.raises(ConfigError, match=r"--suite heldout or all with --ray.*got --suite bfcl"):
        run_suite("bfcl", "oracle", workers=object())


def test_an_unreachable_ray_address_is_one_config_error_line(capsys):
    pytest.importorskip("ray", reason="Ray: the `scale` extra is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert not __import__("ray").is_initialized()  # these run before the module's Ray starts: connect() is reached
    err = one_error_line(capsys, ["bench", "--suite", "heldout", "--episodes", "2", "--ray", f"127.0.0.1:{port}"])
    assert f"--ray='127.0.0.1:{port}'" in err and "ray start --head" in err and "fix --ray" in err


@pytest.fixture(scope="module")
def workers():
    """Two env workers on a local two-CPU Ray bound to 127.0.0.1. A subprocess first checks, within a time limit,
    that Ray starts on this machine at all (ray.init blocked for minutes in one CI clone): skip if it does not."""
    ray = pytest.importorskip("ray", reason="Ray: the `scale` extra is not installed (pip install 'agentworld-gym[scale]')")
    probe = f"import ray; ray.init(**{LOCAL!r}); assert ray.get(ray.remote(lambda: 1).remote(), timeout=60) == 1; ray.shutdown()"
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=150)
    except subprocess.TimeoutExpired:
        pytest.skip("a local Ray did not start within 150 s on this machine")
    if done.returncode:
        pytest.skip(f"a local Ray does not start on this machine: {done.stderr.strip().splitlines()[-1:]}")
    from agentworld_gym.train.ray_rollouts import EnvWorkers

    ray.init(**LOCAL)
    pool = EnvWorkers(2)
    yield pool
    pool.close()
    ray.shutdown()


def test_more_workers_than_free_cpus_is_a_config_error_not_a_hang(workers):
    from agentworld_gym.train.ray_rollouts import EnvWorkers

    with pytest.raises(ConfigError, match=r"Expected 1 free CPUs.*got 0.*--ray-workers 0 or fewer"):
        EnvWorkers(1)  # the two CPUs are held by the module's two workers


@pytest.mark.timeout(600)
def test_the_heldout_suite_on_ray_equals_the_serial_run(workers):
    """Oracle and random (a policy made per episode) and every null baseline (one shared, stateful policy per
    baseline) give the same per-item results on two Ray workers as in this process."""
    for policy in ("oracle", "random"):
        serial = evaluate(heldout_suite(8, seed=3), policy, seed=3)
        remote = evaluate(heldout_suite(8, seed=3, workers=workers), policy, seed=3)
        assert [x["id"] for x in remote["items"]] == [x["id"] for x in serial["items"]]
        assert remote["items"] == serial["items"]  # successes of the policy and of each null, per item
        assert remote["overall"] == serial["overall"]
        if policy == "oracle":  # the comparison has successes to lose
            assert sum(x["success"][0] for x in serial["items"]) >= 4
    tasks = heldout_suite(6, seed=1).items
    near, far = _play_tasks(tasks, "random", 1), _play_tasks(tasks, "random", 1, workers=workers)
    assert [(r["task_id"], r["reward"], r["turns"]) for r in far] == [(r["task_id"], r["reward"], r["turns"]) for r in near]


@pytest.mark.timeout(600)
def test_a_model_policy_generates_here_and_steps_envs_held_by_the_workers(workers, tiny):
    """A model policy's batched generation stays in this process; the envs it steps live in the workers. Greedy
    token trajectories equal the in-process ones."""
    from agentworld_gym.policies.llm import make_llm_policy

    policy = make_llm_policy(f"hf:{tiny}", max_new_tokens=8, device="cpu")
    tasks = heldout_suite(4, seed=0).items
    near = _play_tasks(tasks, f"hf:{tiny}", 0, policy, max_turns=2)
    far = _play_tasks(tasks, f"hf:{tiny}", 0, policy, max_turns=2, workers=workers)
    assert [r["ids"] for r in far] == [r["ids"] for r in near]
    assert [(r["reward"], r["turns"]) for r in far] == [(r["reward"], r["turns"]) for r in near]


@pytest.mark.timeout(600)
def test_arena_records_on_ray_equal_the_serial_ones(workers):
    """The arena's rounds (`arena.records.play`): each theme's episodes in one env with one policy, in order, on
    a worker; the records equal the serial run's, transcripts included."""
    from agentworld_gym.envs.registry import get_theme

    from agentworld_gym.arena.learner import FixedLearner
    from agentworld_gym.arena.records import play
    from agentworld_gym.synthesis import synthesize_task

    tasks = [synthesize_task(get_theme(theme), 1 + i % 2, i) for i in range(4) for theme in ("finance", "scholar")]
    for spec in ("oracle", "random"):
        policy_for = FixedLearner(spec, seed=5).policy_for(None)
        serial = play(tasks, policy_for, policy=spec, seed=7)
        remote = play(tasks, policy_for, policy=spec, seed=7, workers=workers)
        assert remote == serial
        assert [r["theme"] for r in remote] == [t.theme for t in tasks]
    assert sum(r["success"] for r in play(tasks, FixedLearner("oracle").policy_for(None), workers=workers)) >= 4


@pytest.mark.timeout(600)
def test_grpo_rollouts_with_env_workers_equal_the_in_process_ones(workers, tiny, tmp_path):
    """`GRPOConfig.ray_env_workers`: the trainer keeps the model and generates here; the group's envs live in the
    workers. Greedy trajectories, grouped in task order, equal those of envs in this process."""
    from agentworld_gym.envs.registry import get_theme

    from agentworld_gym.policies.llm import load_model
    from agentworld_gym.synthesis import synthesize_task
    from agentworld_gym.train import GRPOConfig
    from agentworld_gym.train.grpo import rollout

    tasks = [synthesize_task(get_theme("finance"), 1, seed) for seed in range(3)]
    cfg = GRPOConfig(model=tiny, out_dir=str(tmp_path), tasks=tasks, group_size=2, max_new_tokens=6, max_turns=2,
                     temperature=0.0, progress=False)
    model, tok = load_model(tiny, "cpu")
    near, far = rollout(model, tok, tasks, cfg), rollout(model, tok, tasks, cfg, workers)
    assert [t["group"] for t in far] == [0, 0, 1, 1, 2, 2]
    assert [t["ids"] for t in far] == [t["ids"] for t in near] and [t["reward"] for t in far] == [t["reward"] for t in near]
