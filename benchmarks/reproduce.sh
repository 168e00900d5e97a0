#!/usr/bin/env bash
# The whole reproduction with any Hugging Face causal LM, stage by stage:
#   sft -> grpo -> held-out eval (untrained, SFT, SFT+GRPO, beside null baselines) -> diversity scaling -> evolve rounds
# Every stage is skipped when its output exists, and the trainers resume from their checkpoints, so re-running
# after an interruption continues where it stopped. Each command and its wall time go to OUT/wall_times.tsv.
# The same script runs on a CPU with the small default model and on GPUs with a bigger one:
#
#   benchmarks/reproduce.sh                                        # CPU, SmolLM2-135M, the small budget
#   benchmarks/reproduce.sh --smoke --model /path/to/tiny/model    # every stage at a minimal size (seconds)
#   benchmarks/reproduce.sh --model Qwen/Qwen2.5-1.5B-Instruct --device cuda --gpus 8 \
#       --sft-examples 2048 --grpo-steps 200 --group-size 8 --tasks-per-step 32 --eval-episodes 0 \
#       --theme-counts 0,1,4,16,64,256 --sources flagship,catalog,toucan --scaling-examples 2048 --rounds 3 --evolve-train-tasks 512
#
# Paths are relative to the repository root. --gpus N > 1 runs GRPO data-parallel (torchrun; one process per
# GPU, gradients averaged by DDP); SFT runs in one process. --eval-episodes 0 evaluates every held-out task;
# --only sft,eval_sft runs just those stages (names as in the log). Scaling and evolve are benchmarks/arena_scaling.py.
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL=smollm2-135m DEVICE=cpu GPUS=1 PY=${PYTHON:-.venv/bin/python}
OUT=benchmarks/results/reproduce WORK=runs/reproduce
SFT_EXAMPLES=64 SFT_BATCH=4 SFT_LR=1e-4
GRPO_STEPS=3 GROUP_SIZE=4 TASKS_PER_STEP=4 GRPO_LR=1e-5 MAX_NEW_TOKENS=48 MAX_TURNS=4
EVAL_EPISODES=28 NULL_POLICIES=random
THEME_COUNTS=0,1,4,16,64 SOURCES=flagship,catalog SCALING_EXAMPLES=64 SCALING_EPOCHS=1 SCALING_EVAL_TASKS=2 ARENA_PER_CATEGORY=1
ROUNDS=2 EVOLVE_TRAIN_TASKS=32 THREADS=1 SMOKE=0 ONLY=

usage() { sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; grep -o '^ *--[a-z-]*)' "$0" | tr -d ' )' | paste -sd' '; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --model) MODEL=$2; shift ;;
    --device) DEVICE=$2; shift ;;
    --gpus) GPUS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --work) WORK=$2; shift ;;
    --python) PY=$2; shift ;;
    --sft-examples) SFT_EXAMPLES=$2; shift ;;
    --sft-batch) SFT_BATCH=$2; shift ;;
    --grpo-steps) GRPO_STEPS=$2; shift ;;
    --group-size) GROUP_SIZE=$2; shift ;;
    --tasks-per-step) TASKS_PER_STEP=$2; shift ;;
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
  THEME_COUNTS=0,1 SOURCES=flagship SCALING_EXAMPLES=2 SCALING_EVAL_TASKS=1 ROUNDS=1 EVOLVE_TRAIN_TASKS=2
fi

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
  [[ -z $ONLY || ",$ONLY," == *",$name,"* ]] || return 0
  if [[ -e $output ]]; then
    printf '%s\t0\tskipped (%s exists)\t%s\n' "$name" "$output" "$*" | tee -a "$LOG"
    return
  fi
  echo "== $name: $*"
  local start=$SECONDS
  "$@"
  printf '%s\t%s\tdone\t%s\n' "$name" "$((SECONDS - start))" "$*" | tee -a "$LOG"
}

# 1. cold-start SFT on oracle dialogues (held-out themes excluded)
stage sft "$WORK/sft/final/config.json" "${AW[@]}" train sft --model "$MODEL" --out-dir "$WORK/sft" \
  --n-examples "$SFT_EXAMPLES" --batch-size "$SFT_BATCH" --lr "$SFT_LR" --difficulties 1,2 --save-every 4 --device "$DEVICE" --no-progress
# 2. multi-environment GRPO from the SFT checkpoint
stage grpo "$WORK/grpo/final/config.json" "${LAUNCH[@]}" train grpo --model "$WORK/sft/final" --out-dir "$WORK/grpo" \
  --steps "$GRPO_STEPS" --group-size "$GROUP_SIZE" --tasks-per-step "$TASKS_PER_STEP" --lr "$GRPO_LR" --kl-coef 0.01 \
  --max-new-tokens "$MAX_NEW_TOKENS" --max-turns "$MAX_TURNS" --save-every 1 --difficulties 1,2 --device "$DEVICE" --no-progress
# 3. the held-out suite: the untrained model, SFT, SFT+GRPO and the null baselines on the same tasks
for run in "base:hf:$MODEL" "sft:hf:$WORK/sft/final" "sft_grpo:hf:$WORK/grpo/final"; do
  stage "eval_${run%%:*}" "$OUT/heldout_${run%%:*}.json" "${AW[@]}" bench --suite heldout --policy "${run#*:}" \
    "${EPISODES[@]}" --out "$OUT/heldout_${run%%:*}"
done
for null in ${NULL_POLICIES//,/ }; do
  stage "eval_$null" "$OUT/heldout_$null.json" "${AW[@]}" bench --suite heldout --policy "$null" "${EPISODES[@]}" --out "$OUT/heldout_$null"
done
# 4-5. environment-diversity scaling at a fixed SFT budget, then evolve rounds from the most diverse checkpoint
SCALING=("$PY" benchmarks/arena_scaling.py --model "hf:$MODEL" --device "$DEVICE" --threads "$THREADS" --sources "$SOURCES"
  --theme-counts "$THEME_COUNTS" --examples "$SCALING_EXAMPLES" --epochs "$SCALING_EPOCHS" --batch-size "$SFT_BATCH" --lr "$SFT_LR" --max-seq-len 1024
  --arena-per-category "$ARENA_PER_CATEGORY" --eval-tasks "$SCALING_EVAL_TASKS" --max-new-tokens "$MAX_NEW_TOKENS"
  --rounds "$ROUNDS" --evolve-train-tasks "$EVOLVE_TRAIN_TASKS" --evolve-epochs 1 --out "$OUT/arena" --work "$WORK/arena")
stage scaling "$OUT/arena/scaling.json" "${SCALING[@]}" --skip-evolution
stage evolve "$OUT/arena/evolution.json" "${SCALING[@]}" --skip-scaling
echo "all stages done; wall times in $LOG"
