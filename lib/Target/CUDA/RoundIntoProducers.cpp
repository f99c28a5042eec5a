//===- RoundIntoProducers.cpp - Fused kernels that write bf16 directly ----===//
//
// With mixc --precision bf16, mix-bf16-matmuls rounds each product operand
// with an elementwise truncf. When the rounded value is an output of a
// fused op (LayerNorm, its gradient, the attention's gradient, the
// cross-entropy's gradient) that nothing else reads, the fused op's kernel
// can store the rounded values itself: the truncf launch, the f32 buffer
// and its write and read-back all go. The kernel emitters round on store
// (KernelEmitter::store), so the rewrite only swaps the output buffer.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXROUNDINTOPRODUCERSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

/// Whether \p op copies its one f32 input into its one bf16 output of the
/// same shape, element by element, rounded (`arith.truncf`).
bool mlir::mix::isRoundingToBF16(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  auto in = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto out = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!in || !out || !in.getElementType().isF32() ||
      !out.getElementType().isBF16() || in.getShape() != out.getShape())
    return false;
  Block *body = op.getBlock();
  if (body->getOperations().size() != 2)
    return false;
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return trunc && trunc.getIn() == body->getArgument(0) &&
         yield.getValues() == ValueRange{trunc.getResult()};
}

namespace {
/// The output operand of \p op that its kernel may write in bf16.
OpOperand *roundableOutput(Operation *op) {
  if (auto ln = dyn_cast<FusedLayerNormBuffersOp>(op))
    return &ln.getResultMutable();
  if (auto grad = dyn_cast<FusedLayerNormGradBuffersOp>(op))
    return &grad.getDinputMutable();
  if (auto grad = dyn_cast<FlashAttentionGradBuffersOp>(op))
    return &grad.getDqkvMutable();
  if (auto grad = dyn_cast<FusedCrossEntropyGradBuffersOp>(op))
    return &grad.getDlogitsMutable();
  return nullptr;
}

/// The output operand of \p op, an elementwise linalg.generic that does
/// not read it, for the value \p x; null when \p op is not that.
OpOperand *elementwiseOutput(Operation *op, Value x) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getBlock()->without_terminator(),
                    [](Operation &p) { return isPure(&p); }))
    return nullptr;
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (init.get() == x &&
        generic.getMatchingIndexingMap(&init).isPermutation() &&
        generic.getMatchingBlockArgument(&init).use_empty())
      return &init;
  return nullptr;
}

/// Has \p output, an init of an elementwise linalg.generic, take \p y
/// (bf16): the payload rounds the value it yields for it.
void roundElementwiseOutput(OpOperand *output, Value y) {
  auto generic = cast<linalg::GenericOp>(output->getOwner());
  output->set(y);
  BlockArgument arg = generic.getMatchingBlockArgument(output);
  arg.setType(BFloat16Type::get(generic.getContext()));
  auto yield = cast<linalg::YieldOp>(generic.getBlock()->getTerminator());
  OpOperand &yielded = yield->getOpOperand(output->getOperandNumber() -
                                           generic.getNumDpsInputs());
  OpBuilder b(yield);
  yielded.set(arith::TruncFOp::create(b, generic.getLoc(), arg.getType(),
                                      yielded.get()));
}

/// A fresh allocation: memref.alloc without operands in the block of \p op.
memref::AllocOp freshAllocation(Value v, Operation *op) {
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getNumOperands() != 0 ||
      alloc->getBlock() != op->getBlock())
    return nullptr;
  return alloc;
}

/// Whether \p op sums the rows of its one 2-d input into its 1 x n f32
/// output, `out + in` (a bias gradient).
bool isColumnSum(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() != 2 ||
      op.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                           utils::IteratorType::parallel} ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return false;
  Block *body = op.getBlock();
  auto add = dyn_cast<arith::AddFOp>(body->front());
  if (body->getOperations().size() != 2 || !add)
    return false;
  Value in = body->getArgument(0), acc = body->getArgument(1);
  return (add.getLhs() == in && add.getRhs() == acc) ||
         (add.getLhs() == acc && add.getRhs() == in);
}

/// \p view (a reshape of x) made of \p y instead: an equal reshape of y
/// before \p before, reused when there is one.
Value reshapeLike(Operation *view, Value y, Operation *before) {
  auto sameGroups = [&](Operation *other) {
    if (other->getName() != view->getName() ||
        other->getResult(0).getType() !=
            cast<MemRefType>(view->getResult(0).getType())
                .clone(cast<MemRefType>(y.getType()).getElementType()) ||
        other->getBlock() != before->getBlock() ||
        !other->isBeforeInBlock(before))
      return false;
    if (auto c = dyn_cast<memref::CollapseShapeOp>(other))
      return c.getReassociationIndices() ==
             cast<memref::CollapseShapeOp>(view).getReassociationIndices();
    auto e = cast<memref::ExpandShapeOp>(other);
    return e.getReassociationIndices() ==
               cast<memref::ExpandShapeOp>(view).getReassociationIndices() &&
           e.getStaticOutputShape() ==
               cast<memref::ExpandShapeOp>(view).getStaticOutputShape();
  };
  for (Operation *user : y.getUsers())
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user) &&
        sameGroups(user))
      return user->getResult(0);
  OpBuilder b(before);
  if (auto c = dyn_cast<memref::CollapseShapeOp>(view))
    return memref::CollapseShapeOp::create(b, c.getLoc(), y,
                                           c.getReassociationIndices());
  auto e = cast<memref::ExpandShapeOp>(view);
  auto type = cast<MemRefType>(e.getType())
                  .clone(cast<MemRefType>(y.getType()).getElementType());
  return memref::ExpandShapeOp::create(b, e.getLoc(), type, y,
                                       e.getReassociationIndices(),
                                       e.getMixedOutputShape());
}

