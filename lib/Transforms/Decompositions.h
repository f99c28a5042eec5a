//===- Decompositions.h - Model-level ops as primitives ---------*- C++ -*-===//
//
// One function per model-level op, each emitting the op's computation as
// primitive mix ops. Private to lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TRANSFORMS_DECOMPOSITIONS_H
#define MIX_LIB_TRANSFORMS_DECOMPOSITIONS_H

#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

namespace mlir {
namespace mix {

/// Emits `op` as primitives at the builder's insertion point and returns
/// the values that replace its results, or failure if `op` is not a
/// model-level op (it is a primitive, or foreign).
FailureOr<SmallVector<Value>> decomposeNN(PrimitiveBuilder &pb, Operation *op);
FailureOr<SmallVector<Value>> decomposeMixing(PrimitiveBuilder &pb,
                                              Operation *op);
FailureOr<SmallVector<Value>> decomposeStreams(PrimitiveBuilder &pb,
                                               Operation *op);

/// The dynamic convolution x (sum_k g_k K_k)^T + sum_k g_k b_k (+ c) in
/// the given mixing order; shared by mix.dynamic_conv and stacked
/// mix.mixture.
Value emitDynamicConv(PrimitiveBuilder &pb, Value x, Value g, Value kernels,
                      Value bias, Value sharedBias, bool mixThenApply);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TRANSFORMS_DECOMPOSITIONS_H
