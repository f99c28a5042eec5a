//===- InlineScalarProducers.cpp - Scalars recomputed where they are read -===//
//
// A rank-0 linalg.generic that computes a scalar into a temporary buffer
// (AdamW's clipping factor, min(1, max_norm / (norm + eps)), rematerialized
// before each parameter's update) is a kernel of one thread whose only
// purpose is to be read, broadcast, by the next kernels. On the GPU the
// launch costs far more than the few operations: each consumer reads the
// producer's inputs instead and recomputes the scalar in its own payload,
// and the producer is erased once nothing reads its result.
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
#define GEN_PASS_DEF_MIXINLINESCALARPRODUCERSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// A producer this pass inlines: no loops, rank-0 memref inputs, one
/// rank-0 output whose old value the payload does not read, and a payload
/// of pure ops.
bool isScalarProducer(linalg::GenericOp op) {
  if (op.getNumLoops() != 0 || !op.hasPureBufferSemantics() ||
      op.getNumDpsInits() != 1)
    return false;
  for (Value in : op.getDpsInputs()) {
    auto type = dyn_cast<MemRefType>(in.getType());
    if (!type || type.getRank() != 0)
      return false;
  }
  OpOperand *init = op.getDpsInitOperand(0);
  if (!op.getMatchingBlockArgument(init).use_empty())
    return false;
  return llvm::all_of(op.getBlock()->without_terminator(),
                      [](Operation &p) { return isPure(&p); });
}

/// Whether \p op may write a buffer whose root is in \p roots (or its
/// effects are unknown).
bool mayWrite(Operation *op, const llvm::SmallPtrSetImpl<Value> &roots) {
  if (isPure(op) || isa<ViewLikeOpInterface>(op))
    return false;
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    for (OpOperand &init : dps.getDpsInitsMutable())
      if (roots.contains(viewRoot(init.get())))
        return true;
    return false;
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects) {
    // Calls (the matrix products write their last memref) and anything
    // else: any memref operand may be written.
    if (op->getNumRegions() != 0)
      return true;
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return isa<MemRefType>(v.getType()) && roots.contains(viewRoot(v));
    });
  }
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list) {
    if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
      continue;
    Value v = e.getValue();
    if (!v || roots.contains(viewRoot(v)))
      return true;
  }
  return false;
}

/// Rewrites \p consumer so that it reads \p producer's inputs, broadcast,
/// instead of its operand \p read (a view of the producer's result), and
/// recomputes the scalar in its payload. Returns the new op.
linalg::GenericOp inlineInto(linalg::GenericOp producer,
                             linalg::GenericOp consumer, OpOperand *read) {
  MLIRContext *ctx = consumer.getContext();
  unsigned loops = consumer.getNumLoops();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    if (in == read)
      continue;
    inputs.push_back(in->get());
    maps.push_back(consumer.getMatchingIndexingMap(in));
  }
  unsigned firstNew = inputs.size();
  for (Value in : producer.getDpsInputs()) {
    inputs.push_back(in);
    maps.push_back(AffineMap::get(loops, 0, {}, ctx));
  }
  SmallVector<Value> outputs(consumer.getDpsInits());
  for (OpOperand &init : consumer.getDpsInitsMutable())
    maps.push_back(consumer.getMatchingIndexingMap(&init));

  OpBuilder b(consumer);
  auto fused = linalg::GenericOp::create(b, consumer.getLoc(), TypeRange{},
                                         inputs, outputs, maps,
                                         consumer.getIteratorTypesArray());
  Block *block = b.createBlock(&fused.getRegion());
  for (Value v : inputs)
    block->addArgument(getElementTypeOrSelf(v.getType()), consumer.getLoc());
  for (Value v : outputs)
    block->addArgument(getElementTypeOrSelf(v.getType()), consumer.getLoc());
  b.setInsertionPointToStart(block);
  // The scalar, from the producer's inputs.
  IRMapping map;
  for (auto [i, arg] :
       llvm::enumerate(producer.getBlock()->getArguments().drop_back()))
    map.map(arg, block->getArgument(firstNew + i));
  for (Operation &p : producer.getBlock()->without_terminator())
    b.clone(p, map);
  Value scalar = map.lookupOrDefault(
      cast<linalg::YieldOp>(producer.getBlock()->getTerminator())
          .getOperand(0));
  // Then the consumer's payload, its operand read as the scalar.
  unsigned next = 0;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    BlockArgument arg = consumer.getMatchingBlockArgument(in);
    map.map(arg, in == read ? scalar : block->getArgument(next++));
  }
  for (auto [i, init] : llvm::enumerate(consumer.getDpsInitsMutable()))
    map.map(consumer.getMatchingBlockArgument(&init),
            block->getArgument(inputs.size() + i));
  for (Operation &p : consumer.getBlock()->getOperations())
    b.clone(p, map);
  consumer.erase();
  return fused;
}

struct MixInlineScalarProducersPass
    : mlir::mix::impl::MixInlineScalarProducersPassBase<
          MixInlineScalarProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> producers;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isScalarProducer(op))
        producers.push_back(op);
    });
    for (linalg::GenericOp producer : producers)
      inlineProducer(producer);
  }

  void inlineProducer(linalg::GenericOp producer) {
    Value result = producer.getDpsInits()[0];
    // The result must be a buffer of its own (an allocation) that nothing
    // but this producer writes.
    Operation *alloc = result.getDefiningOp();
    if (!alloc || !isa<gpu::AllocOp, memref::AllocOp>(alloc))
      return;
    llvm::SmallPtrSet<Value, 4> inputRoots;
    for (Value in : producer.getDpsInputs())
      inputRoots.insert(viewRoot(in));
    // Every reader: a linalg.generic in the producer's block, after it,
    // reading a view of the result as an input, with no write to the
    // producer's inputs (or to the result) between the two.
    SmallVector<std::pair<linalg::GenericOp, OpOperand *>> readers;
    SmallVector<Operation *> views;
    SmallVector<Value> worklist{result};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (user == producer || isa<gpu::DeallocOp, memref::DeallocOp>(user))
          continue;
        if (auto view = dyn_cast<ViewLikeOpInterface>(user);
            view && view.getViewSource() == v) {
          views.push_back(user);
          worklist.push_back(user->getResult(0));
          continue;
        }
        auto reader = dyn_cast<linalg::GenericOp>(user);
        if (!reader || !reader.isDpsInput(&use) ||
            reader->getBlock() != producer->getBlock() ||
            !producer->isBeforeInBlock(reader))
          return;
        // It reads the one element, broadcast.
        AffineMap m = reader.getMatchingIndexingMap(&use);
        if (!llvm::all_of(m.getResults(), [](AffineExpr e) {
              auto c = dyn_cast<AffineConstantExpr>(e);
              return c && c.getValue() == 0;
            }))
          return;
        readers.emplace_back(reader, &use);
      }
    }
    if (readers.empty())
      return;
    llvm::SmallPtrSet<Operation *, 8> distinct;
    for (auto &[reader, use] : readers)
      if (!distinct.insert(reader).second)
        return; // reads it twice: left alone
    llvm::SmallPtrSet<Value, 4> written(inputRoots);
    written.insert(result);
    for (auto &[reader, use] : readers)
      for (Operation *op = producer->getNextNode(); op != reader;
           op = op->getNextNode())
        if (mayWrite(op, written))
          return;
    for (auto &[reader, use] : readers)
      inlineInto(producer, reader, use);
    producer.erase();
    for (Operation *view : llvm::reverse(views))
      if (view->use_empty())
        view->erase();
  }
};
} // namespace
