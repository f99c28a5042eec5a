//===- Decompose.cpp - Lower model-level mix ops to primitives ------------===//
//
// Replaces every model-level op by primitive mix ops, until only primitives
// (and constants) remain: the form autodiff and the lowering work on. What
// each op decomposes into is the op's own DecomposableOpInterface; this pass
// applies it under the greedy driver, with the patterns that turn the
// frontend's tensor slices and reshapes into their mix equivalents.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXDECOMPOSEPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
/// Any op with a decomposition, replaced by it.
struct DecomposeOp : OpInterfaceRewritePattern<DecomposableOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(DecomposableOpInterface op,
                                PatternRewriter &rewriter) const override {
    FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
    if (failed(results))
      return rewriter.notifyMatchFailure(op, "no decomposition");
    rewriter.replaceOp(op, *results);
    return success();
  }
};

/// tensor.extract_slice along one dimension, as the frontend emits it, is
/// mix.slice (a slice of nothing is its source).
struct ExtractSliceToSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType(), sourceType = op.getSourceType();
    if (!op.hasUnitStride() || !type.hasStaticShape() ||
        !sourceType.hasStaticShape() || type.getRank() != sourceType.getRank())
      return rewriter.notifyMatchFailure(op, "not a static one-dim slice");
    int64_t dim = -1, offset = 0;
    for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
      int64_t off = op.getStaticOffsets()[i];
      if (off == ShapedType::kDynamic)
        return rewriter.notifyMatchFailure(op, "dynamic offset");
      if (type.getDimSize(i) == sourceType.getDimSize(i) && off == 0)
        continue;
      if (dim != -1)
        return rewriter.notifyMatchFailure(op, "slices several dimensions");
      dim = i;
      offset = off;
    }
    if (dim == -1) {
      rewriter.replaceOp(op, op.getSource());
      return success();
    }
    PrimitiveBuilder pb(rewriter, op.getLoc());
    rewriter.replaceOp(op, pb.slice(op.getSource(), dim, offset,
                                    type.getDimSize(dim)));
    return success();
  }
};

/// tensor.expand_shape and tensor.collapse_shape are mix.reshape.
template <typename ReshapeOp>
struct ReshapeToMix : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    PrimitiveBuilder pb(rewriter, op.getLoc());
    rewriter.replaceOp(op,
                       pb.reshape(op.getSrc(), op.getResultType().getShape()));
    return success();
  }
};

struct DecomposePass : mix::impl::MixDecomposePassBase<DecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeOp, ExtractSliceToSlice,
                 ReshapeToMix<tensor::ExpandShapeOp>,
                 ReshapeToMix<tensor::CollapseShapeOp>>(&getContext());
    // Only rewrite: folding and simplification are the canonicalizer's,
    // which the pipelines run next.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config))) {
      getOperation()->emitError("mix-decompose did not converge");
      return signalPassFailure();
    }
  }
};
} // namespace
