"""LLM policies: chat encoding and masks, batched episodes, bad model output, the HTTP endpoint policy."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentworld_gym.envs import get_theme  # noqa: E402

from agentworld_gym.env import AgentWorldEnv  # noqa: E402
from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.policies import make_policy  # noqa: E402
from agentworld_gym.policies.llm import (  # noqa: E402
    ChatEncoder,
    EndpointError,
    HFPolicy,
    OpenAIPolicy,
    generate_batch,
    load_model,
    make_llm_policy,
    model_messages,
    shared_prefix_len,
)
from agentworld_gym.policies.slots import run_episodes_batched  # noqa: E402
from agentworld_gym.synthesis import synthesize_task  # noqa: E402


@pytest.fixture(scope="module")
def tasks():
    theme = get_theme("finance")
    return [synthesize_task(theme, 1 + i % 2, i) for i in range(4)]


def test_compact_prompt_lists_tools_and_arguments_only():
    from agentworld_gym.prompt import system_message

    theme = get_theme("finance")
    prompt = system_message(theme.instructions, theme.tool_schemas)
    for schema in theme.tool_schemas:
        fn = schema["function"]
        assert f"- {fn['name']}(" in prompt
        for arg in fn["parameters"]["properties"]:
            assert arg in prompt
    assert theme.tool_schemas[0]["function"]["description"] not in prompt
    assert len(prompt) < len(theme.system_prompt) / 2


def test_encoder_masks_exactly_the_assistant_turns(tiny):
    _, tok = load_model(tiny, "cpu")
    enc = ChatEncoder(tok)
    replies = ['{"name": "get_account", "arguments": {}}', '{"name": "submit", "arguments": {"answer": "42"}}']
    msgs = [{"role": "system", "content": "tools"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": replies[0]}, {"role": "tool", "content": "balance 42"},
            {"role": "assistant", "content": replies[1]}]
    d = enc.encode(msgs)
    assert len(d.ids) == len(d.mask)
    trained = tok.decode([i for i, m in zip(d.ids, d.mask, strict=True) if m])
    assert trained == replies[0] + "<|im_end|>" + replies[1] + "<|im_end|>"
    # the ids are the chat template's rendering of the dialogue (up to the final newline)
    assert tok.decode(d.ids) == enc.render(msgs, False).rstrip("\n")
    untrained = tok.decode([i for i, m in zip(d.ids, d.mask, strict=True) if not m])
    assert "balance 42" in untrained and "task" in untrained


def test_model_messages_keep_the_agent_actions_verbatim(tasks):
    env = AgentWorldEnv("finance", tasks=[tasks[0]])
    _, info = env.reset(options={"task": tasks[0]})
    call = tasks[0].solution[0]
    _, _, _, _, info = env.step(json.dumps(call))
    msgs = model_messages(info["messages"], info["tools"])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool"]
    assert json.loads(msgs[2]["content"]) == {"name": call["name"], "arguments": call["arguments"]}


def test_batched_episodes_each_with_their_own_env(tiny, tasks):
    policy = HFPolicy(tiny, max_new_tokens=6, temperature=1.0, device="cpu")
    envs = [AgentWorldEnv("finance", tasks=[t], max_turns=3) for t in tasks]
    results = run_episodes_batched(envs, policy, options=[{"task": t} for t in tasks])
    assert [r["task_id"] for r in results] == [t.id for t in tasks]
    for r in results:
        assert r["reward"] in (0.0, 1.0) and 1 <= r["turns"] <= 3
        assert len(r["ids"]) == len(r["mask"]) and 0 < sum(r["mask"]) <= r["turns"] * 6 + r["turns"]
        assert r["gen_tokens"] <= r["turns"] * 6  # max_new_tokens bounds every reply


def test_shared_prefix_batch_generates_what_each_prompt_generates_alone(tiny, tasks):
    policy = HFPolicy(tiny, max_new_tokens=8, temperature=0.0, device="cpu")
    env = AgentWorldEnv("finance")
    prompts = []
    for t in tasks:
        _, info = env.reset(options={"task": t})
        prompts.append(policy.encoder.encode(model_messages(info["messages"], info["tools"])).ids)
    assert shared_prefix_len(prompts) >= 16  # the system prompt: encoded once, copied to every row
    batched = generate_batch(policy.model, policy.encoder, prompts, 8)
    alone = [generate_batch(policy.model, policy.encoder, [p], 8)[0] for p in prompts]
    assert batched == alone and all(batched)


def test_shared_prefix_len_leaves_every_prompt_a_token():
    assert shared_prefix_len([[1, 2, 3], [1, 2, 4]]) == 2
    assert shared_prefix_len([[1, 2], [1, 2, 3]]) == 1
    assert shared_prefix_len([[5, 2], [1, 2]]) == 0


def test_hf_policy_act_is_bounded_and_the_env_copes(tiny, tasks):
    policy = make_llm_policy("hf:" + tiny, max_new_tokens=5, device="cpu")
    env = AgentWorldEnv("finance", tasks=[tasks[0]], max_turns=2)
    obs, info = env.reset()
    action = policy.act(obs, info)
    assert isinstance(action, str) and len(policy.encoder.tok.encode(action, add_special_tokens=False)) <= 6
    env.step(action)  # whatever a random model writes is an observation or a response, never an exception


@pytest.mark.parametrize("bad", ["", "x" * 50_000, "I think the answer is somewhere", '{"name": "get_account", "argu'])
def test_bad_model_output_is_handled_by_the_env(tasks, bad):
    env = AgentWorldEnv("finance", tasks=[tasks[0]], max_turns=3)
    env.reset()
    obs, reward, terminated, truncated, info = env.step(bad)
    assert reward == 0.0
    last = info["messages"][-1]
    assert terminated or (last["role"] == "tool" and last["content"].startswith("Error"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_endpoint_raises_a_typed_error_with_the_url():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    policy = OpenAIPolicy("m", url, timeout=3)
    t0 = time.time()
    with pytest.raises(EndpointError, match="127.0.0.1"):
        policy.complete([{"role": "user", "content": "hi"}])
    assert time.time() - t0 < 10


def test_openai_policy_talks_to_a_real_http_server(tasks):
    seen = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen["path"] = self.path
            seen["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
                {"type": "function", "function": {"name": "submit", "arguments": json.dumps({"answer": "x"})}}]}}]}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        policy = make_policy(f"openai:tiny-model@http://127.0.0.1:{server.server_port}/v1")
        env = AgentWorldEnv("finance", tasks=[tasks[0]])
        obs, info = env.reset()
        _, _, terminated, _, info = env.step(policy.act(obs, info))
    finally:
        server.shutdown()
    assert seen["path"] == "/v1/chat/completions" and seen["body"]["model"] == "tiny-model"
    assert seen["body"]["messages"][0]["role"] == "system" and "submit(" in seen["body"]["messages"][0]["content"]
    assert terminated and json.loads(info["verification"]["submitted_answer"]) == "x"


def test_bad_specs_are_config_errors():
    with pytest.raises(ConfigError):
        make_llm_policy("openai:@http://x")
    with pytest.raises(ConfigError):
        make_llm_policy("llama")


def test_local_model_options_pass_an_openai_endpoint_by():
    """`bench`/`make_policy` hand every LLM spec the same options; an endpoint takes the temperature and keeps its
    own max_tokens, since device, dtype and max_new_tokens place and bound a model loaded here."""
    from agentworld_gym.suites.core import load_policy

    for policy in (make_policy("openai:m@http://x/v1", device="cuda", dtype="bfloat16"),
                   load_policy("openai:m@http://x/v1", temperature=0.5, max_new_tokens=5, device="cuda:7")):
        assert isinstance(policy, OpenAIPolicy) and policy.model == "m" and policy.base_url == "http://x/v1"
        assert policy.max_tokens == 256
    assert policy.temperature == 0.5
