//===- TransposedResults.cpp - Products write transposed results in place -===//
//
// On buffers: the mirror of mix-transposed-operands. A result that ops
// compute in one layout and a `linalg.transpose` then copies into another
// (a multi-head mixture's products, one batch a gate head, write the
// head-major (H, T, f/H) layout that the token-major (T, H, f/H) rest of the
// layer reads through a copy) is computed in the copy's destination
// directly, through `memref.transpose` of it with the inverse permutation.
// The library calls take any strides (a batch stride of f/H, a leading
// dimension of f), so the copy's launch and its pass over twice the
// result's bytes go. The source may be read after the copy, through the
// view, when the transpose only moves elements within short runs (a gate's
// probabilities, read by the mixing token-major and by the balance loss in
// their own layout). A plain copy into a view (a stream's kernel gradient
// into its slice of all the kernels' gradient) is treated alike.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <functional>

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXTRANSPOSEDRESULTSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The allocation \p v is, in \p block, with an identity layout; null
/// otherwise.
static memref::AllocOp getPlainAlloc(Value v, Block *block) {
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block ||
      !alloc.getType().getLayout().isIdentity())
    return nullptr;
  return alloc;
}

/// Whether only linalg ops before \p copy use \p alloc (besides \p reader,
/// the copy's read of it) and only frees after it.
static bool computedBefore(memref::AllocOp alloc, Operation *copy,
                           Operation *reader) {
  Block *block = copy->getBlock();
  for (Operation *user : alloc->getUsers()) {
    if (user == reader)
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock)
      return false;
    bool before = inBlock->isBeforeInBlock(copy);
    if (isa<memref::DeallocOp>(user) ? before
                                     : !before || !isa<linalg::LinalgOp>(user))
      return false;
  }
  return true;
}

/// \p source expanded to \p shape by \p reassociation; null where its
/// strides do not allow it.
static Value expandOrNull(OpBuilder &b, Location loc, Value source,
                          ArrayRef<int64_t> shape,
                          ArrayRef<ReassociationIndices> reassociation) {
  if (failed(memref::ExpandShapeOp::computeExpandedType(
          cast<MemRefType>(source.getType()), shape, reassociation)))
    return nullptr;
  return memref::ExpandShapeOp::create(b, loc, shape, source, reassociation);
}

/// \p source collapsed by \p reassociation; null where its strides do not
/// allow it.
static Value collapseOrNull(OpBuilder &b, Location loc, Value source,
                            ArrayRef<ReassociationIndices> reassociation) {
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
          cast<MemRefType>(source.getType()), reassociation))
    return nullptr;
  return memref::CollapseShapeOp::create(b, loc, source, reassociation);
}

/// \p view of shape \p shape reshaped by the inverse of \p reshape (a
/// collapse becomes an expansion and back); null where the strides do not
/// allow it.
static Value invertReshape(OpBuilder &b, Operation *reshape, Value view) {
  Location loc = reshape->getLoc();
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(reshape))
    return expandOrNull(b, loc, view, collapse.getSrcType().getShape(),
                        collapse.getReassociationIndices());
  auto expand = cast<memref::ExpandShapeOp>(reshape);
  return collapseOrNull(b, loc, view, expand.getReassociationIndices());
}

/// The deallocation of \p alloc in its block: null when there is none,
/// failure when there are several.
static FailureOr<Operation *> getFree(memref::AllocOp alloc) {
  Operation *free = nullptr;
  for (Operation *user : alloc->getUsers()) {
    if (!isa<memref::DeallocOp>(user))
      continue;
    if (free || user->getBlock() != alloc->getBlock())
      return failure();
    free = user;
  }
  return free;
}

/// Whether \p perm moves elements only within runs of at most 32
/// contiguous elements of \p shape (a warp's loads of the transposed view
/// stay in the same 128 bytes).
static bool permutesWithinRuns(ArrayRef<int64_t> perm,
                               ArrayRef<int64_t> shape) {
  size_t first = 0;
  while (first < perm.size() && perm[first] == static_cast<int64_t>(first))
    ++first;
  int64_t run = 1;
  for (int64_t size : shape.drop_front(first))
    run *= size;
  return run <= 32;
}

