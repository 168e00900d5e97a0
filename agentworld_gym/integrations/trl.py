"""TRL: train with `trl.GRPOTrainer` on any AgentWorld id or pool, and cold-start it with SFT on oracle episodes.

Supports TRL 1.16 (what `make test` installs): GRPO's `environment_factory` hook. Each rollout gets its own
AgentWorld episode; the theme's tools are methods of the environment object, so TRL runs the model's calls;
TRL masks the tool-result tokens out of the loss; the reward is the env's verifiable reward (a rollout that
ends with plain text submits that text as its answer). The model sees the one prompt (`agentworld_gym.prompt`),
exactly as `agentworld train` and `agentworld bench` show it.

    from trl import GRPOConfig
    from agentworld_gym.integrations.trl import AgentWorldGRPOTrainer, cold_start, grpo_inputs, prepare_tokenizer
    tok = prepare_tokenizer(tok)
    cold_start(model, tok, "AgentWorld/finance-v0", n_episodes=16, output_dir="runs/sft")  # the first calls
    trainer = AgentWorldGRPOTrainer(model=model, processing_class=tok, args=GRPOConfig(max_completion_length=384, ...),
                                    **grpo_inputs("AgentWorld/finance-v0", n_tasks=64))
    trainer.train()

`AgentWorldGRPOTrainer` is `GRPOTrainer` that stops a rollout when its episode ends (submit, max turns): plain
`GRPOTrainer` generates another turn after the submit call's result, and those tokens would be trained on.
The model's chat template must support tools; `prepare_tokenizer` gives SmolLM2 (and other ChatML models
without tool support) the bundled template, set not to list the tools a second time.
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
from trl import GRPOTrainer  # noqa: E402

# ends the result of the call that ended the episode: AgentWorldGRPOTrainer generates nothing after it
EPISODE_OVER = "[episode over]"
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
        result = self.episode.call(name, {tool_names.get(k, k): v for k, v in arguments.items()})
        return f"{result}\n{EPISODE_OVER}" if self.episode.done else result

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
    """Give a ChatML tokenizer (SmolLM2) the bundled tool-calling template, set not to render `tools=` (the one
    prompt lists them; TRL always passes them), and TRL's parser for its `<tool_call>{...}</tool_call>`
    replies; other tokenizers keep their template (TRL then adds the schemas in the model's own format)."""
    from ..policies.llm import tool_chat_template

    tokenizer.padding_side = "left"  # GRPOTrainer generates from left-padded prompts
    template = tokenizer.chat_template or ""
    if "<|im_start|>" in template and ("tools" not in template or template == tool_chat_template()):
        tokenizer.chat_template = tool_chat_template(tools_in_prompt=True)
    if tokenizer.chat_template == tool_chat_template(tools_in_prompt=True) and getattr(tokenizer, "response_template", None) is None:
        from trl.chat_template_utils import _SUPPORTS_RESPONSE_TEMPLATE, qwen3_schema, qwen3_template

        # the bundled template writes calls the way Qwen's do, so TRL's Qwen parser reads them
        if _SUPPORTS_RESPONSE_TEMPLATE:
            tokenizer.response_template = qwen3_template
        else:
            tokenizer.response_schema = qwen3_schema
    return tokenizer


class AgentWorldGRPOTrainer(GRPOTrainer):
    """`trl.GRPOTrainer` whose rollouts stop when their episode ends: after the result of the call that ended
    it (marked `EPISODE_OVER`), nothing more is generated, so no token after `submit` is trained on."""

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        over = [num_generations == 1 and _ended(self.processing_class, ids) for ids in prompt_ids]
        if not any(over):
            return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
        keep = [i for i, o in enumerate(over) if not o]
        ids, logprobs = [[] for _ in prompt_ids], [[] for _ in prompt_ids]  # an ended rollout generates nothing
        if keep:
            fields = {k: [v[i] for i in keep] if isinstance(v, list) else v for k, v in (multimodal_fields or {}).items()}
            got_ids, got_logprobs = super()._generate_single_turn(
                [prompt_ids[i] for i in keep], [images[i] for i in keep] if images else images, fields, num_generations, has_tool_images)
            for n, i in enumerate(keep):
                ids[i] = got_ids[n]
                logprobs[i] = got_logprobs[n] if got_logprobs is not None else []
            if got_logprobs is None:
                return ids, None
        return ids, logprobs


def _ended(tokenizer, ids: list[int]) -> bool:
    """True when the prompt ends on the tool result that ended its episode."""
    tail = getattr(tokenizer, "tokenizer", tokenizer).decode(ids[-24:])
    return EPISODE_OVER in tail


def sft_dataset(env_id: str, n_episodes: int, seed: int = 0, **make_kwargs):
    """Oracle episodes as a TRL SFT dataset: `messages` (the one prompt, then the episode's chat messages up to
    the submit call) and `tools` (the theme's tool schemas), for `SFTTrainer` with `assistant_only_loss=True`."""
    datasets = require("datasets", "trl")
    from ..policies.base import gold_actions
    from ._common import as_task

    rows = []
    for row in draw_tasks(env_id, n_episodes, seed, **make_kwargs):
        episode = Episode(row["theme"])
        info = episode.reset(row["task"])
        for call in gold_actions(as_task(row["task"])):
            episode.call(call["name"], call["arguments"])
        messages = [*row["prompt"], *episode.messages[2:]]
        while messages and messages[-1]["role"] != "assistant":
            messages.pop()  # the "Submitted: ..." observation is not a target
        rows.append({"messages": messages, "tools": info["tools"]})
        episode.close()
    features = datasets.Features({"messages": datasets.List(datasets.Json()), "tools": datasets.List(datasets.Json())})
    return datasets.Dataset.from_list(rows, features=features)


def cold_start(model, tokenizer, env_id: str, n_episodes: int = 16, seed: int = 10_000, epochs: int = 3,
               learning_rate: float = 5e-5, output_dir: str = "runs/trl_sft", **make_kwargs):
    """Cold-start SFT: train `model` in place on `n_episodes` oracle episodes (`sft_dataset`, drawn from seeds
    `seed`, ... so they stay apart from GRPO's tasks) with TRL's `SFTTrainer`, the loss on the assistant's turns
    only. An untrained small model makes no tool call, so GRPO would start with reward 0 for every rollout and
    no gradient; after this, its first rollouts call tools. Returns the trainer's log history."""
    from trl import SFTConfig, SFTTrainer

    args = SFTConfig(output_dir=output_dir, num_train_epochs=epochs, per_device_train_batch_size=2, learning_rate=learning_rate,
                     assistant_only_loss=True, max_length=2048, report_to="none", use_cpu=True, save_strategy="no",
                     logging_steps=1, disable_tqdm=True)
    trainer = SFTTrainer(model=model, processing_class=tokenizer, args=args,
                         train_dataset=sft_dataset(env_id, n_episodes, seed, **make_kwargs))
    trainer.train()
    return trainer.state.log_history


__all__ = ["EPISODE_OVER", "AgentWorldGRPOTrainer", "agentworld_reward", "cold_start", "environment_class", "grpo_dataset", "grpo_inputs",
           "prepare_tokenizer", "python_names", "sft_dataset", "tool_method"]
