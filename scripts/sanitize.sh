#!/usr/bin/env bash
#===- scripts/sanitize.sh - The runtime's tests under ASan and UBSan ------===#
# Configures build-asan/ (once) from runtime/ alone with clang-22 and
# -fsanitize=address,undefined -fno-sanitize-recover=all, builds the runtime
# libraries, mix-run, mix-tokenize and MixRuntimeTests there, and runs the
# lit tests of test/Runtime with those tools, so that the GoogleTest unit
# tests (runtime.test) and every mix-run integration test run sanitized. Any
# report (a memory error, undefined behaviour, a leak) fails the test.
#
# mixc is not sanitized: it is MLIR's and LLVM's code as much as ours, and
# the tests use it only to compile packages. It is taken from build/bin, so
# run scripts/build.sh first. torch.test is left out (its feature, torch, is
# absent here): libtorch is not built with ASan, and MixTorchTests spends
# minutes compiling models with mixc, which this build does not check.
#
# Extra arguments go to lit (e.g. --filter train).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ ! -x build/bin/mixc ]; then
  echo "sanitize: build/bin/mixc is missing: run scripts/build.sh first" >&2
  exit 1
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# -O0 compiles three times faster than -O1 with the sanitizers (the
# GoogleTest files dominate), and the tests spend their time in mixc and the
# compiled model, which are not built here. Assertions stay on. (Re)run
# cmake every time, so that a change of these flags reaches the build.
flags="-O0 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
cmake -G Ninja -S runtime -B build-asan \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON \
  "${launcher[@]}" >/dev/null
ninja -C build-asan mix-run mix-tokenize MixRuntimeTests mixrt-communicator-check

# The lit suite of test/ with the sanitized runtime tools and build/'s mixc.
tools=build-asan/lit-tools
mkdir -p "$tools" build-asan/test
for t in mix-run mix-tokenize MixRuntimeTests mixrt-communicator-check; do
  ln -sfn "$root/build-asan/bin/$t" "$tools/$t"
done
ln -sfn "$root/build/bin/mixc" "$tools/mixc"
cat > build-asan/test/lit.site.cfg.py <<CFG
# Written by scripts/sanitize.sh: test/'s lit suite with the runtime's tools
# from build-asan/ (ASan + UBSan) and mixc from build/.
config.llvm_tools_dir = "/usr/lib/llvm-22/bin"
config.mlir_obj_dir = "$root/build"
config.mix_obj_root = "$root/build-asan"
config.mix_tools_dir = "$root/$tools"
config.mix_sanitized = True

import lit.llvm
lit.llvm.initialize(lit_config, config)

lit_config.load_config(config, "$root/test/lit.cfg.py")
CFG

# halt_on_error with -fno-sanitize-recover: the first report ends the
# process with a non-zero exit, and lit shows the report.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# scripts/lsan.supp says which leaks of compiled packages are left alone.
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
/usr/lib/llvm-22/bin/lit -sv build-asan/test --filter '^MIX :: Runtime/' "$@"
