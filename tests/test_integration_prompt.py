"""One prompt everywhere: the trainer (SFT targets, GRPO and bench rollouts), `agentworld play` and the TRL,
SkyRL and OpenEnv integrations open a task's dialogue with the same system message (instructions, business
rules, tool signatures, call format) and user request; TRL's rendering is token for token the trainer's.
(verifiers runs in its own venv: tests/test_integration_verifiers.py checks its rows the same way.)"""

from __future__ import annotations

import json

import pytest
from agentworld_gym.envs import get_theme

from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.integrations._common import as_task, draw_tasks
from agentworld_gym.policies.llm import ChatEncoder, model_messages
from agentworld_gym.prompt import PROMPT_FILE, PROMPT_VERSION, render_prompt, trained_prompt_version
from agentworld_gym.train.sft import oracle_dialogue

IDS = ("AgentWorld/finance-v0", "AgentWorld/retail-v0", "AgentWorld/starknet-mcp-server-v0")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [row for env_id in IDS for row in draw_tasks(env_id, 2, seed=3)]


def opening(row: dict, **env_kwargs) -> tuple[list[dict], list[dict]]:
    """The env's own opening messages and tool schemas for the row's task."""
    env = AgentWorldEnv(row["theme"], **env_kwargs)
    _, info = env.reset(options={"task": as_task(row["task"])})
    env.close()
    return info["messages"], info["tools"]


def test_the_prompt_holds_the_rules_every_tool_and_the_request(rows):
    for row in rows:
        theme = get_theme(row["theme"])
        messages, tools = opening(row)
        system, user = render_prompt(messages, tools)
        assert theme.spec.rules and all(rule in system["content"] for rule in theme.spec.rules)
        assert all(f"- {t['function']['name']}(" in system["content"] for t in tools)
        assert user == {"role": "user", "content": as_task(row["task"]).instruction}
        assert "Tools (JSON Schema)" not in system["content"]  # signatures, not the all-in-text schemas
        # the env's all-in-text system prompt renders to the same prompt
        assert render_prompt(opening(row, tools_in_prompt=True)[0], tools) == [system, user]


def test_trainer_bench_and_integrations_show_the_same_opening(rows):
    from agentworld_gym.integrations.openenv import AgentWorldAction, AgentWorldOpenEnv  # noqa: F401
    from agentworld_gym.integrations.skyrl import skyrl_dataset

    for row in rows:
        messages, tools = opening(row)
        want = render_prompt(messages, tools)
        assert row["prompt"] == want  # TRL's and verifiers' dataset rows come from draw_tasks
        assert model_messages(messages, tools) == want  # HFPolicy/OpenAIPolicy, bench and GRPO rollouts
        assert oracle_dialogue(as_task(row["task"]))[:2] == want  # the SFT trainer's targets
        env_id = f"AgentWorld/{row['theme']}-v0"
        assert skyrl_dataset(env_id, 2, seed=3)[[r["task"] for r in draw_tasks(env_id, 2, seed=3)].index(row["task"])]["prompt"] == want
        served = AgentWorldOpenEnv(env_id).reset(task=json.loads(row["task"]))  # an OpenEnv client's policy reads these
        assert model_messages(served.messages, served.tools) == want


def test_trl_renders_the_trainers_tokens(rows, tiny):
    """What GRPOTrainer tokenizes (the dataset prompt with the env's tool methods as `tools=`, prepared tokenizer)
    equals what the project's trainer and bench tokenize (ChatEncoder on model_messages): a checkpoint from
    either is evaluated on the prompt it was trained on."""
    pytest.importorskip("trl")
    from transformers import AutoTokenizer

    from agentworld_gym.integrations import trl as aw_trl
    from agentworld_gym.policies.llm import tool_chat_template

    tok = aw_trl.prepare_tokenizer(AutoTokenizer.from_pretrained(tiny))
    encoder = ChatEncoder(tok)
    for row in rows:
        env = aw_trl.environment_class(row["theme"])()
        tools = [m for a, m in vars(type(env)).items() if callable(m) and a not in ("__init__", "reset")]
        trl_ids = tok.apply_chat_template(row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False)
        messages, schemas = opening(row)
        assert trl_ids == encoder.start(model_messages(messages, schemas)).ids
        # a tokenizer left with the plain bundled template would show the tools twice (and differ)
        assert len(tok.apply_chat_template(row["prompt"], tools=tools, chat_template=tool_chat_template(),
                                           add_generation_prompt=True, tokenize=True, return_dict=False)) > len(trl_ids)


def test_saved_models_record_the_prompt_version(tmp_path, tiny):
    from agentworld_gym.policies.llm import load_model
    from agentworld_gym.train.common import save_model

    model, tok = load_model(tiny, "cpu")
    save_model(model, tok, tmp_path / "final")
    assert json.loads((tmp_path / "final" / PROMPT_FILE).read_text()) == {"prompt_version": PROMPT_VERSION}
    assert trained_prompt_version(tmp_path / "final") == PROMPT_VERSION
    (tmp_path / "final" / PROMPT_FILE).write_text(json.dumps({"prompt_version": 1}))
    with pytest.warns(UserWarning, match="trained on prompt version 1"):
        load_model(str(tmp_path / "final"), "cpu")
