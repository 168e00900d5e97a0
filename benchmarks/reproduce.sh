#!/usr/bin/env bash
# The whole reproduction with any Hugging Face causal LM, stage by stage:
#   per training seed: sft -> grpo -> held-out eval of both; then the untrained model and the reference policies
#   (oracle, ...; every result file also carries the best null baseline on its tasks) -> diversity scaling ->
#   evolve rounds (GRPO on targeted tasks vs as many untargeted ones, beside the never-trained start) -> summary (mean and intervals over seeds)
# The held-out tasks are the same for every seed (the bench seed stays 0); --seeds only changes training.
# Every stage is skipped when its output exists, and the trainers resume from their checkpoints, so re-running
# after an interruption continues where it stopped. Each command and its wall time go to OUT/wall_times.tsv.
# The same script runs on a CPU with the small default model and on GPUs with a bigger one:
#
#   benchmarks/reproduce.sh                                        # CPU, SmolLM2-135M, the small budget
#   benchmarks/reproduce.sh --smoke --model /path/to/tiny/model    # every stage at a minimal size (seconds)
#   benchmarks/reproduce.sh --seeds 0,1,2                          # the same, three training seeds
#   benchmarks/reproduce.sh --model Qwen/Qwen2.5-1.5B-Instruct --device cuda --gpus 8 --seeds 0,1,2 \
#       --sft-examples 2048 --grpo-steps 200 --group-size 8 --tasks-per-step 32 --eval-episodes 0 \
#       --theme-counts 0,1,4,16,64,256 --sources flagship,catalog,toucan --scaling-examples 2048 --rounds 3 --evolve-train-tasks 512 \
#       --evolve-steps 20
#
# Paths are relative to the repository root. --gpus N > 1 runs GRPO data-parallel (torchrun; one process per
# GPU, gradients averaged by DDP); SFT runs in one process. --eval-dtype bfloat16 evaluates in bfloat16 (half the memory,
# faster on GPUs; training stays float32; greedy tokens differ slightly from float32 ones). --eval-episodes 0 evaluates every held-out task;
# --signal-groups N turns on the GRPO stage's dynamic sampling (train on N groups whose rewards differ; 0: off).
# --only sft,eval_sft runs just those stages (names as in the log; sft means sft_s<seed> of every seed).
# Scaling and evolve are benchmarks/arena_scaling.py; --evolve-arms targeted, untargeted or frozen (the control: the start
# checkpoint, never trained, on each round's fresh tasks) runs one arm.
# The summary (OUT/summary.md, summary.json) and the README table come from benchmarks/readme_tables.py.
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=smollm2-135m DEVICE=cpu GPUS=1 EVAL_DTYPE=float32 PY=${PYTHON:-.venv/bin/python}
OUT=benchmarks/results/reproduce_v2 WORK=runs/reproduce SEEDS=0
SFT_EXAMPLES=64 SFT_BATCH=4 SFT_MICRO_BATCH= SFT_LR=1e-4 TASK_KIND=mixed SFT_DIFFICULTIES=1,2 RECOVERY_SHARE=0
GRPO_STEPS=3 GROUP_SIZE=4 TASKS_PER_STEP=4 SIGNAL_GROUPS=0 GRPO_LR=1e-5 MAX_NEW_TOKENS=48 MAX_TURNS=4
EVAL_EPISODES=100 NULL_POLICIES=oracle
THEME_COUNTS=0,1,4,16,64 SOURCES=flagship,catalog SCALING_EXAMPLES=64 SCALING_EPOCHS=1 SCALING_EVAL_TASKS=2 ARENA_PER_CATEGORY=1
ROUNDS=2 EVOLVE_TRAIN_TASKS=32 EVOLVE_METHOD=grpo EVOLVE_ARMS=targeted,untargeted,frozen EVOLVE_STEPS=4 THREADS=1 SMOKE=0 ONLY=

