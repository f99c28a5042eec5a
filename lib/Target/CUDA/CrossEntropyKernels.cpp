//===- CrossEntropyKernels.cpp - The cross-entropy in one pass a way ------===//
//
// The fused cross-entropy ops on buffers become kernels that read each row
// of the logits once forward and once backward, never writing the
// probabilities out:
//   forward:  a block of 256 threads a row; each thread folds its strided
//             share of the row into an online (max, sum of exponentials)
//             pair, the warps combine pairs by shuffles and the block
//             through workgroup memory; thread 0 writes the row's
//             log-sum-exp and its loss, lse - logits[target]. A second
//             launch, one block, sums the rows' losses in a fixed order
//             into the mean (no atomics: the result is deterministic);
//   backward: a block a row; each thread writes its share of
//             scale * dresult / rows * (exp(logit - lse) - onehot(target)).
// Where the backward op follows the forward one on the same logits (the
// training step's loss and its gradient), with nothing in between that
// touches their buffers, both are one launch of rows: every thread of a
// row's block takes the row's log-sum-exp from the combined warps and
// writes its share of the gradient right after, so the logits are read
// from device memory once for both (the second pass over the row finds it
// in the L2 cache) and the backward launch goes.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXCROSSENTROPYKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Threads a block, and its warps.
constexpr int64_t kBlock = 256;
constexpr int64_t kWarp = 32;
constexpr int64_t kWarps = kBlock / kWarp;

/// An online softmax's state: the largest value seen and the sum of the
/// exponentials of the values seen, relative to it.
struct MaxSum {
  Value max, sum;
};

/// The state of the values of \p a and \p c together.
MaxSum combine(Emitter &e, MaxSum a, MaxSum c) {
  Value m = e.maxf(a.max, c.max);
  // Nothing seen on either side: keep the exponents finite.
  Value base = e.select(e.isNegInf(m), e.f32(0.0), m);
  Value s = e.addf(e.mulf(a.sum, e.exp(e.subf(a.max, base))),
                   e.mulf(c.sum, e.exp(e.subf(c.max, base))));
  return {m, s};
}

/// The batch row and the position of row \p row of the flattened (B S)
/// rows.
Value batchOf(Emitter &e, Value row, int64_t seq) {
  return e.divi(row, e.idx(seq));
}
Value positionOf(Emitter &e, Value row, int64_t seq) {
  return e.remi(row, e.idx(seq));
}

/// The gradient over one row, `scale * (exp(logit - lse) - onehot(target))`,
/// each of the block's threads writing its strided share.
void writeRowGradient(Emitter &e, FusedCrossEntropyGradBuffersOp op,
                      int64_t rows, Value tid, Value batch, Value pos,
                      Value lse) {
  int64_t vocab = op.getLogits().getType().getShape()[2];
  Value scale = e.f32(op.getScale().convertToDouble() / double(rows));
  if (op.getDresult())
    scale = e.mulf(e.load(op.getDresult(), ValueRange()), scale);
  Value target = e.index(e.load(op.getTargets(), {batch, pos}));
  e.loop(tid, e.idx(vocab), e.idx(kBlock), {}, [&](Value v, ValueRange) {
    Value x = e.load(op.getLogits(), {batch, pos, v});
    Value g = e.mulf(e.exp(e.subf(x, lse)), scale);
    g = e.select(e.eq(v, target), e.subf(g, scale), g);
    e.store(g, op.getDlogits(), {batch, pos, v});
    return SmallVector<Value>();
  });
}

