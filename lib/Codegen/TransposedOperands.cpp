//===- TransposedOperands.cpp - Products read transposed operands in place ===//
//
// On buffers, before any buffer is freed early: a transposed operand of a
// matrix product is lowered as a `linalg.transpose` into a fresh buffer
// that only products read (the products of the backward pass read X^T,
// dY^T and the attention's P^T this way, each a full copy). The library
// calls take any strides, so the product can read the transposed view of
// the source instead: `memref.transpose`, through the same
// `memref.collapse_shape` of the batch dimensions where there is one. The
// copy and its buffer go. With `generics` (the cuda target), generic ops
// among the readers read the source through their indexing maps composed
// with the permutation.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXTRANSPOSEDOPERANDSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The buffer a memref views: through views to an allocation or argument.
static Value getRootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether no operation strictly between \p from and \p to (same block)
/// may write to \p root's memory. Operations whose effects are unknown
/// count as writing.
static bool noWriteBetween(Operation *from, Operation *to, Value root) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return false;
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value target = e.getValue();
      if (!target || getRootBuffer(target) == root)
        return false;
    }
  }
  return true;
}

/// Whether \p op may write to memory whose root buffer is \p root.
static bool mayWrite(Operation *op, Value root) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list)
    if (isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()) &&
        (!e.getValue() || getRootBuffer(e.getValue()) == root))
      return true;
  return false;
}

/// The operand of \p product that reads \p buffer, directly or through one
/// collapse; null if none does or it reads it twice.
static OpOperand *findUse(linalg::LinalgOp product, Value buffer) {
  OpOperand *use = nullptr;
  for (OpOperand *input : product.getDpsInputOperands()) {
    Value v = input->get();
    auto c = v.getDefiningOp<memref::CollapseShapeOp>();
    if (v == buffer || (c && c.getSrc() == buffer)) {
      if (use)
        return nullptr; // read twice
      use = input;
    }
  }
  return use;
}

/// Whether \p op is a linalg.generic that reads \p buffer directly as
/// inputs only.
static bool isGenericReader(Operation *op, Value buffer) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics())
    return false;
  bool reads = false;
  for (OpOperand &operand : generic->getOpOperands()) {
    if (operand.get() == buffer) {
      if (generic.isDpsInit(&operand))
        return false;
      reads = true;
    } else if (isa<BaseMemRefType>(operand.get().getType()) &&
               getRootBuffer(operand.get()) == buffer) {
      return false; // through a view
    }
  }
  return reads;
}

/// \p generic reads \p source where it read \p buffer, its transposed
/// copy by \p perm: the copy's dimension k is the source's dimension
/// perm[k], so the source's dimension perm[k] is indexed by what indexed
/// the copy's dimension k.
static void readThroughMaps(linalg::GenericOp generic, Value buffer,
                            Value source, ArrayRef<int64_t> perm) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (OpOperand &operand : generic->getOpOperands()) {
    if (operand.get() != buffer)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    SmallVector<AffineExpr> results(perm.size());
    for (auto [k, p] : llvm::enumerate(perm))
      results[p] = map.getResult(k);
    maps[operand.getOperandNumber()] = AffineMap::get(
        map.getNumDims(), map.getNumSymbols(), results, map.getContext());
    operand.set(source);
  }
  generic.setIndexingMapsAttr(
      Builder(generic.getContext()).getAffineMapArrayAttr(maps));
}

