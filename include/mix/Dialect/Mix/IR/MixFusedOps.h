//===- MixFusedOps.h - Ops a target computes as one kernel ------*- C++ -*-===//
//
// Declares the fused ops of the mix dialect (MixFusedOps.td): attention
// kept whole for targets that compute it without its score matrix.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXFUSEDOPS_H
#define MIX_DIALECT_MIX_IR_MIXFUSEDOPS_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#define GET_OP_CLASSES
#include "mix/Dialect/Mix/IR/MixFusedOps.h.inc"

namespace mlir {
namespace mix {

/// The sizes of an attention over `qkv` of shape (B,S,3d) with `heads`
/// heads and, optionally, prefixes of shape (P,heads,T_p,dh).
struct AttentionShape {
  int64_t batch = 0, seq = 0, width = 0, heads = 0, headDim = 0;
  int64_t streams = 0, prefix = 0;

  SmallVector<int64_t> resultShape() const { return {batch, seq, width}; }
  SmallVector<int64_t> lseShape() const { return {batch, heads, seq}; }
  SmallVector<int64_t> prefixShape() const {
    return {streams, heads, prefix, headDim};
  }
};

/// The sizes of an attention, or an error at \p op naming the operand
/// whose shape does not fit.
FailureOr<AttentionShape>
getAttentionShape(Operation *op, ArrayRef<int64_t> qkv,
                  std::optional<ArrayRef<int64_t>> prefixK, int64_t heads);

} // namespace mix
} // namespace mlir

#endif // MIX_DIALECT_MIX_IR_MIXFUSEDOPS_H
