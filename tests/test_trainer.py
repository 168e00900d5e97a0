"""The trainer: SFT + GRPO end to end on a tiny random model, the GRPO math by hand, masking, exact resume."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from agentworld_gym.envs import get_theme  # noqa: E402

from agentworld_gym.errors import ConfigError  # noqa: E402
from agentworld_gym.synthesis import synthesize_task  # noqa: E402
from agentworld_gym.train import GRPOConfig, SFTConfig, group_advantages, grpo_loss, train_grpo, train_sft  # noqa: E402
from agentworld_gym.train.common import MetricsLog  # noqa: E402
from agentworld_gym.train.grpo import pad_batch, sample_groups, token_logprobs  # noqa: E402


@pytest.fixture(scope="module")
def tasks():
    theme = get_theme("finance")
    return [synthesize_task(theme, 1, seed) for seed in range(4)]


def _grpo_cfg(model, out, tasks, **kw):
    base = dict(model=model, out_dir=str(out), tasks=tasks, steps=2, group_size=2, tasks_per_step=2, max_new_tokens=6,
                max_turns=2, save_every=1, progress=False, lr=1e-3, kl_coef=0.1, seed=3)
    return GRPOConfig(**{**base, **kw})


# --------------------------------------------------------------------------------------------
# end to end


def test_sft_then_grpo_end_to_end(tiny, tasks, tmp_path):
    sft_dir = train_sft(SFTConfig(model=tiny, out_dir=str(tmp_path / "sft"), tasks=tasks, batch_size=2, epochs=1,
                                  lr=1e-3, progress=False))
    rows = MetricsLog.read(tmp_path / "sft" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    assert all(math.isfinite(r["loss"]) and r["assistant_tokens"] > 0 for r in rows)
    assert (tmp_path / "sft" / "final" / "config.json").exists()

    final = train_grpo(_grpo_cfg(sft_dir, tmp_path / "grpo", tasks))
    rows = MetricsLog.read(tmp_path / "grpo" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        assert 0.0 <= r["reward"] <= 1.0 and 0.0 <= r["success"] <= 1.0
        assert r["gen_tokens"] > 0 and r["per_theme_success"].keys() == {"finance"}
        for key in ("loss", "kl", "entropy", "clip_fraction", "grad_norm"):
            assert math.isfinite(r[key]), key
    assert (tmp_path / "grpo" / "metrics.png").stat().st_size > 0
    assert (tmp_path / "grpo" / "final" / "config.json").exists() and final.endswith("final")


def test_lora_grpo_runs_and_saves_merged_weights(tiny, tasks, tmp_path):
    pytest.importorskip("peft")
    final = train_grpo(_grpo_cfg(tiny, tmp_path / "lora", tasks, steps=1, lora=True, lora_r=4))
    assert (tmp_path / "lora" / "ckpt-000001" / "adapter_config.json").exists()
    assert not (tmp_path / "lora" / "final" / "adapter_config.json").exists()  # final is merged
    from agentworld_gym.policies.llm import load_model

    model, _ = load_model(final, "cpu")
    assert model.config.hidden_size == 32


# --------------------------------------------------------------------------------------------
# the math


def test_group_advantages_by_hand():
    adv = group_advantages([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]])
    s = math.sqrt(0.1875)  # population std of (0, 0, 0, 1)
    expected = [[1, -1, -1, 1], [0, 0, 0, 0], [-0.25 / s, -0.25 / s, -0.25 / s, 0.75 / s]]
    assert torch.allclose(adv, torch.tensor(expected), atol=1e-4)
    assert torch.equal(adv[1], torch.zeros(4))  # all-equal rewards: exactly zero, no signal


def test_dynamic_sampling_keeps_groups_with_unequal_rewards():
    rounds = [["flat0", "mixed0"], ["mixed1", "flat1"], ["mixed2", "flat2"]]
    rewards = {"flat0": [0, 0], "mixed0": [1, 0], "mixed1": [0, 1], "flat1": [1, 1], "mixed2": [1, 0], "flat2": [0, 0]}
    calls = []

    def play(tasks, r):
        calls.append(r)
        return [{"task": task, "reward": x, "group": gi} for gi, task in enumerate(tasks) for x in rewards[task]]

    def run(**kw):
        calls.clear()
        cfg = GRPOConfig(group_size=2, tasks_per_step=2, **kw)
        return sample_groups(lambda r: rounds[r], play, cfg)

    tasks, trained, played = run()  # off: round 0 as sampled, flat groups included
    assert tasks == rounds[0] and [t["task"] for t in trained] == ["flat0"] * 2 + ["mixed0"] * 2 and calls == [0]

    tasks, trained, played = run(signal_groups=2)  # stops at the round that completes the batch
    assert tasks == ["mixed0", "mixed1"] and calls == [0, 1]
    assert [(t["task"], t["group"]) for t in trained] == [("mixed0", 0), ("mixed0", 0), ("mixed1", 1), ("mixed1", 1)]
    assert [task for task, _ in played] == ["flat0", "flat0", "mixed0", "mixed0", "mixed1", "mixed1", "flat1", "flat1"]

    tasks, trained, _ = run(signal_groups=4, max_sample_rounds=2)  # short of signal: flat groups fill the batch
    assert tasks == ["mixed0", "mixed1", "flat0", "flat1"] and len(trained) == 8 and calls == [0, 1]


def test_grpo_loss_by_hand():
    ratios = torch.tensor([[1.5, 0.5, 1.0, 3.0], [1.5, 0.5, 1.0, 3.0]])
    old = torch.full((2, 4), -1.0)
    logp = old + torch.log(ratios)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 0]])  # the 4th token is an observation: ignored
    adv = torch.tensor([1.0, -1.0])
    loss, stats = grpo_loss(logp, old, adv, mask, clip_low=0.2, clip_high=0.28)
    # adv +1: -min(r, clip(r)) -> -1.28, -0.5, -1.0 ; adv -1: -min(-r, -clip(r)) -> 1.5, 0.8, 1.0
    assert loss.item() == pytest.approx((-1.28 - 0.5 - 1.0 + 1.5 + 0.8 + 1.0) / 6, abs=1e-5)
    assert stats["clip_fraction"] == pytest.approx(2 / 6)  # 1.5 with A>0 and 0.5 with A<0
    ref = logp + math.log(2.0)  # reference twice as likely on every token
    loss_kl, stats_kl = grpo_loss(logp, old, adv, mask, 0.2, 0.28, ref_logp=ref, kl_coef=0.5)
    k3 = 2.0 - math.log(2.0) - 1.0
    assert stats_kl["kl"] == pytest.approx(k3, abs=1e-5)
    assert loss_kl.item() == pytest.approx(loss.item() + 0.5 * k3, abs=1e-5)


def test_zero_advantage_gives_zero_policy_gradient(tiny):
    from agentworld_gym.policies.llm import load_model

    model, tok = load_model(tiny, "cpu")
    traj = {"ids": tok.encode("hello tool world 42", add_special_tokens=False), "mask": None}
    traj["mask"] = [0, 0] + [1] * (len(traj["ids"]) - 2)
    ids, attn, mask = pad_batch([traj], tok.pad_token_id, "cpu")
    logp, _ = token_logprobs(model, ids, attn)
    loss, _ = grpo_loss(logp, logp.detach(), torch.zeros(1), mask)
    loss.backward()
    assert all(p.grad is None or torch.count_nonzero(p.grad) == 0 for p in model.parameters())


# --------------------------------------------------------------------------------------------
# masking


def _grads(model, tok, ids, mask, adv=1.0):
    model.zero_grad(set_to_none=True)
    x, attn, m = pad_batch([{"ids": ids, "mask": mask}], tok.pad_token_id, "cpu")
    logp, _ = token_logprobs(model, x, attn)
    loss, _ = grpo_loss(logp, logp.detach() - 0.1, torch.tensor([adv]), m)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def test_tool_observation_tokens_do_not_change_the_gradient(tiny):
    from agentworld_gym.policies.llm import ChatEncoder, load_model

    model, tok = load_model(tiny, "cpu")
    enc = ChatEncoder(tok)
    d = enc.encode([{"role": "system", "content": "tools"}, {"role": "user", "content": "find the tier"},
                    {"role": "assistant", "content": '{"name": "get_account", "arguments": {}}'},
                    {"role": "tool", "content": "tier: gold"}])
    # the trailing tool observation is masked out; vary its tokens
    obs_start = max(i for i, m in enumerate(d.mask) if m) + 1
    assert obs_start < len(d.ids) and not any(d.mask[obs_start:])
    other = d.ids[:obs_start] + [(t + 7) % len(tok) for t in d.ids[obs_start:]]
    g1 = _grads(model, tok, d.ids, d.mask)
    g2 = _grads(model, tok, other, d.mask)
    assert torch.allclose(g1, g2)
    # ... while changing the model's own tokens does change it (the check can fail)
    changed = list(d.ids)
    first_assistant = d.mask.index(1)
    changed[first_assistant] = (changed[first_assistant] + 7) % len(tok)
    assert not torch.allclose(g1, _grads(model, tok, changed, d.mask))


# --------------------------------------------------------------------------------------------
# resume


def test_resume_gives_the_same_next_step_loss(tiny, tasks, tmp_path):
    train_grpo(_grpo_cfg(tiny, tmp_path / "straight", tasks, steps=2))
    straight = MetricsLog.read(tmp_path / "straight" / "metrics.jsonl")

    train_grpo(_grpo_cfg(tiny, tmp_path / "killed", tasks, steps=1))  # "killed" after step 1 (checkpoint kept)
    train_grpo(_grpo_cfg(tiny, tmp_path / "killed", tasks, steps=2))  # resumes at step 2
    resumed = MetricsLog.read(tmp_path / "killed" / "metrics.jsonl")

    assert [r["step"] for r in resumed] == [1, 2]
    for key in ("loss", "reward", "kl", "gen_tokens"):
        assert resumed[1][key] == pytest.approx(straight[1][key], rel=1e-5, abs=1e-7), key


def test_grpo_samples_through_a_task_sampler_and_feeds_it_back(tiny, tmp_path):
    import gymnasium as gym
    from agentworld_gym.wrappers.task_sampler import TaskSampler

    from agentworld_gym.train.common import SamplerTasks, task_source

    env = TaskSampler(gym.make("AgentWorld/finance-v0"), schedule="adaptive", band=(0.4, 0.7), window=4)
    source = task_source(sampler=env)
    assert isinstance(source, SamplerTasks)
    train_grpo(_grpo_cfg(tiny, tmp_path / "ts", None, sampler=env, steps=1, kl_coef=0.0))
    assert env.schedule.episodes == 4  # 2 tasks x 2 rollouts reported back to the curriculum
    assert all(t.theme == "finance" for t in source.sample_tasks(3, __import__("numpy").random.default_rng(0)))


def test_dynamic_sampling_reports_every_episode_played(tiny, tmp_path):
    import gymnasium as gym
    from agentworld_gym.wrappers.task_sampler import TaskSampler

    env = TaskSampler(gym.make("AgentWorld/finance-v0"), schedule="adaptive", band=(0.4, 0.7), window=4)
    train_grpo(_grpo_cfg(tiny, tmp_path / "ds", None, sampler=env, steps=1, kl_coef=0.0, signal_groups=1,
                         max_sample_rounds=2))
    (row,) = MetricsLog.read(tmp_path / "ds" / "metrics.jsonl")
    assert row["sample_rounds"] in (1, 2) and row["groups_with_signal"] >= row["trained_groups_with_signal"]
    assert row["sample_rounds"] == 2 or row["groups_with_signal"] >= 1  # a second round only when the first had none
    assert env.schedule.episodes == row["sample_rounds"] * 4  # 2 tasks x 2 rollouts a round, all reported
    assert row["gen_tokens"] > 0 and math.isfinite(row["loss"])
    with pytest.raises(ConfigError, match="max-sample-rounds"):  # a batch no step could fill
        train_grpo(_grpo_cfg(tiny, tmp_path / "bad", None, sampler=env, signal_groups=5, max_sample_rounds=2))


def test_grpo_trains_data_parallel_on_two_cpu_processes(tiny, tmp_path):
    """The multi-GPU / multi-node path (accelerate under torchrun), exercised with two CPU processes (gloo)."""
    import json
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [str(Path(sys.executable).with_name("torchrun")), "--nproc_per_node", "2", "--master_port", str(port), "-m", "agentworld_gym.cli",
           "train", "grpo", "--model", tiny, "--out-dir", str(tmp_path / "run"), "--steps", "2", "--group-size", "2",
           "--tasks-per-step", "2", "--max-new-tokens", "8", "--max-turns", "2", "--no-progress"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]  # only rank 0 logs
    assert all(r["processes"] == 2 for r in rows)
    assert (tmp_path / "run" / "final" / "config.json").exists()


def test_ray_rollout_actors_sample_from_the_weights_being_trained(tiny, tasks, tmp_path):
    """Greedy rollouts on two Ray actors equal the in-process ones after the trainer's weights change,
    come back in task order, and a GRPO run with ray_workers trains end to end."""
    ray = pytest.importorskip("ray")
    import torch

    from agentworld_gym.policies.llm import load_model
    from agentworld_gym.train.grpo import rollout
    from agentworld_gym.train.ray_rollouts import RayRollouts

    cfg = _grpo_cfg(tiny, tmp_path / "unused", tasks, temperature=0.0, group_size=2)
    model, tok = load_model(tiny, "cpu")
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))  # the trainer's model now differs from the saved start model
    remote = RayRollouts(cfg, workers=2, rollout=rollout)
    try:
        far = remote(model, tasks[:3], seed=0)
        near = rollout(model, tok, tasks[:3], cfg)
        assert [t["group"] for t in far] == [0, 0, 1, 1, 2, 2]
        assert [t["ids"] for t in far] == [t["ids"] for t in near]
    finally:
        remote.close()
    final = train_grpo(_grpo_cfg(tiny, tmp_path / "grpo", tasks, ray_workers=2))
    rows = MetricsLog.read(tmp_path / "grpo" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2] and all(r["gen_tokens"] > 0 for r in rows)
    assert (tmp_path / "grpo" / "final" / "config.json").exists() and final.endswith("final")
    ray.shutdown()


def test_rollouts_through_fewer_slots_than_episodes_keep_task_order_and_tokens(tiny, tasks):
    """With rollout_batch below the step's episodes, freed slots take the waiting ones: the same greedy
    trajectories, grouped in task order, as with every episode in its own slot."""
    from agentworld_gym.policies.llm import load_model
    from agentworld_gym.train.grpo import rollout

    model, tok = load_model(tiny, "cpu")
    every = rollout(model, tok, tasks[:3], _grpo_cfg(tiny, "unused", tasks, temperature=0.0))
    few = rollout(model, tok, tasks[:3], _grpo_cfg(tiny, "unused", tasks, temperature=0.0, rollout_batch=2))
    assert [t["group"] for t in few] == [0, 0, 1, 1, 2, 2]
    assert [t["ids"] for t in few] == [t["ids"] for t in every] and all(t["gen_tokens"] > 0 for t in few)


def test_recovery_examples_show_the_error_and_train_only_the_recovery(tiny, tasks):
    from agentworld_gym.policies.llm import ChatEncoder, load_model
    from agentworld_gym.train.sft import make_examples, oracle_dialogue

    _, tok = load_model(tiny, "cpu")
    encoder = ChatEncoder(tok)
    plain = make_examples(encoder, tasks, 4096)
    mixed = make_examples(encoder, tasks, 4096, recovery_share=1.0)
    assert len(mixed) == len(plain) == len(tasks)
    for (ids, mask), (pids, pmask) in zip(mixed, plain, strict=True):
        text = tok.decode(ids)
        assert "Error: unknown tool" in text and len(ids) > len(pids)
        trained = tok.decode([i for i, m in zip(ids, mask, strict=True) if m])
        assert trained == tok.decode([i for i, m in zip(pids, pmask, strict=True) if m])  # same targets: the gold calls
    dialogue = oracle_dialogue(tasks[0], detour={"name": "lookup_account", "arguments": {}})
    assert dialogue[2]["content"].startswith('{"name": "lookup_account"') and dialogue[-1]["role"] == "assistant"


def test_call_share_examples_are_single_replies_in_the_plain_function_calling_format(tiny, tasks):
    import json

    from agentworld_gym.policies.llm import ChatEncoder, load_model
    from agentworld_gym.train.sft import NO_FIT_REPLY, make_examples

    _, tok = load_model(tiny, "cpu")
    encoder = ChatEncoder(tok)
    tasks = [*tasks, *(synthesize_task(get_theme("calendar"), 1, seed) for seed in range(2))]  # no-fit needs another theme
    examples = make_examples(encoder, tasks * 4, 10**6, call_share=1.0)  # the tiny tokenizer is near char-level
    assert len(examples) == 4 * len(tasks)
    calls = no_fit = 0
    for ids, mask in examples:
        text = tok.decode(ids)
        reply = tok.decode([i for i, m in zip(ids, mask, strict=True) if m]).strip()
        assert "You can call these functions:" in text and "submit" not in reply
        assert text.count("<|im_start|>assistant") == 1  # one reply, no tool turns
        if reply.startswith(NO_FIT_REPLY):
            no_fit += 1
            continue
        call = json.loads(reply.removesuffix("<|im_end|>"))
        task = next(t for t in tasks if t.instruction in text)
        assert call == task.solution[0] and f'"name": "{call["name"]}"' in text  # the called tool is among the docs
        calls += 1
    assert calls and no_fit  # both kinds drawn
    assert make_examples(encoder, tasks, 4096) == make_examples(encoder, tasks, 4096, call_share=0.0)


# --------------------------------------------------------------------------------------------
# SFT micro-batches and task kinds


def test_sft_micro_batches_give_the_full_batch_gradient(tiny, tasks):
    from agentworld_gym.policies.llm import ChatEncoder, load_model
    from agentworld_gym.train.sft import accumulate_masked_lm_loss, make_examples, masked_lm_loss

    model, tok = load_model(tiny, "cpu")
    batch = make_examples(ChatEncoder(tok), tasks, max_seq_len=4096)
    assert len({len(ids) for ids, _ in batch}) > 1  # unequal lengths: padding differs between the two ways

    def grads(micro_batch):
        model.zero_grad(set_to_none=True)
        if micro_batch is None:
            loss = masked_lm_loss(model, batch, tok.pad_token_id)
            loss.backward()
            loss = loss.item()
        else:
            loss = accumulate_masked_lm_loss(model, batch, tok.pad_token_id, micro_batch)
        return loss, torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])

    full_loss, full = grads(None)
    for micro_batch in (1, 3):
        loss, g = grads(micro_batch)
        assert loss == pytest.approx(full_loss, rel=1e-5)
        assert torch.allclose(g, full, atol=1e-6)
    # a chunk-averaged mean (each example weighted equally) would differ: the check can fail
    model.zero_grad(set_to_none=True)
    sum(masked_lm_loss(model, [ex], tok.pad_token_id) for ex in batch).backward()
    chunk_mean = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]) / len(batch)
    assert not torch.allclose(chunk_mean, full, atol=1e-6)


def test_task_kind_picks_the_kind_of_synthesized_training_tasks():
    import numpy as np

    from agentworld_gym.errors import ConfigError
    from agentworld_gym.train.common import SynthesizedTasks

    tasks = SynthesizedTasks(["finance"], (1, 2), "programmatic").sample_tasks(4, np.random.default_rng(0))
    assert {t.kind for t in tasks} == {"programmatic"}
    assert {t.kind for t in SynthesizedTasks(["finance"], (1,)).sample_tasks(4, np.random.default_rng(0))} == {"graph"}
    with pytest.raises(ConfigError, match="task kind"):
        SynthesizedTasks(["finance"], (1,), "graf")
