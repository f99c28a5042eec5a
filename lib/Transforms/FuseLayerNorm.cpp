//===- FuseLayerNorm.cpp - The LayerNorm kept for fusing targets ----------===//
//
// mix.layer_norm becomes mix.fused_layer_norm, whose extra results (each
// row's mean and 1/std) let the gradient be computed in one pass over each
// row; mix-decompose then leaves it alone.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXFUSELAYERNORMPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct FuseLayerNormPass
    : mix::impl::MixFuseLayerNormPassBase<FuseLayerNormPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](LayerNormOp op) {
      rewriter.setInsertionPoint(op);
      auto rowType =
          RankedTensorType::get(op.getInput().getType().getShape().drop_back(),
                                rewriter.getF32Type());
      auto fused = FusedLayerNormOp::create(
          rewriter, op.getLoc(), op.getType(), rowType, rowType, op.getInput(),
          op.getWeight(), op.getBias(), op.getEpsAttr());
      rewriter.replaceOp(op, fused.getResult());
    });
  }
};
} // namespace
