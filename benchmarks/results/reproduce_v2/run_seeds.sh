#!/usr/bin/env bash
# Issue 16 item 1 at this machine's scale: SFT and SFT+GRPO (SmolLM2-135M, CPU, 1 thread each) for seeds
# 0,1,2, each evaluated on the same 100 stratified held-out v2 tasks (20 categories x 5 levels, bench seed 0),
# beside the untrained model (40 tasks) and the null baselines. Resumable: a stage whose output exists is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
seed() {
  local s=$1
  stage $W/sft-s$s/final/config.json "${AW[@]}" train sft --model smollm2-135m --out-dir $W/sft-s$s --n-examples 64 \
    --batch-size 4 --lr 1e-4 --difficulties 1,2,3 --recovery-share 0.33 --save-every 4 --seed $s --device cpu --no-progress &&
  grpo_stage $W/sft-s$s/final $W/grpo-s$s $s &&
  [[ ${EVAL:-1} == 1 ]] &&
  stage $R/heldout_sft_s$s.json "${AW[@]}" bench --suite heldout --policy hf:$W/sft-s$s/final --episodes 100 --out $R/heldout_sft_s$s &&
  stage $R/heldout_sft_grpo_s$s.json "${AW[@]}" bench --suite heldout --policy hf:$W/grpo-s$s/final --episodes 100 --out $R/heldout_sft_grpo_s$s
}
[[ ${EVAL:-1} == 1 ]] && for p in oracle; do stage $R/heldout_null_$p.json "${AW[@]}" bench --suite heldout --policy $p --episodes 100 --out $R/heldout_null_$p; done
# run_seeds.sh [SEED...] [base]: the given seeds in parallel (default 0 1 2 base); "base" adds the untrained model.
# EVAL=0 trains only (e.g. while the held-out suite is being re-frozen); SERIAL=1 runs the seeds one after another.
args=("$@"); [[ $# -eq 0 ]] && args=(0 1 2 base)
for a in "${args[@]}"; do
  if [[ $a == base ]]; then
    stage $R/heldout_base.json "${AW[@]}" bench --suite heldout --policy smollm2-135m --episodes 40 --out $R/heldout_base &
  else
    if [[ ${SERIAL:-0} == 1 ]]; then seed "$a"; else seed "$a" & fi
  fi
done
wait
