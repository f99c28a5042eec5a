#!/usr/bin/env bash
#===- scripts/build.sh - Configure and build mixc -------------------------===#
# Configures build/ (once) with clang++-22, Ninja and ccache against Debian's
# LLVM/MLIR 22, then builds everything. Extra arguments go to ninja.
set -euo pipefail
cd "$(dirname "$0")/.."

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "${launcher[@]}"
fi
ninja -C build "$@"
