//===- ApproximateMath.cpp - exp, log and tanh as inline polynomials ------===//
//
// Replaces exp, log and tanh by MLIR's polynomial approximations, which LLVM
// vectorizes with the loop around them (mix-approximate-math).
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXAPPROXIMATEMATHPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;

namespace {
struct MixApproximateMathPass
    : mlir::mix::impl::MixApproximateMathPassBase<MixApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The predicate sees operation names ("math.exp").
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      name.consume_front("math.");
      return name == "exp" || name == "log" || name == "tanh";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