/// \p view (a reshape or a transpose of a buffer) made again on
/// \p source, a view of the same shape in another layout; null where the
/// strides do not allow it.
static Value remakeView(OpBuilder &b, Operation *view, Value source) {
  Location loc = view->getLoc();
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(view))
    return collapseOrNull(b, loc, source, collapse.getReassociationIndices());
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(view))
    return expandOrNull(b, loc, source, expand.getResultType().getShape(),
                        expand.getReassociationIndices());
  if (auto transpose = dyn_cast<memref::TransposeOp>(view))
    return memref::TransposeOp::create(b, loc, source,
                                       transpose.getPermutationAttr());
  return nullptr;
}

/// Whether a matrix product can read \p value: one of its two innermost
/// dimensions is contiguous (the library calls' row- or column-major
/// operands).
static bool isProductOperand(Value value) {
  auto type = cast<MemRefType>(value.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() < 2 || failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return llvm::is_contained(ArrayRef(strides).take_back(2), 1);
}

namespace {
/// The uses of a buffer to be given another layout: operands to set, views
/// made again (to erase if the rewrite fails), views and frees to erase.
struct Relayout {
  SmallVector<std::pair<OpOperand *, Value>> operands;
  SmallVector<Operation *> made;
  SmallVector<Operation *> dead;

  /// Records the uses of \p old to become uses of \p replacement, except
  /// \p skip's; false where a user is neither a linalg op, a copy, a free
  /// nor a view that can be made again.
  bool collect(Value old, Value replacement, Operation *skip) {
    for (OpOperand &use : old.getUses()) {
      Operation *user = use.getOwner();
      if (user == skip)
        continue;
      if (isa<memref::DeallocOp>(user)) {
        dead.push_back(user);
        continue;
      }
      if (isa<linalg::LinalgOp, memref::CopyOp>(user)) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        if (linalgOp && linalg::isaContractionOpInterface(linalgOp) &&
            !isProductOperand(replacement))
          return false; // a library call's operand
        operands.emplace_back(&use, replacement);
        continue;
      }
      if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp,
               memref::TransposeOp>(user) ||
          use.getOperandNumber() != 0)
        return false;
      OpBuilder b(user);
      Value remade = remakeView(b, user, replacement);
      if (!remade)
        return false;
      made.push_back(remade.getDefiningOp());
      dead.push_back(user);
      if (!collect(user->getResult(0), remade, skip))
        return false;
    }
    return true;
  }

  void undo() {
    for (Operation *op : llvm::reverse(made))
      op->erase();
  }
};
} // namespace

