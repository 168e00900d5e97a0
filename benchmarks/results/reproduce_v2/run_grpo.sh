#!/usr/bin/env bash
# Issue 16 item 1: does GRPO add to a given SFT stage? For each STAGE:SEED, item 1's GRPO recipe (common.sh's
# grpo_stage) from runs/v2/<STAGE>-s<SEED>/final (an SFT stage of run_seeds.sh or run_diversity.sh, e.g. div64e256)
# -> runs/v2/<STAGE>_grpo-s<SEED>, evaluated on the same 100 held-out tasks -> heldout_<STAGE>_grpo_s<SEED>.json.
# STAGE:SEED:STEPS runs STEPS steps instead of the recipe's 4 (nothing else changes) -> <STAGE>_grpo<STEPS>.
# STAGE:SEED:STEPS:VARIANT also overrides the recipe with a variant below -> <STAGE>_grpo<STEPS>_<VARIANT>.
# GRPO plays the SFT stage's own training themes: a div<N> stage's N pool themes (the flagships for sft). A model
# fine-tuned on pool themes solved 0 of 16 level-1 flagship episodes in its first GRPO step (div64e256, seed 2): no signal.
# Resumable like the other scripts (a finished stage is skipped, GRPO resumes from its last checkpoint).
#   run_grpo.sh div64e256:0 div64e256:1 div64e512:0:12 ...   (one after another)
set -uo pipefail
# l12: levels 1-2 (the SFT model wins about 70% of held-out level-1 tasks, leaving level 1 little to learn, and about
# a third at level 2), 4 tasks x G=4 per step (twice the tasks seen for the same 16 episodes).
# l12lr: l12 at SFT's learning rate 1e-4 (5x): at 2e-5 the KL to the SFT model stayed below 0.04 and wins per step
# did not rise in 12 steps (the policy barely moved). At 1e-4 the greedy policy collapsed (seed 0: 26 -> 0 of 100,
# malformed calls); l12lr5 sits between, at 5e-5.
# l12ds: l12 with dynamic sampling: up to 3 rounds of 4 tasks until 4 groups have unequal rewards, and the step trains
# on those 16 episodes (l12 trained on 1-4 signal groups a step; the others' zero advantage only diluted the update).
declare -A VARIANTS=([l12]="--difficulties 1,2 --tasks-per-step 4 --group-size 4"
                     [l12lr]="--difficulties 1,2 --tasks-per-step 4 --group-size 4 --lr 1e-4"
                     [l12lr5]="--difficulties 1,2 --tasks-per-step 4 --group-size 4 --lr 5e-5"
                     [l12ds]="--difficulties 1,2 --tasks-per-step 4 --group-size 4 --signal-groups 4 --max-sample-rounds 3")
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
for point in "$@"; do
  IFS=: read -r name s steps variant <<< "$point"
  [[ -e $W/$name-s$s/final/config.json ]] || { echo "no SFT checkpoint $W/$name-s$s/final: train it first" >&2; exit 2; }
  extra=() out=${name}_grpo$steps${variant:+_$variant}
  [[ $name =~ ^div([0-9]+) ]] && extra=(--themes "$(themes "${BASH_REMATCH[1]}" "$s")")
  [[ -n $steps ]] && extra+=(--steps "$steps")
  if [[ -n $variant ]]; then
    [[ -n ${VARIANTS[$variant]:-} ]] || { echo "unknown variant $variant (known: ${!VARIANTS[*]})" >&2; exit 2; }
    read -ra more <<< "${VARIANTS[$variant]}"; extra+=("${more[@]}")
  fi
  grpo_stage $W/$name-s$s/final $W/$out-s$s $s "${extra[@]}" &&
  stage $R/heldout_${out}_s$s.json "${AW[@]}" bench --suite heldout --policy hf:$W/$out-s$s/final \
    --episodes 100 --out $R/heldout_${out}_s$s
done
