"""Cold-start SFT: oracle trajectories on synthesized tasks, in the model's chat format, loss on
assistant tokens only."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import check_choice
from ..tasks import Task
from . import common

log = logging.getLogger(__name__)


@dataclass
class SFTConfig:
    """Cold-start supervised fine-tuning on oracle trajectories."""

    model: str = "smollm2-135m"
    """alias, local HF dir, checkpoint dir from train_sft/train_grpo, or HF id (offline cache)"""
    out_dir: str = "runs/sft"
    """checkpoints (ckpt-<step>/), metrics.jsonl, metrics.png and final/ go here"""
    tasks: list[Task] | None = None
    """tasks to make trajectories from; None: synthesize from `themes`"""
    themes: list[str] | None = None
    """theme ids; None: every flagship minus the held-out suite's themes"""
    difficulties: tuple[int, ...] = (1, 2)
    """difficulty levels of the synthesized tasks"""
    task_kind: str = "graph"
    """kind of the synthesized tasks: graph, programmatic or mixed (the held-out suite's mix)"""
    requests: str | None = None
    """wording of the synthesized tasks: person (tasks v3), classic, or None: the process's (AGENTWORLD_REQUESTS)"""
    n_examples: int = 256
    """trajectories made (ignored when `tasks` is given: one per task)"""
    epochs: int = 1
    """passes over the examples"""
    batch_size: int = 8
    """examples per optimizer step"""
    micro_batch: int = 0
    """examples per forward/backward pass (0: the whole batch); the gradient is the same, memory is lower, and on
    CPU batch 1 skips the padding"""
    lr: float = 5e-5
    """AdamW learning rate"""
    weight_decay: float = 0.0
    """AdamW weight decay"""
    max_grad_norm: float = 1.0
    """gradient-norm clip"""
    lora: bool = False
    """train a LoRA adapter instead of every weight"""
    lora_r: int = 16
    """LoRA rank"""
    max_seq_len: int = 2048
    """longest example in tokens (longer dialogues are left out)"""
    max_turns: int = 8
    """turns per oracle episode"""
    recovery_share: float = 0.0
    """share of trajectories that first call a wrong tool name (masked out), get the env's error, then recover"""
    call_share: float = 0.0
    """share of examples that are one reply in the plain function-calling format (the tools as JSON docs, the reply
    a JSON call; half of them show another theme's tools, where the right reply is plain text without a call):
    the transfer remedy for the always-call habit and the tool-format drift (benchmarks/results/transfer)"""
    save_every: int = 50
    """optimizer steps between checkpoints"""
    resume: bool = True
    """continue from the newest checkpoint in out_dir"""
    seed: int = 0
    """seed of task synthesis, shuffling and initialisation"""
    device: str | None = None
    """torch device (None: cuda when available, else cpu)"""
    progress: bool = True
    """show a progress bar"""
    examples: list[Any] = field(default_factory=list, repr=False)
    """(advanced) pre-encoded examples (ids, mask); filled by train_sft when empty"""

    def __post_init__(self):
        """Every value checked before any work or write (the command line builds this first)."""
        from ..checks import check_values
        from ..synthesis import KINDS
        from ..synthesis.persona import check_requests

        check_values({f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, "sft")
        check_choice("task_kind", self.task_kind, KINDS)
        check_requests(self.requests)


def oracle_dialogue(task: Task, max_turns: int = 8, detour: dict | None = None) -> list[dict]:
    """The oracle's episode on `task` as the compact dialogue a model sees (ending on its submit call).

    With `detour`, the episode opens with that call instead (e.g. a tool that does not exist), shows the
    env's real error, then plays the gold solution: a demonstration of recovering from a mistake.
    """
    from ..env import AgentWorldEnv
    from ..policies.base import gold_actions
    from ..policies.llm import model_messages

    env = AgentWorldEnv(task.theme, tasks=[task], max_turns=max_turns + 1)
    _, info = env.reset(options={"task": task})
    for call in [*([detour] if detour else []), *gold_actions(task)]:
        _, _, terminated, truncated, info = env.step(json.dumps(call))
        if terminated or truncated:
            break
    env.close()
    msgs = model_messages(info["messages"], info["tools"])
    while msgs and msgs[-1]["role"] != "assistant":
        msgs.pop()  # the "Submitted: ..." observation is not trained on
    return msgs


NO_FIT_REPLY = "None of these functions can do that, so I cannot make a call for this request."


def single_call_dialogue(task: Task, other_theme: str | None = None) -> list[dict]:
    """The task's request in the plain function-calling format: the theme's tools as JSON docs and its first gold
    call as the reply; with `other_theme`, that theme's tools instead, none of which fits, and a plain-text reply."""
    from ..envs import get_theme
    from ..suites.bfcl import function_calling_system

    theme = get_theme(other_theme or task.theme)
    functions = [s["function"] for s in theme.toolset.schemas]
    reply = NO_FIT_REPLY if other_theme else json.dumps(task.solution[0])
    return [{"role": "system", "content": function_calling_system(functions)},
            {"role": "user", "content": task.instruction},
            {"role": "assistant", "content": reply}]


VERBS = ("get", "lookup", "show", "fetch", "find", "search", "list", "browse", "view", "read")


def wrong_tool_call(task: Task, tool_names: set[str], rng: np.random.Generator) -> dict | None:
    """The gold first call with its verb swapped for one the theme does not use (`lookup_facility`
    where the tool is `show_facility`): the mistake models make when they guess names from the task."""
    first = task.solution[0]
    verb, _, noun = first["name"].partition("_")
    if not noun:
        return None
    names = [f"{v}_{noun}" for v in VERBS if v != verb and f"{v}_{noun}" not in tool_names]
    return {"name": names[int(rng.integers(len(names)))], "arguments": first["arguments"]} if names else None


def make_examples(encoder, tasks: list[Task], max_seq_len: int, max_turns: int = 8, recovery_share: float = 0.0,
                  seed: int = 0, call_share: float = 0.0) -> list[tuple[list[int], list[int]]]:
    """(ids, mask) per task; a `recovery_share` of them open with a wrong tool name whose tokens are
    masked out of the loss, so the model learns the recovery, never the mistake; a `call_share` of them are
    single replies in the plain function-calling format instead (`single_call_dialogue`)."""
    from ..envs import get_theme

    rng = np.random.default_rng([seed, 3])
    themes = sorted({t.theme for t in tasks})
    out = []
    for task in tasks:
        if call_share and rng.random() < call_share:  # (no draw when off: old recipes keep their examples)
            others = [t for t in themes if t != task.theme]
            other = others[int(rng.integers(len(others)))] if others and rng.random() < 0.5 else None
            d = encoder.encode(single_call_dialogue(task, other))
            if len(d.ids) <= max_seq_len:
                out.append((d.ids, d.mask))
            continue
        detour = None
        if rng.random() < recovery_share:
            detour = wrong_tool_call(task, set(get_theme(task.theme).toolset.tools), rng)
        d = encoder.encode(oracle_dialogue(task, max_turns, detour))
        mask = list(d.mask)
        if detour is not None:  # the first assistant turn is the wrong call: not a target
            start = mask.index(1)
            end = start
            while end < len(mask) and mask[end] == 1:
                end += 1
            mask[start:end] = [0] * (end - start)
        if len(d.ids) <= max_seq_len:
            out.append((d.ids, mask))
    return out


def masked_lm_loss(model, batch: list[tuple[list[int], list[int]]], pad_id: int, reduction: str = "mean"):
    """Cross-entropy over assistant tokens of a right-padded batch (mean, or sum with reduction="sum")."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    device = next(model.parameters()).device
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    attn = torch.zeros((len(batch), width), dtype=torch.long)
    for i, (x, m) in enumerate(batch):
        ids[i, : len(x)] = torch.tensor(x)
        attn[i, : len(x)] = 1
        labels[i, : len(x)] = torch.where(torch.tensor(m, dtype=torch.bool), torch.tensor(x), torch.tensor(-100))
    logits = model(input_ids=ids.to(device), attention_mask=attn.to(device)).logits[:, :-1].float()
    targets = labels[:, 1:].to(device)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-100,
                                             reduction=reduction)


def accumulate_masked_lm_loss(model, batch: list[tuple[list[int], list[int]]], pad_id: int, micro_batch: int) -> float:
    """Backpropagate the batch's mean assistant-token loss in chunks of `micro_batch` examples; returns the loss.

    Each chunk's summed loss is divided by the whole batch's target count, so the accumulated gradient is
    the one a single pass over the batch would give (token-weighted, not chunk-averaged)."""
    def n_targets(examples):  # the loss predicts token t+1 from t: the first token is never a target
        return sum(sum(m[1:]) for _, m in examples)

    total_targets, size = n_targets(batch), micro_batch or len(batch)
    loss = 0.0
    for i in range(0, len(batch), size):
        chunk = batch[i:i + size]
        if n_targets(chunk) == 0:  # nothing to learn here (and a 0/0 mean would be NaN)
            continue
        part = masked_lm_loss(model, chunk, pad_id, reduction="sum") / total_targets
        part.backward()
        loss += part.item()
    return loss


@common.cleans_up_new_run_folder
def train_sft(cfg: SFTConfig) -> str:
    """Run (or resume) cold-start SFT; returns the final checkpoint dir (merged weights, from_pretrained-able)."""
    import torch
    from tqdm import tqdm

    from ..policies.llm import ChatEncoder

    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = common.device_of(cfg.device)
    resume_from = common.latest_checkpoint(out) if cfg.resume else None
    common.seed_everything(cfg.seed)
    model, tok = common.load_start_model(cfg.model, resume_from, cfg.lora, cfg.lora_r, device)
    model.train()
    encoder = ChatEncoder(tok)

    examples = cfg.examples
    if not examples:
        rng = np.random.default_rng([cfg.seed, 1])
        tasks = cfg.tasks if cfg.tasks is not None else common.SynthesizedTasks(
            cfg.themes, cfg.difficulties, cfg.task_kind, cfg.requests).sample_tasks(cfg.n_examples, rng)
        t0 = time.time()
        examples = make_examples(encoder, list(tasks), cfg.max_seq_len, cfg.max_turns, cfg.recovery_share, cfg.seed,
                                 cfg.call_share)
        log.info("%d SFT examples in %.1fs", len(examples), time.time() - t0)
    if not examples:
        from ..errors import ConfigError

        raise ConfigError(f"Expected SFT examples, got none (all longer than max_seq_len={cfg.max_seq_len}?).")

    steps_per_epoch = (len(examples) + cfg.batch_size - 1) // cfg.batch_size
    total = steps_per_epoch * cfg.epochs
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    step = 0
    if resume_from is not None:
        state = common.load_state(resume_from)
        opt.load_state_dict(state["optimizer"])
        common.set_rng_state(state["rng"])
        step = state["step"]
    metrics = common.MetricsLog(out / "metrics.jsonl", step)

    bar = tqdm(total=total, initial=step, desc="sft", disable=not cfg.progress)
    t_start = time.time()
    while step < total:
        epoch, k = divmod(step, steps_per_epoch)
        order = np.random.default_rng([cfg.seed, 2, epoch]).permutation(len(examples))  # same order after resume
        batch = [examples[i] for i in order[k * cfg.batch_size:(k + 1) * cfg.batch_size]]
        t0 = time.time()
        opt.zero_grad(set_to_none=True)
        loss = accumulate_masked_lm_loss(model, batch, tok.pad_token_id, cfg.micro_batch)
        grad_norm = torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        opt.step()
        step += 1
        n_tok = sum(len(x) for x, _ in batch)
        row = {"step": step, "epoch": epoch, "loss": loss, "grad_norm": float(grad_norm), "tokens": n_tok,
               "assistant_tokens": sum(sum(m) for _, m in batch), "tokens_per_s": n_tok / max(time.time() - t0, 1e-9)}
        metrics.write(row)
        bar.update(1)
        bar.set_postfix(loss=f"{row['loss']:.3f}")
        if step % cfg.save_every == 0 or step == total:
            common.save_checkpoint(out, step, model, tok, opt, {"kind": "sft"})
    bar.close()
    common.plot_metrics(out / "metrics.jsonl", out / "metrics.png", ["loss", "grad_norm", "tokens_per_s"])
    final = common.save_model(model, tok, out / "final", merge=True)
    log.info("SFT done: %d steps in %.1fs -> %s", step, time.time() - t_start, final)
    return str(final)
