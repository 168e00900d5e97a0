"""Does the TRL integration learn on a CPU? SmolLM2-135M: untrained -> cold-start SFT -> GRPO (TRL), measured.

Each stage is evaluated greedily on the same task set (the GRPO training tasks, `n_tasks` seeded finance tasks) and
on `held_tasks` unseen ones, through the project's own policy (`HFPolicy`, the one prompt: what `agentworld bench`
shows), with a 95% Wilson interval; GRPO's reward per step (the mean over the step's rollouts) is logged as it trains. Resumable: every
stage writes its result to <out>/progress.json and GRPO checkpoints every `save_steps`.

    nice -n 10 .venv/bin/python benchmarks/trl_curve.py                 # ~55 min on one CPU thread (~50 s a GRPO step)
    .venv/bin/python benchmarks/trl_curve.py --max-steps 2 --n-tasks 2 --out /tmp/trl_smoke   # smoke

Writes <out>/progress.json, benchmarks/results/trl_curve.{json,md,png} (with --publish).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Args:
    model: str = "smollm2-135m"
    """policy to train (an alias, a local HF dir)"""
    env_id: str = "AgentWorld/finance-v0"
    """env or pool id the tasks come from"""
    difficulty: int = 1
    """task difficulty"""
    n_tasks: int = 8
    """GRPO training tasks (seeds 0..n-1), also the evaluation set; a small set is seen once a pass of n steps"""
    sft_episodes: int = 16
    """cold-start oracle episodes (seeds from 10,000: apart from the GRPO tasks)"""
    sft_epochs: int = 2
    """cold-start epochs: two leave GRPO's groups mixed (some rollouts of a task pass, some fail), which is what GRPO
    learns from; after one, sampled rollouts mostly fail, and after three most tasks pass in every rollout (no signal)"""
    max_steps: int = 48
    """GRPO steps"""
    num_generations: int = 4
    """rollouts per task (GRPO group)"""
    batch: int = 4
    """rollouts per step (batch / num_generations tasks a step; 4 = one task a step, 1-2 min a step on 2 CPU threads)"""
    max_completion_length: int = 384
    """token budget of a whole rollout (its calls plus the tool results): 2-3 calls and their results"""
    learning_rate: float = 1e-5
    """GRPO learning rate (at 3e-5 the same tasks' rewards fell within 13 steps)"""
    temperature: float = 0.8
    """GRPO sampling temperature (at 1.0 a 135M model's samples mostly drop the call format)"""
    max_turns: int = 6
    """turns per episode (GRPO and evaluation)"""
    save_steps: int = 10
    """GRPO checkpoint every this many steps (resume point)"""
    held_tasks: int = 64
    """unseen tasks (seeds from 20,000: apart from GRPO's and the cold start's) every stage is also evaluated on"""
    seed: int = 0
    """seed of everything"""
    out: str = "runs/trl_curve"
    """work dir: progress.json, checkpoints"""
    publish: bool = False
    """write benchmarks/results/trl_curve.{json,md,png}"""


HELD_SEED = 20_000


def evaluate(model, tok, args: Args, seed: int = 0, n: int | None = None) -> dict:
    """Greedy success on `n` tasks from `seed` (default: the GRPO task set) through HFPolicy (the one prompt), with a
    95% Wilson interval."""
    from agentworld_gym.env import AgentWorldEnv
    from agentworld_gym.integrations._common import as_task, draw_tasks
    from agentworld_gym.policies.llm import HFPolicy
    from agentworld_gym.policies.slots import run_episodes_batched
    from agentworld_gym.suites.core import wilson

    rows = draw_tasks(args.env_id, n or args.n_tasks, seed, difficulty=args.difficulty)
    policy = HFPolicy(model, tok, max_new_tokens=96, temperature=0.0)
    envs = [AgentWorldEnv(r["theme"], max_turns=args.max_turns) for r in rows]
    results = run_episodes_batched(envs, policy, options=[{"task": as_task(r["task"])} for r in rows], slots=8)
    model.train()
    wins = sum(r["success"] for r in results)
    low, high = wilson(wins, len(results))
    calls = sum(r["turns"] for r in results)
    return {"n": len(results), "successes": wins, "rate": wins / len(results), "ci95": [low, high], "turns": calls}


def main(args: Args) -> dict:
    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig

    from agentworld_gym.integrations.trl import AgentWorldGRPOTrainer, cold_start, grpo_inputs, prepare_tokenizer
    from agentworld_gym.policies.llm import load_model
    from agentworld_gym.prompt import PROMPT_VERSION, record_prompt_version

    torch.manual_seed(args.seed)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))  # 1 when it shares the machine
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress_path = out / "progress.json"
    progress = json.loads(progress_path.read_text()) if progress_path.exists() else {}
    progress["args"] = dataclasses.asdict(args)  # a resumed run records the arguments it finished with

    def save() -> None:
        progress_path.write_text(json.dumps(progress, indent=1))

    sft_dir = out / "sft"
    if (sft_dir / "config.json").exists():
        model, tok = load_model(str(sft_dir), device="cpu")
    else:
        model, tok = load_model(args.model, device="cpu")
        prepare_tokenizer(tok)
        if "untrained" not in progress:
            t0 = time.time()
            progress["untrained"] = {**evaluate(model, tok, args), "seconds": round(time.time() - t0)}
            save()
            print("untrained", progress["untrained"], flush=True)
        t0 = time.time()
        log = cold_start(model, tok, args.env_id, args.sft_episodes, epochs=args.sft_epochs, output_dir=str(out / "sft_run"),
                         difficulty=args.difficulty)
        progress["sft_loss"] = [round(r["loss"], 4) for r in log if "loss" in r]
        progress["sft_seconds"] = round(time.time() - t0)
        model.save_pretrained(sft_dir)
        tok.save_pretrained(sft_dir)
        record_prompt_version(sft_dir)
        save()
    prepare_tokenizer(tok)
    if "cold_start" not in progress:
        t0 = time.time()
        progress["cold_start"] = {**evaluate(model, tok, args), "seconds": round(time.time() - t0)}
        save()
        print("cold start", progress["cold_start"], flush=True)

    if "grpo" not in progress:
        steps = progress.setdefault("grpo_steps", [])

        class Progress(TrainerCallback):
            def on_log(self, _args, state, control, logs=None, **kwargs):
                if logs and "reward" in logs:
                    row = {"step": state.global_step, "reward": logs["reward"], "reward_std": logs.get("reward_std"),
                           "loss": logs.get("loss"), "completion_length": logs.get("completions/mean_length"),
                           "tool_calls": logs.get("tools/call_frequency"), "seconds": round(time.time() - t0)}
                    steps[:] = [s for s in steps if s["step"] < row["step"]] + [row]
                    save()
                    print(row, flush=True)

        # no gradient checkpointing: a 135M model's activations fit easily, and recomputing them costs a third more time
        config = GRPOConfig(output_dir=str(out / "grpo"), max_steps=args.max_steps, per_device_train_batch_size=args.batch,
                            num_generations=args.num_generations, max_completion_length=args.max_completion_length,
                            learning_rate=args.learning_rate, beta=0.0, temperature=args.temperature, max_tool_calling_iterations=args.max_turns,
                            report_to="none", use_cpu=True, gradient_checkpointing=False, logging_steps=1, save_strategy="steps", save_steps=args.save_steps,
                            save_only_model=False, seed=args.seed, disable_tqdm=True)
        trainer = AgentWorldGRPOTrainer(model=model, processing_class=tok, args=config, callbacks=[Progress()],
                                        **grpo_inputs(args.env_id, args.n_tasks, 0, max_turns=args.max_turns, difficulty=args.difficulty))
        t0 = time.time()
        resume = any((out / "grpo").glob("checkpoint-*"))
        trainer.train(resume_from_checkpoint=True if resume else None)
        model = trainer.model
        progress["grpo"] = {"steps": trainer.state.global_step, "seconds": round(time.time() - t0)}
        model.save_pretrained(out / "grpo_final")
        tok.save_pretrained(out / "grpo_final")
        record_prompt_version(out / "grpo_final")
        save()
    if "trained" not in progress:
        if "model" not in locals() or not hasattr(model, "generate"):
            model, tok = load_model(str(out / "grpo_final"), device="cpu")
        t0 = time.time()
        progress["trained"] = {**evaluate(model, tok, args), "seconds": round(time.time() - t0)}
        progress["prompt_version"] = PROMPT_VERSION
        save()
        print("trained", progress["trained"], flush=True)
    for key, path in (("untrained", args.model), ("cold_start", str(sft_dir)), ("trained", str(out / "grpo_final"))):
        if args.held_tasks and f"{key}_held" not in progress:
            model, tok = load_model(path, device="cpu")
            prepare_tokenizer(tok)
            t0 = time.time()
            progress[f"{key}_held"] = {**evaluate(model, tok, args, HELD_SEED, args.held_tasks), "seconds": round(time.time() - t0)}
            save()
            print(f"{key} on unseen tasks", progress[f"{key}_held"], flush=True)
    if args.publish:
        publish(progress)
    return progress


