"""TRL: GRPOTrainer through environment_factory for 2 steps (the example), the SFT dataset, and parity."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("trl", reason="TRL integration: the `trl` extra is not installed (pip install 'agentworld-gym[trl]')")

from integration_parity import direct_episode, example_lines, oracle_calls, parity_rows, run_example  # noqa: E402

from agentworld_gym.integrations import trl as aw_trl  # noqa: E402


def test_example_cold_starts_and_trains_a_grpo_step_with_a_tiny_model(tiny, tmp_path):
    out = run_example("trl_grpo.py", tiny, tmp_path, timeout=900, args=("1",), TRL_EXPERIMENTAL_SILENCE="1")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "steps 1 rewards" in out.stdout and "'train_loss'" in out.stdout  # the SFT step ran before GRPO's
    assert example_lines("trl_grpo.py") <= 15


def test_tool_methods_match_the_theme_schemas():
    from agentworld_gym.envs import get_theme
    from transformers.utils import get_json_schema

    env = aw_trl.environment_class("finance")()
    for schema in get_theme("finance").tool_schemas:
        fn = schema["function"]
        got = get_json_schema(getattr(env, fn["name"]))["function"]
        assert got["name"] == fn["name"]
        assert got["parameters"]["properties"].keys() == fn["parameters"]["properties"].keys()
        assert set(got["parameters"].get("required", [])) == set(fn["parameters"].get("required", []))


def test_sft_dataset_holds_oracle_messages_and_tools():
    ds = aw_trl.sft_dataset("AgentWorld/finance-v0", 3, seed=0)
    assert len(ds) == 3
    row = ds[0]
    assert row["messages"][-1]["role"] == "assistant" and row["messages"][-1]["tool_calls"][0]["function"]["name"] == "submit"
    assert isinstance(row["messages"][2]["tool_calls"][0]["function"]["arguments"], dict)  # an object, not JSON text
    assert {t["function"]["name"] for t in row["tools"]} >= {"get_account", "submit"}


@pytest.fixture(scope="module")
def tool_tokenizer(tiny):
    from transformers import AutoTokenizer

    return aw_trl.prepare_tokenizer(AutoTokenizer.from_pretrained(tiny))


def test_parity_oracle_through_trl_tool_loop(tool_tokenizer):
    """Each oracle call is rendered by the chat template, parsed back by TRL's parser and run the way
    GRPOTrainer's tool loop runs it; reward and messages equal env.step's on 20 seeded tasks."""
    from trl.chat_template_utils import parse_response

    tok = tool_tokenizer
    for row in parity_rows():
        want_reward, want_messages = direct_episode(row)
        env = aw_trl.environment_class(row["theme"])()
        env.reset(task=row["task"])
        tools = {f.__name__: f for f in (getattr(env, a) for a in dir(type(env)) if not a.startswith("_") and a != "reset")}
        prompt = list(row["prompt"])
        for call in oracle_calls(row):
            message = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": call}]}
            prefix = tok.apply_chat_template(prompt, tools=list(tools.values()), add_generation_prompt=True, tokenize=True, return_dict=False)
            full = tok.apply_chat_template([*prompt, message], tools=list(tools.values()), tokenize=True, return_dict=False)
            parsed = parse_response(tok, full[len(prefix):], prefix=prefix, tools=list(tools.values()))
            (tool_call,) = parsed["tool_calls"]
            result = tools[tool_call["function"]["name"]](**tool_call["function"]["arguments"])
            prompt += [message, {"role": "tool", "name": call["name"], "content": str(result)}]
        reward = aw_trl.agentworld_reward([[prompt[-2]]], [env])[0]
        assert reward == want_reward == 1.0
        assert _answers_as_text(env.episode.messages) == _answers_as_text(want_messages)


def _answers_as_text(messages: list[dict]) -> list[dict]:
    """Messages with each submitted answer as text: TRL's parser reads a digits-only text answer
    ("3008250402", a phone number) back as a number, which the env echoes unquoted; it grades both
    alike (the reward above)."""
    out = json.loads(json.dumps(messages, default=str))
    for m in out:
        if m.get("role") == "tool" and m.get("name") == "submit" and isinstance(m.get("content"), str):
            m["content"] = re.sub(r'^Submitted: "(\d+)"$', r"Submitted: \1", m["content"])  # the env's echo of it
        for call in m.get("tool_calls") or ():
            args = call["function"].get("arguments")
            if call["function"]["name"] == "submit" and isinstance(args, dict) and "answer" in args:
                args["answer"] = str(args["answer"])
    return out


def test_every_registered_theme_converts_to_trl_tools():
    """All themes (2,054 at the time of writing), including those whose argument names are Python keywords
    (`from`, `with`): each tool becomes a method whose schema has the tool's arguments under Python names that map
    back one to one. (Names starting with a digit or holding other characters: test_python_names_map_back.)"""
    import keyword

    from agentworld_gym.envs import get_theme
    from agentworld_gym.envs.registry import theme_ids
    from transformers.utils import get_json_schema

    renamed = 0
    ids = theme_ids()
    assert len(ids) > 2000
    for theme in ids:
        cls = aw_trl.environment_class(theme)
        for schema in get_theme(theme).tool_schemas:
            fn = schema["function"]
            method = next(m for a, m in vars(cls).items() if callable(m) and getattr(m, "__name__", "") == fn["name"] and a != "__init__")
            got = get_json_schema(method)["function"]["parameters"]["properties"]
            assert all(p.isidentifier() and not keyword.iskeyword(p) for p in got)
            assert sorted(method.tool_argument_names[p] for p in got) == sorted(fn["parameters"].get("properties", {}))
            renamed += sum(p != method.tool_argument_names[p] for p in got)
    assert renamed >= 10  # `from` and `with` in 11 tools of the pool of 2026-12-07


def test_python_names_map_back():
    """Every argument name becomes a distinct Python identifier that is not a keyword (the pool's own cases, and
    those it held before: a Toucan server's `12306_id`), and names that already are such identifiers stay."""
    import keyword

    params = ["from", "with", "12306_id", "page-size", "page_size", "", "class_", "limit"]
    names = aw_trl.python_names(params)
    assert names["from"] == "from_" and names["12306_id"] == "arg_12306_id" and names["limit"] == "limit"
    assert names["page_size"] == "page_size" and names["page-size"] != "page_size"  # no two arguments share a name
    assert len(set(names.values())) == len(params)
    assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names.values())


