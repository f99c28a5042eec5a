//===- Elementwise.cpp - Elementwise mix ops to linalg.generic ------------===//
//
// Binary ops with size-1 broadcasting and unary ops, as all-parallel
// linalg.generic ops (which linalg's elementwise fusion then merges).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

AffineMap lowering::broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  for (auto [i, sizes] : llvm::enumerate(llvm::zip(shape, resultShape))) {
    auto [have, want] = sizes;
    exprs.push_back(have == want ? getAffineDimExpr(i, ctx)
                                 : getAffineConstantExpr(0, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

Value lowering::elementwise(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(ctx, tensorType(in).getShape(), shape));
  maps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> iterators(shape.size(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{empty(b, loc, resultType)}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

namespace {
template <typename SourceOp>
struct ElementwisePattern : OpRewritePattern<SourceOp> {
  using Body = Value (*)(OpBuilder &, Location, ValueRange);
  ElementwisePattern(MLIRContext *ctx, Body body)
      : OpRewritePattern<SourceOp>(ctx), body(body) {}

  LogicalResult matchAndRewrite(SourceOp op,
                                PatternRewriter &rewriter) const override {
    Value r = elementwise(rewriter, op.getLoc(), tensorType(op->getResult(0)),
                          op->getOperands(), body);
    rewriter.replaceOp(op, r);
    return success();
  }

  Body body;
};

/// mix.stop_gradient is the identity once differentiation is done.
struct StopGradientPattern : OpRewritePattern<StopGradientOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StopGradientOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};
} // namespace

void lowering::populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  using V = ValueRange;
  patterns.add<ElementwisePattern<AddOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::AddFOp::create(b, l, a[0], a[1]));
      });
  patterns.add<ElementwisePattern<SubOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::SubFOp::create(b, l, a[0], a[1]));
      });
  patterns.add<ElementwisePattern<MulOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::MulFOp::create(b, l, a[0], a[1]));
      });
  patterns.add<ElementwisePattern<DivOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::DivFOp::create(b, l, a[0], a[1]));
      });
  patterns.add<ElementwisePattern<MaxOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::MaximumFOp::create(b, l, a[0], a[1]));
      });
  patterns.add<ElementwisePattern<ExpOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(math::ExpOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<LogOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(math::LogOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<NegOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(arith::NegFOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<RsqrtOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(math::RsqrtOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<SqrtOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(math::SqrtOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<TanhOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        return Value(math::TanhOp::create(b, l, a[0]));
      });
  patterns.add<ElementwisePattern<StepOp>>(
      ctx, [](OpBuilder &b, Location l, V a) {
        Type t = a[0].getType();
        Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(t, 0.0));
        Value one = arith::ConstantOp::create(b, l, b.getFloatAttr(t, 1.0));
        Value pos =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0], zero);
        return Value(arith::SelectOp::create(b, l, pos, one, zero));
      });
  patterns.add<StopGradientPattern>(ctx);
}
