#!/usr/bin/env bash
#===- benchmarks/cuda-estimate.sh - The H200 estimate of a training step ---===#
#
# Issue 24's "performance, before a device is available": for GPT-2-small-
# size models (benchmarks/specs/gpt2-small-*.json: 12 layers, d = 768, 12
# heads, d_ff = 3072, vocabulary 50257), dense and cMoLLM with N = 4
# streams and multi_head gating, at batch 16 and sequence 1024, compiled
# with --precision bf16 (the products' operands in bf16, BF16 products):
#   1. compiles each for the CUDA emulator (mixc --target cuda --emulate);
#   2. runs two training steps with the emulator in count-only mode
#      (MIXEMU_COUNT_ONLY=1: every launch, product and copy is checked and
#      counted but not run, so a step that would take the emulator hours
#      takes a minute) and the profile on (MIXRT_CUDA_PROFILE=1);
#   3. prints, from the second step's report (the first run as CUDA
#      graphs; benchmarks/cuda_estimate.py), the
#      kernel launches, bytes, GEMM FLOPs, the runtime's H200 estimate and
#      the model-FLOPs utilisation it implies;
#   4. does the same for each model with one layer and with two (NAME-l1,
#      NAME-l2): their difference is what one layer launches a step,
#      kernels and products counted apart, without the embedding, head,
#      loss and optimizer that the totals over L spread over the layers.
# Nothing is timed: the figures are counts and an estimate made of them
# (docs/cuda.md, "The profile and the H200 estimate", says what the
# estimate assumes). The tables go to stdout and to WORK/results.md.
#
# If a model fails to compile or to run at the batch asked for, the batch
# is halved until it works, and the table says so.
#
# usage: benchmarks/cuda-estimate.sh [--work DIR] [--batch B] [--seq S]
#          [--precision bf16|fp32] [--gpu-matmul bf16|tf32]
#          [--models "dense cmollm4"] [--reuse] [--mixing-order ORDER]
#   --work DIR      where packages and logs go (default build/cuda-estimate)
#   --models LIST   names NAME of benchmarks/specs/gpt2-small-NAME.json
#   --precision     mixc's --precision (default bf16); with fp32 the
#                   operands stay float32 and --gpu-matmul (default bf16)
#                   says how the tensor cores round them
#   --reuse         keep the packages a previous run compiled
#   --mixing-order  mixc's --mixing-order for every model (default auto:
#                   the cost model's choice)
# Needs build/bin/mixc and build/bin/mix-run (BUILD=DIR for another build).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
WORK=$BUILD/cuda-estimate
BATCH=16
SEQ=1024
MATMUL=bf16
PRECISION=bf16
MODELS="dense cmollm4"
REUSE=0
ORDER=auto

while [ $# -gt 0 ]; do
  case "$1" in
  --work) WORK=$2; shift 2 ;;
  --batch) BATCH=$2; shift 2 ;;
  --seq) SEQ=$2; shift 2 ;;
  --gpu-matmul) MATMUL=$2; shift 2 ;;
  --precision) PRECISION=$2; shift 2 ;;
  --models) MODELS=$2; shift 2 ;;
  --reuse) REUSE=1; shift ;;
  --mixing-order) ORDER=$2; shift 2 ;;
  -h|--help) awk 'NR > 2 && /^#===/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  *) echo "cuda-estimate.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done

case "$PRECISION" in
bf16) PRECISION_FLAGS=(--precision bf16); MATMUL=bf16 ;;
fp32) PRECISION_FLAGS=(--gpu-matmul "$MATMUL") ;;
*) echo "cuda-estimate.sh: --precision is bf16 or fp32, not $PRECISION" >&2; exit 2 ;;
esac
FLAGS="${PRECISION_FLAGS[*]} --mixing-order $ORDER"

# shellcheck source=benchmarks/cuda-common.sh
source "$ROOT/benchmarks/cuda-common.sh"
cuda_bench_tools cuda-estimate.sh
TIME=()
if [ -x /usr/bin/time ]; then TIME=(/usr/bin/time -v); fi

mkdir -p "$WORK"

DATA=$WORK/data
cuda_bench_data "$DATA"

