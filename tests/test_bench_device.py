"""`agentworld bench --device`: where an hf: policy's model is placed, and the typed errors for a bad device."""

from __future__ import annotations

import pytest

from agentworld_gym.bench import check_device, load_policy
from agentworld_gym.cli import main
from agentworld_gym.errors import ConfigError


def test_hf_policy_is_loaded_on_the_requested_device(tiny):
    policy = load_policy(f"hf:{tiny}", device="cpu")
    assert policy.model.device.type == "cpu"
    assert load_policy("oracle", device="cpu") is None  # non-LLM policies are made per env, nothing to place


def test_bad_devices_are_refused_with_a_hint():
    with pytest.raises(ConfigError, match="Expected --device cpu, cuda or cuda:N, got 'gpu'"):
        check_device("gpu")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="Did you mean --device cpu"):
            check_device("cuda")
    with pytest.raises(ConfigError, match="visible GPUs|Did you mean --device cpu"):
        check_device("cuda:99")
    assert check_device(None) is None and check_device("cpu") == "cpu"


def test_bench_cli_takes_the_device_flag(tiny, capsys):
    assert main(["bench", "--suite", "heldout", "--policy", f"hf:{tiny}", "--episodes", "1", "--no-nulls", "--device", "cpu"]) == 0
    assert "heldout" in capsys.readouterr().out
