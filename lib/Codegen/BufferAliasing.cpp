//===- BufferAliasing.cpp - Which buffers an operation touches ------------===//

#include "mix/Codegen/BufferAliasing.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::mix::getBufferRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      v = meta.getSource();
    else if (auto transpose = dyn_cast<memref::TransposeOp>(def))
      v = transpose.getIn(); // a view, though not a ViewLikeOpInterface
    else
      break;
  }
  return v;
}

bool mlir::mix::isDistinctBuffer(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root))
    return arg.getOwner()->isEntryBlock() &&
           isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  // A fresh allocation (memref.alloc, memref.alloca, gpu.alloc): an op
  // that declares allocating the value.
  auto effects = root.getDefiningOp<MemoryEffectOpInterface>();
  return effects &&
         effects.getEffectOnValue<MemoryEffects::Allocate>(root).has_value();
}

/// Whether \p op (with its nested operations) may write \p root, or, unless
/// \p writesOnly, read it.
static bool mayTouch(Operation *op, Value root, bool writesOnly) {
  using mlir::mix::getBufferRoot;
  using mlir::mix::isDistinctBuffer;
  auto other = [&](Value v) {
    Value r = getBufferRoot(v);
    return r != root && isDistinctBuffer(r);
  };
  WalkResult result = op->walk([&](Operation *nested) {
    if (isMemoryEffectFree(nested))
      return WalkResult::advance();
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(nested)) {
      // The effects it declares, each on a value (a linalg op's operands,
      // an allocation's result); one on no value could be on anything.
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &e : instances) {
        if (writesOnly && isa<MemoryEffects::Read>(e.getEffect()))
          continue;
        if (!e.getValue() || !other(e.getValue()))
          return WalkResult::interrupt();
      }
      return WalkResult::advance(); // nested operations are looked at too
    }
    if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // its own operations are looked at
    // Undeclared effects (a call, a stream's wait): a buffer is reached
    // through a memref value, so only its memref operands and results can
    // be touched; all must be other buffers.
    for (Value v :
         llvm::concat<Value>(nested->getOperands(), nested->getResults()))
      if (isa<BaseMemRefType>(v.getType()) && !other(v))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

bool mlir::mix::leavesBufferAlone(Operation *op, Value root) {
  return !mayTouch(op, root, /*writesOnly=*/false);
}

bool mlir::mix::leavesBufferUnwritten(Operation *op, Value root) {
  return !mayTouch(op, root, /*writesOnly=*/true);
}

Value mlir::mix::getReshapeRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

bool mlir::mix::sameElementOrder(Value a, Value b) {
  if (a == b)
    return true;
  auto ta = dyn_cast<MemRefType>(a.getType());
  auto tb = dyn_cast<MemRefType>(b.getType());
  return ta && tb && ta.getLayout().isIdentity() &&
         tb.getLayout().isIdentity() && ta.hasStaticShape() &&
         tb.hasStaticShape() && ta.getNumElements() == tb.getNumElements() &&
         getReshapeRoot(a) == getReshapeRoot(b);
}

Operation *mlir::mix::findPreviousWriter(Operation *op, Value buffer) {
  Value root = getBufferRoot(buffer);
  bool distinct = isDistinctBuffer(root);
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isa<ViewLikeOpInterface>(prev) || isMemoryEffectFree(prev))
      continue;
    auto writer = dyn_cast<linalg::LinalgOp>(prev);
    if (writer && writer.getNumDpsInits() == 1 &&
        writer.getDpsInits()[0] == buffer)
      return prev;
    if (distinct && leavesBufferAlone(prev, root))
      continue;
    return nullptr;
  }
  return nullptr;
}
