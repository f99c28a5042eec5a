//===- Passes.h - Conversions out of the mix dialect ------------*- C++ -*-===//
//
// Declares the conversion passes and the pattern entry points.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CONVERSION_PASSES_H
#define MIX_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include "mixrt/PackageABI.h"

namespace mlir {
class RewritePatternSet;
namespace mix {

#define GEN_PASS_DECL
#include "mix/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mix/Conversion/Passes.h.inc"

/// The support-code functions a stream-sharded model calls (PackageABI.h):
/// `int64_t mix_comm_rank(void)`, this process's stream rank, and
/// `void mix_comm_all_reduce(float *base, int64_t offset, int64_t count)`,
/// the in-place sum over the ranks of `count` floats at `base + offset`.
inline constexpr llvm::StringLiteral kCommRank = MIX_COMM_RANK_SYMBOL;
inline constexpr llvm::StringLiteral kCommAllReduce =
    MIX_COMM_ALL_REDUCE_SYMBOL;

/// Patterns lowering the primitive mix ops to linalg, tensor, arith, math
/// and scf on tensors; \p positionsOnDevice as the pass's
/// positions-on-device option says.
void populateMixToLinalgPatterns(RewritePatternSet &patterns,
                                 bool positionsOnDevice = false);

} // namespace mix
} // namespace mlir

#endif // MIX_CONVERSION_PASSES_H
