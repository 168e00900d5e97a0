#!/usr/bin/env bash
# Issue 16 item 3 at this machine's scale: evolve rounds trained by GRPO, targeted vs untargeted tasks.
# Each SEED:ARM starts from the 16-theme SFT checkpoint of run_diversity.sh's seed SEED (runs/v2/div16-s<SEED>,
# 5.7% on the held-out suite) and runs 2 rounds of evaluate -> diagnose -> target -> GRPO on an arena of 20 themes
# (one per category of the flagship + catalog pool, none of them or their siblings trained on), 2 fresh level-1 tasks
# each (40 per round, the same for every seed and arm). A round's GRPO budget: 8 tasks (6 from the diagnosis, or
# uniform over the arena cells in the untargeted arm, + 2 replay), 2 steps of 4 tasks x 4 samples, lr 2e-5,
# micro-batches of 2 (two lanes of micro-batch 8 ran this 24 GiB machine out of memory).
# SEED:frozen is the control: the start checkpoint, never trained, on each round's fresh arena tasks.
# Resumable per step; with no arguments it only merges the finished runs into arena/evolution.json and README.
#   run_evolve.sh 0:targeted 0:untargeted 0:frozen ...   (one after another; start two of these for two lanes)
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
evolve() {  # evolve SEEDS ARMS
  "$PY" benchmarks/arena_scaling.py --model smollm2-135m --device cpu --threads "${THREADS:-1}" --sources flagship,catalog \
    --arena-per-category 1 --theme-counts 16 --skip-scaling --evolve-from "$W/div16-s{seed}/final" --difficulties 1 \
    --eval-tasks 2 --max-turns 4 --max-new-tokens 48 --rounds 2 --evolve-method grpo --evolve-train-tasks 8 \
    --evolve-steps 2 --evolve-group-size 4 --evolve-tasks-per-step 4 --evolve-lr 2e-5 --evolve-micro-batch 2 --seed 0 --seeds "$1" \
    --evolve-arms "$2" --out $R/arena --work $W/arena
}
for point in "$@"; do
  s=${point%%:*} arm=${point#*:}
  done_file=summary.json; [[ $arm == frozen ]] && done_file=round_2.jsonl
  stage $W/arena/evolve/${arm}_s$s/$done_file evolve "$s" "$arm"
done
[[ $# -eq 0 ]] && evolve 0,1,2 targeted,untargeted,frozen
