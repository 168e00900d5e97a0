#!/usr/bin/env bash
# Issue 16 item 1: does GRPO add to a given SFT stage? For each STAGE:SEED, item 1's GRPO recipe (common.sh's
# grpo_stage) from runs/v2/<STAGE>-s<SEED>/final (an SFT stage of run_seeds.sh or run_diversity.sh, e.g. div64e256)
# -> runs/v2/<STAGE>_grpo-s<SEED>, evaluated on the same 100 held-out tasks -> heldout_<STAGE>_grpo_s<SEED>.json.
# Resumable like the other scripts (a finished stage is skipped, GRPO resumes from its last checkpoint).
#   run_grpo.sh div64e256:0 div64e256:1 ...   (one after another)
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
for point in "$@"; do
  IFS=: read -r name s <<< "$point"
  [[ -e $W/$name-s$s/final/config.json ]] || { echo "no SFT checkpoint $W/$name-s$s/final: train it first" >&2; exit 2; }
  grpo_stage $W/$name-s$s/final $W/${name}_grpo-s$s $s &&
  stage $R/heldout_${name}_grpo_s$s.json "${AW[@]}" bench --suite heldout --policy hf:$W/${name}_grpo-s$s/final \
    --episodes 100 --out $R/heldout_${name}_grpo_s$s
done
