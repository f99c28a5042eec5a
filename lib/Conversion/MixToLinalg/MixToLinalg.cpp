//===- MixToLinalg.cpp - The convert-mix-to-linalg pass -------------------===//
//
// Applies the lowering patterns of every op family under the dialect
// conversion framework, with every mix op but the sum over ranks illegal.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mix/Conversion/Passes.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"

#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_CONVERTMIXTOLINALGPASS
#include "mix/Conversion/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

void mlir::mix::populateMixToLinalgPatterns(RewritePatternSet &patterns,
                                            bool positionsOnDevice) {
  lowering::populatePositionPatterns(patterns, positionsOnDevice);
  lowering::populateElementwisePatterns(patterns);
  lowering::populateStructuredPatterns(patterns);
  lowering::populateShapePatterns(patterns);
  lowering::populateIndexingPatterns(patterns);
  lowering::populateCollectivePatterns(patterns);
}

namespace {
struct ConvertMixToLinalgPass
    : mix::impl::ConvertMixToLinalgPassBase<ConvertMixToLinalgPass> {
  using ConvertMixToLinalgPassBase::ConvertMixToLinalgPassBase;

  void runOnOperation() override {
    bool collectives = false;
    getOperation()->walk([&](Operation *op) {
      collectives |= isa<AllReduceOp, RankSliceOp, RankPadOp>(op);
    });
    if (collectives) {
      auto module = dyn_cast<ModuleOp>(getOperation());
      if (!module)
        module = getOperation()->getParentOfType<ModuleOp>();
      if (!module) {
        getOperation()->emitOpError(
            "has stream-parallel collectives but is not in a module, where "
            "their runtime functions would be declared");
        return signalPassFailure();
      }
      lowering::declareCollectives(module);
    }
    // Every mix op is illegal but the sum over ranks and the fused ops
    // (attention, cross-entropy), which stay for the target's bufferization
    // (and kernels), and a concatenation inside a tree, which the tree's
    // outermost one lowers and erases. What the patterns leave is the
    // framework's error.
    ConversionTarget target(getContext());
    target.addIllegalDialect<MixDialect>();
    target.addLegalOp<AllReduceOp, FlashAttentionOp, FlashAttentionGradOp,
                      FusedCrossEntropyOp, FusedCrossEntropyGradOp,
                      FusedLayerNormOp, FusedLayerNormGradOp,
                      MultiTensorSumSquaresOp, MultiTensorAdamWOp>();
    target.addDynamicallyLegalOp<ConcatOp>(
        [](ConcatOp op) { return lowering::isInnerConcat(op); });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateMixToLinalgPatterns(patterns, positionsOnDevice);
    {
      // The framework names the op it could not legalize; say why.
      ScopedDiagnosticHandler hint(&getContext(), [](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            StringRef(diag.str()).starts_with("failed to legalize"))
          diag.attachNote() << "the primitive mix ops lower to linalg; a "
                               "model-level op needs mix-decompose first";
        return failure();
      });
      if (failed(applyPartialConversion(getOperation(), target,
                                        std::move(patterns))))
        return signalPassFailure();
    }
    // Fold and remove what the lowerings left dead (the loop indices a body
    // does not read) and hoist their constants, as the greedy driver does.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(getOperation(), FrozenRewritePatternSet(),
                                config);
  }
};
} // namespace
