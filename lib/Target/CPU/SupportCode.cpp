//===- SupportCode.cpp - C support code linked into every package ---------===//
//
// The CPU package's support code (runtime/support/CPUSupport.c, the
// matrix products through oneDNN, memrefCopy, mix_parallel_for, the
// stream-parallel collectives, and runtime/support/CPUAttention.c's fused
// attention), embedded at build time with the package ABI
// header it includes, and compiled into every package by emitSharedLibrary.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"

#include "llvm/TargetParser/Host.h"

namespace {
#include "CPUAttentionSource.inc"
#include "CPUSupportSource.inc"
} // namespace

const char *mlir::mix::getSupportSource() { return kCPUSupportSource; }

mlir::mix::SupportCode mlir::mix::getCPUSupportCode() {
  SupportCode code;
  code.source = getSupportSource();
  code.sources.emplace_back("attention.c", kCPUAttentionSource);
  // For the CPU the package's own code is compiled for (the attention's
  // tiles are vectorized loops); named, so that the cache of compiled
  // support code tells CPUs apart.
  if (llvm::StringRef cpu = llvm::sys::getHostCPUName(); cpu != "generic")
    code.compileFlags.push_back(("-march=" + cpu).str());
  code.linkFlags = {"-ldnnl", "-lgomp"};
  return code;
}
