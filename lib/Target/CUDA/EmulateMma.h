//===- EmulateMma.h - mma.sync for the emulator, lane by lane -*- C++ -*-===//
//
// Private to lib/Target/CUDA: EmulateKernels.cpp runs it on the kernels
// before they become host functions.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TARGET_CUDA_EMULATEMMA_H
#define MIX_LIB_TARGET_CUDA_EMULATEMMA_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace mix {

/// What an emulated kernel's products share: `mixemu_mma_m16n8k8_tf32(
/// site, a, b, cd)` and `mixemu_mma_m16n8k16_bf16` (Emulator.h), declared
/// when first used, and the lane's buffers for its fragments (4, 2 and 4
/// floats; bf16's A and B registers are stored as their bits); the site is
/// each product's.
struct MmaExchange {
  func::FuncOp mmaTF32, mmaBF16;
  Value site, a, b, cd;
};

/// Checks the emulation's fragments against MLIR's statement of them.
LogicalResult checkMmaFragments(Operation *at);

/// Replaces \p mma by the emulator's product of the warp's fragments;
/// fails on a shape the emulator does not run. Extractions of its result
/// are left dead.
LogicalResult emulateMma(nvgpu::MmaSyncOp mma, const MmaExchange &x);
/// Likewise for NVVM's m16n8k16 with bf16 operands (row-major A,
/// column-major B, float32 accumulators); its result's extractions' uses are
/// replaced, and it and they are left, dead.
LogicalResult emulateMma(NVVM::MmaOp mma, const MmaExchange &x);

/// Erases the dead ops the products leave (vector ops; NVVM products and
/// their extractions); fails if one is left.
LogicalResult eraseDeadFragments(Operation *root);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TARGET_CUDA_EMULATEMMA_H
