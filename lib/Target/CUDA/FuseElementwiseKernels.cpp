//===- FuseElementwiseKernels.cpp - Neighbouring elementwise ops, one kernel =//
//
// On buffers, after the tensor-level fusion, consecutive elementwise
// linalg.generics over the same iteration space are still one kernel each:
// AdamW's updates of m, v and the parameter are three launches a tensor,
// the third reading back what the first two wrote. Two such ops are fused
// into one with the outputs of both when every buffer that one of them
// writes and both touch is accessed by both at the same element of each
// iteration (the same view, the same permutation map): the fused payload
// runs the first op's then the second's for each element, the second
// reading the first's results from registers rather than memory.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFUSEELEMENTWISEKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// An op this pass fuses: elementwise (every loop parallel, static
/// ranges) on buffers, with a pure payload.
bool isElementwise(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return false;
  if (llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  return llvm::all_of(op.getBlock()->without_terminator(),
                      [](Operation &p) { return isPure(&p); });
}

/// Whether \p op may stand between two fused ops (which then run where
/// the second was): it neither reads nor writes their buffers. Views,
/// pure ops, the allocations and the frees of other buffers.
bool canCross(Operation *op, const llvm::SmallPtrSetImpl<Value> &roots) {
  if (isPure(op) || isa<ViewLikeOpInterface>(op))
    return true;
  if (isa<gpu::WaitOp, gpu::AllocOp, memref::AllocOp>(op))
    return true;
  if (auto dealloc = dyn_cast<gpu::DeallocOp>(op))
    return !roots.contains(viewRoot(dealloc.getMemref()));
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return !roots.contains(viewRoot(dealloc.getMemref()));
  return false;
}

/// Whether \p a then \p b may run as one op, element by element.
bool canFuse(linalg::GenericOp a, linalg::GenericOp b) {
  if (a.getStaticLoopRanges() != b.getStaticLoopRanges())
    return false;
  auto written = [](linalg::GenericOp op, Value root) {
    return llvm::any_of(op.getDpsInits(),
                        [&](Value v) { return viewRoot(v) == root; });
  };
  for (OpOperand &x : a->getOpOperands())
    for (OpOperand &y : b->getOpOperands()) {
      Value root = viewRoot(x.get());
      if (root != viewRoot(y.get()))
        continue;
      if (!written(a, root) && !written(b, root))
        continue; // read by both: any order
      // Written by one: both at the same element of each iteration.
      AffineMap mx = a.getMatchingIndexingMap(&x);
      AffineMap my = b.getMatchingIndexingMap(&y);
      if (x.get() != y.get() || mx != my || !mx.isPermutation())
        return false;
      // Written by both: left to the ops as they are.
      if (written(a, root) && written(b, root))
        return false;
    }
  return true;
}

/// A contiguous view of all of its buffer: identity layout, static shape,
/// as many elements as the allocation or argument it views.
bool isWholeBuffer(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  auto root = dyn_cast<MemRefType>(viewRoot(v).getType());
  return type && root && type.hasStaticShape() && root.hasStaticShape() &&
         type.getLayout().isIdentity() && root.getLayout().isIdentity() &&
         type.getNumElements() == root.getNumElements();
}

/// \p b over \p a's loop ranges, when the two differ only in shape: \p b
/// reads and writes whole buffers element for element (identity maps) and
/// has as many iterations as \p a, so each of its operands can be viewed
/// in \p a's shape (\p a's own view where \p a has one of the same buffer,
/// else the buffer collapsed and expanded). A mixture's mixing over (T, 1,
/// H, f/H) and the GELU after it over (B, S, f) then fuse. The new op is
/// at \p b's place and \p b is left as it is; null where it cannot be.
linalg::GenericOp reshapedLike(linalg::GenericOp a, linalg::GenericOp b) {
  SmallVector<int64_t> shape = a.getStaticLoopRanges();
  int64_t count = 1, bCount = 1;
  for (int64_t n : shape)
    count *= n;
  for (int64_t n : b.getStaticLoopRanges())
    bCount *= n;
  if (count != bCount || shape == b.getStaticLoopRanges())
    return nullptr;
  for (OpOperand &x : b->getOpOperands())
    if (!b.getMatchingIndexingMap(&x).isIdentity() || !isWholeBuffer(x.get()))
      return nullptr;
  OpBuilder builder(b);
  Location loc = b.getLoc();
  auto inShape = [&](Value v) -> Value {
    for (OpOperand &w : a->getOpOperands())
      if (viewRoot(w.get()) == viewRoot(v) &&
          a.getMatchingIndexingMap(&w).isIdentity() && isWholeBuffer(w.get()))
        return w.get();
    auto type = cast<MemRefType>(v.getType());
    Value flat = v;
    if (type.getRank() != 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      flat = memref::CollapseShapeOp::create(
          builder, loc, v, ArrayRef<ReassociationIndices>{all});
    }
    ReassociationIndices all = llvm::to_vector(
        llvm::seq<int64_t>(0, static_cast<int64_t>(shape.size())));
    return memref::ExpandShapeOp::create(
        builder, loc, MemRefType::get(shape, type.getElementType()), flat,
        ArrayRef<ReassociationIndices>{all});
  };
  SmallVector<Value> inputs, outputs;
  for (Value v : b.getDpsInputs())
    inputs.push_back(inShape(v));
  for (Value v : b.getDpsInits())
    outputs.push_back(inShape(v));
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(),
                              builder.getMultiDimIdentityMap(shape.size()));
  auto reshaped = linalg::GenericOp::create(
      builder, loc, TypeRange{}, inputs, outputs, maps,
      SmallVector<utils::IteratorType>(shape.size(),
                                       utils::IteratorType::parallel));
  IRMapping map;
  b.getRegion().cloneInto(&reshaped.getRegion(), map);
  return reshaped;
}

