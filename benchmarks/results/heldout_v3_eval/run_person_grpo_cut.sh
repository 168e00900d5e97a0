#!/usr/bin/env bash
# Issue 33 item 7 on this CPU (session 22): run_person_grpo.sh's 12-step GRPO ran at about 15 min a step beside four
# other jobs, so its step-4 checkpoint is taken as the SFT + GRPO point, as reproduce_v2's standard recipe (4 steps)
# would give: the learning rate is constant, so the first 4 steps of the 12-step run are a 4-step run of the same
# recipe. Waits for ckpt-000004, stops the trainer (PID given), and scores it like run_person_grpo.sh would.
#   benchmarks/results/heldout_v3_eval/run_person_grpo_cut.sh SEED TRAINER_PID
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/heldout_v3_eval/common.sh
s=$1 pid=$2
from=$W/person64e512_grpo12_l12-s$s/ckpt-000004 dir=$W/person64e512_grpo4_l12-s$s
until [[ -e $from/manifest.json ]]; do sleep 20; done
sleep 10  # the checkpoint's files are written before its manifest; give the last write a moment
mkdir -p $dir && cp -al $from $dir/final && rm -f $dir/final/trainer_state.pt
kill "$pid"
printf '%s\t%s\trc=%s\t%s\n' "$dir/final" 0 0 "ckpt-000004 of $W/person64e512_grpo12_l12-s$s at $(date -u +%FT%TZ), trainer $pid stopped" >> $R/wall_times.tsv
score person64e512_grpo4_l12_s$s $dir/final