def test_a_renamed_argument_reaches_the_tool_under_its_own_name():
    """wayback-machine-server's get_snapshots takes `from` (and refuses unknown arguments): TRL calls the method
    with `from_`; the tool must see `from` and answer exactly as a direct call with `from` does."""
    from agentworld_gym.integrations._common import Episode, draw_tasks

    row = draw_tasks("AgentWorld/wayback-machine-server-v0", 1)[0]
    env = aw_trl.environment_class("wayback-machine-server")()
    env.reset(task=row["task"])
    got = env.get_snapshots(url="https://example.com", from_="20200101")
    direct = Episode("wayback-machine-server")
    direct.reset(row["task"])
    assert got == direct.call("get_snapshots", {"url": "https://example.com", "from": "20200101"})
    assert got != direct.call("get_snapshots", {"url": "https://example.com", "from_": "20200101"})  # the env refuses from_
    assert env.episode.messages[-2]["tool_calls"][0]["function"]["arguments"] == {"url": "https://example.com", "from": "20200101"}


def test_grpo_generates_nothing_after_the_episode_ends(tiny, tool_tokenizer):
    """The submit call's result carries EPISODE_OVER; AgentWorldGRPOTrainer's generation step gives that
    rollout no tokens (plain GRPOTrainer would generate another turn and train on it) and still generates
    for a rollout whose episode goes on."""
    from trl import GRPOConfig

    from agentworld_gym.policies.llm import load_model

    row = parity_rows()[0]
    env = aw_trl.environment_class(row["theme"])()
    env.reset(task=row["task"])
    calls = oracle_calls(row)
    mid = getattr(env, calls[0]["name"])(**calls[0]["arguments"])
    assert aw_trl.EPISODE_OVER not in mid
    for call in calls[1:]:
        last = getattr(env, call["name"])(**call["arguments"])
    assert env.episode.done and last.endswith(aw_trl.EPISODE_OVER)
    assert aw_trl.agentworld_reward([[{"role": "assistant", "content": ""}]], [env]) == [1.0]  # the reward stands

    model, _ = load_model(tiny, "cpu")
    args = GRPOConfig(output_dir="/tmp/unused", per_device_train_batch_size=2, num_generations=2, max_completion_length=8,
                      report_to="none", use_cpu=True)
    trainer = aw_trl.AgentWorldGRPOTrainer(model=model, processing_class=tool_tokenizer, args=args,
                                          **aw_trl.grpo_inputs("AgentWorld/finance-v0", n_tasks=2))
    prompt = list(row["prompt"])
    ids = [tool_tokenizer.apply_chat_template([*prompt, {"role": "tool", "content": text}], add_generation_prompt=True, tokenize=True,
                                              return_dict=False) for text in (last, mid)]
    got, _ = trainer._generate_single_turn(ids, None, {}, num_generations=1)
    assert got[0] == [] and len(got[1]) > 0
