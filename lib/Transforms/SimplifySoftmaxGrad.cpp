//===- SimplifySoftmaxGrad.cpp - The softmax's adjoint from its output ----===//
//
// Differentiating a softmax written as primitives, P = E / S with
// S = reduce_sum(E) and E = exp(x - max), op by op gives
//
//   dx = (G / S - reduce_sum(G / S * P)) * E        (G = the adjoint of P)
//
// which needs E and P both until the backward pass: two tensors of the
// attention's (B, h, S, S) a layer, where the softmax's usual adjoint,
//
//   dx = (G - reduce_sum(G * P)) * P,
//
// needs P alone and does one division fewer per element. The two are equal
// (G / S * E = G * P). This pass finds the first form, as mix-autodiff
// writes it, and replaces it by the second; E is then dead once P is made.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/Passes.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXSIMPLIFYSOFTMAXGRADPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
/// The operand of the commutative \p op that is not \p other, or null if
/// neither is.
Value otherOperand(Operation *op, Value other) {
  if (op->getOperand(0) == other)
    return op->getOperand(1);
  if (op->getOperand(1) == other)
    return op->getOperand(0);
  return {};
}

/// Looks through a mix.broadcast (binary ops broadcast size-1 dimensions
/// themselves, so the adjoint may or may not spell it out).
Value skipBroadcast(Value v) {
  if (auto b = v.getDefiningOp<BroadcastOp>())
    return b.getInput();
  return v;
}

/// mul(add(Q, reduce_sum(neg(mul(Q, P)))), E) with Q = G / S, P = E / S and
/// S = reduce_sum(E) over the same dimensions -> mul(sub(G, reduce_sum(mul(
/// G, P))), P).
struct SoftmaxAdjoint : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    for (int which = 0; which < 2; ++which) {
      Value e = root->getOperand(which), a = root->getOperand(1 - which);
      if (succeeded(rewrite(root, e, a, rewriter)))
        return success();
    }
    return failure();
  }

  LogicalResult rewrite(MulOp root, Value e, Value a,
                        PatternRewriter &rewriter) const {
    auto add = a.getDefiningOp<AddOp>();
    if (!add || e.getType() != root.getType())
      return failure();
    // a = Q + T, in either order, T the (broadcast) sum.
    for (int which = 0; which < 2; ++which) {
      Value q = add->getOperand(which);
      auto sum = skipBroadcast(add->getOperand(1 - which))
                     .getDefiningOp<ReduceSumOp>();
      auto div = q.getDefiningOp<DivOp>();
      if (!sum || !div)
        continue;
      // Q = G / S with S = reduce_sum(E) over the dimensions of T.
      Value g = div.getLhs();
      auto s = skipBroadcast(div.getRhs()).getDefiningOp<ReduceSumOp>();
      if (!s || s.getInput() != e || s.getDims() != sum.getDims() ||
          g.getType() != e.getType())
        continue;
      // T = reduce_sum(neg(Q * P)) with P = E / S.
      auto neg = sum.getInput().getDefiningOp<NegOp>();
      auto product = neg ? neg.getInput().getDefiningOp<MulOp>() : MulOp();
      Value p = product ? otherOperand(product, q) : Value();
      auto pDiv = p ? p.getDefiningOp<DivOp>() : DivOp();
      if (!pDiv || pDiv.getLhs() != e ||
          skipBroadcast(pDiv.getRhs()) != s.getResult())
        continue;
      rewriter.setInsertionPoint(root);
      PrimitiveBuilder pb(rewriter, root.getLoc());
      Value gp = pb.reduceSum(pb.mul(g, p), sum.getDims());
      rewriter.replaceOp(root, pb.mul(pb.sub(g, gp), p));
      return success();
    }
    return failure();
  }
};

struct SimplifySoftmaxGradPass
    : mix::impl::MixSimplifySoftmaxGradPassBase<SimplifySoftmaxGradPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SoftmaxAdjoint>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
