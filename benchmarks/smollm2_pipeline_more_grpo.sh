#!/usr/bin/env bash
# Continuation: resume the GRPO run of smollm2_pipeline.sh from its step-3 checkpoint up to step 6
# (exact resume: optimizer, RNG, step), then re-evaluate. Also the BFCL score of the SFT-only model.
set -euo pipefail
export HF_HUB_OFFLINE=1
R=benchmarks/results/smollm2
AW=".venv/bin/agentworld"
t() { local s=$SECONDS; "$@"; echo "wall_s $(( SECONDS - s )) :: $*" | tee -a "$R/wall_times.txt"; }
t $AW bench --suite bfcl --policy hf:runs/smollm2-sft/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft"
t $AW train grpo --model runs/smollm2-sft/final --out-dir runs/smollm2-grpo --steps 6 --group-size 4 --tasks-per-step 4 \
    --lr 1e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 1 --difficulties 1,2 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-grpo/final --episodes 28 --out "$R/heldout_sft_grpo6"
t $AW bench --suite bfcl --policy hf:runs/smollm2-grpo/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft_grpo6"
cp runs/smollm2-grpo/metrics.jsonl "$R/grpo_metrics.jsonl"; cp runs/smollm2-grpo/metrics.png "$R/grpo_metrics.png" || true