/// Computes what \p transpose copies in its destination; false (and
/// nothing changed) unless the source is an allocation (or a reshape of
/// one) that only linalg ops and views use, written only before the copy,
/// and the destination an allocation that nothing uses before the copy
/// nor writes after it. The source may be read after the copy, through
/// the transposed view, when the transpose moves elements only within
/// short runs (permutesWithinRuns): a gate's weights, read token-major by
/// the mixing and stream-major by the balance loss.
static bool writeInPlace(linalg::TransposeOp transpose) {
  if (!transpose.hasPureBufferSemantics())
    return false;
  Block *block = transpose->getBlock();
  SmallVector<Operation *> reshapes; // from the copy back to the allocation
  Value input = transpose.getInput();
  while (Operation *def = input.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
      break;
    reshapes.push_back(def);
    input = def->getOperand(0);
  }
  memref::AllocOp source = getPlainAlloc(input, block);
  memref::AllocOp target = getPlainAlloc(transpose.getInit(), block);
  if (!source || !target || source == target)
    return false;
  FailureOr<Operation *> sourceFree = getFree(source);
  FailureOr<Operation *> targetFree = getFree(target);
  if (failed(sourceFree) || failed(targetFree))
    return false;
  // Nothing reaches the target before the copy (a view made earlier counts
  // by its users).
  std::function<bool(Value)> untouchedBefore = [&](Value v) {
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return false;
      if (isa<ViewLikeOpInterface>(user))
        return llvm::all_of(user->getResults(), untouchedBefore);
      return user == transpose.getOperation() ||
             transpose->isBeforeInBlock(inBlock);
    });
  };
  if (!untouchedBefore(target.getResult()))
    return false;
  // After the copy the two share one buffer, in two layouts: each is
  // written only once the other is no longer used. The source at all
  // only where its accesses through the view stay coalesced.
  Operation *sourceWrite = nullptr, *targetWrite = nullptr;
  Operation *sourceLast = nullptr, *targetLast = nullptr;
  for (Operation *op = transpose->getNextNode(); op; op = op->getNextNode()) {
    if (op == *sourceFree || op == *targetFree)
      continue;
    if (!leavesBufferAlone(op, source)) {
      sourceLast = op;
      if (!sourceWrite && !leavesBufferUnwritten(op, source))
        sourceWrite = op;
    }
    if (!leavesBufferAlone(op, target)) {
      targetLast = op;
      if (!targetWrite && !leavesBufferUnwritten(op, target))
        targetWrite = op;
    }
  }
  if ((sourceWrite && targetLast &&
       !targetLast->isBeforeInBlock(sourceWrite)) ||
      (targetWrite && sourceLast && !sourceLast->isBeforeInBlock(targetWrite)))
    return false;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  if (sourceLast &&
      (!*sourceFree ||
       !permutesWithinRuns(perm, transpose.getInit().getType().getShape())))
    return false;

  // linalg.transpose: the destination's dimension i is the source's
  // dimension perm[i]; the source is the destination's view whose
  // dimension k is the destination's dimension perm^-1[k].
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  Operation *targetNext = target->getNextNode();
  target->moveBefore(source);
  OpBuilder b(source);
  Relayout relayout;
  Value view = memref::TransposeOp::create(
      b, transpose.getLoc(), target.getResult(),
      AffineMapAttr::get(
          AffineMap::getPermutationMap(inverse, transpose.getContext())));
  relayout.made.push_back(view.getDefiningOp());
  for (Operation *reshape : reshapes) {
    Value inverted = invertReshape(b, reshape, view);
    if (!inverted)
      break;
    relayout.made.push_back(inverted.getDefiningOp());
    view = inverted;
  }
  if (cast<MemRefType>(view.getType()).getShape() !=
          source.getType().getShape() ||
      !relayout.collect(source.getResult(), view, transpose)) {
    relayout.undo();
    target->moveBefore(targetNext);
    return false;
  }
  // The target lives as long as the source did.
  if (*sourceFree && *targetFree && (*targetFree)->isBeforeInBlock(*sourceFree))
    (*targetFree)->moveBefore(*sourceFree);
  for (auto [operand, value] : relayout.operands)
    operand->set(value);
  transpose->erase();
  for (Operation *op : llvm::reverse(relayout.dead))
    op->erase();
  relayout.dead.clear();
  for (Operation *op : llvm::reverse(relayout.made))
    if (op->use_empty())
      op->erase(); // a view only the copy read
  source->erase();
  return true;
}

