"""`agentworld bench --device` and `--dtype`: where an hf: policy's model is placed and in which type, and the typed
errors for a bad device or type."""

from __future__ import annotations

import json

import pytest

from agentworld_gym.cli import main
from agentworld_gym.errors import ConfigError
from agentworld_gym.policies.llm import load_model
from agentworld_gym.suites.core import check_device, load_policy


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


def test_dtype_sets_the_weights_and_is_recorded(tiny, capsys):
    torch = pytest.importorskip("torch")
    policy = load_policy(f"hf:{tiny}", device="cpu", dtype="bfloat16")
    assert {p.dtype for p in policy.model.parameters()} == {torch.bfloat16}
    assert next(load_policy(f"hf:{tiny}", device="cpu").model.parameters()).dtype == torch.float32  # the default
    assert main(["bench", "--suite", "heldout", "--policy", f"hf:{tiny}", "--episodes", "2", "--no-nulls", "--device", "cpu",
                 "--dtype", "bfloat16", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["dtype"] == "bfloat16" and result["n_items"] == 2


def test_bad_dtype_is_refused_with_a_hint(tiny):
    with pytest.raises(ConfigError, match="Expected a dtype in .*bfloat16.*got 'int8'"):
        load_model(tiny, "cpu", dtype="int8")
    with pytest.raises(SystemExit):  # argparse: --dtype takes only the known types
        main(["bench", "--suite", "heldout", "--policy", f"hf:{tiny}", "--dtype", "int8"])
