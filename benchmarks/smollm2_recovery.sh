#!/usr/bin/env bash
# SmolLM2-135M-Instruct, third run: the diverse cold-start SFT (smollm2_diverse.sh) continued on
# recovery demonstrations. Held-out failures showed the model guessing tool names from the task
# ("lookup_facility" where the tool is "show_facility") and then giving up after the env's error;
# these demos open with such a wrong call (masked out of the loss), show the real error, and continue
# with the gold solution. Resumable like the others.
set -euo pipefail
export HF_HUB_OFFLINE=1
R=benchmarks/results/smollm2/recovery
AW=".venv/bin/agentworld"
mkdir -p "$R" runs
t() { local s=$SECONDS; "$@"; echo "wall_s $(( SECONDS - s )) :: $*" | tee -a "$R/wall_times.txt"; }
THEMES=$(.venv/bin/python benchmarks/smollm2_training_themes.py --pool 96)

t $AW train sft --model runs/smollm2-diverse-sft/final --out-dir runs/smollm2-recovery-sft --themes "$THEMES" --n-examples 96 \
    --recovery-share 0.75 --seed 1 --batch-size 4 --lr 1e-4 --difficulties 1,2 --save-every 8 --no-progress
t $AW bench --suite heldout --policy hf:runs/smollm2-recovery-sft/final --episodes 28 --out "$R/heldout_sft"
t $AW bench --suite bfcl --policy hf:runs/smollm2-recovery-sft/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft"
cp runs/smollm2-recovery-sft/metrics.jsonl "$R/sft_metrics.jsonl"
# multi-environment GRPO from the recovery SFT checkpoint (same scaled-down settings as smollm2_pipeline.sh)
t $AW train grpo --model runs/smollm2-recovery-sft/final --out-dir runs/smollm2-recovery-grpo --themes "$THEMES" --steps 4 \
    --group-size 4 --tasks-per-step 4 --lr 1e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 1 \
    --micro-batch 2 --difficulties 1,2 --no-progress  # micro-batch 2: recovery episodes are longer (8 x ~1k tokens took 17 GB)
t $AW bench --suite heldout --policy hf:runs/smollm2-recovery-grpo/final --episodes 28 --out "$R/heldout_sft_grpo"
t $AW bench --suite bfcl --policy hf:runs/smollm2-recovery-grpo/final --episodes 10 --bfcl-path ../shared/data/bfcl --out "$R/bfcl_sft_grpo"
cp runs/smollm2-recovery-grpo/metrics.jsonl "$R/grpo_metrics.jsonl"; cp runs/smollm2-recovery-grpo/metrics.png "$R/grpo_metrics.png" || true