/// Computes what \p copy copies (an allocation, through reshapes each used
/// once) in its target, a view of an argument or of an earlier allocation
/// (a stream's slice of a gradient); false (and nothing changed) unless
/// only linalg ops before the copy use the allocation (and frees after
/// it) and nothing between the allocation and the copy accesses the
/// target's buffer.
static bool writeInPlace(memref::CopyOp copy) {
  Block *block = copy->getBlock();
  SmallVector<Operation *> reshapes; // from the copy back to the allocation
  Value source = copy.getSource();
  while (Operation *def = source.getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def) ||
        !source.hasOneUse())
      break;
    reshapes.push_back(def);
    source = def->getOperand(0);
  }
  memref::AllocOp alloc = getPlainAlloc(source, block);
  if (!alloc)
    return false;
  if (!computedBefore(alloc, copy,
                      reshapes.empty() ? copy.getOperation() : reshapes.back()))
    return false;
  // The target: views, to be made again where the allocation was, of a
  // buffer that exists there.
  SmallVector<Operation *> views;
  Value target = copy.getTarget();
  while (Operation *def = target.getDefiningOp()) {
    if (!isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp>(
            def))
      break;
    views.push_back(def);
    target = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(target);
  auto rootAlloc = target.getDefiningOp<memref::AllocOp>();
  if (!(arg && arg.getOwner() == block) &&
      !(rootAlloc && rootAlloc->getBlock() == block &&
        rootAlloc->isBeforeInBlock(alloc)))
    return false;
  for (Operation *view : views)
    for (Value operand : view->getOperands().drop_front())
      if (!getConstantIntValue(operand))
        return false; // a dynamic offset or size, maybe made later
  for (Operation *op = alloc->getNextNode(); op != copy.getOperation();
       op = op->getNextNode())
    if (!leavesBufferAlone(op, target))
      return false;

  OpBuilder b(alloc);
  IRMapping map;
  SmallVector<Operation *> made;
  for (Operation *view : llvm::reverse(views)) {
    for (Value operand : view->getOperands().drop_front())
      if (Operation *c = operand.getDefiningOp(); c && !map.contains(operand))
        map.map(operand, b.clone(*c)->getResult(0));
    made.push_back(b.clone(*view, map));
  }
  Value in = made.empty() ? target : made.back()->getResult(0);
  for (Operation *reshape : reshapes) {
    Value inverse = invertReshape(b, reshape, in);
    if (!inverse) {
      for (Operation *op : llvm::reverse(made))
        op->erase();
      return false;
    }
    made.push_back(inverse.getDefiningOp());
    in = inverse;
  }
  if (cast<MemRefType>(in.getType()).getShape() != alloc.getType().getShape()) {
    for (Operation *op : llvm::reverse(made))
      op->erase();
    return false;
  }
  copy->erase();
  for (Operation *reshape : reshapes)
    reshape->erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  alloc->replaceAllUsesWith(ValueRange{in});
  alloc->erase();
  return true;
}

/// Whether \p op writes every element of \p buffer (itself, not a view)
/// without reading it: a fill, a transpose or a copy into it, or an
/// elementwise generic whose payload ignores the buffer's values.
static bool overwrites(Operation *op, Value buffer) {
  if (llvm::count(op->getOperands(), buffer) != 1)
    return false; // it reads it too
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getDpsInits()[0] == buffer;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.getInit() == buffer;
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget() == buffer;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getDpsInits()[0] != buffer ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  return generic.getMatchingIndexingMap(init).isIdentity() &&
         !generic.payloadUsesValueFromOperand(init);
}

