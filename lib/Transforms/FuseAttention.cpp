//===- FuseAttention.cpp - Attention kept whole for fusing targets --------===//
//
// mix.attention becomes mix.flash_attention, whose extra result (the row
// log-sum-exp) the backward pass needs to recompute the probabilities tile
// by tile; mix-decompose then leaves it alone.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXFUSEATTENTIONPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct FuseAttentionPass
    : mix::impl::MixFuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](AttentionOp op) {
      rewriter.setInsertionPoint(op);
      FailureOr<AttentionShape> shape = getAttentionShape(
          op, op.getQkv().getType().getShape(),
          op.getPrefixK() ? std::optional(op.getPrefixK().getType().getShape())
                          : std::nullopt,
          op.getHeads());
      // The verifier has checked the shapes.
      assert(succeeded(shape) && "verified attention");
      auto lseType =
          RankedTensorType::get(shape->lseShape(), rewriter.getF32Type());
      auto fused = FlashAttentionOp::create(
          rewriter, op.getLoc(), op.getType(), lseType, op.getQkv(),
          op.getPrefixK(), op.getPrefixV(), op.getHeads());
      rewriter.replaceOp(op, fused.getResult());
    });
  }
};
} // namespace
