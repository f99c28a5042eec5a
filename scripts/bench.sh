#!/usr/bin/env bash
#===- scripts/bench.sh - The compiled training step against libtorch ------===#
# Issue 7's benchmark in one command: builds mixc and mix-bench, then runs
# every model at both sizes on both sides (compiled, libtorch fp32 and bf16
# autocast), the mixture-layer microbenchmark and the scaling table. The
# tables go to stdout and to build/bench/results.md (--markdown FILE).
#
#   bash scripts/bench.sh            # everything (about an hour on 2 cores)
#   bash scripts/bench.sh --quick    # the harness's own test (minutes)
#   bash scripts/bench.sh --only 'dense|cmollm-n4' --sizes wide --no-bf16
#   bash scripts/bench.sh --no-build ...   # use build/bin as it is
#
# Other options: build/bin/mix-bench --help. Run it on an idle machine:
# the load average at start and end is printed with the tables.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ldconfig -p | grep 'libopenblas\.so\.0' >/dev/null; then
  echo "bench: OpenBLAS is not installed; libtorch would run fp32 products on" \
       "the reference BLAS (bash scripts/setup.sh installs libopenblas0-pthread)" >&2
fi
if [ "${1:-}" = "--no-build" ]; then
  shift
else
  bash scripts/build.sh mixc mix-bench >&2
fi
if [ ! -x build/bin/mix-bench ]; then
  echo "bench: build/bin/mix-bench was not built (libtorch-dev missing?)" >&2
  exit 1
fi
exec build/bin/mix-bench --mixc build/bin/mixc --work build/bench "$@"
