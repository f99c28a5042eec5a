//===- Shapes.cpp - Reshapes, slices, pads and concats to tensor ops ------===//
//
// Layout ops become tensor reshapes and slices, which bufferize to views
// (or, for pad and concat, to copies into a filled buffer).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

Value lowering::reshape(OpBuilder &b, Location loc, Value v,
                        RankedTensorType type) {
  RankedTensorType from = tensorType(v);
  if (from == type)
    return v;
  // Through rank 0 when every dimension is 1, else through one dimension.
  auto allOnes = [](RankedTensorType t) {
    return llvm::all_of(t.getShape(), [](int64_t d) { return d == 1; });
  };
  if (from.getRank() == 0 || type.getRank() == 0 ||
      (allOnes(from) && allOnes(type))) {
    auto scalar = RankedTensorType::get({}, from.getElementType());
    Value s = v;
    if (from.getRank() != 0)
      s = tensor::CollapseShapeOp::create(b, loc, scalar, v,
                                          ArrayRef<ReassociationIndices>{});
    if (type.getRank() == 0)
      return s;
    return tensor::ExpandShapeOp::create(b, loc, type, s,
                                         ArrayRef<ReassociationIndices>{});
  }
  auto flatType =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat = v;
  if (from.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           all(from.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all(type.getRank()));
}

lowering::SliceParams::SliceParams(OpBuilder &b, ArrayRef<int64_t> small,
                                   int64_t dim, OpFoldResult offset) {
  for (auto [i, s] : llvm::enumerate(small)) {
    offsets.push_back(static_cast<int64_t>(i) == dim
                          ? offset
                          : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(s));
    strides.push_back(b.getIndexAttr(1));
  }
}

namespace {
struct ReshapePattern : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshape(rewriter, op.getLoc(), op.getInput(),
                                   tensorType(op.getResult())));
    return success();
  }
};

struct SlicePattern : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = tensorType(op.getResult());
    SliceParams p(rewriter, out.getShape(), op.getDim(),
                  rewriter.getIndexAttr(op.getOffset()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, out, op.getInput(), p.offsets, p.sizes, p.strides);
    return success();
  }
};

struct PadPattern : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    SliceParams p(rewriter, tensorType(op.getInput()).getShape(), op.getDim(),
                  rewriter.getIndexAttr(op.getOffset()));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getInput(), filled(rewriter, loc, out, 0.0), p.offsets, p.sizes,
        p.strides);
    return success();
  }
};

struct ConcatPattern : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    int64_t dim = op.getDim();
    ArrayRef<int64_t> left = tensorType(op.getLhs()).getShape();
    SliceParams pl(rewriter, left, dim, rewriter.getIndexAttr(0));
    SliceParams pr(rewriter, tensorType(op.getRhs()).getShape(), dim,
                   rewriter.getIndexAttr(left[dim]));
    Value r = tensor::InsertSliceOp::create(rewriter, loc, op.getLhs(),
                                            empty(rewriter, loc, out),
                                            pl.offsets, pl.sizes, pl.strides);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getRhs(), r, pr.offsets, pr.sizes, pr.strides);
    return success();
  }
};
} // namespace

void lowering::populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapePattern, SlicePattern, PadPattern, ConcatPattern>(
      patterns.getContext());
}
