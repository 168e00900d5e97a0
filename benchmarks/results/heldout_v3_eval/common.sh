# What run.sh, run_person.sh, run_person_grpo.sh and run_person_grpo_cut.sh share (sourced, from the repository root):
# reproduce_v2/common.sh (paths, `stage`, `themes`, `grpo_stage`) with `stage` logging and timing here, and
# `score NAME CHECKPOINT`: the checkpoint on 100 tasks of the v3 and then the v2 freeze (bench seed 0, the null
# baselines on the same tasks) -> v3_NAME.json, v2_NAME.json.
source benchmarks/results/reproduce_v2/common.sh
R=benchmarks/results/heldout_v3_eval   # `stage` logs and times here
mkdir -p $R/logs
score() {  # score NAME CHECKPOINT
  for v in v3 v2; do
    stage $R/${v}_$1.json "${AW[@]}" bench --suite heldout --heldout $v --policy hf:$2 --episodes 100 --out $R/${v}_$1
  done
}
