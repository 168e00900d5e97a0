#!/usr/bin/env bash
# What this CPU run did instead of waiting for the 16-step (64-dialogue) SFT: the trainer's learning rate is constant,
# so its step-8 checkpoint is SFT on the first 32 of its 64 shuffled dialogues. For each seed: wait for ckpt-000008,
# hard-link it to runs/transfer/sft32-s<seed>/final, stop that seed's trainer (by the PID given), then score the
# checkpoint on the three suites at once (one process per suite, the same items as the untrained stage).
#   run_cut.sh SEED TRAINER_PID
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=benchmarks/results/transfer W=runs/transfer PY=.venv/bin/python s=$1 pid=$2
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=""
BFCL_ST=simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,live_simple,live_multiple,live_parallel,live_parallel_multiple,irrelevance,live_irrelevance
until [[ -d $W/sft64-s$s/ckpt-000008 ]]; do sleep 15; done
mkdir -p $W/sft32-s$s && cp -al $W/sft64-s$s/ckpt-000008 $W/sft32-s$s/final && rm -f $W/sft32-s$s/final/trainer_state.pt
kill "$pid"
echo "sft32 s$s: ckpt-000008 of $W/sft64-s$s at $(date -u +%FT%TZ), trainer $pid stopped" >> $R/train_wall_times.tsv
# the untrained stage rides along only once its result for the suite exists (then it is skipped and its nulls are not redone)
stages() { local st=(--stage "sft32=hf:$W/sft32-s{seed}/final" --seeds "$s"); [[ -e $R/runs/untrained/base/$1.json ]] && st+=(--stage untrained=smollm2-135m); echo "${st[@]}"; }
$PY benchmarks/transfer.py --suites bfcl --episodes 48 --bfcl-categories $BFCL_ST $(stages bfcl) > $R/logs/sft32_s${s}_bfcl.log 2>&1 &
$PY benchmarks/transfer.py --suites heldout --episodes 40 $(stages heldout) > $R/logs/sft32_s${s}_heldout.log 2>&1 &
$PY benchmarks/transfer.py --suites tau2 --episodes 12 $(stages tau2) > $R/logs/sft32_s${s}_tau2.log 2>&1 &
wait