/// Has each bias-gradient sum of what \p rounding rounds (read directly or
/// through a reshape, after the rounding) sum the rounded values instead:
/// what cuBLASLt's BGRADB epilogue, which sums the operand as the product
/// reads it, computes (mix-matmuls-to-library-calls then fuses the sum
/// into the weight gradient's product).
void sumRounded(linalg::GenericOp rounding) {
  Value x = rounding.getDpsInputs()[0], y = rounding.getDpsInits()[0];
  SmallVector<std::pair<linalg::GenericOp, Operation *>> sums;
  // Summing y is summing x rounded while neither is written in between
  // (x may be a buffer reused for later values: an accumulated gradient).
  Value xRoot = getBufferRoot(x), yRoot = getBufferRoot(y);
  if (!isDistinctBuffer(xRoot) || !isDistinctBuffer(yRoot))
    return;
  auto unchanged = [&](Operation *sum) {
    for (Operation *op = rounding->getNextNode(); op != sum;
         op = op->getNextNode())
      if (!leavesBufferUnwritten(op, xRoot) ||
          !leavesBufferUnwritten(op, yRoot))
        return false;
    return true;
  };
  auto consider = [&](Operation *user, Operation *view) {
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (sum && isColumnSum(sum) && sum->getBlock() == rounding->getBlock() &&
        rounding->isBeforeInBlock(sum) && unchanged(sum))
      sums.push_back({sum, view});
  };
  for (Operation *user : x.getUsers()) {
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user)) {
      for (Operation *reader : user->getResult(0).getUsers())
        consider(reader, user);
      continue;
    }
    consider(user, nullptr);
  }
  for (auto [sum, view] : sums) {
    Value input = view ? reshapeLike(view, y, sum) : y;
    sum.getDpsInputOperand(0)->set(input);
    Block *body = sum.getBlock();
    BlockArgument in = body->getArgument(0);
    in.setType(BFloat16Type::get(sum.getContext()));
    OpBuilder b = OpBuilder::atBlockBegin(body);
    Value wide = arith::ExtFOp::create(b, sum.getLoc(), b.getF32Type(), in);
    in.replaceAllUsesExcept(wide, wide.getDefiningOp());
  }
}

/// The output operand of \p op through which it writes every element of
/// \p x without reading it (a fused op's output, an elementwise generic's
/// init), when \p x is no other operand of \p op; null otherwise.
OpOperand *overwritingOutput(Operation *op, Value x) {
  OpOperand *output = roundableOutput(op);
  if (!output || output->get() != x)
    output = elementwiseOutput(op, x);
  if (!output || llvm::count(op->getOperands(), x) != 1)
    return nullptr;
  return output;
}

/// Rewrites \p rounding's producer to write its output; returns whether it
/// did. What the producer writes in x must be read by the rounding alone:
/// between them nothing touches x, and after the rounding x is freed or
/// overwritten before anything reads it (bufferization reuses a buffer for
/// the same value of each layer).
bool roundIntoProducer(linalg::GenericOp rounding) {
  Value x = rounding.getDpsInputs()[0], y = rounding.getDpsInits()[0];
  memref::AllocOp xAlloc = freshAllocation(x, rounding);
  memref::AllocOp yAlloc = freshAllocation(y, rounding);
  if (!xAlloc || !yAlloc)
    return false;
  // Views left without readers (sumRounded's) go first.
  for (Operation *user : llvm::make_early_inc_range(x.getUsers()))
    if (isa<ViewLikeOpInterface>(user) && user->use_empty())
      user->erase();
  OpOperand *output = nullptr;
  for (Operation *op = rounding->getPrevNode(); op && !output;
       op = op->getPrevNode()) {
    if (leavesBufferAlone(op, x))
      continue;
    if (!(output = overwritingOutput(op, x)))
      return false;
  }
  if (!output)
    return false;
  for (Operation *op = rounding->getNextNode();; op = op->getNextNode()) {
    if (!op)
      return false; // x outlives the block
    if (auto free = dyn_cast<memref::DeallocOp>(op);
        (free && free.getMemref() == x) || overwritingOutput(op, x))
      break;
    if (!leavesBufferAlone(op, x))
      return false;
  }
  Operation *producer = output->getOwner();
  if (!yAlloc->isBeforeInBlock(producer))
    yAlloc->moveBefore(producer);
  if (isa<linalg::GenericOp>(producer))
    roundElementwiseOutput(output, y);
  else
    output->set(y);
  rounding.erase();
  // x, when no other value of the block lives in it, goes with its frees.
  if (llvm::all_of(x.getUsers(),
                   [](Operation *op) { return isa<memref::DeallocOp>(op); })) {
    for (Operation *op : llvm::make_early_inc_range(x.getUsers()))
      op->erase();
    xAlloc.erase();
  }
  return true;
}

struct MixRoundIntoProducersPass
    : mlir::mix::impl::MixRoundIntoProducersPassBase<
          MixRoundIntoProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> roundings;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isRoundingToBF16(op))
        roundings.push_back(op);
    });
    for (linalg::GenericOp op : roundings) {
      sumRounded(op);
      roundIntoProducer(op);
    }
  }
};
} // namespace
