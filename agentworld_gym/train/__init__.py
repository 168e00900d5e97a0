"""The included trainer: cold-start SFT on oracle trajectories and multi-environment GRPO.

    from agentworld_gym.train import SFTConfig, GRPOConfig, train_sft, train_grpo
    sft_dir = train_sft(SFTConfig(model="smollm2-135m", out_dir="runs/sft", n_examples=256))
    final = train_grpo(GRPOConfig(model=sft_dir, out_dir="runs/grpo", steps=20))

torch / transformers / peft load only when a function runs. Both functions resume from the newest
checkpoint in `out_dir` (model or LoRA adapter, optimizer, RNG, step, sampler state).
"""

from __future__ import annotations

from .grpo import GRPOConfig, group_advantages, grpo_loss, train_grpo
from .sft import SFTConfig, oracle_dialogue, train_sft


def load_model(name: str, device: str | None = None):
    """(model, tokenizer) for an alias, a local dir or a checkpoint written by train_sft/train_grpo."""
    from ..policies.llm import load_model as _load

    return _load(name, device)


__all__ = ["GRPOConfig", "SFTConfig", "group_advantages", "grpo_loss", "load_model", "oracle_dialogue", "train_grpo", "train_sft"]
