//===- EmulateMma.h - mma.sync for the emulator, lane by lane -*- C++ -*-===//
//
// Private to lib/Target/CUDA: EmulateKernels.cpp runs it on the kernels
// before they become host functions.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TARGET_CUDA_EMULATEMMA_H
#define MIX_LIB_TARGET_CUDA_EMULATEMMA_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace mix {

/// What an emulated kernel's products share: `mixemu_mma_m16n8k8_tf32(
/// site, a, b, cd)` (Emulator.h) and the lane's buffers for its fragments
/// (4, 2 and 4 floats); the site is each product's.
struct MmaExchange {
  func::FuncOp mma;
  Value site, a, b, cd;
};

/// Checks the emulation's fragments against MLIR's statement of them.
LogicalResult checkMmaFragments(Operation *at);

/// Replaces \p mma by the emulator's product of the warp's fragments;
/// fails on a shape the emulator does not run. Extractions of its result
/// are left dead.
LogicalResult emulateMma(nvgpu::MmaSyncOp mma, const MmaExchange &x);

/// Erases the dead vector ops the products leave; fails if one is left.
LogicalResult eraseDeadFragments(Operation *root);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_EMULATEMMA_H
