"""Multi-environment GRPO.

Each step samples `tasks_per_step` tasks across themes, plays `group_size` rollouts of each (every
rollout in its own env instance, all generated in batches), normalises the binary terminal rewards
within each task's group, and takes one token-level clipped policy-gradient step (separate low/high
clip, optional KL to a frozen reference, tool-observation tokens masked out, gradient clipping).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, check_choice
from ..tasks import Task
from . import common

log = logging.getLogger(__name__)


@dataclass
class GRPOConfig:
    """Multi-environment GRPO (defaults follow the paper: G=8, 32 tasks/step, clip 0.2/0.28, temperature 1)."""

    model: str = "smollm2-135m"
    """start: alias, local HF dir or a checkpoint dir (e.g. train_sft's output); also the KL reference"""
    out_dir: str = "runs/grpo"
    """checkpoints (ckpt-<step>/), metrics.jsonl, metrics.png and final/ go here"""
    tasks: list[Task] | None = None
    """a fixed pool to sample tasks from"""
    sampler: Any = None
    """or any object with sample_tasks(n, rng) -> list[Task] (state_dict/load_state_dict are checkpointed,
    report(task, success) gets every rollout outcome), or a TaskSampler-wrapped env"""
    themes: list[str] | None = None
    """when neither tasks nor sampler: synthesize from these themes (None: flagships minus held-out)"""
    difficulties: tuple[int, ...] = (1, 2)
    """difficulty levels of the synthesized tasks"""
    task_kind: str = "graph"
    """kind of the synthesized tasks: graph, programmatic or mixed (the held-out suite's mix)"""
    requests: str | None = None
    """wording of the synthesized tasks: person (tasks v3), classic, or None: the process's (AGENTWORLD_REQUESTS)"""
    steps: int = 10
    """GRPO steps (rollout batch + update)"""
    group_size: int = 8
    """episodes per task (G) whose rewards are compared"""
    tasks_per_step: int = 32
    """tasks per step"""
    signal_groups: int = 0
    """>0: dynamic sampling. Play `tasks_per_step` tasks at a time (at most `max_sample_rounds` times) until this many
    groups have unequal rewards and train on those alone; a group whose rewards are all equal has zero advantage and
    would only cost an update's compute. Short of signal after the last round, flat groups fill the batch, so every
    step trains on signal_groups x group_size episodes. 0: train on the `tasks_per_step` groups as sampled"""
    max_sample_rounds: int = 3
    """rounds of `tasks_per_step` tasks dynamic sampling may play in one step"""
    clip_low: float = 0.2
    """lower clip of the probability ratio: 1 - clip_low"""
    clip_high: float = 0.28
    """upper clip of the probability ratio: 1 + clip_high"""
    kl_coef: float = 0.01
    """weight of the k3 KL estimate to the frozen start model; 0 turns the reference off"""
    temperature: float = 1.0
    """sampling temperature of rollouts"""
    lr: float = 1e-5
    """AdamW learning rate"""
    max_grad_norm: float = 1.0
    """gradient-norm clip"""
    lora: bool = False
    """train a LoRA adapter instead of every weight"""
    lora_r: int = 16
    """LoRA rank"""
    updates_per_step: int = 1
    """optimizer steps per rollout batch (minibatches); >1 makes the clip active"""
    micro_batch: int = 8
    """trajectories per forward/backward (gradient accumulation)"""
    rollout_batch: int = 64
    """episodes decoded together (slots of the continuous-batching engine; a slot whose episode ends takes the next)"""
    max_turns: int = 4
    """turns per rollout episode"""
    max_new_tokens: int = 64
    """tokens generated per turn"""
    max_context: int = 1024
    """an episode whose dialogue grows past this many tokens is cut short"""
    save_every: int = 5
    """steps between checkpoints"""
    resume: bool = True
    """continue from the newest checkpoint in out_dir"""
    seed: int = 0
    """seed of task sampling, rollouts and initialisation"""
    device: str | None = None
    """torch device (None: cuda when available, else cpu)"""
    progress: bool = True
    """show a progress bar"""
    ray_workers: int = 0
    """play rollouts on this many Ray actors (0: in this process); see train/ray_rollouts.py"""
    ray_env_workers: int = 0
    """keep the policy here, generating in batches, and step the rollouts' envs on this many Ray env worker actors
    (0: envs in this process); see train/ray_rollouts.py"""

    def __post_init__(self):
        """Every value checked before any work or write (the command line builds this first)."""
        from ..checks import check_values
        from ..synthesis import KINDS
        from ..synthesis.persona import check_requests

        check_values({f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, "grpo")
        check_choice("task_kind", self.task_kind, KINDS)
        check_requests(self.requests)


# --------------------------------------------------------------------------------------------
# The math (tested against hand-computed values)


def group_advantages(rewards, eps: float = 1e-6):
    """(r - group mean) / (group std + eps) over the last axis; std is the population std, so a
    group whose rewards are all equal gets exactly zero advantage."""
    import torch

    r = torch.as_tensor(rewards, dtype=torch.float32)
    mean = r.mean(dim=-1, keepdim=True)
    std = r.std(dim=-1, keepdim=True, unbiased=False)
    return (r - mean) / (std + eps)


def grpo_loss(logp, old_logp, advantages, mask, clip_low: float = 0.2, clip_high: float = 0.28,
              ref_logp=None, kl_coef: float = 0.0):
    """Token-level clipped surrogate (DAPO-style clip-higher) + optional k3 KL to a reference.

    logp, old_logp, ref_logp, mask: [B, T] (mask 1 on the policy's own tokens); advantages: [B].
    The loss is averaged over all unmasked tokens of the batch. Returns (loss, stats).
    """
    import torch

    mask = mask.to(logp.dtype)
    ratio = torch.exp(logp - old_logp)
    adv = advantages.to(logp.dtype).unsqueeze(-1)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * adv
    per_token = -torch.minimum(unclipped, clipped)
    kl = torch.zeros_like(logp)
    if ref_logp is not None and kl_coef:
        d = ref_logp - logp
        kl = torch.exp(d) - d - 1  # k3 estimator of KL(pi || ref), >= 0
        per_token = per_token + kl_coef * kl
    n = mask.sum().clamp(min=1)
    loss = (per_token * mask).sum() / n
    with torch.no_grad():
        is_clipped = ((ratio < 1 - clip_low) & (adv < 0)) | ((ratio > 1 + clip_high) & (adv > 0))
        stats = {"kl": float((kl * mask).sum() / n), "clip_fraction": float((is_clipped.to(mask.dtype) * mask).sum() / n)}
    return loss, stats


def token_logprobs(model, ids, attn, with_entropy: bool = False):
    """log p(token_t | tokens_<t) for t >= 1: [B, T-1] (and the entropy of each next-token distribution)."""
    import torch

    logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
    logps = torch.log_softmax(logits, dim=-1)
    out = logps.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    if not with_entropy:
        return out, None
    entropy = -(logps.exp() * logps).sum(-1)
    return out, entropy


def pad_batch(trajs: list[dict], pad_id: int, device):
    """Right-pad ids; the loss mask is shifted to align with next-token log-probs."""
    import torch

    width = max(len(t["ids"]) for t in trajs)
    ids = torch.full((len(trajs), width), pad_id, dtype=torch.long)
    attn = torch.zeros((len(trajs), width), dtype=torch.long)
    mask = torch.zeros((len(trajs), width), dtype=torch.float32)
    for i, t in enumerate(trajs):
        n = len(t["ids"])
        ids[i, :n] = torch.tensor(t["ids"])
        attn[i, :n] = 1
        mask[i, :n] = torch.tensor(t["mask"], dtype=torch.float32)
    return ids.to(device), attn.to(device), mask[:, 1:].to(device)


# --------------------------------------------------------------------------------------------
# Rollouts


def rollout(model, tok, tasks: list[Task], cfg: GRPOConfig, workers=None) -> list[dict]:
    """`group_size` episodes per task, each in its own env instance; returns trajectories in task order. With
    `workers` (`ray_rollouts.EnvWorkers`) the envs live in Ray actors and the model generates here."""
    from ..env import AgentWorldEnv
    from ..policies.llm import HFPolicy
    from ..policies.slots import run_episodes_batched

    policy = HFPolicy(model, tok, max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, max_context=cfg.max_context)
    model.eval()
    jobs = [(gi, task) for gi, task in enumerate(tasks) for _ in range(cfg.group_size)]
    specs = [(task.theme, {"tasks": [task], "max_turns": cfg.max_turns}) for _, task in jobs]
    envs = workers.envs(specs) if workers is not None else [AgentWorldEnv(theme, **kw) for theme, kw in specs]
    try:
        out = run_episodes_batched(envs, policy, seeds=[0] * len(envs), options=[{"task": task} for _, task in jobs],
                                   slots=cfg.rollout_batch)
    finally:
        for e in envs:
            e.close()
    for (gi, _task), r in zip(jobs, out, strict=True):
        r["group"] = gi
        r.pop("info", None)
    model.train()
    return out


# --------------------------------------------------------------------------------------------
# The loop


def sample_groups(sample, play, cfg: GRPOConfig) -> tuple[list[Task], list[dict], list[tuple[Task, dict]]]:
    """One step's groups: `sample(round) -> tasks`, `play(tasks, round) -> trajectories in task order` (`group_size`
    each). Returns the tasks to train on, their trajectories (`group` numbered in that order) and every (task, trajectory)
    played; see `GRPOConfig.signal_groups` for dynamic sampling."""
    G = cfg.group_size
    if not cfg.signal_groups:
        tasks = sample(0)
        trajs = play(tasks, 0)
        return tasks, trajs, [(tasks[i // G], t) for i, t in enumerate(trajs)]
    signal, flat, played = [], [], []  # groups as (task, trajectories)
    for r in range(cfg.max_sample_rounds):
        tasks = sample(r)
        trajs = play(tasks, r)
        for gi, task in enumerate(tasks):
            group = trajs[gi * G:(gi + 1) * G]
            played += [(task, t) for t in group]
            (signal if len({t["reward"] for t in group}) > 1 else flat).append((task, group))
        if len(signal) >= cfg.signal_groups:
            break
    chosen = (signal + flat)[:cfg.signal_groups]
    trained = [{**t, "group": gi} for gi, (_task, group) in enumerate(chosen) for t in group]
    return [task for task, _ in chosen], trained, played


def _step_update(model, ref_model, trajs: list[dict], cfg: GRPOConfig, pad_id: int, opt, params, accel=None) -> dict:
    """One rollout batch -> `updates_per_step` optimizer steps; returns averaged stats."""
    import torch

    core = accel.unwrap_model(model) if accel is not None else model
    backward = accel.backward if accel is not None else torch.Tensor.backward

    device = next(model.parameters()).device
    trajs = [t for t in trajs if sum(t["mask"]) > 0]
    sums: dict[str, float] = defaultdict(float)
    if not trajs:
        return {}
    # old log-probs: equal to the current ones for the first update (one update is exactly on-policy)
    old: list = []  # per trajectory: [len(ids) - 1] log-probs under the rollout policy
    if cfg.updates_per_step > 1:
        with torch.no_grad():
            for lo in range(0, len(trajs), cfg.micro_batch):
                chunk = trajs[lo:lo + cfg.micro_batch]
                ids, attn, _ = pad_batch(chunk, pad_id, device)
                lp = token_logprobs(model, ids, attn)[0]
                old += [lp[i, :len(t["ids"]) - 1] for i, t in enumerate(chunk)]
    total_tokens = sum(sum(t["mask"][1:]) for t in trajs)
    minibatches = np.array_split(np.arange(len(trajs)), cfg.updates_per_step)
    for mb in minibatches:
        opt.zero_grad(set_to_none=True)
        mb_tokens = max(sum(sum(trajs[i]["mask"][1:]) for i in mb), 1)
        for lo in range(0, len(mb), cfg.micro_batch):
            idx = list(mb[lo:lo + cfg.micro_batch])
            chunk = [trajs[i] for i in idx]
            ids, attn, mask = pad_batch(chunk, pad_id, device)
            logp, entropy = token_logprobs(model, ids, attn, with_entropy=True)
            old_logp = logp.detach()
            if old:
                old_logp = torch.nn.utils.rnn.pad_sequence([old[i] for i in idx], batch_first=True)
            ref_logp = None
            if cfg.kl_coef:
                with torch.no_grad():
                    if ref_model is None:  # LoRA: the reference is the model without its adapter
                        with core.disable_adapter():
                            ref_logp = token_logprobs(model, ids, attn)[0]
                    else:
                        ref_logp = token_logprobs(ref_model, ids, attn)[0]
            adv = torch.tensor([t["advantage"] for t in chunk], device=device)
            loss, stats = grpo_loss(logp, old_logp, adv, mask, cfg.clip_low, cfg.clip_high, ref_logp, cfg.kl_coef)
            n_tok = float(mask.sum())
            backward(loss * n_tok / mb_tokens)  # token-level mean over the whole minibatch
            w = n_tok / total_tokens
            sums["loss"] += loss.item() * w
            sums["kl"] += stats["kl"] * w
            sums["clip_fraction"] += stats["clip_fraction"] * w
            sums["entropy"] += float((entropy.detach() * mask).sum()) / total_tokens
        sums["grad_norm"] += float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)) / len(minibatches)
        opt.step()
    return dict(sums)


def _accelerator():
    """An `accelerate.Accelerator` when launched on several processes (accelerate launch / torchrun), else None:
    each process then plays its own share of tasks and gradients are averaged by DDP."""
    import os

    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    import torch
    from accelerate import Accelerator

    # without cpu=True, accelerate on a machine with no GPU ignores WORLD_SIZE and every process trains alone
    return Accelerator(cpu=not torch.cuda.is_available())


@common.cleans_up_new_run_folder
def train_grpo(cfg: GRPOConfig) -> str:
    """Run (or resume) GRPO; returns the final checkpoint dir (merged weights, from_pretrained-able)."""
    import copy

    import torch
    from tqdm import tqdm

    if cfg.signal_groups > cfg.max_sample_rounds * cfg.tasks_per_step:
        raise ConfigError(f"Expected signal_groups <= max_sample_rounds x tasks_per_step (the groups a step can play), got "
                          f"{cfg.signal_groups} > {cfg.max_sample_rounds} x {cfg.tasks_per_step}. Raise --max-sample-rounds "
                          "or --tasks-per-step.")
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    accel = _accelerator()
    rank = accel.process_index if accel is not None else 0
    is_main = accel is None or accel.is_main_process
    device = str(accel.device) if accel is not None else common.device_of(cfg.device)
    source = common.task_source(cfg.tasks, cfg.sampler, cfg.themes, cfg.difficulties, cfg.task_kind, cfg.requests)
    resume_from = common.latest_checkpoint(out) if cfg.resume else None
    common.seed_everything(cfg.seed + rank)
    model, tok = common.load_start_model(cfg.model, resume_from, cfg.lora, cfg.lora_r, device)
    ref_model = None
    if cfg.kl_coef and not common.is_lora(model):
        from ..policies.llm import load_model

        ref_model = load_model(cfg.model, device)[0] if resume_from is not None else copy.deepcopy(model)
        ref_model.eval().requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=0.0)
    step = 0
    if resume_from is not None:
        state = common.load_state(resume_from)
        opt.load_state_dict(state["optimizer"])
        common.set_rng_state(state["rng"])
        step = state["step"]
        if state.get("sampler") is not None and hasattr(source, "load_state_dict"):
            source.load_state_dict(state["sampler"])
        log.info("resumed from %s at step %d", resume_from, step)
    model.train()
    core = model
    if accel is not None:
        model, opt = accel.prepare(model, opt)
        core = accel.unwrap_model(model)
    metrics = common.MetricsLog(out / "metrics.jsonl", step) if is_main else None
    remote = None
    if cfg.ray_workers:
        if accel is not None:
            raise ConfigError("Expected either several processes (accelerate/torchrun) or ray_workers, got both.")
        from .ray_rollouts import RayRollouts

        remote = RayRollouts(cfg, cfg.ray_workers, rollout)
    env_workers = None
    if cfg.ray_env_workers:
        if accel is not None or cfg.ray_workers:
            raise ConfigError("Expected one of several processes (accelerate/torchrun), ray_workers or ray_env_workers, got two.")
        from .ray_rollouts import EnvWorkers

        env_workers = EnvWorkers(cfg.ray_env_workers)

    bar = tqdm(total=cfg.steps, initial=step, desc="grpo", disable=not cfg.progress or not is_main)
    while step < cfg.steps:
        t0 = time.time()

        def sample(r, step=step):  # round 0 draws what a step without dynamic sampling draws
            key = [cfg.seed, step] + ([rank] if accel else []) + ([r] if r else [])
            return source.sample_tasks(cfg.tasks_per_step, np.random.default_rng(key))

        def play(tasks, r, step=step):
            seed = cfg.seed * 1_000_003 + step + 7919 * r
            return remote(core, tasks, seed) if remote else rollout(core, tok, tasks, cfg, env_workers)

        tasks, trajs, played = sample_groups(sample, play, cfg)
        t_roll = time.time() - t0
        rewards = torch.tensor([t["reward"] for t in trajs]).view(len(tasks), cfg.group_size)
        adv = group_advantages(rewards).view(-1)
        for t, a in zip(trajs, adv.tolist(), strict=True):
            t["advantage"] = a
        if hasattr(source, "report"):  # curriculum feedback (TaskSampler schedules) on every episode played
            for task, t in played:
                source.report(task, t["success"])
        t1 = time.time()
        stats = _step_update(model, ref_model, trajs, cfg, tok.pad_token_id, opt, params, accel)
        t_train = time.time() - t1
        step += 1
        # what the policy did: every episode played (with dynamic sampling, more than were trained on)
        done = [t for _, t in played]
        gen_tokens = sum(t["gen_tokens"] for t in done)
        train_tokens = sum(len(t["ids"]) for t in trajs)
        played_rewards = torch.tensor([t["reward"] for t in done]).view(-1, cfg.group_size)
        per_theme: dict[str, list[bool]] = defaultdict(list)
        for t in done:
            per_theme[t.get("theme") or "?"].append(t["success"])
        row = {"step": step, "reward": float(played_rewards.mean()), "success": float(np.mean([t["success"] for t in done])),
               **stats, "gen_tokens": gen_tokens, "train_tokens": train_tokens,
               "rollout_tokens_per_s": gen_tokens / max(t_roll, 1e-9), "train_tokens_per_s": train_tokens / max(t_train, 1e-9),
               "rollout_s": t_roll, "train_s": t_train, "mean_turns": float(np.mean([t["turns"] for t in done])),
               "groups_with_signal": int((played_rewards.std(dim=1) > 0).sum()), "sample_rounds": -(-len(done) // (cfg.tasks_per_step * cfg.group_size)),
               "trained_groups_with_signal": int((rewards.std(dim=1) > 0).sum()),
               "processes": accel.num_processes if accel else 1,
               "per_theme_success": {k: float(np.mean(v)) for k, v in sorted(per_theme.items())}}
        bar.update(1)
        bar.set_postfix(reward=f"{row['reward']:.2f}", kl=f"{row.get('kl', 0):.3f}")
        if is_main:  # with several processes, rank 0 logs its share and saves (weights are identical)
            metrics.write(row)
            if step % cfg.save_every == 0 or step == cfg.steps:
                extra = {"kind": "grpo", "sampler": source.state_dict() if hasattr(source, "state_dict") else None}
                common.save_checkpoint(out, step, core, tok, opt, extra)
        if accel is not None:
            accel.wait_for_everyone()
    bar.close()
    for pool in (remote, env_workers):
        if pool is not None:
            pool.close()
    final = out / "final"
    if is_main:
        common.plot_metrics(out / "metrics.jsonl", out / "metrics.png",
                            ["reward", "success", "kl", "entropy", "clip_fraction", "rollout_tokens_per_s"])
        common.save_model(core, tok, final, merge=True)
    return str(final)
