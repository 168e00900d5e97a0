#!/usr/bin/env bash
# Issue 33 item 7, the next measurement after run.sh: the same recipe ("SFT, 64 pool themes, 512 dialogues", seed 0,
# the same themes) trained on a person's requests instead of classic ones (AGENTWORLD_REQUESTS=person while the
# trainer synthesizes its tasks; nothing else changes), then scored like run.sh's checkpoint on the held-out suite's
# v3 and v2 freezes (100 tasks each, bench seed 0, the null baselines on the same tasks). The frozen suites are read
# from their files, so the variable only reaches the training tasks. Resumable like run.sh.
#   benchmarks/results/heldout_v3_eval/run_person.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
R=benchmarks/results/heldout_v3_eval   # `stage` logs and times here
mkdir -p $R/logs
dir=$W/person64e512-s0
AGENTWORLD_REQUESTS=person stage $dir/final/config.json "${AW[@]}" train sft --model smollm2-135m --out-dir $dir \
  --themes "$(themes 64 0)" --n-examples 512 --batch-size 4 --micro-batch 1 --lr 1e-4 --difficulties 1,2,3 \
  --recovery-share 0.33 --task-kind graph --save-every 4 --seed 0 --device cpu --no-progress || exit 1
stage $R/v3_person64e512_s0.json "${AW[@]}" bench --suite heldout --heldout v3 --policy hf:$dir/final --episodes 100 \
  --out $R/v3_person64e512_s0
stage $R/v2_person64e512_s0.json "${AW[@]}" bench --suite heldout --heldout v2 --policy hf:$dir/final --episodes 100 \
  --out $R/v2_person64e512_s0
