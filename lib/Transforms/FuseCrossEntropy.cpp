//===- FuseCrossEntropy.cpp - The cross-entropy kept for fusing targets ---===//
//
// mix.cross_entropy becomes mix.fused_cross_entropy, whose extra result
// (each row's log-sum-exp) lets the gradient be computed in one pass over
// the logits; mix-decompose then leaves it alone.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXFUSECROSSENTROPYPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct FuseCrossEntropyPass
    : mix::impl::MixFuseCrossEntropyPassBase<FuseCrossEntropyPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](CrossEntropyOp op) {
      rewriter.setInsertionPoint(op);
      auto lseType =
          RankedTensorType::get(op.getLogits().getType().getShape().drop_back(),
                                rewriter.getF32Type());
      auto fused =
          FusedCrossEntropyOp::create(rewriter, op.getLoc(), op.getType(),
                                      lseType, op.getLogits(), op.getTargets());
      rewriter.replaceOp(op, fused.getResult());
    });
  }
};
} // namespace