# Packages from before 2026-12-02 grew the stack with every launch of a
# host loop (the reductions over the rows launched a kernel a token, 1.6
# million a GPT-2-small step, and needed over 128 MiB of stack); a
# launch's parameters are now freed after it, but an older package given
# with --reuse may still need the room.
ulimit -s unlimited 2>/dev/null || ulimit -s "$(ulimit -H -s)"

# A command's stderr without the report of /usr/bin/time -v after it.
without_time() { sed '/^\tCommand being timed/,$d'; }

# Compiles and runs model $1 (spec $3, by default
# benchmarks/specs/gpt2-small-$1.json) at batch $2; the package and logs in
# $WORK/$1: compile.time and run.time hold the commands' stderr and time's
# reports, train.log mix-run's stderr alone (the profile).
run_model() {
  local name=$1 batch=$2 dir=$WORK/$1
  local spec=${3:-$ROOT/benchmarks/specs/gpt2-small-$name.json}
  local manifest=$dir/package/manifest.json
  if [ "$REUSE" = 0 ] || [ ! -f "$manifest" ] ||
     ! grep -q "\"batch\": *$batch," "$manifest" ||
     ! grep -q "\"seq\": *$SEQ\b" "$manifest" ||
     [ "$(cat "$dir/flags" 2>/dev/null)" != "$FLAGS" ]; then
    rm -rf "$dir/package"
    echo "cuda-estimate.sh: compiling $name at batch $batch, sequence $SEQ ($FLAGS)" >&2
    if ! "${TIME[@]}" nice -n 10 "$MIXC" "$spec" --batch "$batch" --seq "$SEQ" \
        --target cuda --emulate "${PRECISION_FLAGS[@]}" --mixing-order "$ORDER" \
        -o "$dir/package" \
        > "$dir/compile.log" 2> "$dir/compile.time"; then
      without_time < "$dir/compile.time" | tail -n 3 >&2
      return 1
    fi
    echo "$FLAGS" > "$dir/flags"
  fi
  echo "cuda-estimate.sh: one training step of $name, counted only" >&2
  rm -rf "$dir/run"
  if ! "${TIME[@]}" env MIXEMU_COUNT_ONLY=1 MIXRT_CUDA_PROFILE=1 nice -n 10 \
      "$MIXRUN" train "$dir/package" --data "$DATA" --steps 2 \
      --eval-batches 1 --out "$dir/run" > "$dir/train.out" 2> "$dir/run.time"; then
    without_time < "$dir/run.time" | grep -v "^  " | tail -n 3 >&2
    return 1
  fi
  without_time < "$dir/run.time" > "$dir/train.log"
  rm -rf "$dir/run" # the checkpoint of meaningless values, GBs of them
}

for name in $MODELS; do
  mkdir -p "$WORK/$name"
  batch=$BATCH
  note=""
  until run_model "$name" "$batch"; do
    if [ "$batch" -le 1 ]; then
      echo "cuda-estimate.sh: $name fails even at batch 1" >&2
      exit 1
    fi
    note="FELL BACK: batch $batch failed (see $WORK/$name/*.time); "
    batch=$((batch / 2))
  done
  if [ -n "$note" ]; then
    note="${note}the figures are for batch $batch, not $BATCH."
  fi
  echo "$note" > "$WORK/$name/note.txt"
  # One layer and two, at the batch that worked.
  for layers in 1 2; do
    mkdir -p "$WORK/$name-l$layers"
    python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s["n_layer"] = int(sys.argv[2]); json.dump(s, open(sys.argv[3], "w"))' \
      "$ROOT/benchmarks/specs/gpt2-small-$name.json" "$layers" \
      "$WORK/$name-l$layers/spec.json"
    run_model "$name-l$layers" "$batch" "$WORK/$name-l$layers/spec.json"
  done
done

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
CHANGED=$(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l)
{
  echo "### $(date -u '+%Y-%m-%d %H:%M UTC'): the H200 estimate, from counts"
  echo
  echo "Commit $COMMIT ($CHANGED files changed in the working tree); \`benchmarks/cuda-estimate.sh --batch $BATCH --seq $SEQ $FLAGS\`. An estimate, not a measurement: the runtime's roofline sum (docs/cuda.md) of the step's counts, made with the emulator in count-only mode."
  echo
  python3 "$ROOT/benchmarks/cuda_estimate.py" "$WORK" $MODELS
} | tee "$WORK/results.md"
