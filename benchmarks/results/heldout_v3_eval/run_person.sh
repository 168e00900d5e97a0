#!/usr/bin/env bash
# Issue 33 item 7, the next measurement after run.sh: the same recipe ("SFT, 64 pool themes, 512 dialogues", seed 0,
# the same themes) trained on a person's requests instead of classic ones (AGENTWORLD_REQUESTS=person while the
# trainer synthesizes its tasks; nothing else changes), then scored like run.sh's checkpoint on the held-out suite's
# v3 and v2 freezes (100 tasks each, bench seed 0, the null baselines on the same tasks). The frozen suites are read
# from their files, so the variable only reaches the training tasks. Resumable like run.sh. Arguments: training seeds
# (default 0; the themes stay seed 0's, as in run.sh, so seeds differ only in tasks, order and initialisation).
#   benchmarks/results/heldout_v3_eval/run_person.sh 0 1
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/heldout_v3_eval/common.sh
for s in "${@:-0}"; do
  dir=$W/person64e512-s$s
  AGENTWORLD_REQUESTS=person stage $dir/final/config.json "${AW[@]}" train sft --model smollm2-135m --out-dir $dir \
    --themes "$(themes 64 0)" --n-examples 512 --batch-size 4 --micro-batch 1 --lr 1e-4 --difficulties 1,2,3 \
    --recovery-share 0.33 --task-kind graph --save-every 4 --seed $s --device cpu --no-progress || exit 1
  score person64e512_s$s $dir/final
done
