//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//

#ifndef MIX_TARGET_CUDA_PASSES_H
#define MIX_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace mix {

#define GEN_PASS_DECL
#include "mix/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mix/Target/CUDA/Passes.h.inc"

} // namespace mix
} // namespace mlir

#endif // MIX_TARGET_CUDA_PASSES_H