/// The forward op's launches, with \p grad's rows in its first one where
/// it is given.
void lowerForward(FusedCrossEntropyBuffersOp op,
                  FusedCrossEntropyGradBuffersOp grad = nullptr) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  ArrayRef<int64_t> shape = op.getLogits().getType().getShape();
  int64_t seq = shape[1], vocab = shape[2], rows = shape[0] * shape[1];
  Type f32 = builder.getF32Type();
  Value losses = allocOnDevice(builder, e.loc, MemRefType::get({rows}, f32));

  // Each row's log-sum-exp and loss.
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch = createLaunch(
        builder, e.loc, {rows, 1, 1}, {kBlock, 1, 1},
        {workgroupBuffer({kWarps}, f32), workgroupBuffer({kWarps}, f32)});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value maxes = launch.getWorkgroupAttributions()[0];
    Value sums = launch.getWorkgroupAttributions()[1];
    Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    Value batch = batchOf(e, row, seq), pos = positionOf(e, row, seq);
    SmallVector<Value> folded = e.loop(
        tid, e.idx(vocab), e.idx(kBlock), {e.negInf(), e.f32(0.0)},
        [&](Value v, ValueRange state) {
          Value x = e.load(op.getLogits(), {batch, pos, v});
          MaxSum next = combine(e, {state[0], state[1]}, {x, e.f32(1.0)});
          return SmallVector<Value>{next.max, next.sum};
        });
    MaxSum mine{folded[0], folded[1]};
    for (int64_t offset = kWarp / 2; offset >= 1; offset /= 2)
      mine = combine(
          e, mine,
          {e.shuffleXor(mine.max, offset), e.shuffleXor(mine.sum, offset)});
    Value warp = e.divi(tid, e.idx(kWarp));
    e.when(e.eq(e.remi(tid, e.idx(kWarp)), e.idx(0)), [&] {
      e.store(mine.max, maxes, {warp});
      e.store(mine.sum, sums, {warp});
    });
    e.barrier();
    // The row's log-sum-exp from the warps' states: in thread 0 alone, or
    // in every thread where they all write the gradient next.
    auto rowLse = [&] {
      SmallVector<Value> all =
          e.loop(e.idx(0), e.idx(kWarps), e.idx(1), {e.negInf(), e.f32(0.0)},
                 [&](Value w, ValueRange state) {
                   MaxSum next =
                       combine(e, {state[0], state[1]},
                               {e.load(maxes, {w}), e.load(sums, {w})});
                   return SmallVector<Value>{next.max, next.sum};
                 });
      return e.addf(all[0], e.log(all[1]));
    };
    auto writeLoss = [&](Value lse) {
      e.store(lse, op.getLse(), {batch, pos});
      Value target = e.index(e.load(op.getTargets(), {batch, pos}));
      Value picked = e.load(op.getLogits(), {batch, pos, target});
      e.store(e.subf(lse, picked), losses, {row});
    };
    if (grad) {
      Value lse = rowLse();
      e.when(e.eq(tid, e.idx(0)), [&] { writeLoss(lse); });
      writeRowGradient(e, grad, rows, tid, batch, pos, lse);
    } else {
      e.when(e.eq(tid, e.idx(0)), [&] { writeLoss(rowLse()); });
    }
  }

  // Their mean, in one block.
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {1, 1, 1}, {kBlock, 1, 1},
                     {workgroupBuffer({kWarps}, f32)});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value partial = launch.getWorkgroupAttributions()[0];
    Value tid = launch.getThreadIds().x;
    Value mine =
        e.loop(tid, e.idx(rows), e.idx(kBlock), e.f32(0.0),
               [&](Value r, ValueRange acc) {
                 return SmallVector<Value>{e.addf(acc[0], e.load(losses, {r}))};
               })[0];
    Value total = e.blockSum(mine, tid, partial, kBlock);
    e.when(e.eq(tid, e.idx(0)), [&] {
      e.store(e.mulf(total, e.f32(1.0 / double(rows))), op.getResult(),
              ValueRange());
    });
  }
  deallocOnDevice(builder, e.loc, losses);
}

void lowerBackward(FusedCrossEntropyGradBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  ArrayRef<int64_t> shape = op.getLogits().getType().getShape();
  int64_t seq = shape[1], rows = shape[0] * shape[1];
  gpu::LaunchOp launch =
      createLaunch(builder, e.loc, {rows, 1, 1}, {kBlock, 1, 1}, {});
  builder.setInsertionPoint(&launch.getBody().front().back());
  Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  Value batch = batchOf(e, row, seq), pos = positionOf(e, row, seq);
  Value lse = e.load(op.getLse(), {batch, pos});
  writeRowGradient(e, op, rows, tid, batch, pos, lse);
}

/// The allocation of \p buffer itself when it is one: memref.alloc, or
/// gpu.alloc (mix-memory-to-device's form, after which the allocation is
/// ordered on the host by a wait before it and one on its token after).
Operation *allocationOf(Value buffer) {
  Operation *def = buffer.getDefiningOp();
  if (isa_and_nonnull<memref::AllocOp>(def) ||
      (isa_and_nonnull<gpu::AllocOp>(def) && def->getResult(0) == buffer))
    return def;
  return nullptr;
}

