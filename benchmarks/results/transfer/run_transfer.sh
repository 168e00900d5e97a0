#!/usr/bin/env bash
# Issue 37 at this machine's scale (2 shared CPU cores, no GPU; README.md here says what was reduced and why).
# Per training seed: SFT of SmolLM2-135M-Instruct with the "SFT, 64 pool themes" recipe of reproduce_v2/run_diversity.sh
# (64 oracle dialogues, batch 4 in micro-batches of 1, lr 1e-4, levels 1-3, recovery share 0.33, graph tasks) on 64
# themes drawn (seeded) from the pool's catalog + Toucan themes outside the held-out suite AND outside the overlap
# audit's list (overlap.json: themes sharing tools, arguments or instruction 8-grams with BFCL or tau2).
# Then benchmarks/transfer.py scores the untrained model and every seed's checkpoint in one harness on fixed seeded
# item subsets. Resumable: a finished SFT (final/config.json) or result file is skipped; SFT resumes from checkpoints.
#   benchmarks/results/transfer/run_transfer.sh sft 0 1 2     # train seeds
#   benchmarks/results/transfer/run_transfer.sh eval --stage untrained=smollm2-135m
#   benchmarks/results/transfer/run_transfer.sh eval --stage untrained=smollm2-135m --stage sft=hf:runs/transfer/sft64-s{seed}/final --seeds 0
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=benchmarks/results/transfer W=runs/transfer PY=.venv/bin/python
AW=("$PY" -m agentworld_gym.cli)
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=${THREADS:-1} CUDA_VISIBLE_DEVICES=""
mkdir -p $R/logs $W
stage() {  # stage OUTPUT COMMAND...: run COMMAND unless OUTPUT exists; log "output, wall seconds, exit status, command"
  local out=$1; shift
  [[ -e $out ]] && return 0
  local t=$SECONDS; local log=${out//\//_}; "$@" > "$R/logs/${log}.log" 2>&1; local rc=$?
  printf '%s\t%s\trc=%s\t%s\n' "$out" "$((SECONDS - t))" "$rc" "$*" >> $R/train_wall_times.tsv
  return $rc
}
themes() {  # themes N SEED: the first N of a seeded permutation of the clean pool
  $PY - "$1" "$2" <<'PY'
import json, sys
import numpy as np
from agentworld_gym import envs
from agentworld_gym.suites import heldout_themes
excluded = set(heldout_themes()) | set(json.load(open("benchmarks/results/transfer/overlap.json"))["excluded"])
pool = sorted(t for s in ("catalog", "toucan") for t in envs.theme_ids(source=s) if t not in excluded)
n, seed = int(sys.argv[1]), int(sys.argv[2])
print(",".join(pool[i] for i in np.random.default_rng([seed, 37]).permutation(len(pool))[:n]))
PY
}
# The fixed item subsets (bench seed 0, stratified; the same items for every stage): BFCL's 12 single-turn offline
# categories, 4 items each (multi-turn left out: README.md says why), tau2 (airline, mock, retail; scripted user) 12
# episodes, the held-out suite 40 tasks. One transfer.py call per suite, since the item counts differ.
BFCL_ST=simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,live_simple,live_multiple,live_parallel,live_parallel_multiple,irrelevance,live_irrelevance
evaluate() {  # evaluate STAGE_ARGS...: every suite of the stages given (transfer.py skips finished result files)
  $PY benchmarks/transfer.py --suites bfcl --episodes 48 --bfcl-categories $BFCL_ST "$@" &&
  $PY benchmarks/transfer.py --suites heldout --episodes 40 "$@" &&
  $PY benchmarks/transfer.py --suites tau2 --episodes 12 "$@"
}
# SFT budget and theme count (defaults: this CPU run); the issue's full design on a GPU, e.g.
#   DEVICE=cuda DIALOGUES=512 run_transfer.sh sft 0 1 2        -> runs/transfer/sft64e512-s<seed>
#   DEVICE=cuda DIALOGUES=512 NTHEMES=1 run_transfer.sh sft 0 1 2   (the diversity control: 1, 64, 512 themes)
#   DEVICE=cuda run_transfer.sh grpo sft64e512 0 1 2             -> runs/transfer/sft64e512_grpo-s<seed>
DIALOGUES=${DIALOGUES:-64} NTHEMES=${NTHEMES:-64} DEVICE=${DEVICE:-cpu} CALL_SHARE=${CALL_SHARE:-0}  # the remedy: --call-share
case ${1:-} in
  sft) shift
    for s in "$@"; do
      dir=$W/sft$NTHEMES; [[ $DIALOGUES != 64 ]] && dir+=e$DIALOGUES; [[ $CALL_SHARE != 0 ]] && dir+=call; dir+=-s$s
      stage $dir/final/config.json "${AW[@]}" train sft --model smollm2-135m --out-dir $dir --themes "$(themes "$NTHEMES" "$s")" \
        --n-examples "$DIALOGUES" --batch-size 4 --micro-batch 1 --lr 1e-4 --difficulties 1,2,3 --recovery-share 0.33 --task-kind graph \
        --call-share "$CALL_SHARE" --save-every 4 --seed "$s" --device "$DEVICE" --no-progress
    done ;;
  grpo) from=$2; shift 2  # reproduce_v2/run_grpo.sh's 12-step l12 recipe on the SFT stage's themes (the best held-out point so far, inside the noise of SFT)
    for s in "$@"; do
      stage $W/${from}_grpo-s$s/final/config.json "${AW[@]}" train grpo --model $W/$from-s$s/final --out-dir $W/${from}_grpo-s$s \
        --steps 12 --group-size 4 --tasks-per-step 4 --lr 2e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 2 \
        --micro-batch 2 --difficulties 1,2 --themes "$(themes "$NTHEMES" "$s")" --seed "$s" --device "$DEVICE" --no-progress
    done ;;
  eval) shift
    evaluate "$@" ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac
