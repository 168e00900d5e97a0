# What run_seeds.sh, run_diversity.sh and run_grpo.sh share (sourced, from the repository root): paths, the CPU-only
# environment, `stage OUTPUT COMMAND...`, which runs COMMAND unless OUTPUT exists, logs its output to logs/ and
# appends "output, wall seconds, exit status, command" to wall_times.tsv, `themes N SEED` (the training themes of
# run_diversity.sh) and `grpo_stage`, item 1's GRPO recipe.
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
themes() {  # themes N SEED: the first N of a seeded permutation of the pool's catalog + Toucan themes outside the held-out suite
  $PY - "$1" "$2" <<'PY'
import sys
import numpy as np
from agentworld_gym import envs
from agentworld_gym.suites.core import heldout_themes
held = set(heldout_themes())
pool = sorted(t for s in ("catalog", "toucan") for t in envs.theme_ids(source=s) if t not in held)
n, seed = int(sys.argv[1]), int(sys.argv[2])
print(",".join(pool[i] for i in np.random.default_rng([seed, 16]).permutation(len(pool))[:n]))
PY
}
grpo_stage() {  # grpo_stage FROM_CHECKPOINT OUT_DIR SEED [TRAINER ARGS...]
  # level-1 tasks (default: the flagships): a small SFT model wins only there, so only there do groups carry a signal
  stage $2/final/config.json "${AW[@]}" train grpo --model $1 --out-dir $2 --steps 4 --group-size 8 --tasks-per-step 2 \
    --lr 2e-5 --kl-coef 0.01 --max-new-tokens 48 --max-turns 4 --save-every 2 --micro-batch 2 --difficulties 1 --seed $3 \
    --device cpu --no-progress "${@:4}"
}