/// Erases \p op and the views made for it that nothing else uses.
void eraseWithUnusedViews(linalg::GenericOp op) {
  SmallVector<Value> operands(op->getOperands());
  op.erase();
  for (Value v : operands)
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) ||
          !def->use_empty())
        break;
      v = def->getOperand(0);
      def->erase();
    }
}

/// One op computing \p a's outputs and then \p b's, at \p b's place. An
/// input of \p b that is an output of \p a is read from \p a's result.
linalg::GenericOp fuse(linalg::GenericOp a, linalg::GenericOp b) {
  SmallVector<Value> inputs, outputs;
  SmallVector<AffineMap> maps;
  // b's inputs that a writes (the same view and map: canFuse).
  llvm::DenseMap<Value, unsigned> aOutput;
  for (auto [k, v] : llvm::enumerate(a.getDpsInits()))
    aOutput[v] = k;
  for (OpOperand *in : a.getDpsInputOperands()) {
    inputs.push_back(in->get());
    maps.push_back(a.getMatchingIndexingMap(in));
  }
  for (OpOperand *in : b.getDpsInputOperands()) {
    if (aOutput.count(in->get()))
      continue;
    inputs.push_back(in->get());
    maps.push_back(b.getMatchingIndexingMap(in));
  }
  for (OpOperand &init : a.getDpsInitsMutable()) {
    outputs.push_back(init.get());
    maps.push_back(a.getMatchingIndexingMap(&init));
  }
  for (OpOperand &init : b.getDpsInitsMutable()) {
    outputs.push_back(init.get());
    maps.push_back(b.getMatchingIndexingMap(&init));
  }
  OpBuilder builder(b);
  Location loc = b.getLoc();
  auto fused =
      linalg::GenericOp::create(builder, loc, TypeRange{}, inputs, outputs,
                                maps, b.getIteratorTypesArray());
  Block *block = builder.createBlock(&fused.getRegion());
  for (Value v : llvm::concat<Value>(inputs, outputs))
    block->addArgument(getElementTypeOrSelf(v.getType()), loc);
  builder.setInsertionPointToStart(block);
  auto outArg = [&](unsigned k) {
    return block->getArgument(inputs.size() + k);
  };
  // a's payload.
  IRMapping map;
  unsigned next = 0;
  for (OpOperand *in : a.getDpsInputOperands())
    map.map(a.getMatchingBlockArgument(in), block->getArgument(next++));
  for (auto [k, init] : llvm::enumerate(a.getDpsInitsMutable()))
    map.map(a.getMatchingBlockArgument(&init), outArg(k));
  for (Operation &p : a.getBlock()->without_terminator())
    builder.clone(p, map);
  SmallVector<Value> yields;
  for (Value y :
       cast<linalg::YieldOp>(a.getBlock()->getTerminator()).getOperands())
    yields.push_back(map.lookupOrDefault(y));
  // b's payload, reading a's results where it read a's outputs.
  for (OpOperand *in : b.getDpsInputOperands()) {
    auto it = aOutput.find(in->get());
    map.map(b.getMatchingBlockArgument(in), it != aOutput.end()
                                                ? yields[it->second]
                                                : block->getArgument(next++));
  }
  unsigned aOutputs = a.getNumDpsInits();
  for (auto [k, init] : llvm::enumerate(b.getDpsInitsMutable()))
    map.map(b.getMatchingBlockArgument(&init), outArg(aOutputs + k));
  for (Operation &p : b.getBlock()->without_terminator())
    builder.clone(p, map);
  for (Value y :
       cast<linalg::YieldOp>(b.getBlock()->getTerminator()).getOperands())
    yields.push_back(map.lookupOrDefault(y));
  linalg::YieldOp::create(builder, loc, yields);
  a.erase();
  b.erase();
  return fused;
}

struct MixFuseElementwiseKernelsPass
    : mlir::mix::impl::MixFuseElementwiseKernelsPassBase<
          MixFuseElementwiseKernelsPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      fuseIn(*block);
  }

  void fuseIn(Block &block) {
    for (Operation *op = &block.front(); op; op = op->getNextNode()) {
      auto a = dyn_cast<linalg::GenericOp>(op);
      if (!a || !isElementwise(a))
        continue;
      while (true) {
        // The next generic, past ops that touch neither's buffers.
        llvm::SmallPtrSet<Value, 16> roots;
        for (Value v : a->getOperands())
          roots.insert(viewRoot(v));
        Operation *next = a->getNextNode();
        linalg::GenericOp b;
        for (; next; next = next->getNextNode()) {
          if ((b = dyn_cast<linalg::GenericOp>(next)))
            break;
          if (!canCross(next, roots))
            break;
        }
        if (!b || !isElementwise(b))
          break;
        // What a crosses must not touch b's buffers either: a moves to b.
        for (Value v : b->getOperands())
          roots.insert(viewRoot(v));
        bool crossable = true;
        for (Operation *o = a->getNextNode(); o != b; o = o->getNextNode())
          crossable = crossable && canCross(o, roots);
        if (!crossable)
          break;
        if (!canFuse(a, b)) {
          // The same op in a's shape, if that fuses; else b stays.
          linalg::GenericOp reshaped = reshapedLike(a, b);
          if (!reshaped)
            break;
          if (!canFuse(a, reshaped)) {
            eraseWithUnusedViews(reshaped);
            break;
          }
          b.erase();
          b = reshaped;
        }
        a = fuse(a, b);
      }
      op = a;
    }
  }
};
} // namespace
