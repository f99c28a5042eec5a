//===- FuseElementwise.cpp - Elementwise fusion, with recomputation -------===//
//
// On tensors, before bufferization: elementwise producers fuse into their
// elementwise consumers, and a small elementwise producer whose users are
// all elementwise is recomputed in each of them instead of being stored.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFUSEELEMENTWISEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix


/// Fuses elementwise producers into consumers that read each of the
/// producer's elements once: elementwise consumers, and reductions (a
/// `linalg.generic` with reduction loops) whose indexing map for the
/// operand is a permutation, such as the sums of squares of a norm or a
/// layer norm's variance, which then never store the squares. Fusing into a
/// contraction would recompute the producer for every element of the
/// reduced dimension (a layer norm fused into the matmul after it is
/// recomputed once per output column), and would hide the matmul from the
/// library call; named ops are never fused into.
///
/// A producer with several users is fused into each of them (recomputed)
/// when all of them are such consumers and its body is small: it is then
/// never stored. The backward pass reads most forward intermediates again,
/// so without this every step of an elementwise chain (the terms of GELU's
/// tanh form, a normalization's scaled rows) lived from the forward pass to
/// the backward as a tensor of its own; recomputing them costs a few
/// arithmetic ops an element where storing cost a buffer and a round trip
/// through memory.
LogicalResult mlir::mix::fuseElementwiseOps(FunctionOpInterface function,
                                            bool sharedReadsOnce) {
  auto allParallel = [](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && generic.getNumLoops() == generic.getNumParallelLoops();
  };
  // The consumer reads each element of the operand once.
  auto readsOnce = [&](OpOperand &operand) {
    Operation *owner = operand.getOwner();
    if (allParallel(owner))
      return true;
    auto generic = dyn_cast<linalg::GenericOp>(owner);
    return generic && generic.isDpsInput(&operand) &&
           generic.getMatchingIndexingMap(&operand).isPermutation();
  };
  // The operands a producer reads whole (an element per iteration), which
  // every recomputation reads again: a permutation of the loops, or one
  // with constant indices besides (an unrolled reduction reads its input
  // once for each reduced position).
  auto readsWhole = [](AffineMap map) {
    llvm::SmallBitVector used(map.getNumDims());
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        used.set(dim.getPosition());
      else if (!isa<AffineConstantExpr>(e))
        return false;
    }
    return used.all();
  };
  auto fullReads = [&](linalg::GenericOp generic) {
    return llvm::count_if(generic.getDpsInputOperands(), [&](OpOperand *in) {
      return readsWhole(generic.getMatchingIndexingMap(in));
    });
  };
  auto addWholeReads = [&](linalg::GenericOp generic,
                           llvm::SmallSetVector<Value, 4> &values) {
    for (OpOperand *in : generic.getDpsInputOperands())
      if (readsWhole(generic.getMatchingIndexingMap(in)))
        values.insert(in->get());
  };
  // Recomputed in \p consumer, a producer adds its whole reads to the
  // consumer's; a producer is recomputed only where that keeps them few.
  // With sharedReadsOnce the values the consumer reads whole anyway count
  // once (a softmax's gradient recomputes p * dp at each of a row's
  // positions from the p and dp it reads).
  auto wholeReadsAfter = [&](linalg::GenericOp producer,
                             linalg::GenericOp consumer) -> int64_t {
    if (!sharedReadsOnce)
      return fullReads(consumer) - 1 + fullReads(producer);
    llvm::SmallSetVector<Value, 4> reads;
    addWholeReads(consumer, reads);
    reads.remove(producer->getResult(0));
    addWholeReads(producer, reads);
    return reads.size();
  };
  auto recomputable = [&](Operation *producer, Operation *consumer) {
    auto generic = cast<linalg::GenericOp>(producer);
    return generic->getNumResults() == 1 &&
           wholeReadsAfter(generic, cast<linalg::GenericOp>(consumer)) <=
               kMaxRecomputedReads &&
           generic.getRegion().front().getOperations().size() <=
               kMaxRecomputedOps &&
           llvm::all_of(producer->getUses(), readsOnce);
  };
  RewritePatternSet patterns(function.getContext());
  linalg::populateElementwiseOpsFusionPatterns(
      patterns, [&](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        if (!producer || !allParallel(producer) || !readsOnce(*operand))
          return false;
        return producer->hasOneUse() ||
               recomputable(producer, operand->getOwner());
      });
  return applyPatternsGreedily(function, std::move(patterns));
}

namespace {
struct MixFuseElementwisePass
    : mlir::mix::impl::MixFuseElementwisePassBase<MixFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(fuseElementwiseOps(getOperation(), sharedReadsOnce)))
      signalPassFailure();
  }
};
} // namespace
