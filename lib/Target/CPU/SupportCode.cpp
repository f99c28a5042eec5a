//===- SupportCode.cpp - C support code linked into every package ---------===//
//
// The CPU package's support code (runtime/support/CPUSupport.c, the
// matrix products through oneDNN, memrefCopy, mix_parallel_for, the
// stream-parallel collectives), embedded at build time with the package ABI
// header it includes, and compiled into every package by emitSharedLibrary.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"

namespace {
#include "CPUSupportSource.inc"
} // namespace

const char *mlir::mix::getSupportSource() { return kCPUSupportSource; }

mlir::mix::SupportCode mlir::mix::getCPUSupportCode() {
  SupportCode code;
  code.source = getSupportSource();
  code.linkFlags = {"-ldnnl", "-lgomp"};
  return code;
}