/// Reads \p transpose's source in place in the products that are the only
/// readers of what it writes, if that is safe; returns whether it did.
/// Bufferization reuses one buffer for several transposes in turn, so the
/// readers of this transpose's result are the operations that access the
/// buffer after it and before the next write to it. There may be several
/// (a stream mixture's gradient dH^T, read by each stream's kernel
/// gradient); all must be products, or with \p generics generic ops.
static bool readInPlace(linalg::TransposeOp transpose, bool generics) {
  if (!transpose.hasPureBufferSemantics())
    return false;
  Value buffer = transpose.getInit();
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  Block *block = transpose->getBlock();
  if (!alloc || alloc->getBlock() != block)
    return false;
  // Every operation of the block that accesses the buffer, directly or
  // through views, except the views themselves.
  SmallVector<Operation *> accesses;
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<ViewLikeOpInterface>(user)) {
        worklist.append(user->result_begin(), user->result_end());
        continue;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return false;
      accesses.push_back(inBlock);
    }
  }
  llvm::sort(accesses,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  accesses.erase(llvm::unique(accesses), accesses.end());
  // The products that read the buffer between this transpose and the next
  // write to it, and how each reads it.
  SmallVector<std::pair<linalg::LinalgOp, OpOperand *>> readers;
  for (Operation *op : accesses) {
    if (op == transpose || !transpose->isBeforeInBlock(op))
      continue;
    auto product = dyn_cast<linalg::LinalgOp>(op);
    if (product && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
        product.hasPureBufferSemantics() &&
        llvm::none_of(product.getDpsInits(), [&](Value init) {
          return getRootBuffer(init) == buffer;
        })) {
      OpOperand *use = findUse(product, buffer);
      if (!use)
        return false;
      readers.push_back({product, use});
      continue;
    }
    if (generics && isGenericReader(op, buffer)) {
      readers.push_back({cast<linalg::LinalgOp>(op), nullptr});
      continue;
    }
    if (mayWrite(op, buffer) && !readers.empty())
      break;
    return false; // another reader, or a write before any product
  }
  if (readers.empty())
    return false;
  Value source = transpose.getInput();
  if (!noWriteBetween(transpose, readers.back().first, getRootBuffer(source)))
    return false;

  // One view of the source before the first reader, collapsed for each
  // reader that reads a collapse (checked before anything changes).
  OpBuilder b(readers.front().first);
  Location loc = transpose.getLoc();
  Value view = memref::TransposeOp::create(
      b, loc, source,
      AffineMapAttr::get(AffineMap::getPermutationMap(
          transpose.getPermutation(), transpose.getContext())));
  auto viewType = cast<MemRefType>(view.getType());
  for (auto [product, use] : readers)
    if (auto c =
            use ? use->get().getDefiningOp<memref::CollapseShapeOp>() : nullptr)
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
              viewType, c.getReassociationIndices())) {
        view.getDefiningOp()->erase();
        return false;
      }
  for (auto [product, use] : readers) {
    if (!use) {
      readThroughMaps(cast<linalg::GenericOp>(product.getOperation()), buffer,
                      source, transpose.getPermutation());
      continue;
    }
    auto collapse = use->get().getDefiningOp<memref::CollapseShapeOp>();
    Value read = view;
    if (collapse) {
      b.setInsertionPoint(product);
      read = memref::CollapseShapeOp::create(
          b, loc, view, collapse.getReassociationIndices());
    }
    use->set(read);
    if (collapse && collapse->use_empty())
      collapse->erase();
  }
  transpose->erase();
  if (view.use_empty())
    view.getDefiningOp()->erase(); // only generics read it
  // The buffer may now be unused but for its dealloc.
  if (llvm::all_of(alloc->getUsers(),
                   [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
    for (Operation *u : llvm::make_early_inc_range(alloc->getUsers()))
      u->erase();
    alloc->erase();
  }
  return true;
}

void mlir::mix::readTransposedOperandsInPlace(FunctionOpInterface function,
                                              bool generics) {
  SmallVector<linalg::TransposeOp> transposes;
  function.walk([&](linalg::TransposeOp t) { transposes.push_back(t); });
  for (linalg::TransposeOp t : transposes)
    readInPlace(t, generics);
}

namespace {
struct MixTransposedOperandsPass
    : mlir::mix::impl::MixTransposedOperandsPassBase<
          MixTransposedOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    readTransposedOperandsInPlace(getOperation(), generics);
  }
};
} // namespace
