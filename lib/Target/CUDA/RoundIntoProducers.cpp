//===- RoundIntoProducers.cpp - Kernels that write bf16 operands directly -===//
//
// With mixc --precision bf16, mix-bf16-matmuls rounds each product operand
// with an elementwise truncf: a launch that reads the f32 value and writes
// the bf16 one. Where the f32 value's other readers allow it, the kernel
// that makes the value stores the rounded values itself (a fused op's
// kernel rounds on store, KernelEmitter::store; an elementwise payload
// yields them rounded): the rounding's launch, and often the f32 buffer's
// write and read-back, go. Bias-gradient sums and the attention's gradient
// are made to read the rounded values, so that they do not keep the f32
// ones alive (see the pass's description in Passes.td).
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
  if (auto attention = dyn_cast<FlashAttentionBuffersOp>(op))
    return &attention.getResultMutable();
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

/// \p producer, an elementwise generic, with \p y (bf16) as one more
/// output, at \p x's (its init \p xInit) indexing map: the payload also
/// yields the value it yields for x, rounded.
void addRoundedOutput(linalg::GenericOp producer, OpOperand *xInit, Value y) {
  SmallVector<Value> inits(producer.getDpsInits());
  inits.push_back(y);
  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.push_back(producer.getMatchingIndexingMap(xInit));
  unsigned xResult = xInit->getOperandNumber() - producer.getNumDpsInputs();
  OpBuilder b(producer);
  auto merged = linalg::GenericOp::create(b, producer.getLoc(), TypeRange{},
                                          producer.getDpsInputs(), inits, maps,
                                          producer.getIteratorTypesArray());
  Region &region = merged.getRegion();
  region.takeBody(producer.getRegion());
  Block &body = region.front();
  body.addArgument(b.getBF16Type(), producer.getLoc());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  b.setInsertionPoint(yield);
  SmallVector<Value> values(yield.getValues());
  values.push_back(arith::TruncFOp::create(b, yield.getLoc(), b.getBF16Type(),
                                           values[xResult]));
  linalg::YieldOp::create(b, yield.getLoc(), values);
  yield.erase();
  producer.erase();
}

/// Has the attention's gradient read the attention's output rounded, where
/// \p rounding rounds it for the output projection: D = rowsum(dout . out)
/// from the bf16 values, as FlashAttention-2 computes it from its bf16
/// output, so that the forward kernel writes bf16 alone. The rounded
/// buffer is freed after the gradient instead.
void attentionReadsRounded(linalg::GenericOp rounding) {
  Value x = rounding.getDpsInputs()[0], y = rounding.getDpsInits()[0];
  FlashAttentionGradBuffersOp grad;
  for (Operation *user : x.getUsers())
    if (auto g = dyn_cast<FlashAttentionGradBuffersOp>(user);
        g && g.getOut() == x && g->getBlock() == rounding->getBlock() &&
        rounding->isBeforeInBlock(g))
      grad = g;
  if (!grad || llvm::count(grad->getOperands(), x) != 1 ||
      !isDistinctBuffer(x) || !isDistinctBuffer(y))
    return;
  SmallVector<Operation *> frees;
  for (Operation *op = rounding->getNextNode(); op != grad;
       op = op->getNextNode()) {
    if (auto free = dyn_cast<memref::DeallocOp>(op);
        free && free.getMemref() == y) {
      frees.push_back(op);
      continue;
    }
    if (!leavesBufferUnwritten(op, x) || !leavesBufferUnwritten(op, y))
      return;
  }
  grad.getOutMutable().set(y);
  for (Operation *free : frees)
    free->moveAfter(grad);
}

/// Rewrites \p rounding's producer to write its output; returns whether it
/// did. Where what the producer writes in x is read by the rounding alone
/// (between them nothing touches x, and after the rounding x is freed or
/// overwritten before anything reads it: bufferization reuses a buffer for
/// the same value of each layer), the producer writes y instead of x;
/// where x is read again, an elementwise producer writes y besides x (a
/// kernel that absorbs it, a LayerNorm gradient's residual add, then
/// stores both).
bool roundIntoProducer(linalg::GenericOp rounding) {
  Value x = rounding.getDpsInputs()[0], y = rounding.getDpsInits()[0];
  // x may be a view of its allocation (mix-transposed-results computes a
  // value in its transposed copy's buffer); the writer then writes y
  // besides it.
  Value xRoot = getBufferRoot(x);
  bool viewed = xRoot != x;
  memref::AllocOp xAlloc = freshAllocation(xRoot, rounding);
  memref::AllocOp yAlloc = freshAllocation(y, rounding);
  if (!xAlloc || !yAlloc)
    return false;
  // Views left without readers (sumRounded's) go first.
  for (Operation *user : llvm::make_early_inc_range(x.getUsers()))
    if (isa<ViewLikeOpInterface>(user) && user->use_empty())
      user->erase();
  Operation *writer = rounding->getPrevNode();
  while (writer && leavesBufferAlone(writer, xRoot))
    writer = writer->getPrevNode();
  if (!writer)
    return false;
  bool dead = false;
  for (Operation *op = rounding->getNextNode(); op && !viewed;
       op = op->getNextNode()) {
    if (auto free = dyn_cast<memref::DeallocOp>(op);
        (free && free.getMemref() == x) || overwritingOutput(op, x)) {
      dead = true;
      break;
    }
    if (!leavesBufferAlone(op, x))
      break;
  }
  OpOperand *output = dead ? overwritingOutput(writer, x) : nullptr;
  OpOperand *init = output ? nullptr : elementwiseOutput(writer, x);
  if (!output && !init)
    return false;
  if (!yAlloc->isBeforeInBlock(writer))
    yAlloc->moveBefore(writer);
  rounding.erase();
  if (init) {
    // A LayerNorm gradient's kernel absorbs an add of its dinput (the
    // residual gradient's): y must be there before it.
    for (Value in : cast<linalg::GenericOp>(writer).getDpsInputs())
      for (Operation *user : in.getUsers())
        if (auto grad = dyn_cast<FusedLayerNormGradBuffersOp>(user);
            grad && grad.getDinput() == in &&
            grad->getBlock() == writer->getBlock() &&
            grad->isBeforeInBlock(yAlloc))
          yAlloc->moveBefore(grad);
    addRoundedOutput(cast<linalg::GenericOp>(writer), init, y);
    return true;
  }
  if (isa<linalg::GenericOp>(writer))
    roundElementwiseOutput(output, y);
  else
    output->set(y);
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
      attentionReadsRounded(op);
      roundIntoProducer(op);
    }
  }
};
} // namespace
