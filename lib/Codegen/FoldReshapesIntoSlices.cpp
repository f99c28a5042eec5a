//===- FoldReshapesIntoSlices.cpp - Insertions without unit-dim reshapes --===//
//
// `tensor.insert_slice (tensor.expand_shape x)`, where the expansion only
// adds unit dimensions, becomes a rank-reducing `tensor.insert_slice x`
// (with upstream's other reassociative reshape foldings of slices), so
// that empty-tensor elimination can have x's producer write into the
// destination's slot in place.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFOLDRESHAPESINTOSLICESPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

namespace {
struct MixFoldReshapesIntoSlicesPass
    : mlir::mix::impl::MixFoldReshapesIntoSlicesPassBase<
          MixFoldReshapesIntoSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tensor::populateReassociativeReshapeFoldingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
