#!/usr/bin/env bash
# Issue 16 item 2 at this machine's scale: environment-diversity scaling at a fixed SFT budget.
# Each N:SEED trains SmolLM2-135M with the recipe of run_seeds.sh's SFT stage (64 oracle dialogues, batch 4 in
# micro-batches of 1 (the same gradient), lr 1e-4, levels 1-3, recovery share 0.33, graph tasks) on the first N
# themes of a permutation (seeded by SEED) of the pool's catalog + Toucan themes outside the held-out suite, so a
# seed's theme sets are nested (1 in 4 in 16 ...). Each model is evaluated on the same 100 held-out tasks as
# run_seeds.sh (bench seed 0) -> heldout_div<N>_s<SEED>.json. Resumable: a finished stage is skipped and SFT
# resumes from its last checkpoint (every 4 steps). Wall times go to wall_times.tsv.
# N:SEED:E trains on E dialogues instead of 64 (the budget question, same themes) -> heldout_div<N>e<E>_s<SEED>.json.
#   run_diversity.sh 1:0 256:0 16:0 ...   (one after another; start two of these for two lanes)
set -uo pipefail
cd "$(dirname "$0")/../../.."
source benchmarks/results/reproduce_v2/common.sh
for point in "$@"; do
  IFS=: read -r n s e <<< "$point"
  name=div$n${e:+e$e} dir=$W/div$n${e:+e$e}-s$s
  stage $dir/final/config.json "${AW[@]}" train sft --model smollm2-135m --out-dir $dir --themes "$(themes "$n" "$s")" \
    --n-examples "${e:-64}" --batch-size 4 --micro-batch 1 --lr 1e-4 --difficulties 1,2,3 --recovery-share 0.33 --task-kind graph \
    --save-every 4 --seed "$s" --device cpu --no-progress &&
  stage $R/heldout_${name}_s$s.json "${AW[@]}" bench --suite heldout --policy hf:$dir/final --episodes 100 \
    --out $R/heldout_${name}_s$s
done
