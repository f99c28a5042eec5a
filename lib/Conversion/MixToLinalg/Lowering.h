//===- Lowering.h - Shared pieces of the mix-to-linalg lowering -*- C++ -*-===//
//
// Helpers for building linalg on tensors, and the per-family pattern
// population functions. Private to lib/Conversion/MixToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_CONVERSION_MIXTOLINALG_LOWERING_H
#define MIX_LIB_CONVERSION_MIXTOLINALG_LOWERING_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mix {
namespace lowering {

inline RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// An uninitialised tensor of `type`.
inline Value empty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// A tensor of `type` filled with `value`.
inline Value filled(OpBuilder &b, Location loc, RankedTensorType type,
                    double value) {
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, v, empty(b, loc, type)).getResult(0);
}

/// The indexing map reading an operand of `shape` inside a loop nest over
/// `resultShape` (same rank): size-1 dimensions of a broadcast operand read
/// index 0.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);

/// An all-parallel linalg.generic over `resultType` reading `inputs` with
/// broadcasting, whose body is `body(scalars)`.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Reshapes a static tensor to another static shape with the same number
/// of elements, through tensor.collapse_shape / tensor.expand_shape.
Value reshape(OpBuilder &b, Location loc, Value v, RankedTensorType type);

/// The value of a 0-d i32 position tensor, as an index.
Value readPosition(OpBuilder &b, Location loc, Value position);

/// Offsets, sizes and strides selecting a part of shape `small` that starts
/// at `offset` along dimension `dim` and at 0 along the others.
struct SliceParams {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SliceParams(OpBuilder &b, ArrayRef<int64_t> small, int64_t dim,
              OpFoldResult offset);
};

/// Whether \p op is part of a tree of concatenations along one dimension
/// whose outermost concatenation lowers the whole tree (and erases it).
bool isInnerConcat(ConcatOp op);

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateStructuredPatterns(RewritePatternSet &patterns);
void populateShapePatterns(RewritePatternSet &patterns);
void populateIndexingPatterns(RewritePatternSet &patterns);
void populateCollectivePatterns(RewritePatternSet &patterns);
/// The ops at a run-time position (a decode step's): with
/// \p positionsOnDevice, the position is read only inside the loop nests,
/// where a device's kernels read it, never by the host code.
void populatePositionPatterns(RewritePatternSet &patterns,
                              bool positionsOnDevice);

/// Declares the support code's collective functions (kCommRank,
/// kCommAllReduce) in \p module, where they are not yet.
void declareCollectives(ModuleOp module);

} // namespace lowering
} // namespace mix
} // namespace mlir

#endif // MIX_LIB_CONVERSION_MIXTOLINALG_LOWERING_H
