//===- FoldAccumulation.cpp - Sums into matrix-product accumulators -------===//
//
// `add(matmul(A, B), X)`, with the product accumulating into zeros, becomes
// a product accumulating into X (broadcast as the add broadcast it): the
// bias of a linear layer and the sums of the backward pass are then added
// by the library's accumulation (oneDNN's sum post-op) instead of a pass of
// their own over the product. The product stays where it was: an X
// computed after it is not folded.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// Whether `def` could have been computed just before `op` from what was
/// there already: without memory effects, from values defined before
/// `op` through at most `budget` operations after it (a bias broadcast
/// made after its product can; the embedding's gradient, at the end of a
/// backward pass that the head's weight gradient begins, cannot).
static bool computableJustBefore(Operation *def, Operation *op,
                                 DenseSet<Operation *> &seen,
                                 unsigned &budget) {
  if (!seen.insert(def).second)
    return true;
  if (budget == 0 || !isMemoryEffectFree(def))
    return false;
  --budget;
  // The values it uses, in its regions too (a loop's body reads what is
  // defined around it).
  WalkResult result = def->walk([&](Operation *nested) {
    for (Value v : nested->getOperands()) {
      Operation *d = v.getDefiningOp();
      if (!d || d->getBlock() != op->getBlock() || d->isBeforeInBlock(op) ||
          (d != op && computableJustBefore(d, op, seen, budget)))
        continue;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether `loop`'s iter-arg `k` is only added to: each iteration reads
/// an element, adds a value to it and writes it back at the same indices
/// (or hands the tensor to a nested loop that does), and yields it. A
/// scatter-add (the embedding's gradient) is such a loop: started from any
/// tensor T instead of zeros, it yields T plus what it adds.
static bool onlyAddsTo(scf::ForOp loop, unsigned k) {
  Value acc = loop.getRegionIterArgs()[k];
  Value yielded = loop.getYieldedValues()[k];
  if (acc.hasOneUse()) {
    auto inner = dyn_cast<scf::ForOp>(*acc.getUsers().begin());
    if (!inner || inner->getParentOp() != loop)
      return false;
    for (OpOperand &init : inner.getInitArgsMutable())
      if (init.get() == acc)
        return yielded == inner.getResult(init.getOperandNumber() -
                                          inner.getNumControlOperands()) &&
               onlyAddsTo(inner, init.getOperandNumber() -
                                     inner.getNumControlOperands());
    return false;
  }
  tensor::ExtractOp read;
  tensor::InsertOp write;
  for (Operation *user : acc.getUsers()) {
    if (auto e = dyn_cast<tensor::ExtractOp>(user); e && !read)
      read = e;
    else if (auto i = dyn_cast<tensor::InsertOp>(user);
             i && !write && i.getDest() == acc)
      write = i;
    else
      return false;
  }
  if (!read || !write || yielded != write.getResult() ||
      !read.getResult().hasOneUse() ||
      !llvm::equal(read.getIndices(), write.getIndices()))
    return false;
  auto sum = write.getScalar().getDefiningOp<arith::AddFOp>();
  return sum &&
         (sum.getLhs() == read.getResult() || sum.getRhs() == read.getResult());
}

/// The loop whose result `v` is, if it is a scatter-add into zeros: its
/// iter-arg starts as a zero fill and is only added to.
static scf::ForOp getZeroInitScatterAdd(Value v, unsigned &k) {
  auto result = dyn_cast<OpResult>(v);
  auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!loop)
    return nullptr;
  k = result.getResultNumber();
  auto fill = loop.getInitArgs()[k].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return nullptr;
  return onlyAddsTo(loop, k) ? loop : nullptr;
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
      // The product accumulates where the sum was. Where `other` is
      // computed after the product, that would keep the product waiting for
      // `other`, holding its operands (the head's weight gradient, dlogits^T x,
      // would wait for the embedding's scatter, keeping the logits' gradient
      // through the whole backward pass), and the sum stays a pass of its
      // own (or the other operand's fold, for a sum of products).
      Operation *otherDef = other->get().getDefiningOp();
      if (otherDef && otherDef->getBlock() == op->getBlock() &&
          op->isBeforeInBlock(otherDef)) {
        DenseSet<Operation *> seen;
        unsigned budget = 4;
        if (!computableJustBefore(otherDef, op, seen, budget)) {
          // A scatter-add into zeros adds into the product instead: the
          // product stays where it is, and the sum goes.
          unsigned k;
          scf::ForOp loop = getZeroInitScatterAdd(other->get(), k);
          if (!loop || !add.getMatchingIndexingMap(other).isIdentity() ||
              other->get().getType() != add.getResult(0).getType())
            continue;
          rewriter.modifyOpInPlace(
              loop, [&] { loop.getInitArgsMutable()[k].set(product->get()); });
          rewriter.replaceOp(add, other->get());
          return success();
        }
      }
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

LogicalResult
mlir::mix::foldSumsIntoAccumulators(FunctionOpInterface function) {
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
