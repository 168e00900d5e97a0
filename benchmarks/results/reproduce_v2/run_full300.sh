#!/usr/bin/env bash
# The whole 300-task held-out suite (the other scripts evaluate a stratified 100 of it) for chosen checkpoints:
# each STAGE:SEED evaluates runs/v2/<STAGE>-s<SEED>/final -> full300/heldout_<STAGE>_s<SEED>.json, with the null
# baselines on the same 300 tasks; `readme_tables.py --summary .../full300` compares the stages there. The point
# `base` evaluates the untrained model -> full300/heldout_base.json.
# Resumable like the other scripts (a finished evaluation is skipped).
#   run_full300.sh div64e512:0 div64e512_grpo12_l12:0 base ...   (one after another; start two for two lanes)
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
mkdir -p $R/full300
for point in "$@"; do
  if [[ $point == base ]]; then
    out=base policy=smollm2-135m
  else
    IFS=: read -r name s <<< "$point"
    [[ -e $W/$name-s$s/final/config.json ]] || { echo "no checkpoint $W/$name-s$s/final: train it first" >&2; exit 2; }
    out=${name}_s$s policy=hf:$W/$name-s$s/final
  fi
  stage $R/full300/heldout_$out.json "${AW[@]}" bench --suite heldout --policy $policy --out $R/full300/heldout_$out
done
