//===- Passes.h - Passes over the mix dialect -------------------*- C++ -*-===//
//
// Declares the mix passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TRANSFORMS_PASSES_H
#define MIX_TRANSFORMS_PASSES_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace mix {

#define GEN_PASS_DECL
#include "mix/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mix/Transforms/Passes.h.inc"

} // namespace mix
} // namespace mlir

#endif // MIX_TRANSFORMS_PASSES_H
