"""TRL: train with `trl.GRPOTrainer` on any AgentWorld id or pool, and build SFT datasets from oracle episodes.

Supports TRL 1.16 (what `make test` installs): GRPO's `environment_factory` hook. Each rollout gets its own
AgentWorld episode; the theme's tools are methods of the environment object, so TRL renders them with the
chat template's `tools=` and runs the model's calls; TRL masks the tool-result tokens out of the loss; the
reward is the env's verifiable reward (a rollout that ends with plain text submits that text as its answer).

    from trl import GRPOConfig, GRPOTrainer
    from agentworld_gym.integrations.trl import grpo_inputs
    trainer = GRPOTrainer(model=model, processing_class=tok, args=GRPOConfig(...),
                          **grpo_inputs("AgentWorld/finance-v0", n_tasks=64))
    trainer.train()

The model's chat template must support tools; for SmolLM2 `agentworld_gym.policies.llm.tool_chat_template()`
is one (set it with `tok.chat_template = tool_chat_template()`), and `prepare_tokenizer` does both steps.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from typing import Any

from ..errors import require
from ._common import Episode, draw_tasks

require("trl", "trl")

# JSON Schema type -> the Python hint transformers' get_json_schema turns back into that type
_PY_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list, "object": dict}


def _hint(schema: dict) -> Any:
    types = schema.get("type", "string")
    hints = [_PY_TYPES.get(t, str) for t in (types if isinstance(types, list) else [types]) if t != "null"] or [str]
    hint = hints[0]
    for h in hints[1:]:
        hint = hint | h
    return hint


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def python_names(params) -> dict[str, str]:
    """Argument name -> a name usable as a Python parameter: `from` -> `from_`, `12306_id` -> `arg_12306_id`,
    `page-size` -> `page_size` (TRL builds each tool's schema from a Python signature; the call maps back)."""
    out: dict[str, str] = {}
    for name in params:
        py = re.sub(r"\W", "_", name) or "arg"
        py = f"arg_{py}" if py[0].isdigit() else py
        py = f"{py}_" if keyword.iskeyword(py) else py
        while py in out.values() or (py != name and py in params):
            py += "_"
        out[name] = py
    return out


def tool_method(schema: dict):
    """A method standing for one tool: named, typed and documented from its JSON schema (so TRL and the chat
    template see the same tool), running the call in the rollout's episode. Argument names that are not
    Python identifiers are renamed (`python_names`) and mapped back to the tool's own names on each call."""
    fn = schema.get("function", schema)
    name, params = fn["name"], fn.get("parameters", {})
    required = set(params.get("required", ()))
    props = params.get("properties", {})
    py_names = python_names(props)
    tool_names = {py: arg for arg, py in py_names.items()}

    def method(self, **arguments):
        return self.episode.call(name, {tool_names.get(k, k): v for k, v in arguments.items()})

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    # required parameters first: a Python signature cannot put a default before a non-default
    for pname in sorted(props, key=lambda p: p not in required):
        parameters.append(inspect.Parameter(py_names[pname], inspect.Parameter.KEYWORD_ONLY, annotation=_hint(props[pname]),
                                            default=inspect.Parameter.empty if pname in required else None))
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)
    method.__annotations__ = {p.name: p.annotation for p in parameters[1:]} | {"return": str}
    method.__name__ = method.__qualname__ = name
    method.tool_argument_names = tool_names  # the Python name -> the tool's argument name
    args_doc = []
    for pname, p in props.items():
        desc = _one_line(p.get("description") or pname)
        if p.get("enum"):
            desc += f" (choices: {json.dumps(p['enum'])})"
        args_doc.append(f"    {py_names[pname]}: {desc}")
    method.__doc__ = _one_line(fn.get("description") or name) + ("\n\nArgs:\n" + "\n".join(args_doc) if args_doc else "") \
        + "\n\nReturns:\n    The tool's result as JSON text, or an error message."
    return method


def environment_class(theme: str, **env_kwargs) -> type:
    """A TRL environment class for one theme: `reset(task=..., **row)`, one method per tool (and `submit`)."""
    from ..envs import get_theme

    schemas = get_theme(theme).tool_schemas

    def __init__(self):
        self.episode = Episode(theme, **env_kwargs)

    def reset(self, task: str, **row) -> None:
        """Start the episode of the dataset row's task (the prompt already holds its instruction)."""
        self.episode.reset(task)
        return None

    members = {"__init__": __init__, "reset": reset, "__doc__": f"AgentWorld theme {theme!r} as a TRL environment."}
    attrs = python_names(["reset", *(s["function"]["name"] for s in schemas)])  # a tool named reset gets reset_
    for schema in schemas:
        members[attrs[schema["function"]["name"]]] = tool_method(schema)
    return type(f"AgentWorldTRL_{theme.replace('-', '_')}", (), members)


