import json
import subprocess
import sys

from agentworld_gym.cli import main


def test_list_json_has_the_contract_fields(capsys):
    assert main(["list", "--json", "--source", "flagship"]) == 0
    rows = json.loads(capsys.readouterr().out)
    finance = next(r for r in rows if r["theme"] == "finance")
    assert finance["id"] == "AgentWorld/finance-v0" and finance["n_tools"] >= 8
    assert {"id", "theme", "category", "subcategory", "n_tools", "source"} <= set(finance)


def test_bench_json_oracle_and_random(capsys):
    assert main(["bench", "--env", "AgentWorld/finance-v0", "--policy", "oracle", "--episodes", "5", "--json"]) == 0
    oracle = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert oracle["success_rate"] == 1.0 and oracle["episodes"] == 5 and oracle["mean_turns"] >= 2
    assert oracle["ci95"][0] > 0.4 and oracle["best_null"]["success"] < 1.0  # beside the best null on the same tasks
    assert main(["bench", "--env", "AgentWorld/finance-v0", "--policy", "random", "--episodes", "5", "--json"]) == 0
    rand = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rand["success_rate"] < oracle["success_rate"]
    assert {"env", "policy", "episodes", "success_rate", "mean_reward", "mean_turns"} <= set(rand)


def test_unknown_env_is_a_clear_error(capsys):
    assert main(["bench", "--env", "AgentWorld/finanse-v0", "--episodes", "1"]) == 2
    assert "Did you mean: `finance`" in capsys.readouterr().err


def test_play_in_a_real_terminal_session():
    script = 'get_account(account_id="AC-1001")\nsubmit(answer="no idea")\n'
    out = subprocess.run([sys.executable, "-m", "agentworld_gym.cli", "play", "finance", "--seed", "1"],
                         input=script, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert '"account_id": "AC-1001"' in out.stdout and "Episode over: reward 0.0" in out.stdout
