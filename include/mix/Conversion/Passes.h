//===- Passes.h - Conversions out of the mix dialect ------------*- C++ -*-===//
//
// Declares the conversion passes and the pattern entry points.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CONVERSION_PASSES_H
#define MIX_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace mix {

#define GEN_PASS_DECL
#include "mix/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mix/Conversion/Passes.h.inc"

/// Patterns lowering the primitive mix ops to linalg, tensor, arith, math
/// and scf on tensors.
void populateMixToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mix
} // namespace mlir

#endif // MIX_CONVERSION_PASSES_H
