#!/usr/bin/env bash
#===- scripts/test.sh - Install, build and run every test -----------------===#
# The README's test command and what CI runs: the setup (a no-op when the
# packages are there), the build, then the lit suite, which includes the
# GoogleTest unit tests; then the runtime's tests again under ASan and UBSan
# (scripts/sanitize.sh) and a bounded run of every fuzz target
# (scripts/fuzz.sh). MIX_TEST_SANITIZERS=0 stops after the lit suite.
# docs/testing.md has the details.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
/usr/lib/llvm-22/bin/lit -sv build/test

if [ "${MIX_TEST_SANITIZERS:-1}" != 0 ]; then
  start=$SECONDS
  bash scripts/sanitize.sh
  echo "test: sanitizer build and tests took $((SECONDS - start)) s"
  start=$SECONDS
  bash scripts/fuzz.sh
  echo "test: fuzz build and runs took $((SECONDS - start)) s"
fi
