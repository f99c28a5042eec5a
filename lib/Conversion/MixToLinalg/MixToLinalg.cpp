//===- MixToLinalg.cpp - The convert-mix-to-linalg pass -------------------===//
//
// Applies the lowering patterns of every op family and checks that no mix
// op is left.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mix/Conversion/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_CONVERTMIXTOLINALGPASS
#include "mix/Conversion/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

void mlir::mix::populateMixToLinalgPatterns(RewritePatternSet &patterns) {
  lowering::populateElementwisePatterns(patterns);
  lowering::populateStructuredPatterns(patterns);
  lowering::populateShapePatterns(patterns);
  lowering::populateIndexingPatterns(patterns);
  lowering::populateCollectivePatterns(patterns);
}

namespace {
struct ConvertMixToLinalgPass
    : mix::impl::ConvertMixToLinalgPassBase<ConvertMixToLinalgPass> {
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
    RewritePatternSet patterns(&getContext());
    populateMixToLinalgPatterns(patterns);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](Operation *op) {
      // A sum over ranks stays for the target's bufferization.
      if (isa<MixDialect>(op->getDialect()) && !isa<AllReduceOp>(op)) {
        op->emitOpError("was not lowered to linalg (is it a model-level op? "
                        "run mix-decompose first)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
