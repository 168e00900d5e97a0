#!/usr/bin/env bash
# Issue 37, third pass (2026-12-07, session 22; this 2-core CPU otherwise idle): the second pass's SFT recipe and its
# remedy at 4x the budget (128 oracle dialogues instead of 32), three training seeds each, scored in the same harness
# on the same 36 BFCL items as run_seeds.sh, and on 40 tasks of the held-out suite (in-domain, beside the untrained
# model), so that one table says whether training here moves the suite it was trained for and BFCL:
#   sft128           run_transfer.sh's recipe, DIALOGUES=128
#   sft128_callmix   the same with --call-share 0.25
# Usage: run_budget.sh LANE  (LANE 0 or 1; the two lanes split the runs and go side by side, one CPU thread each).
# On 2026-12-07 the two lanes shared the CPU with three other jobs (a 128-dialogue SFT took about 50 min instead of 21), so
# they were stopped after their first SFT and the remedy's three seeds run instead (run_budget.sh callmix SEED...).
# DIALOGUES=512 run_budget.sh callmix SEED... is the fourth pass (session 23): the issue's 512-dialogue budget, on this CPU.
# Resumable: finished checkpoints and result files are skipped. Wall times: train_wall_times.tsv, wall_times.tsv.
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=benchmarks/results/transfer PY=.venv/bin/python
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES="" DIALOGUES=${DIALOGUES:-128} THREADS=1 NTHEMES=64
BFCL_ST=simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,live_simple,live_multiple,live_parallel,live_parallel_multiple,irrelevance,live_irrelevance
score() {  # score SEED STAGE...: BFCL (the second pass's 36 items) and 40 held-out tasks
  $PY benchmarks/transfer.py --suites bfcl --episodes 36 --bfcl-categories $BFCL_ST --seeds "$1" "${@:2}" &&
  $PY benchmarks/transfer.py --suites heldout --episodes 40 --seeds "$1" "${@:2}"
}
train_and_score() {  # train_and_score SEED CALL_SHARE
  local s=$1 share=$2 name=sft$DIALOGUES dir=sft64e$DIALOGUES
  [[ $share != 0 ]] && name+=_callmix dir+=call
  CALL_SHARE=$share $R/run_transfer.sh sft "$s" && score "$s" --stage "$name=hf:runs/transfer/$dir-s{seed}/final"
}
case ${1:-} in
  0) $PY benchmarks/transfer.py --suites heldout --episodes 40 --stage untrained=smollm2-135m
     train_and_score 0 0.25; train_and_score 2 0.25; train_and_score 1 0 ;;
  1) train_and_score 1 0.25; train_and_score 0 0; train_and_score 2 0 ;;
  callmix) for s in "${@:2}"; do train_and_score "$s" 0.25; done ;;  # one lane's seeds of sft128_callmix only
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
