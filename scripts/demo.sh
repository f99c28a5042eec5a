#!/usr/bin/env bash
#===- scripts/demo.sh - The compiler at work on an example ----------------===#
# Builds the compiler and runs the cMoLLM passes on examples/cmollm-ffn.mlir:
# prove Theorem 4.1 for each mixture (refusing those it does not hold for,
# with counterexamples), check each rewrite with Z3, apply it, and choose the
# mixing order of each dynamic convolution.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh mix-opt
echo "== mix-opt examples/cmollm-ffn.mlir: prove, check with Z3, rewrite, choose the mixing order"
build/bin/mix-opt examples/cmollm-ffn.mlir \
  --mix-prove-dynamic-conv --mix-moe-to-dynamic-conv --mix-select-mixing-order \
  --mlir-print-op-on-diagnostic=false
