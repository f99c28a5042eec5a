#!/usr/bin/env bash
#===- scripts/fuzz.sh - Build and run the libFuzzer targets ---------------===#
# Configures build-fuzz/ (once) from fuzz/ with clang-22 and
# -fsanitize=fuzzer,address,undefined, builds the fuzz targets, and runs
# each for a bounded time starting from its corpus, fuzz/corpus/TARGET/.
# A crash, a sanitizer report, a leak, a broken invariant, a timeout (10 s
# for one input) or running out of memory (2 GiB) is a finding: the input
# is saved as build-fuzz/findings/TARGET-*, the log's end is printed, and the
# script fails.
#
#   scripts/fuzz.sh [--merge] [SECONDS] [TARGET...]
#
# SECONDS per target (default 20; $MIX_FUZZ_SECONDS also sets it); TARGETs
# among spec, safetensors, manifest, tokenizer (default all). New inputs go
# to build-fuzz/corpus/TARGET/; --merge then adds those that reach new
# coverage to fuzz/corpus/TARGET/, to be committed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
seconds=${MIX_FUZZ_SECONDS:-20}
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec safetensors manifest tokenizer)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -G Ninja -S fuzz -B build-fuzz \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    "${launcher[@]}"
fi
ninja -C build-fuzz "${targets[@]/#/fuzz-}"

# The targets that read files write them to a scratch directory: on tmpfs
# the runtime's fsyncs cost nothing.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
mkdir -p build-fuzz/findings build-fuzz/logs

status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/logs/$t.log"
  if "build-fuzz/bin/fuzz-$t" -max_total_time="$seconds" -timeout=10 \
       -rss_limit_mb=2048 -dict="fuzz/dict/$t.dict" \
       -artifact_prefix="$root/build-fuzz/findings/$t-" \
       "build-fuzz/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
    echo "fuzz: $t: no finding: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1)," \
      "$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)"
  else
    status=1
    echo "fuzz: $t: FINDING (log: $log)"
    tail -n 60 "$log"
    ls build-fuzz/findings/"$t"-* 2>/dev/null || true
  fi
  if [ "$merge" = 1 ]; then
    "build-fuzz/bin/fuzz-$t" -set_cover_merge=1 "fuzz/corpus/$t" "build-fuzz/corpus/$t" \
      >"build-fuzz/logs/$t-merge.log" 2>&1
    echo "fuzz: $t: $(grep -E 'MERGE-OUTER: [0-9]+ new files' "build-fuzz/logs/$t-merge.log" | tail -1)"
  fi
done
exit $status
