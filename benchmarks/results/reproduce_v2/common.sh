# What run_seeds.sh and run_diversity.sh share (sourced, from the repository root): paths, the CPU-only
# environment, and `stage OUTPUT COMMAND...`, which runs COMMAND unless OUTPUT exists, logs its output to
# logs/ and appends "output, wall seconds, exit status, command" to wall_times.tsv.
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
