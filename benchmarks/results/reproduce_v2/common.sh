# What run_seeds.sh and run_diversity.sh share (sourced, from the repository root): paths, the CPU-only
# environment, `stage OUTPUT COMMAND...`, which runs COMMAND unless OUTPUT exists, logs its output to logs/ and
# appends "output, wall seconds, exit status, command" to wall_times.tsv, and `grpo_stage`, item 1's GRPO recipe.
R=benchmarks/results/reproduce_v2 W=runs/v2 PY=.venv/bin/python
AW=("$PY" -m agentworld_gym.cli)
export HF_HUB_OFFLINE=1 OMP_NUM_THREADS=${THREADS:-1} CUDA_VISIBLE_DEVICES=""
mkdir -p $R/logs $W
stage() {  # stage OUTPUT COMMAND...
  local out=$1; shift
  [[ -e $out ]] && return 0
  local t=$SECONDS; local log=${out//\//_}; "$@" > "$R/logs/${log}.log" 2>&1; local rc=$?
  printf '%s\t%s\trc=%s\t%s\n' "$out" "$((SECONDS - t))" "$rc" "$*" >> $R/wall_times.tsv
  return $rc
}
grpo_stage() {  # grpo_stage FROM_CHECKPOINT OUT_DIR SEED
  # GRPO on level-1 flagship tasks: a small SFT model wins only there, so only there do groups carry a signal
  stage $2/final/config.json "${AW[@]}" train grpo --model $1 --out-dir $2 --steps 4 --group-size 8 --tasks-per-step 2 \
    --lr 2e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 2 --micro-batch 2 --difficulties 1 --seed $3 \
    --device cpu --no-progress
}