/// Moves the allocation \p alloc up before \p before, with a gpu.alloc's
/// waits: the ones that make its dependencies (used by it alone) and the
/// ones on its token.
void moveAllocationBefore(Operation *alloc, Operation *before) {
  SmallVector<Operation *> chain;
  if (auto gpuAlloc = dyn_cast<gpu::AllocOp>(alloc))
    for (Value dep : gpuAlloc.getAsyncDependencies())
      if (auto wait = dep.getDefiningOp<gpu::WaitOp>();
          wait && wait->hasOneUse() && wait->getNumOperands() == 0)
        chain.push_back(wait);
  chain.push_back(alloc);
  if (auto gpuAlloc = dyn_cast<gpu::AllocOp>(alloc))
    if (Value token = gpuAlloc.getAsyncToken())
      for (Operation *user : token.getUsers())
        if (isa<gpu::WaitOp>(user))
          chain.push_back(user);
  for (Operation *op : chain)
    op->moveBefore(before);
}

/// The backward op that can run in \p fwd's launch of rows: the next one
/// in its block on the same logits, targets and log-sum-exps, its adjoint
/// and gradient buffers there before \p fwd (or the gradient's allocation
/// movable there), and nothing in between that touches any of them.
FusedCrossEntropyGradBuffersOp
findPairedBackward(FusedCrossEntropyBuffersOp fwd) {
  FusedCrossEntropyGradBuffersOp grad;
  for (Operation *op = fwd->getNextNode(); op && !grad;
       op = op->getNextNode()) {
    auto candidate = dyn_cast<FusedCrossEntropyGradBuffersOp>(op);
    if (candidate && candidate.getLogits() == fwd.getLogits() &&
        candidate.getTargets() == fwd.getTargets() &&
        candidate.getLse() == fwd.getLse())
      grad = candidate;
  }
  if (!grad)
    return nullptr;
  SmallVector<Value> buffers{fwd.getLogits(), fwd.getTargets(), fwd.getLse(),
                             grad.getDlogits()};
  if (grad.getDresult())
    buffers.push_back(grad.getDresult());
  SmallVector<Value> roots;
  for (Value v : buffers) {
    Value root = getBufferRoot(v);
    if (!isDistinctBuffer(root))
      return nullptr;
    // There when the forward op runs: defined before it, or the gradient's
    // own allocation (moved up).
    Operation *def = root.getDefiningOp();
    if (def && def->getBlock() == fwd->getBlock() &&
        fwd->isBeforeInBlock(def) &&
        !(v == grad.getDlogits() && def == allocationOf(v)))
      return nullptr;
    roots.push_back(root);
  }
  Operation *alloc = allocationOf(grad.getDlogits());
  for (Operation *op = fwd->getNextNode(); op != grad; op = op->getNextNode()) {
    if (isa<ViewLikeOpInterface>(op) || isMemoryEffectFree(op) || op == alloc)
      continue;
    if (!llvm::all_of(roots,
                      [&](Value root) { return leavesBufferAlone(op, root); }))
      return nullptr;
  }
  return grad;
}

struct CrossEntropyKernelsPass
    : mix::impl::MixCrossEntropyKernelsPassBase<CrossEntropyKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FusedCrossEntropyBuffersOp, FusedCrossEntropyGradBuffersOp>(op))
        ops.push_back(op);
    });
    DenseSet<Operation *> paired;
    for (Operation *op : ops) {
      if (paired.contains(op))
        continue; // lowered with its forward op, and erased
      if (auto fwd = dyn_cast<FusedCrossEntropyBuffersOp>(op)) {
        FusedCrossEntropyGradBuffersOp grad = findPairedBackward(fwd);
        if (grad) {
          // The gradient's buffer, allocated just before the backward op,
          // is needed from the forward op on.
          if (Operation *alloc = allocationOf(grad.getDlogits());
              alloc && fwd->isBeforeInBlock(alloc))
            moveAllocationBefore(alloc, fwd);
        }
        lowerForward(fwd, grad);
        if (grad) {
          paired.insert(grad);
          grad->erase();
        }
      } else {
        lowerBackward(cast<FusedCrossEntropyGradBuffersOp>(op));
      }
      op->erase();
    }
  }
};
} // namespace