def agentworld_reward(completions, environments, **kwargs) -> list[float]:
    """GRPO reward function: each rollout's verifiable reward. A rollout still running (the model answered
    in plain text, without calling submit) is ended with that text as its answer, as `env.step` would."""
    rewards = []
    for completion, env in zip(completions, environments, strict=True):
        last = completion[-1] if isinstance(completion, list) and completion else {"content": completion}
        text = last.get("content") if last.get("role", "assistant") == "assistant" and not last.get("tool_calls") else ""
        rewards.append(env.episode.finish(text if isinstance(text, str) else ""))
    return rewards


def grpo_dataset(env_id: str, n_tasks: int, seed: int = 0, **make_kwargs):
    """A `datasets.Dataset` of `n_tasks` tasks: `prompt` (system + user messages), `task` (JSON), `environment`."""
    datasets = require("datasets", "trl")
    rows = draw_tasks(env_id, n_tasks, seed, **make_kwargs)
    features = datasets.Features({"prompt": datasets.List(datasets.Json()), "task": datasets.Value("string"),
                                  "environment": datasets.Value("string")})
    return datasets.Dataset.from_list([{"prompt": r["prompt"], "task": r["task"], "environment": r["theme"]} for r in rows],
                                      features=features)


def grpo_inputs(env_id: str, n_tasks: int = 64, seed: int = 0, max_turns: int = 20, **make_kwargs) -> dict:
    """Keyword arguments for `GRPOTrainer`: `train_dataset`, `environment_factory` (one per theme drawn, so a
    pool mixes themes, each showing only its own tools) and `reward_funcs`."""
    dataset = grpo_dataset(env_id, n_tasks, seed, **make_kwargs)
    factories = {theme: environment_class(theme, max_turns=max_turns) for theme in sorted(set(dataset["environment"]))}
    return {"train_dataset": dataset, "environment_factory": factories, "reward_funcs": [agentworld_reward]}


def prepare_tokenizer(tokenizer):
    """Give a ChatML tokenizer without tool support the bundled tool-calling template and TRL's parser for its
    `<tool_call>{...}</tool_call>` replies; other tokenizers are returned as they are."""
    from ..policies.llm import tool_chat_template

    tokenizer.padding_side = "left"  # GRPOTrainer generates from left-padded prompts
    template = tokenizer.chat_template or ""
    if "tools" not in template and "<|im_start|>" in template:
        tokenizer.chat_template = tool_chat_template()
    if tokenizer.chat_template == tool_chat_template() and getattr(tokenizer, "response_template", None) is None:
        from trl.chat_template_utils import _SUPPORTS_RESPONSE_TEMPLATE, qwen3_schema, qwen3_template

        # the bundled template writes calls the way Qwen's do, so TRL's Qwen parser reads them
        if _SUPPORTS_RESPONSE_TEMPLATE:
            tokenizer.response_template = qwen3_template
        else:
            tokenizer.response_schema = qwen3_schema
    return tokenizer


def sft_dataset(env_id: str, n_episodes: int, seed: int = 0, **make_kwargs):
    """Oracle episodes as a TRL SFT dataset: `messages` (the env's chat messages, up to the submit call) and
    `tools` (the theme's tool schemas), for `SFTTrainer` with `assistant_only_loss=True`."""
    datasets = require("datasets", "trl")
    from ..policies.base import gold_actions
    from ._common import as_task

    rows = []
    for row in draw_tasks(env_id, n_episodes, seed, **make_kwargs):
        episode = Episode(row["theme"])
        info = episode.reset(row["task"])
        for call in gold_actions(as_task(row["task"])):
            episode.call(call["name"], call["arguments"])
        messages = list(episode.messages)
        while messages and messages[-1]["role"] != "assistant":
            messages.pop()  # the "Submitted: ..." observation is not a target
        rows.append({"messages": messages, "tools": info["tools"]})
        episode.close()
    features = datasets.Features({"messages": datasets.List(datasets.Json()), "tools": datasets.List(datasets.Json())})
    return datasets.Dataset.from_list(rows, features=features)


__all__ = ["agentworld_reward", "environment_class", "grpo_dataset", "grpo_inputs", "prepare_tokenizer", "python_names", "sft_dataset",
           "tool_method"]
