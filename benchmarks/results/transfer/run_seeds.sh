#!/usr/bin/env bash
# Issue 37, second pass (2026-12-07, this 2-core CPU shared with a TRL run and three helpers' tests): three training
# seeds of each stage at the CPU's SFT budget (32 dialogues), scored in one harness on BFCL's 12 single-turn
# categories x 3 items (36, the same items for every stage; the untrained model once):
#   sft          the "SFT, 64 pool themes" recipe (run_transfer.sh) at 32 dialogues
#   sft_callmix  the remedy: the same with --call-share 0.25 (a quarter of the examples are one reply in the plain
#                function-calling format, half of those with no fitting tool and a plain-text reply)
#   sft_1theme   the diversity control: the same budget on 1 theme
# Resumable: finished checkpoints and result files are skipped. Wall times: train_wall_times.tsv, wall_times.tsv.
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=benchmarks/results/transfer PY=.venv/bin/python
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES="" DIALOGUES=32 THREADS=1
BFCL_ST=simple_python,simple_java,simple_javascript,multiple,parallel,parallel_multiple,live_simple,live_multiple,live_parallel,live_parallel_multiple,irrelevance,live_irrelevance
score() {  # score SEED STAGE...
  local s=$1; shift
  $PY benchmarks/transfer.py --suites bfcl --episodes 36 --bfcl-categories $BFCL_ST --seeds "$s" "$@"
}
score 0 --stage untrained=smollm2-135m
# Seed by seed, so that a cut-off run has as many seeds of each stage; the 1-theme control last.
for s in 0 1 2; do
  NTHEMES=64 $R/run_transfer.sh sft $s && score $s --stage "sft=hf:runs/transfer/sft64e32-s{seed}/final"
  NTHEMES=64 CALL_SHARE=0.25 $R/run_transfer.sh sft $s && score $s --stage "sft_callmix=hf:runs/transfer/sft64e32call-s{seed}/final"
done
for s in 0 1 2; do
  NTHEMES=1 $R/run_transfer.sh sft $s && score $s --stage "sft_1theme=hf:runs/transfer/sft1e32-s{seed}/final"
done
