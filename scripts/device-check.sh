#!/usr/bin/env bash
#===- scripts/device-check.sh - The CUDA path on a machine with an H200 ---===#
#
#   bash scripts/device-check.sh prepare   # here: compile, reference, pack
#   bash scripts/device-check.sh run       # there: check, benchmark, report
#
# The device machine has no LLVM or MLIR, so `prepare` does everything that
# needs them on this machine and packs it into device-check.tar.gz (carry
# it): a mix-run built without MPI, cuda packages of every architecture,
# their parameters, a batch, the CPU's gradients on it (the reference), the
# benchmark packages and a slice of the Brown corpus. `run` unpacks it,
# builds the cuBLASLt GEMM benchmark with nvcc (the only thing it compiles),
# then:
#   1. correctness: `mix-run grad` of each cuda package against the CPU's
#      gradients, every tensor within its tolerance relative to the tensor's
#      largest magnitude: 2e-2 for TF32 products (10-bit mantissa, errors
#      of ~1e-3 a product compounding through the layers), 5e-2 for BF16
#      (8-bit mantissa);
#      and the dense model's gradients again through NCCL's all-reduce
#      (MIXRT_NCCL=1: a one-rank communicator, as one GPU allows), in
#      buckets during the backward pass;
#   2. throughput: `mix-run train` of dense and cMoLLM (N = 4) at the
#      small benchmark size, tokens/s the median of steps 6-20;
#   3. the host CPU's bf16 products (mixc --precision bf16): the gradients
#      of a bf16 cpu package against the fp32 CPU reference (5e-2), how
#      many oneDNN matmuls ran as bf16 primitives (the host may have the
#      AVX512-BF16 or AMX the workstation lacks), and train tokens/s of the
#      small dense and cMoLLM packages in fp32 and bf16;
#   4. the mixture layer's achieved TFLOP/s (estimated from the step time
#      cMoLLM adds to dense) against cuBLASLt's dense GEMM of the same FLOPs;
#   5. sampling: greedy tokens through the decode step and through the whole
#      forward a token, and the tokens/s of each.
# The report goes to $OUT/device-check.md (or device-check/results.md).
#
# MIX_DEVICE_CHECK_TARGET=cpu prepares cpu packages instead, so that `run`
# can be tried end to end on a machine without a GPU (steps 1-3; no nvcc).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-}
dir=device-check
target=${MIX_DEVICE_CHECK_TARGET:-cuda}

# name | spec | batch | seq | extra mixc flags | tolerance
checks=(
  "dense|examples/tiny-dense.json|4|32||2e-2"
  "dense-bf16|examples/tiny-dense.json|4|32|--gpu-matmul bf16|5e-2"
  "cmollm-simple|examples/tiny-cmollm.json|4|32||2e-2"
  "cmollm-simple-bf16|examples/tiny-cmollm.json|4|32|--gpu-matmul bf16|5e-2"
  "cmollm-context-aware|examples/tiny-cmollm-context-aware.json|4|32||2e-2"
  "cmollm-multi-head|examples/tiny-cmollm-multi-head.json|4|32||2e-2"
  "cmollm-adaptive|examples/tiny-cmollm-adaptive.json|4|32||2e-2"
  "parascale|examples/tiny-parascale.json|4|32||2e-2"
  "altup|examples/tiny-altup.json|4|32||2e-2"
)
# The small benchmark size of docs/performance.md.
small_dense='{"arch": "dense", "vocab_size": 256, "n_positions": 256, "n_layer": 4, "d_model": 256, "n_head": 4, "d_ff": 1024}'
small_cmollm='{"arch": "cmollm", "vocab_size": 256, "n_positions": 256, "n_layer": 4, "d_model": 256, "n_head": 4, "d_ff": 1024, "cmollm": {"streams": 4, "gating": "simple"}}'