def publish(progress: dict) -> None:
    """benchmarks/results/trl_curve.{json,md,png}: the three evaluations and the reward per GRPO step."""
    from readme_tables import grpo_passes, trl_table  # the one rendering (docs/integrations.md shows the same)

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "trl_curve.json").write_text(json.dumps(progress, indent=1))
    a = progress["args"]
    seconds = ", ".join(f"{s['step']}: {s['seconds']}" for s in progress.get("grpo_steps", []))
    (RESULTS / "trl_curve.md").write_text("\n".join([*trl_table(), "", f"Seconds since GRPO's start, by step: {seconds}."]) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = progress.get("grpo_steps", [])
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.plot([s["step"] for s in steps], [s["reward"] for s in steps], marker=".", alpha=0.5, label="GRPO: mean reward of the step's rollouts")
    for i, p in enumerate(grpo_passes(a, steps)):
        ax.hlines(sum(x["reward"] for x in p) / len(p), p[0]["step"] - 0.5, p[-1]["step"] + 0.5, color="tab:orange",
                  label=f"GRPO: mean of each pass over the {a['n_tasks']} tasks" if i == 0 else None)
    for key, style, name in (("untrained", ":", "untrained (greedy eval)"), ("cold_start", "--", "cold start (greedy eval)"),
                             ("trained", "-.", "after GRPO (greedy eval)")):
        if key in progress:
            ax.axhline(progress[key]["rate"], linestyle=style, color="gray" if key == "untrained" else None, label=name)
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("reward / success")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    fig.tight_layout()
    fig.savefig(RESULTS / "trl_curve.png", dpi=120)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--publish-only"]:  # results so far of a run (its progress.json), e.g. while it trains
        publish(json.loads(Path(sys.argv[2]).read_text()))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        if f.type == "bool":
            parser.add_argument(f"--{f.name.replace('_', '-')}", action="store_true")
        else:
            parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    print(json.dumps(main(Args(**vars(parser.parse_args()))), indent=1)[:3000])
