//===- MixFolds.cpp - Folds and canonicalizations of the mix dialect ------===//
//
// One stream folds away: a normalised gate over one stream is all ones, and a
// mixture or dynamic convolution over one stream with such a gate is a plain
// linear layer. The sum of zero-pads of adjacent ranges is a pad of their
// concatenation.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::mix;

OpFoldResult GateOp::fold(FoldAdaptor) {
  // softmax over a single stream is exactly 1 whatever the logits.
  if (getNumStreams() != 1 || !rowsSumToOne())
    return {};
  auto type = cast<RankedTensorType>(getResult().getType());
  return DenseElementsAttr::get(type,
                                FloatAttr::get(type.getElementType(), 1.0));
}

OpFoldResult ReplicateStreamsOp::fold(FoldAdaptor) {
  if (getStreams() == 1)
    return getInput();
  return {};
}

/// Drops the leading unit stream dimension of `v`: (1, rest...) -> (rest...).
static Value dropStreamDim(PatternRewriter &rewriter, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  groups.push_back({0, 1});
  for (int64_t i = 2, e = type.getRank(); i < e; ++i)
    groups.push_back({i});
  return tensor::CollapseShapeOp::create(rewriter, loc, v, groups);
}

namespace {
/// `mix.dynamic_conv` or stacked `mix.mixture` over one stream whose gate is
/// identically one: `x K_0^T + b_0`, a `mix.linear`.
template <typename OpTy> struct FoldSingleStream : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.getKernels())
      return rewriter.notifyMatchFailure(op, "experts are a region");
    if (op.getNumStreams() != 1)
      return rewriter.notifyMatchFailure(op, "more than one stream");
    if (!gateIsOne(op.getGate()))
      return rewriter.notifyMatchFailure(op, "gate is not known to be one");
    Location loc = op.getLoc();
    Value kernel = dropStreamDim(rewriter, loc, op.getKernels());
    Value bias = op.getSharedBias();
    if (op.getBias())
      bias = tensor::CollapseShapeOp::create(
          rewriter, loc, op.getBias(), ArrayRef<ReassociationIndices>{{0, 1}});
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getResult().getType(),
                                          op.getInput(), kernel, bias);
    return success();
  }
};
} // namespace

void MixtureOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<FoldSingleStream<MixtureOp>>(context);
}

void DynamicConvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                MLIRContext *context) {
  results.add<FoldSingleStream<DynamicConvOp>>(context);
}

namespace {
/// add(pad(a, d, o), pad(b, d, o + |a|)) -> pad(concat(a, b, d), d, o), and
/// just the concatenation when it fills the dimension. The adjoint of
/// slicing one tensor into parts (attention's q, k and v) is such a sum:
/// without this it is one zero-filled full-size tensor a part, and the
/// sums; with it, the parts are copied once into one tensor.
struct SumOfAdjacentPads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto lo = op.getLhs().getDefiningOp<PadOp>();
    auto hi = op.getRhs().getDefiningOp<PadOp>();
    if (!lo || !hi || !lo->hasOneUse() || !hi->hasOneUse() ||
        lo.getDim() != hi.getDim() || lo.getType() != op.getType() ||
        hi.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not two pads of the sum's type");
    int64_t dim = lo.getDim();
    auto size = [&](PadOp pad) {
      return cast<RankedTensorType>(pad.getInput().getType()).getDimSize(dim);
    };
    if (hi.getOffset() + size(hi) == lo.getOffset())
      std::swap(lo, hi);
    if (lo.getOffset() + size(lo) != hi.getOffset())
      return rewriter.notifyMatchFailure(op, "the ranges are not adjacent");
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = size(lo) + size(hi);
    Value joined =
        ConcatOp::create(rewriter, op.getLoc(),
                         RankedTensorType::get(shape, type.getElementType()),
                         lo.getInput(), hi.getInput(), dim);
    if (lo.getOffset() == 0 && shape[dim] == type.getDimSize(dim))
      rewriter.replaceOp(op, joined);
    else
      rewriter.replaceOpWithNewOp<PadOp>(op, type, joined, dim, lo.getOffset());
    return success();
  }
};
} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                        MLIRContext *context) {
  results.add<SumOfAdjacentPads>(context);
}
