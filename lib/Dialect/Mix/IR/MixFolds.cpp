//===- MixFolds.cpp - Folds and canonicalizations of the mix dialect ------===//
//
// One stream folds away: a normalised gate over one stream is all ones, and a
// mixture or dynamic convolution over one stream with such a gate is a plain
// linear layer.
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
