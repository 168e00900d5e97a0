#!/usr/bin/env bash
# SmolLM2-135M-Instruct, second run: the same recipe as smollm2_pipeline.sh with more diverse cold-start
# data (the paper's point: more environments help): SFT on 192 oracle trajectories over the flagships plus
# 96 pool themes (no held-out theme or sibling of one), then GRPO over the same themes.
# Resumable: every step checkpoints; re-running continues where a killed run stopped.
set -euo pipefail
export HF_HUB_OFFLINE=1
R=benchmarks/results/smollm2/diverse
AW=".venv/bin/agentworld"
mkdir -p "$R" runs
t() { local s=$SECONDS; "$@"; echo "wall_s $(( SECONDS - s )) :: $*" | tee -a "$R/wall_times.txt"; }
THEMES=$(.venv/bin/python benchmarks/smollm2_training_themes.py --pool 96)

t $AW train sft --model smollm2-135m --out-dir runs/smollm2-diverse-sft --themes "$THEMES" --n-examples 192 \
    --batch-size 4 --lr 1e-4 --difficulties 1,2 --save-every 8 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-diverse-sft/final --episodes 28 --out "$R/heldout_sft"
t $AW train grpo --model runs/smollm2-diverse-sft/final --out-dir runs/smollm2-diverse-grpo --themes "$THEMES" --steps 4 \
    --group-size 4 --tasks-per-step 4 --lr 1e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 1 \
    --difficulties 1,2 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-diverse-grpo/final --episodes 28 --out "$R/heldout_sft_grpo"
t $AW bench --suite bfcl --policy hf:runs/smollm2-diverse-grpo/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft_grpo"
cp runs/smollm2-diverse-sft/metrics.jsonl "$R/sft_metrics.jsonl"; cp runs/smollm2-diverse-grpo/metrics.jsonl "$R/grpo_metrics.jsonl"
cp runs/smollm2-diverse-grpo/metrics.png "$R/grpo_metrics.png" || true
