#!/usr/bin/env bash
# SmolLM2-135M-Instruct on the held-out suite: untrained -> cold-start SFT -> SFT+GRPO, plus the BFCL-style suite.
# Sized for a shared 2-core CPU (see benchmarks/results/smollm2/README.md for the wall times measured).
# Every step checkpoints and resumes: re-running the script continues where a killed run stopped.
set -euo pipefail
export HF_HUB_OFFLINE=1
R=benchmarks/results/smollm2
AW=".venv/bin/agentworld"
mkdir -p "$R" runs
t() { local s=$SECONDS; "$@"; echo "wall_s $(( SECONDS - s )) :: $*" | tee -a "$R/wall_times.txt"; }

# 1. untrained model (episodes 28 = every difficulty-1 and -2 task of the 14 held-out themes)
t $AW bench --suite heldout --policy smollm2-135m --episodes 28 --out "$R/heldout_base"
t $AW bench --suite bfcl --policy smollm2-135m --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_base"
# 2. cold-start SFT on oracle trajectories from the 20 flagship themes (held-out themes excluded)
t $AW train sft --model smollm2-135m --out-dir runs/smollm2-sft --n-examples 64 --batch-size 4 --lr 1e-4 \
    --difficulties 1,2 --save-every 4 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-sft/final --episodes 28 --out "$R/heldout_sft"
# 3. multi-environment GRPO from the SFT checkpoint (paper defaults G=8, 32 tasks/step scaled down for this CPU)
t $AW train grpo --model runs/smollm2-sft/final --out-dir runs/smollm2-grpo --steps 3 --group-size 4 --tasks-per-step 4 \
    --lr 1e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 1 --difficulties 1,2 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-grpo/final --episodes 28 --out "$R/heldout_sft_grpo"
t $AW bench --suite bfcl --policy hf:runs/smollm2-grpo/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft_grpo"
cp runs/smollm2-sft/metrics.jsonl "$R/sft_metrics.jsonl"; cp runs/smollm2-sft/metrics.png "$R/sft_metrics.png" || true
cp runs/smollm2-grpo/metrics.jsonl "$R/grpo_metrics.jsonl"; cp runs/smollm2-grpo/metrics.png "$R/grpo_metrics.png" || true
