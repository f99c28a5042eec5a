#!/usr/bin/env bash
#===- benchmarks/cuda-scaling.sh - Stream and data parallelism on H200s ---===#
#
# Issue 25's scaling estimate: a GPT-2-small-size cMoLLM (d = 768, 12
# heads, d_ff = 3072, vocabulary 50257, multi_head gating with 4 gate
# heads) with N = 4 and 8 streams, trained at a global batch of 16
# sequences of 1024 tokens with BF16 products, on 1, 2, 4 and 8 GPUs:
#  - stream parallelism: mixc --stream-shards R with R = min(G, N) stream
#    ranks, and G / R data-parallel groups of them when G > N;
#  - data parallelism: the unsharded package at batch 16 / G on each of G
#    ranks, the gradients averaged with NCCL after grad.
# Each configuration runs under mpirun -np G (every rank on its own
# emulated device) for two training steps with the emulator in count-only
# mode (MIXEMU_COUNT_ONLY=1: every launch, product, copy and NCCL
# all-reduce is checked and counted, nothing computed) and the profile on
# (MIXRT_CUDA_PROFILE=1); rank 0's report of the second step gives the
# counts and the runtime's H200 estimate (docs/cuda.md says what it
# assumes: among others NVLink at 450 GB/s a direction for what a rank
# sends, 10 us an NCCL launch, nothing overlapped).
#
# The layers of a model are identical, so the models are compiled with one
# and with two layers, and every count of the 12-layer step is
# one-layer + 11 x (two-layer - one-layer) (benchmarks/cuda_scaling.py):
# the whole grid then fits this machine (8 ranks each holding the whole
# host tensors of a 12-layer N = 8 model would not). Nothing is timed; the
# tables go to stdout and WORK/results.md.
#
# usage: benchmarks/cuda-scaling.sh [--work DIR] [--streams "4 8"]
#          [--gpus "1 2 4 8"] [--batch B] [--seq S] [--gpu-matmul bf16|tf32]
#          [--reuse]
# Needs build/bin/mixc, build/bin/mix-run and mpirun (BUILD=DIR for
# another build).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
WORK=$BUILD/cuda-scaling
STREAMS="4 8"
GPUS="1 2 4 8"
BATCH=16
SEQ=1024
MATMUL=bf16
REUSE=0

while [ $# -gt 0 ]; do
  case "$1" in
  --work) WORK=$2; shift 2 ;;
  --streams) STREAMS=$2; shift 2 ;;
  --gpus) GPUS=$2; shift 2 ;;
  --batch) BATCH=$2; shift 2 ;;
  --seq) SEQ=$2; shift 2 ;;
  --gpu-matmul) MATMUL=$2; shift 2 ;;
  --reuse) REUSE=1; shift ;;
  -h|--help) awk 'NR > 2 && /^#===/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  *) echo "cuda-scaling.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=benchmarks/cuda-common.sh
source "$ROOT/benchmarks/cuda-common.sh"
cuda_bench_tools cuda-scaling.sh
if ! command -v mpirun > /dev/null; then
  echo "cuda-scaling.sh: no mpirun (scripts/setup.sh installs Open MPI)" >&2
  exit 1
fi
# Open MPI refuses root without these; 8 ranks outnumber the cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none

mkdir -p "$WORK/specs" "$WORK/data"
# Text to train on: the counts do not depend on it.
cuda_bench_data "$WORK/data"

# The spec of N streams and L layers, from the GPT-2-small cMoLLM's.
spec() {
  local n=$1 layers=$2 out=$WORK/specs/cmollm$1-l$2.json
  python3 - "$ROOT/benchmarks/specs/gpt2-small-cmollm4.json" "$out" "$n" "$layers" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["cmollm"]["streams"] = int(sys.argv[3])
s["n_layer"] = int(sys.argv[4])
json.dump(s, open(sys.argv[2], "w"), indent=1)
EOF
  echo "$out"
}

# Compiles (unless --reuse finds it) and runs one configuration: $1 the
# directory, $2 the spec, $3 the ranks, $4 the package's batch, $5 the
# stream shards.
run_config() {
  local dir=$1 specfile=$2 ranks=$3 batch=$4 shards=$5
  mkdir -p "$dir"
  if [ "$REUSE" = 0 ] || [ ! -f "$dir/package/manifest.json" ]; then
    rm -rf "$dir/package"
    echo "cuda-scaling.sh: compiling $(basename "$dir") (batch $batch, $shards stream shards)" >&2
    if ! nice -n 10 "$MIXC" "$specfile" --batch "$batch" --seq "$SEQ" \
        --target cuda --emulate --gpu-matmul "$MATMUL" --stream-shards "$shards" \
        --decode-batch 0 -o "$dir/package" > "$dir/compile.log" 2>&1; then
      tail -n 3 "$dir/compile.log" >&2
      return 1
    fi
  fi
  echo "cuda-scaling.sh: two steps of $(basename "$dir") on $ranks ranks, counted only" >&2
  rm -rf "$dir/run" "$dir"/rank.*.log
  if ! env MIXEMU_COUNT_ONLY=1 MIXRT_CUDA_PROFILE=1 RANKLOG="$dir" nice -n 10 \
      mpirun -np "$ranks" -x RANKLOG sh -c 'exec "$0" "$@" 2> "$RANKLOG/rank.$OMPI_COMM_WORLD_RANK.log"' \
      "$MIXRUN" train "$dir/package" --data "$WORK/data" --steps 2 \
      --eval-batches 1 --eval-every 1000 --out "$dir/run" > "$dir/train.out" 2>&1; then
    grep -hv "^  " "$dir"/rank.*.log | tail -n 3 >&2
    return 1
  fi
  rm -rf "$dir/run" # the checkpoint of meaningless values
}

for n in $STREAMS; do
  for layers in 1 2; do
    specfile=$(spec "$n" "$layers")
    for g in $GPUS; do
      shards=$((g < n ? g : n))
      if [ $((n % shards)) -ne 0 ] || [ $((g % shards)) -ne 0 ] ||
         [ $((BATCH % (g / shards))) -ne 0 ] || [ $((BATCH % g)) -ne 0 ]; then
        echo "cuda-scaling.sh: $g GPUs do not divide N = $n or the batch $BATCH; skipped" >&2
        continue
      fi
      run_config "$WORK/cmollm$n-l$layers/streams-g$g" "$specfile" "$g" \
        $((BATCH / (g / shards))) "$shards"
      if [ "$g" -gt 1 ]; then
        run_config "$WORK/cmollm$n-l$layers/data-g$g" "$specfile" "$g" \
          $((BATCH / g)) 1
      fi
    done
  done
done

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
CHANGED=$(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l)
{
  echo "### $(date -u '+%Y-%m-%d %H:%M UTC'): stream and data parallelism on H200s, from counts"
  echo
  echo "Commit $COMMIT ($CHANGED files changed in the working tree); \`benchmarks/cuda-scaling.sh --batch $BATCH --seq $SEQ --gpu-matmul $MATMUL\`. An estimate, not a measurement: the runtime's roofline sum (docs/cuda.md) of rank 0's counts of a training step, made with the emulator in count-only mode under mpirun; 12 layers = 1 + 11 x (2 layers - 1 layer)."
  echo
  python3 "$ROOT/benchmarks/cuda_scaling.py" "$WORK" "$STREAMS" "$GPUS"
} | tee "$WORK/results.md"
