//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//

#ifndef MIX_TARGET_CPU_PASSES_H
#define MIX_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include "mixrt/PackageABI.h"

namespace mlir {
namespace mix {

#define GEN_PASS_DECL
#include "mix/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mix/Target/CPU/Passes.h.inc"

} // namespace mix
} // namespace mlir

#endif // MIX_TARGET_CPU_PASSES_H
