"""Programmer misuse fails at gym.make time with a typed error and a hint; the CLI prints it as one line."""

import subprocess
import sys

import gymnasium as gym
import pytest

import agentworld_gym
from agentworld_gym.cli import main, one_line_error
from agentworld_gym.errors import AgentWorldError, ConfigError, MissingFileError, UnknownArgumentError
from agentworld_gym.policies.model_source import check_model_source

gym.register_envs(agentworld_gym)


@pytest.mark.filterwarnings("ignore:.*render_mode")  # gymnasium warns before our error
@pytest.mark.parametrize("env_id, kwargs, error, message", [
    ("finance", {"dificulty": 1}, UnknownArgumentError, "got 'dificulty'. Did you mean 'difficulty'?"),
    ("finance", {"max_turn": 3}, UnknownArgumentError, "Did you mean 'max_turns'?"),
    ("finance", {"tasks": "nope.jsonl"}, MissingFileError, "got 'nope.jsonl': no such file. Write one with `agentworld synth"),
    ("finance", {"task_kind": "grpah"}, ConfigError, "Expected task_kind in ('graph', 'programmatic', 'mixed', 'rules'), got 'grpah'. Did you mean 'graph'?"),
    ("finance", {"reward_mode": "parital"}, ConfigError, "Did you mean 'partial'?"),
    ("finance", {"render_mode": "humn"}, ConfigError, "Did you mean 'human'?"),
    ("finance", {"difficulty": 6}, ConfigError, "Expected difficulty in 1-5, got 6."),
    ("finance", {"difficulty": "2"}, ConfigError, "Expected difficulty to be an int, got '2' (str)."),
    ("finance", {"max_turns": 0}, ConfigError, "Expected max_turns >= 1"),
    ("finance", {"tasks": 5}, ConfigError, "Expected tasks to be a JSONL path or a list of tasks, got int."),
    ("finance", {"scale": -1.0}, ConfigError, "Expected scale to be a number > 0"),
    # the pool builds a theme's env only at some later reset: its arguments are checked up front
    ("pool", {"dificulty": 2}, UnknownArgumentError, "Did you mean 'difficulty'?"),
    ("pool", {"task_kind": "grpah"}, ConfigError, "Did you mean 'graph'?"),
    ("pool", {"theme": "finance"}, UnknownArgumentError, "Did you mean 'themes'?"),
    ("pool", {"tasks": "nope.jsonl"}, MissingFileError, "no such file"),
])
def test_bad_constructor_arguments_fail_at_make_time(env_id, kwargs, error, message):
    with pytest.raises(error) as caught:
        gym.make(f"AgentWorld/{env_id}-v0", **kwargs)
    assert message in str(caught.value)


def test_typed_errors_keep_the_builtin_types_callers_catch():
    with pytest.raises(TypeError):  # what Python raises for an unknown keyword
        gym.make("AgentWorld/finance-v0", dificulty=1)
    with pytest.raises(FileNotFoundError):
        gym.make("AgentWorld/finance-v0", tasks="nope.jsonl")


def test_good_arguments_still_make_an_env():
    env = gym.make("AgentWorld/finance-v0", difficulty=2, task_kind="mixed", max_turns=5, reward_mode="partial", db_seed=0, scale=1)
    _, info = env.reset(seed=0)
    inner = env.unwrapped
    assert (inner.difficulty, inner.task_kind, inner.max_turns, inner.reward_mode) == (2, "mixed", 5, "partial")
    assert info["task_id"] and 1 <= info["difficulty"] <= 2  # a task was made at the level asked (or the one below)
    env.close()


@pytest.mark.parametrize("name, error, message", [
    ("/nonexistent/model", MissingFileError, "got '/nonexistent/model': no such folder."),
    ("runs/sft/nothing-here", MissingFileError, "no such folder"),
    ("nope", ConfigError, "not a local folder, not in the Hugging Face cache, and the hub is offline (HF_HUB_OFFLINE=1)"),
    ("someone/not-a-cached-model", ConfigError, "the hub is offline (HF_HUB_OFFLINE=1)"),
])
def test_unloadable_models_fail_before_transformers(monkeypatch, name, error, message):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(error) as caught:
        check_model_source(name)
    assert message in str(caught.value) and "smollm2-135m" in str(caught.value)  # the hint


def test_an_unreachable_hub_is_detected_without_the_env_flag(monkeypatch):
    import socket

    from agentworld_gym.policies.model_source import offline_reason

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    with socket.socket() as s:  # a port nobody listens on: the connection is refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    assert offline_reason() == "no connection to 127.0.0.1 (ConnectionRefusedError)"
    with pytest.raises(ConfigError, match=r"the hub is offline \(no connection to 127.0.0.1"):
        check_model_source("someone/not-a-cached-model")
    with socket.socket() as server:  # and a listening one counts as reachable
        server.bind(("127.0.0.1", 0))
        server.listen()
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
        assert offline_reason() is None


def test_a_folder_without_a_checkpoint_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="Expected a model checkpoint folder"):
        check_model_source(str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    check_model_source(str(tmp_path))
    check_model_source("smollm2-135m")


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentworld_gym.cli", *args], capture_output=True, text=True, timeout=timeout,
                          env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})


def test_cli_errors_are_one_line_and_debug_shows_the_traceback():
    out = run_cli("train", "grpo", "--model", "nope", "--steps", "1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("agentworld: error: Expected a model available offline, got 'nope'")
    out = run_cli("bench", "--env", "AgentWorld/finance-v0", "--policy", "hf:/nonexistent", "--episodes", "1")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "no such folder" in out.stderr, out.stderr
    out = run_cli("--debug", "bench", "--env", "AgentWorld/finance-v0", "--policy", "hf:/nonexistent", "--episodes", "1")
    assert out.returncode != 0 and "Traceback (most recent call last)" in out.stderr and "MissingFileError" in out.stderr


def test_unexpected_errors_are_one_line_too(capsys):
    assert one_line_error(ValueError("first line\nsecond line")) == "ValueError: first line (run with --debug for the traceback)"
    assert one_line_error(ConfigError("Expected X, got Y.")) == "Expected X, got Y."
    assert one_line_error(FileNotFoundError(2, "No such file or directory", "nope.jsonl")) == "No such file or directory: nope.jsonl"
    assert issubclass(MissingFileError, AgentWorldError)
    assert main(["play", "finanse"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
