#!/usr/bin/env bash
#===- scripts/test.sh - Install, build and run every test -----------------===#
# The README's test command and what CI runs: the setup (a no-op when the
# packages are there), the build, then the lit suite, which includes the
# GoogleTest unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
/usr/lib/llvm-22/bin/lit -sv build/test