usage() { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; grep -o '^ *--[a-z-]*)' "$0" | tr -d ' )' | paste -sd' '; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --model) MODEL=$2; shift ;;
    --device) DEVICE=$2; shift ;;
    --eval-dtype) EVAL_DTYPE=$2; shift ;;
    --gpus) GPUS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --work) WORK=$2; shift ;;
    --python) PY=$2; shift ;;
    --sft-examples) SFT_EXAMPLES=$2; shift ;;
    --seeds) SEEDS=$2; shift ;;
    --sft-batch) SFT_BATCH=$2; shift ;;
    --sft-micro-batch) SFT_MICRO_BATCH=$2; shift ;;
    --task-kind) TASK_KIND=$2; shift ;;
    --sft-difficulties) SFT_DIFFICULTIES=$2; shift ;;
    --recovery-share) RECOVERY_SHARE=$2; shift ;;
    --grpo-steps) GRPO_STEPS=$2; shift ;;
    --group-size) GROUP_SIZE=$2; shift ;;
    --tasks-per-step) TASKS_PER_STEP=$2; shift ;;
    --signal-groups) SIGNAL_GROUPS=$2; shift ;;
    --max-new-tokens) MAX_NEW_TOKENS=$2; shift ;;
    --eval-episodes) EVAL_EPISODES=$2; shift ;;
    --null-policies) NULL_POLICIES=$2; shift ;;
    --theme-counts) THEME_COUNTS=$2; shift ;;
    --sources) SOURCES=$2; shift ;;
    --scaling-examples) SCALING_EXAMPLES=$2; shift ;;
    --scaling-epochs) SCALING_EPOCHS=$2; shift ;;
    --scaling-eval-tasks) SCALING_EVAL_TASKS=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --evolve-train-tasks) EVOLVE_TRAIN_TASKS=$2; shift ;;
    --evolve-method) EVOLVE_METHOD=$2; shift ;;
    --evolve-arms) EVOLVE_ARMS=$2; shift ;;
    --evolve-steps) EVOLVE_STEPS=$2; shift ;;
    --threads) THREADS=$2; shift ;;
    --smoke) SMOKE=1 ;;
    --only) ONLY=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "reproduce.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ $SMOKE == 1 ]]; then  # every stage once, at the smallest size that still exercises it
  SFT_EXAMPLES=2 SFT_BATCH=2 GRPO_STEPS=1 GROUP_SIZE=2 TASKS_PER_STEP=1 MAX_NEW_TOKENS=4 MAX_TURNS=2 EVAL_EPISODES=2
  THEME_COUNTS=0,1 SOURCES=flagship SCALING_EXAMPLES=2 SCALING_EVAL_TASKS=1 ROUNDS=1 EVOLVE_TRAIN_TASKS=2 EVOLVE_STEPS=1
fi

# on a CPU one dialogue per forward pass is fastest (no padding); on a GPU the whole batch at once
[[ -z $SFT_MICRO_BATCH ]] && { [[ $DEVICE == cpu ]] && SFT_MICRO_BATCH=1 || SFT_MICRO_BATCH=0; }
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-1} OMP_NUM_THREADS=$THREADS
[[ $DEVICE == cpu ]] && export CUDA_VISIBLE_DEVICES=""  # keep every stage (the bench ones pick cuda when they see it) on the CPU
mkdir -p "$OUT" "$WORK"
LOG=$OUT/wall_times.tsv
AW=("$PY" -m agentworld_gym.cli)
LAUNCH=("${AW[@]}")
[[ $GPUS -gt 1 ]] && LAUNCH=("$PY" -m torch.distributed.run --nproc-per-node "$GPUS" -m agentworld_gym.cli)
EPISODES=(); [[ $EVAL_EPISODES -gt 0 ]] && EPISODES=(--episodes "$EVAL_EPISODES")

# stage NAME OUTPUT COMMAND...: run COMMAND unless OUTPUT exists; log "stage, wall seconds, status, command"
stage() {
  local name=$1 output=$2; shift 2
  [[ -z $ONLY || ",$ONLY," == *",$name,"* || ",$ONLY," == *",${name%_s[0-9]*},"* ]] || return 0
  if [[ -e $output ]]; then
    printf '%s\t0\tskipped (%s exists)\t%s\n' "$name" "$output" "$*" | tee -a "$LOG"
    return
  fi
  echo "== $name: $*"
  local start=$SECONDS
  "$@"
  printf '%s\t%s\tdone\t%s\n' "$name" "$((SECONDS - start))" "$*" | tee -a "$LOG"
}

