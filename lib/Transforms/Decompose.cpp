//===- Decompose.cpp - Lower model-level mix ops to primitives ------------===//
//
// Replaces every model-level op by primitive mix ops, until only primitives
// (and constants) remain: the form autodiff and the lowering work on.
//
//===----------------------------------------------------------------------===//

#include "Decompositions.h"

#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXDECOMPOSEPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

/// Decomposes `op` if it is a model-level op; returns whether it did.
static bool decomposeOne(Operation *op) {
  OpBuilder b(op);
  PrimitiveBuilder pb(b, op->getLoc());
  FailureOr<SmallVector<Value>> results = decomposeNN(pb, op);
  if (failed(results))
    results = decomposeMixing(pb, op);
  if (failed(results))
    results = decomposeStreams(pb, op);
  if (failed(results))
    return false;
  op->replaceAllUsesWith(*results);
  op->erase();
  return true;
}

namespace {
struct DecomposePass : mix::impl::MixDecomposePassBase<DecomposePass> {
  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp func) {
      // Region mixtures unroll into model-level ops, so go to a fixpoint.
      bool changed = true;
      while (changed) {
        changed = false;
        SmallVector<Operation *> ops;
        for (Operation &op : func.getBody().getOps())
          ops.push_back(&op);
        for (Operation *op : ops)
          changed |= decomposeOne(op);
      }
    });
  }
};
} // namespace
