//===- FoldReshapesIntoSlices.cpp - Insertions without unit-dim reshapes --===//
//
// `tensor.insert_slice (tensor.expand_shape x)`, where the expansion only
// adds unit dimensions, becomes a rank-reducing `tensor.insert_slice x`,
// so that empty-tensor elimination can have x's producer write into the
// destination's slot in place.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFOLDRESHAPESINTOSLICESPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

namespace {
struct InsertWithoutUnitExpansion : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto expand = insert.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand.getResultType().hasStaticShape())
      return failure();
    // Each group of the expansion is one dimension of the source and unit
    // dimensions.
    RankedTensorType expanded = expand.getResultType();
    for (const ReassociationIndices &group : expand.getReassociationIndices())
      if (llvm::count_if(group, [&](int64_t d) {
            return expanded.getDimSize(d) != 1;
          }) > 1)
        return failure();
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        insert, expand.getSrc(), insert.getDest(), insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    return success();
  }
};

struct MixFoldReshapesIntoSlicesPass
    : mlir::mix::impl::MixFoldReshapesIntoSlicesPassBase<
          MixFoldReshapesIntoSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<InsertWithoutUnitExpansion>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
