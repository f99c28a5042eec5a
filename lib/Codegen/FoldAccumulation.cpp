//===- FoldAccumulation.cpp - Sums into matrix-product accumulators -------===//
//
// `add(matmul(A, B), X)`, with the product accumulating into zeros, becomes
// a product accumulating into X (broadcast as the add broadcast it): the
// bias of a linear layer and the sums of the backward pass are then added
// by the library's accumulation (oneDNN's sum post-op) instead of a pass of
// their own over the product.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFOLDSUMSINTOACCUMULATORSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

namespace {

/// Whether `op` is a matrix product on tensors that accumulates into a
/// fill of zeros and whose only user is `user`.
static bool isZeroInitProduct(Operation *op, Operation *user) {
  if (!op || !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op->hasOneUse() || *op->user_begin() != user)
    return false;
  auto dps = cast<DestinationStyleOpInterface>(op);
  if (!dps.hasPureTensorSemantics())
    return false;
  auto fill = dps.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
}

struct FoldAddIntoAccumulator : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add,
                                PatternRewriter &rewriter) const override {
    if (add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 ||
        add.getNumLoops() != add.getNumParallelLoops() ||
        !add.hasPureTensorSemantics())
      return failure();
    // The body is exactly `yield addf(in0, in1)`.
    Block &body = add.getRegion().front();
    if (body.getOperations().size() != 2)
      return failure();
    auto addf = dyn_cast<arith::AddFOp>(body.front());
    if (!addf || body.getTerminator()->getOperand(0) != addf.getResult())
      return failure();
    auto isArg = [&](Value v, unsigned i) { return v == body.getArgument(i); };
    if (!((isArg(addf.getLhs(), 0) && isArg(addf.getRhs(), 1)) ||
          (isArg(addf.getLhs(), 1) && isArg(addf.getRhs(), 0))))
      return failure();

    for (unsigned i = 0; i < 2; ++i) {
      OpOperand *product = add.getDpsInputOperand(i);
      OpOperand *other = add.getDpsInputOperand(1 - i);
      Operation *op = product->get().getDefiningOp();
      if (product->get() == other->get() || !isZeroInitProduct(op, add) ||
          !add.getMatchingIndexingMap(product).isIdentity() ||
          product->get().getType() != add.getResult(0).getType())
        continue;
      // The accumulator: `other`, broadcast over the product's shape; or
      // `other` itself where it has that shape (a sum of products: the
      // second accumulates into the first's result, in place when
      // bufferization finds nothing else reads it).
      Location loc = add.getLoc();
      auto dps = cast<DestinationStyleOpInterface>(op);
      auto fill = dps.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      rewriter.setInsertionPoint(add);
      AffineMap identity = add.getMatchingIndexingMap(product);
      Value init = other->get();
      if (!add.getMatchingIndexingMap(other).isIdentity() ||
          init.getType() != product->get().getType())
        init = linalg::GenericOp::create(
                   rewriter, loc, TypeRange{product->get().getType()},
                   ValueRange{other->get()}, ValueRange{fill.getOutputs()[0]},
                   ArrayRef<AffineMap>{add.getMatchingIndexingMap(other),
                                       identity},
                   add.getIteratorTypesArray(),
                   [](OpBuilder &b, Location loc, ValueRange args) {
                     linalg::YieldOp::create(b, loc, args[0]);
                   })
                   .getResult(0);
      Operation *accumulating = rewriter.clone(*op);
      cast<DestinationStyleOpInterface>(accumulating)
          .getDpsInitsMutable()[0]
          .set(init);
      rewriter.replaceOp(add, accumulating->getResults());
      rewriter.eraseOp(op);
      return success();
    }
    return failure();
  }
};

} // namespace

LogicalResult mlir::mix::foldSumsIntoAccumulators(FunctionOpInterface function) {
  RewritePatternSet patterns(function.getContext());
  patterns.add<FoldAddIntoAccumulator>(function.getContext());
  return applyPatternsGreedily(function, std::move(patterns));
}

namespace {
struct MixFoldSumsIntoAccumulatorsPass
    : mlir::mix::impl::MixFoldSumsIntoAccumulatorsPassBase<
          MixFoldSumsIntoAccumulatorsPass> {
  void runOnOperation() override {
    if (failed(foldSumsIntoAccumulators(getOperation())))
      signalPassFailure();
  }
};
} // namespace