/// Whether \p op (or an operation nested in it) takes a view of \p root.
static bool usesBuffer(Operation *op, Value root) {
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (isa<BaseMemRefType>(v.getType()) && getBufferRoot(v) == root)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Gives the values \p alloc holds from \p first (which overwrites it) up
/// to \p last an allocation of their own, when the next operation after
/// \p last that uses \p alloc overwrites it (bufferization reuses one
/// buffer for a value of each layer). Every use must be in the block; a
/// view used in the range is made again there when it is used outside it
/// too (views are shared between layers). The memory plan packs
/// allocations by lifetime, so this costs no memory; a transpose's source
/// and target then qualify for writeInPlace. Returns the new allocation,
/// or null (nothing changed).
static memref::AllocOp splitLiveRange(memref::AllocOp alloc, Operation *first,
                                      Operation *last) {
  Block *block = alloc->getBlock();
  if (first->getBlock() != block || last->getBlock() != block ||
      last->isBeforeInBlock(first))
    return nullptr;
  auto inside = [&](Operation *op) {
    return op->getBlock() == block &&
           (op == first || op == last ||
            (first->isBeforeInBlock(op) && op->isBeforeInBlock(last)));
  };
  Operation *next = last->getNextNode();
  while (next && !usesBuffer(next, alloc))
    next = next->getNextNode();
  if (!next || !overwrites(next, alloc))
    return nullptr;
  // The uses to move: direct ones in the range, and those of views made
  // outside it (to be made again at the range's start). A view made in the
  // range must be used only there.
  auto isView = [](Operation *op) {
    return isa<ViewLikeOpInterface, memref::TransposeOp>(op);
  };
  std::function<bool(Value)> usedInside = [&](Value view) {
    return llvm::all_of(view.getUsers(), [&](Operation *user) {
      return inside(user) &&
             (!isView(user) || llvm::all_of(user->getResults(), usedInside));
    });
  };
  // Whether a view made outside the range is used in it through another
  // view made outside it (a chain this does not make again).
  std::function<bool(Value)> reachesInside = [&](Value view) {
    return llvm::any_of(view.getUsers(), [&](Operation *user) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      return !inBlock || inside(inBlock) ||
             (isView(user) && llvm::any_of(user->getResults(), reachesInside));
    });
  };
  SmallVector<OpOperand *> direct;
  SmallVector<std::pair<Operation *, SmallVector<OpOperand *>>> outerViews;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (user->getBlock() != block)
      return nullptr;
    bool view = isView(user);
    if (inside(user)) {
      if (view && !llvm::all_of(user->getResults(), usedInside))
        return nullptr;
      direct.push_back(&use);
      continue;
    }
    if (!view || use.getOperandNumber() != 0 || user->getNumResults() != 1)
      continue; // a use outside the range, of another value
    SmallVector<OpOperand *> uses;
    for (OpOperand &viewUse : user->getResult(0).getUses()) {
      Operation *viewUser = viewUse.getOwner();
      if (viewUser->getBlock() != block)
        return nullptr;
      if (!inside(viewUser)) {
        if (isView(viewUser) &&
            llvm::any_of(viewUser->getResults(), reachesInside))
          return nullptr;
        continue;
      }
      if (isView(viewUser))
        return nullptr;
      uses.push_back(&viewUse);
    }
    if (uses.empty())
      continue;
    for (Value operand : user->getOperands().drop_front())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == block && !def->isBeforeInBlock(first))
        return nullptr; // its sizes are not there yet at the range's start
    outerViews.emplace_back(user, std::move(uses));
  }
  OpBuilder b(first);
  auto split = memref::AllocOp::create(b, alloc.getLoc(), alloc.getType());
  for (auto &[view, uses] : outerViews) {
    IRMapping map;
    map.map(alloc.getResult(), split.getResult());
    Operation *clone = b.clone(*view, map);
    for (OpOperand *use : uses)
      use->set(clone->getResult(0));
  }
  for (OpOperand *use : direct)
    use->set(split);
  // Freed after the range.
  b.setInsertionPointAfter(last);
  memref::DeallocOp::create(b, alloc.getLoc(), split);
  return split;
}

/// Splits the live ranges of \p transpose's source (from the overwrite
/// before it) and target (from it to the next overwrite) off their shared
/// allocations (splitLiveRange).
static void splitTransposeBuffers(linalg::TransposeOp transpose) {
  Block *block = transpose->getBlock();
  if (memref::AllocOp source = getPlainAlloc(transpose.getInput(), block)) {
    Operation *writer = nullptr;
    for (Operation *op = transpose->getPrevNode(); op && !writer;
         op = op->getPrevNode())
      if (overwrites(op, source))
        writer = op;
    if (writer)
      splitLiveRange(source, writer, transpose);
  }
  if (memref::AllocOp target = getPlainAlloc(transpose.getInit(), block)) {
    // The range's last use: the one before the next overwrite.
    Operation *last = transpose;
    for (Operation *op = transpose->getNextNode(); op; op = op->getNextNode()) {
      if (overwrites(op, target))
        break;
      if (usesBuffer(op, target))
        last = op;
    }
    splitLiveRange(target, transpose, last);
  }
}

void mlir::mix::writeTransposedResultsInPlace(FunctionOpInterface function) {
  SmallVector<linalg::TransposeOp> transposes;
  function.walk([&](linalg::TransposeOp t) { transposes.push_back(t); });
  for (linalg::TransposeOp t : transposes) {
    splitTransposeBuffers(t);
    writeInPlace(t);
  }
  SmallVector<memref::CopyOp> copies;
  function.walk([&](memref::CopyOp c) { copies.push_back(c); });
  for (memref::CopyOp c : copies)
    writeInPlace(c);
}

namespace {
struct MixTransposedResultsPass
    : mlir::mix::impl::MixTransposedResultsPassBase<MixTransposedResultsPass> {
  void runOnOperation() override {
    writeTransposedResultsInPlace(getOperation());
  }
};
} // namespace