prepare() {
  local bin=build/bin
  [ -x $bin/mixc ] || { echo "device-check: build first (scripts/build.sh)" >&2; exit 1; }
  rm -rf $dir $dir.tar.gz
  mkdir -p $dir/pkgs $dir/ref $dir/data $dir/bin $dir/src
  echo "device-check: building mix-run without MPI for the device machine"
  cmake -S runtime -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22 \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DMIXRT_ENABLE_MPI=OFF \
    -DMIXRT_BUILD_TESTS=OFF > build-device.log
  ninja -C build-device mix-run >> build-device.log
  cp build-device/bin/mix-run $dir/bin/ 2>/dev/null || cp build-device/mix-run $dir/bin/
  for c in "${checks[@]}"; do
    IFS='|' read -r name spec b s flags tol <<< "$c"
    [ "$target" = cuda ] || flags=""  # --gpu-matmul is for cuda only
    echo "device-check: $name"
    # shellcheck disable=SC2086
    $bin/mixc "$spec" --batch "$b" --seq "$s" --target "$target" $flags -o $dir/pkgs/$name.mixpkg
    $bin/mixc "$spec" --batch "$b" --seq "$s" -o $dir/cpu.mixpkg
    $bin/mix-run init $dir/cpu.mixpkg --out $dir/ref/$name.params.safetensors
    python3 test/Runtime/Inputs/safetensors.py make $dir/ref/$name.batch.safetensors \
      "tokens=I32:${b}x${s}:72,101,32,106,117,114,121,32,115,97,105,100,46,10" \
      "targets=I32:${b}x${s}:101,32,106,117,114,121,32,115,97,105,100,46,10,84"
    $bin/mix-run grad $dir/cpu.mixpkg --params $dir/ref/$name.params.safetensors \
      --batch $dir/ref/$name.batch.safetensors --out $dir/ref/$name.grad.safetensors
    echo "$tol" > $dir/ref/$name.tolerance
    rm -rf $dir/cpu.mixpkg $dir/pkgs/$name.mixpkg/kernels.ptx $dir/pkgs/$name.mixpkg/kernels.cubin
  done
  echo "$small_dense" > $dir/small-dense.json
  echo "$small_cmollm" > $dir/small-cmollm-n4.json
  for m in small-dense small-cmollm-n4; do
    echo "device-check: benchmark package $m"
    $bin/mixc $dir/$m.json --batch 8 --seq 256 --target "$target" -o $dir/pkgs/$m.mixpkg
    rm -f $dir/pkgs/$m.mixpkg/kernels.ptx $dir/pkgs/$m.mixpkg/kernels.cubin
  done
  # The CPU's bf16 products on the device machine's host, which may have the
  # AVX512-BF16 or AMX this workstation lacks (mixc --precision bf16 then
  # runs oneDNN's bf16 primitives instead of widening to f32).
  echo "device-check: cpu bf16 packages"
  $bin/mixc examples/tiny-cmollm.json --batch 4 --seq 32 --precision bf16 -o $dir/pkgs/cpu-bf16.mixpkg
  for m in small-dense small-cmollm-n4; do
    $bin/mixc $dir/$m.json --batch 8 --seq 256 -o $dir/pkgs/$m-cpu.mixpkg
    $bin/mixc $dir/$m.json --batch 8 --seq 256 --precision bf16 -o $dir/pkgs/$m-cpu-bf16.mixpkg
  done
  [ -f data/brown/train.txt ] || bash scripts/fetch-data.sh
  head -c 2000000 data/brown/train.txt > $dir/data/train.txt
  head -c 300000 data/brown/val.txt > $dir/data/val.txt
  cp benchmarks/device/gemm_bench.cu benchmarks/device/compare.py $dir/src/
  echo "$target" > $dir/target
  tar czf $dir.tar.gz $dir
  echo "device-check: wrote $dir.tar.gz ($(du -h $dir.tar.gz | cut -f1)); carry it and run 'bash scripts/device-check.sh run'"
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# train_tps NAME STEPS SKIP: `mix-run train` of package NAME for STEPS steps;
# prints the median tokens/s of the steps after the first SKIP. Fails (its
# log in $dir/NAME.train.log) if the run does.
train_tps() {
  rm -rf $dir/run-$1
  "$runner" train $dir/pkgs/$1.mixpkg --data $dir/data --steps $2 --eval-every 1000 \
    --out $dir/run-$1 2> $dir/$1.train.log || return 1
  python3 -c "import json,sys; print('\n'.join(str(json.loads(l)['tokens_per_s']) for l in open(sys.argv[1]).readlines()[$3:]))" \
    $dir/run-$1/metrics.jsonl | median
}

run() {
  [ -d $dir ] || tar xzf $dir.tar.gz
  local out=${OUT:-$dir}
  mkdir -p "$out"
  local report=$out/device-check.md target
  target=$(cat $dir/target)
  local runner=$dir/bin/mix-run failures=0
  {
    echo "# Device check ($(date -u '+%Y-%m-%d %H:%M UTC'), target $target)"
    echo
    if command -v nvidia-smi > /dev/null; then
      echo '```'
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
      echo '```'
    fi
    echo
    echo "## Correctness: mix-run grad on the device against the CPU"
    echo
    echo '```'
  } > "$report"
  for c in "${checks[@]}"; do
    IFS='|' read -r name _ <<< "$c"
    local tol
    tol=$(cat $dir/ref/$name.tolerance)
    if ! "$runner" grad $dir/pkgs/$name.mixpkg --params $dir/ref/$name.params.safetensors \
        --batch $dir/ref/$name.batch.safetensors --out $dir/$name.device.safetensors \
        2> $dir/$name.log; then
      echo "$name FAIL: $(tail -1 $dir/$name.log)" >> "$report"
      failures=$((failures + 1))
      continue
    fi
    python3 $dir/src/compare.py $dir/ref/$name.grad.safetensors $dir/$name.device.safetensors \
      "$tol" "$name" >> "$report" || failures=$((failures + 1))
  done
  # The gradients' average through NCCL (MIXRT_NCCL=1 makes a one-rank
  # communicator, the most one GPU allows: NCCL refuses two ranks on one
  # device): the same gradients must come back through ncclAllReduce, in
  # buckets of 50 kB on the averaging stream while the backward pass runs.
  if [ "$target" = cuda ]; then
    if MIXRT_NCCL=1 MIXRT_NCCL_BUCKET_MB=0.05 "$runner" grad $dir/pkgs/dense.mixpkg --params $dir/ref/dense.params.safetensors \
        --batch $dir/ref/dense.batch.safetensors --out $dir/dense-nccl.safetensors \
        2> $dir/dense-nccl.log; then
      python3 $dir/src/compare.py $dir/ref/dense.grad.safetensors $dir/dense-nccl.safetensors \
        2e-2 dense-nccl >> "$report" || failures=$((failures + 1))
    elif grep -q 'loading NCCL' $dir/dense-nccl.log; then
      echo "dense-nccl skipped: $(tail -1 $dir/dense-nccl.log)" >> "$report"
    else
      echo "dense-nccl FAIL: $(tail -1 $dir/dense-nccl.log)" >> "$report"
      failures=$((failures + 1))
    fi
  fi
  echo '```' >> "$report"

  # The decode step (docs/decoding.md): greedy tokens through it and
  # through the whole forward a token (the same unless TF32 rounding flips
  # a near tie), and the tokens/s of each.
  {
    echo
    echo "## Sampling: the decode step against the whole forward a token"
    echo
    echo "| package | same greedy tokens | decode step | whole forward |"
    echo "|---|---|---|---|"
  } >> "$report"
  for name in dense cmollm-simple cmollm-context-aware parascale altup; do
    local gen=("$runner" generate $dir/pkgs/$name.mixpkg
      --params $dir/ref/$name.params.safetensors --tokens 24 --temperature 0)
    if "${gen[@]}" --decode cache > $dir/$name.cache.txt 2> $dir/$name.cache.log &&
        "${gen[@]}" --decode full > $dir/$name.full.txt 2> $dir/$name.full.log; then
      local same=no
      cmp -s $dir/$name.cache.txt $dir/$name.full.txt && same=yes
      echo "| $name | $same | $(grep -o '[0-9]* tokens/s' $dir/$name.cache.log) |" \
        "$(grep -o '[0-9]* tokens/s' $dir/$name.full.log) |" >> "$report"
    else
      echo "| $name | FAIL: $(tail -1 $dir/$name.cache.log $dir/$name.full.log | tr '\n' ' ') | | |" >> "$report"
      failures=$((failures + 1))
    fi
  done

  {
    echo
    echo "## Throughput: mix-run train at the small size (L=4, d=256, f=1024, B=8, S=256)"
    echo
    echo "| model | tokens/s (median of steps 6-20) | step ms |"
    echo "|---|---:|---:|"
  } >> "$report"
  declare -A stepms
  local tps
  for m in small-dense small-cmollm-n4; do
    if tps=$(train_tps $m 20 5); then
      stepms[$m]=$(python3 -c "print(2048 / $tps * 1e3)")
      printf '| %s | %.0f | %.2f |\n' "$m" "$tps" "${stepms[$m]}" >> "$report"
    else
      echo "| $m | FAIL: $(tail -1 $dir/$m.train.log) | |" >> "$report"
      failures=$((failures + 1))
    fi
  done

  # bf16 products on the host CPU: correctness against the fp32 CPU
  # reference of cmollm-simple (bf16's tolerance, as on the GPU), whether
  # oneDNN ran bf16 primitives, and the step time beside fp32's.
  {
    echo
    echo "## The host CPU's bf16 products (mixc --precision bf16)"
    echo
    echo '```'
    grep -m1 'model name' /proc/cpuinfo || true
    echo "bf16 CPU flags: $(grep -m1 -o -w 'avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  } >> "$report"
  if ONEDNN_VERBOSE=1 "$runner" grad $dir/pkgs/cpu-bf16.mixpkg \
      --params $dir/ref/cmollm-simple.params.safetensors \
      --batch $dir/ref/cmollm-simple.batch.safetensors --out $dir/cpu-bf16.safetensors \
      > $dir/cpu-bf16.verbose 2> $dir/cpu-bf16.log; then
    echo "oneDNN bf16 matmul executions: $(grep -c 'exec,cpu,matmul.*src_bf16' $dir/cpu-bf16.verbose || true)," \
      "f32: $(grep -c 'exec,cpu,matmul.*src_f32' $dir/cpu-bf16.verbose || true)" >> "$report"
    python3 $dir/src/compare.py $dir/ref/cmollm-simple.grad.safetensors $dir/cpu-bf16.safetensors \
      5e-2 cpu-bf16 >> "$report" || failures=$((failures + 1))
  else
    echo "cpu-bf16 FAIL: $(tail -1 $dir/cpu-bf16.log)" >> "$report"
    failures=$((failures + 1))
  fi
  for m in small-dense-cpu small-dense-cpu-bf16 small-cmollm-n4-cpu small-cmollm-n4-cpu-bf16; do
    if tps=$(train_tps $m 12 3); then
      printf '%s: %.0f tokens/s (median of steps 4-12)\n' "$m" "$tps" >> "$report"
    else
      echo "$m FAIL: $(tail -1 $dir/$m.train.log)" >> "$report"
      failures=$((failures + 1))
    fi
  done
  echo '```' >> "$report"

  if [ "$target" = cuda ] && command -v nvcc > /dev/null; then
    nvcc -O2 -o $dir/gemm_bench $dir/src/gemm_bench.cu -lcublasLt
    {
      echo
      echo "## The mixture layer against cuBLASLt's dense GEMM"
      echo
      echo "Mixture FLOPs a step: 6 T d N f a layer x 4 layers (T = 2048, d = 256, N = 4,"
      echo "f = 1024). Its time is estimated as the step time cMoLLM adds to dense,"
      echo "times N / (N - 1): dense's up-projection is one of cMoLLM's N. The GEMM"
      echo "is the stacked up-projection's shape, T x N f x d."
      echo
      echo '```'
      $dir/gemm_bench 2048 4096 256 tf32 || failures=$((failures + 1))
      $dir/gemm_bench 2048 4096 256 bf16 || failures=$((failures + 1))
      echo '```'
    } >> "$report" 2>&1
    local gemm
    gemm=$($dir/gemm_bench 2048 4096 256 tf32 2> /dev/null | awk '{print $6}') || true
    if [ -n "$gemm" ] && [ -n "${stepms[small-dense]:-}" ] && [ -n "${stepms[small-cmollm-n4]:-}" ]; then
      python3 - "${stepms[small-dense]}" "${stepms[small-cmollm-n4]}" "$gemm" >> "$report" <<'PY'
import sys
dense, cmollm, gemm = map(float, sys.argv[1:])
T, d, N, f, L = 2048, 256, 4, 1024, 4
flops = 6 * T * d * N * f * L
extra = cmollm - dense
if extra <= 0:
    print("\ncMoLLM's step was no slower than dense's; no estimate.")
else:
    # The N-proportional part: cMoLLM's mixture minus dense's one product.
    est_ms = extra * N / (N - 1)
    tflops = flops / (est_ms * 1e-3) / 1e12
    print("\nEstimated mixture layer: %.2f ms a step, %.1f TFLOP/s; cuBLASLt TF32 GEMM of the same"
          " shape: %.1f TFLOP/s (ratio %.2f)." % (est_ms, tflops, gemm, tflops / gemm))
PY
    fi
  fi
  echo >> "$report"
  echo "failures: $failures" >> "$report"
  cat "$report"
  [ "$failures" -eq 0 ]
}

case "$mode" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/device-check.sh prepare|run (see the comment at the top)" >&2; exit 2 ;;
esac
