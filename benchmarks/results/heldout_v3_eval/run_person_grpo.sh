#!/usr/bin/env bash
# Issue 33 item 7, the SFT + GRPO half: the reproduction's best GRPO point so far (reproduce_v2/run_grpo.sh's
# "12 steps, l12": levels 1-2, 4 tasks x G = 4 per step, lr 2e-5, KL 0.01, 48 new tokens, 4 turns) from the
# person-trained SFT checkpoint of run_person.sh, its GRPO tasks also a person's requests (--requests person) on the
# same 64 themes, then scored like the SFT checkpoint on the held-out suite's v3 and v2 freezes (100 tasks each,
# bench seed 0, the null baselines on the same tasks). Resumable like run_person.sh. Arguments: training seeds.
#   benchmarks/results/heldout_v3_eval/run_person_grpo.sh 0
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/heldout_v3_eval/common.sh
for s in "${@:-0}"; do
  from=$W/person64e512-s$s/final dir=$W/person64e512_grpo12_l12-s$s
  [[ -e $from/config.json ]] || { echo "no SFT checkpoint $from: run run_person.sh $s first" >&2; exit 2; }
  grpo_stage $from $dir $s --steps 12 --difficulties 1,2 --tasks-per-step 4 --group-size 4 --requests person \
    --themes "$(themes 64 0)" || exit 1
  score person64e512_grpo12_l12_s$s $dir/final
done
