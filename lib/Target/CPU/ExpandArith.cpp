//===- ExpandArith.cpp - bf16 roundings and divisions for LLVM ------------===//
//
// Expands the arith ops that convert-arith-to-llvm lowers to library calls
// or not at all: bf16 truncations and extensions, ceil and floor divisions
// (mix-expand-arith).
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXEXPANDARITHPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;

namespace {
struct MixExpandArithPass
    : mlir::mix::impl::MixExpandArithPassBase<MixExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
