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

/// The floats a lane gives to a product's exchange: A's 4, B's 2.
constexpr int64_t kMmaGivenFloats = 6;

/// What an emulated kernel's products share: `mixemu_exchange(site,
/// give, count, all)` (Emulator.h), the lane's buffers of
/// kMmaGivenFloats and 32 x kMmaGivenFloats floats, and the lane.
struct MmaExchange {
  func::FuncOp exchange;
  Value site, give, all, lane;
};

/// Checks the emulation's fragments against MLIR's statement of them.
LogicalResult checkMmaFragments(Operation *at);

/// Replaces \p mma by the exchange of the warp's operands and the lane's
/// arithmetic; fails on a shape the emulator does not run. Extractions of
/// its result are left dead.
LogicalResult emulateMma(nvgpu::MmaSyncOp mma, const MmaExchange &x);

/// Erases the dead vector ops the products leave; fails if one is left.
LogicalResult eraseDeadFragments(Operation *root);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_EMULATEMMA_H