# 1-3. per training seed: cold-start SFT on oracle dialogues (held-out themes excluded), multi-environment GRPO from
# it, and both checkpoints on the held-out suite (the same tasks for every seed)
for s in ${SEEDS//,/ }; do
  stage "sft_s$s" "$WORK/sft-s$s/final/config.json" "${AW[@]}" train sft --model "$MODEL" --out-dir "$WORK/sft-s$s" \
    --n-examples "$SFT_EXAMPLES" --batch-size "$SFT_BATCH" --micro-batch "$SFT_MICRO_BATCH" --lr "$SFT_LR" \
    --task-kind "$TASK_KIND" --difficulties "$SFT_DIFFICULTIES" \
    --recovery-share "$RECOVERY_SHARE" --save-every 4 --seed "$s" --device "$DEVICE" --no-progress
  stage "grpo_s$s" "$WORK/grpo-s$s/final/config.json" "${LAUNCH[@]}" train grpo --model "$WORK/sft-s$s/final" --out-dir "$WORK/grpo-s$s" \
    --steps "$GRPO_STEPS" --group-size "$GROUP_SIZE" --tasks-per-step "$TASKS_PER_STEP" --signal-groups "$SIGNAL_GROUPS" \
    --lr "$GRPO_LR" --kl-coef 0.01 --max-new-tokens "$MAX_NEW_TOKENS" --max-turns "$MAX_TURNS" --save-every 1 --difficulties 1,2 --task-kind "$TASK_KIND" --seed "$s" --device "$DEVICE" --no-progress
  for run in "sft:$WORK/sft-s$s/final" "sft_grpo:$WORK/grpo-s$s/final"; do
    stage "eval_${run%%:*}_s$s" "$OUT/heldout_${run%%:*}_s$s.json" "${AW[@]}" bench --suite heldout --policy "hf:${run#*:}" \
      "${EPISODES[@]}" --device "$DEVICE" --dtype "$EVAL_DTYPE" --out "$OUT/heldout_${run%%:*}_s$s"
  done
done
# the untrained model (greedy: one run serves every seed) and the reference policies on the same tasks
stage eval_base "$OUT/heldout_base.json" "${AW[@]}" bench --suite heldout --policy "hf:$MODEL" "${EPISODES[@]}" --device "$DEVICE" --dtype "$EVAL_DTYPE" \
  --out "$OUT/heldout_base"
for null in ${NULL_POLICIES//,/ }; do
  stage "eval_null_$null" "$OUT/heldout_null_$null.json" "${AW[@]}" bench --suite heldout --policy "$null" "${EPISODES[@]}" \
    --out "$OUT/heldout_null_$null"
done
# 4-5. environment-diversity scaling at a fixed SFT budget, then evolve rounds (targeted vs untargeted) from the most diverse checkpoint
SCALING=("$PY" benchmarks/arena_scaling.py --model "hf:$MODEL" --device "$DEVICE" --threads "$THREADS" --sources "$SOURCES"
  --theme-counts "$THEME_COUNTS" --examples "$SCALING_EXAMPLES" --epochs "$SCALING_EPOCHS" --batch-size "$SFT_BATCH" --lr "$SFT_LR" --max-seq-len 1024
  --arena-per-category "$ARENA_PER_CATEGORY" --eval-tasks "$SCALING_EVAL_TASKS" --max-new-tokens "$MAX_NEW_TOKENS" --seeds "$SEEDS"
  --rounds "$ROUNDS" --evolve-train-tasks "$EVOLVE_TRAIN_TASKS" --evolve-method "$EVOLVE_METHOD" --evolve-arms "$EVOLVE_ARMS"
  --evolve-steps "$EVOLVE_STEPS" --evolve-group-size "$GROUP_SIZE" --evolve-tasks-per-step "$TASKS_PER_STEP" --evolve-lr "$GRPO_LR"
  --evolve-epochs 1 --out "$OUT/arena" --work "$WORK/arena")
stage scaling "$OUT/arena/scaling.json" "${SCALING[@]}" --skip-evolution
stage evolve "$OUT/arena/evolution.json" "${SCALING[@]}" --skip-scaling
# 6. the summary over seeds from whatever result files exist (cheap: always rewritten)
[[ -z $ONLY || ",$ONLY," == *",summary,"* ]] && "$PY" benchmarks/readme_tables.py --summary "$OUT"
echo "all stages done; wall times in $LOG"
