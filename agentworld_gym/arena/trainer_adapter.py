"""The arena's adapter over the trainer (agentworld_gym.train) and the HF policy.

Model specs: ``tiny`` (a small randomly initialised Llama-style transformer with SmolLM2's tokenizer,
built from a config and trained from scratch by the same trainer -- for CPU-sized studies),
``tiny:<layers>x<width>`` (its size), ``smollm2-135m``, ``hf:<dir or id>`` or a local model dir.
Each round's training is SFT on the oracle trajectories of the targeted tasks (``method="sft"``) or
GRPO over them (``method="grpo"``); the checkpoint a round writes is where the next one starts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError
from ..tasks import Task
from .train_result import PolicyFactory, TrainResult

log = logging.getLogger(__name__)

TRAIN_KEYS_SFT = {"epochs", "batch_size", "lr", "weight_decay", "max_grad_norm", "lora", "lora_r", "max_seq_len", "save_every", "n_examples"}
TRAIN_KEYS_GRPO = {"steps", "group_size", "tasks_per_step", "clip_low", "clip_high", "kl_coef", "temperature", "lr", "max_grad_norm",
                   "lora", "lora_r", "updates_per_step", "micro_batch", "rollout_batch", "max_new_tokens", "max_context", "max_turns", "save_every"}


SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def small_tokenizer(themes: Sequence[str], vocab_size: int = 1024, per_theme: int = 12):
    """A byte-level BPE tokenizer with a small vocabulary, learnt from oracle dialogues of `themes`.

    Why: with SmolLM2's 49k vocabulary the output layer dominates a tiny model's cost (on a CPU an
    SFT step is ~20x slower than with 1k tokens). Bytes are the base alphabet, so any text still
    encodes -- themes outside `themes` just take more tokens.
    """
    from ..errors import require

    transformers = require("transformers", "llm")
    tk = require("tokenizers", "llm")
    from ..envs import get_theme
    from ..errors import TaskError
    from ..synthesis import synthesize_task
    from ..train.sft import oracle_dialogue

    corpus = []
    for theme in themes:
        for i in range(per_theme):
            try:
                task = synthesize_task(get_theme(theme), 1 + i % 2, 900_000 + i)
            except TaskError:
                continue
            corpus += [m["content"] for m in oracle_dialogue(task)]
    bpe = tk.Tokenizer(tk.models.BPE())
    bpe.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tk.decoders.ByteLevel()
    trainer = tk.trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIALS),
                                     initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(corpus, trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                                bos_token="<|im_start|>", additional_special_tokens=list(SPECIALS))


def tiny_model_dir(spec: str = "tiny", seed: int = 0, exclude_themes: Sequence[str] = ()) -> str:
    """A randomly initialised small causal LM saved as an HF dir (cached by size, seed and tokenizer themes).

    Its tokenizer is learnt (`small_tokenizer`) from the registered flagship themes minus
    `exclude_themes` (the arena: held-out text never shapes the vocabulary).
    """
    import hashlib

    from ..envs import theme_ids
    from ..errors import require
    from ..policies.llm import _cache_root

    size = spec.partition(":")[2] or "2x128"
    try:
        layers, width = (int(x) for x in size.split("x"))
    except ValueError:
        raise ConfigError(f"Expected a tiny model spec like 'tiny' or 'tiny:2x128' (layers x width), got {spec!r}.") from None
    themes = sorted(set(theme_ids(source="flagship")) - set(exclude_themes))
    if not themes:
        raise ConfigError("Expected flagship themes outside the arena to learn a tokenizer from, got none.")
    digest = hashlib.sha1("|".join(themes).encode()).hexdigest()[:8]
    target = _cache_root() / f"tiny-{layers}x{width}-seed{seed}-tok{digest}"
    if (target / "config.json").exists():
        return str(target)
    transformers = require("transformers", "llm")
    torch = require("torch", "llm")
    tok = small_tokenizer(themes)
    config = transformers.LlamaConfig(
        vocab_size=len(tok), hidden_size=width, intermediate_size=4 * width, num_hidden_layers=layers,
        num_attention_heads=max(width // 32, 1), num_key_value_heads=max(width // 32, 1), max_position_embeddings=2048,
        tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id)
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(config)
    tmp = target.with_name(target.name + f".part{__import__('os').getpid()}")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    if not target.exists():  # another process may have finished first
        tmp.rename(target)
    return str(target)


def base_model(spec: str, seed: int = 0, exclude_themes: Sequence[str] = ()) -> str:
    if spec == "tiny" or spec.startswith("tiny:"):
        return tiny_model_dir(spec, seed, exclude_themes)
    return spec[3:] if spec.startswith("hf:") else spec


class TrainerLearner:
    """SFT (or GRPO) rounds with the project's trainer; evaluation with the batched HF policy."""

    trainable = True

    def __init__(self, spec: str, *, seed: int = 0, device: str = "cpu", method: str = "sft", max_new_tokens: int = 64,
                 max_context: int = 1024, exclude_themes: Sequence[str] = (), **train_options):
        if method not in ("sft", "grpo"):
            raise ConfigError(f"Expected method 'sft' or 'grpo', got {method!r}.")
        allowed = TRAIN_KEYS_SFT if method == "sft" else TRAIN_KEYS_GRPO
        unknown = sorted(set(train_options) - allowed)
        if unknown:
            raise ConfigError(f"Expected {method} options among {sorted(allowed)}, got unknown {unknown}.")
        self.name, self.spec, self.seed, self.device, self.method = spec, spec, seed, device, method
        self.max_new_tokens, self.max_context = max_new_tokens, max_context
        self.options = train_options
        self.exclude_themes = tuple(exclude_themes)  # the arena: kept out of a tiny model's tokenizer
        self._loaded: tuple[str, object] | None = None

    def start(self, checkpoint: str | None) -> str:
        return checkpoint or base_model(self.spec, self.seed, self.exclude_themes)

    def policy_for(self, checkpoint: str | None) -> PolicyFactory:
        path = self.start(checkpoint)
        if self._loaded is None or self._loaded[0] != path:
            from ..policies.llm import HFPolicy

            self._loaded = (path, HFPolicy(path, max_new_tokens=self.max_new_tokens, device=self.device, max_context=self.max_context))
        policy = self._loaded[1]
        return lambda env: policy

    def train(self, checkpoint: str | None, tasks: Sequence[Task], out_dir: Path, seed: int) -> TrainResult:
        from ..train import GRPOConfig, SFTConfig, train_grpo, train_sft

        start = self.start(checkpoint)
        out_dir = Path(out_dir)
        if self.method == "sft":
            opts = {k: v for k, v in self.options.items() if k != "n_examples"}
            cfg = SFTConfig(model=start, out_dir=str(out_dir), tasks=list(tasks), seed=seed, device=self.device, progress=False, **opts)
            try:
                final = train_sft(cfg)
            except ConfigError as exc:  # e.g. every trajectory longer than max_seq_len
                return TrainResult(None, {"tasks": len(tasks)}, skipped=f"no learnable tasks: {exc}")
        else:
            cfg = GRPOConfig(model=start, out_dir=str(out_dir), tasks=list(tasks), seed=seed, device=self.device,
                             progress=False, max_new_tokens=self.max_new_tokens, **{k: v for k, v in self.options.items() if k != "max_new_tokens"})
            final = train_grpo(cfg)
        rows = [json.loads(line) for line in (out_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
        stats = {"method": self.method, "tasks": len(tasks), "steps": len(rows), "start": start}
        if rows:
            key = "loss" if self.method == "sft" else "reward"
            stats["final_" + key] = rows[-1].get(key)
            stats["first_" + key] = rows[0].get(key)
            stats["final_loss"] = rows[-1].get("loss")
        if self.method == "grpo":
            signal = sum(r.get("groups_with_signal", 0) for r in rows)
            stats["groups_with_signal"] = signal
            if rows and signal == 0:
                # every group was all-0 or all-1: the update had zero advantage, so the policy did not move
                return TrainResult(None, stats, skipped="no learnable tasks: every GRPO group had equal rewards (all-0 or all-1)")
        return TrainResult(final, stats)
