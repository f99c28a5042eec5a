//===- Rematerialize.cpp - Recompute cheap values at each use -------------===//
//
// On tensors, before bufferization. A zero fill and a broadcasting
// elementwise op are cheaper to compute again than to keep: each user of
// one (through views) other than the first gets its own copy, computed
// just before it, so that the buffers of the first copy are freed after the
// first user instead of living to the last.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXREMATERIALIZEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

static int64_t numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return 1;
  return shaped.hasStaticShape() ? shaped.getNumElements() : -1;
}

/// A single-result linalg op whose init is a tensor.empty: its copies can
/// each start from an empty of their own.
static bool initIsEmpty(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumDpsInits() != 1)
    return false;
  return op.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>();
}

/// Zero fills of an empty tensor, and elementwise ops with small bodies and
/// static shapes.
static bool isCandidate(Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return initIsEmpty(fill);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumLoops() != generic.getNumParallelLoops() ||
      !initIsEmpty(generic) ||
      generic.getRegion().front().getOperations().size() > kMaxRecomputedOps)
    return false;
  return llvm::all_of(generic->getOperandTypes(),
                      [](Type t) { return numElements(t) >= 0; });
}

static bool isView(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ExtractSliceOp>(op);
}

/// The value whose storage \p v views (through reshapes and slices).
static Value getRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Whether the storage of \p v is live at \p user anyway: a function
/// argument, a constant, or a value read (through views) at or after user.
static bool liveAt(Value v, Operation *user) {
  Value root = getRoot(v);
  if (isa<BlockArgument>(root) || root.getDefiningOp<arith::ConstantOp>())
    return true;
  Block *block = user->getBlock();
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *reader : value.getUsers()) {
      if (isView(reader)) {
        worklist.push_back(reader->getResult(0));
        continue;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*reader);
      if (!inBlock || inBlock == user || user->isBeforeInBlock(inBlock))
        return true;
    }
  }
  return false;
}

/// Whether computing \p op again just before \p user costs less memory
/// than keeping its result from its first user to user: the operands it
/// keeps alive that would otherwise be dead by then hold at most half as
/// many elements as the result.
static bool cheaperToRecompute(Operation *op, Operation *user) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = cast<linalg::GenericOp>(op);
  int64_t kept = 0;
  for (Value input : generic.getDpsInputs())
    if (!liveAt(input, user))
      kept += numElements(getRoot(input).getType());
  return 2 * kept <= numElements(op->getResult(0).getType());
}

/// The uses of \p op's result, looking through views (reshapes, slices),
/// with the views that lead to each; false if one lies outside op's block.
struct ReachedUse {
  OpOperand *operand;
  SmallVector<Operation *> views;
};
static bool collectUses(Operation *op, SmallVectorImpl<ReachedUse> &uses) {
  Block *block = op->getBlock();
  SmallVector<std::pair<Value, SmallVector<Operation *>>> worklist{
      {op->getResult(0), {}}};
  while (!worklist.empty()) {
    auto [value, chain] = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block)
        return false;
      if (isView(user)) {
        SmallVector<Operation *> longer(chain);
        longer.push_back(user);
        worklist.push_back({user->getResult(0), std::move(longer)});
        continue;
      }
      uses.push_back({&use, chain});
    }
  }
  return true;
}

/// Gives each user of \p op but the first its own copy of op (and of the
/// views between them), computed just before it.
static void rematerializeAtUses(Operation *op) {
  SmallVector<ReachedUse> uses;
  if (!collectUses(op, uses) || uses.size() < 2)
    return;
  llvm::stable_sort(uses, [](const ReachedUse &a, const ReachedUse &b) {
    Operation *x = a.operand->getOwner(), *y = b.operand->getOwner();
    return x != y && x->isBeforeInBlock(y);
  });
  Operation *first = uses.front().operand->getOwner();
  Operation *empty =
      cast<linalg::LinalgOp>(op).getDpsInitOperand(0)->get().getDefiningOp();
  Operation *current = nullptr;
  IRMapping map;
  for (ReachedUse &use : uses) {
    Operation *user = use.operand->getOwner();
    // Only computations get copies: a write of the value into its
    // destination (AdamW's new moments, materialized into the old ones) is
    // where the value itself can be computed in place.
    if (user == first || !isa<linalg::LinalgOp>(user) ||
        !cheaperToRecompute(op, user))
      continue;
    OpBuilder b(user);
    if (user != current) {
      // A fresh copy for this user: its own empty, the op, no views yet.
      current = user;
      map.clear();
      map.map(empty->getResult(0), b.clone(*empty)->getResult(0));
      b.clone(*op, map);
    }
    for (Operation *view : use.views)
      if (!map.contains(view->getResult(0)))
        b.clone(*view, map);
    Value original = use.operand->get();
    use.operand->set(map.lookup(original));
  }
  // Views that only the rewritten users read are dead now; a chain's later
  // views go first.
  SmallVector<Operation *> views;
  llvm::SmallPtrSet<Operation *, 8> seen;
  for (ReachedUse &use : uses)
    for (Operation *view : llvm::reverse(use.views))
      if (seen.insert(view).second)
        views.push_back(view);
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&view : views)
      if (view && view->use_empty()) {
        view->erase();
        view = nullptr;
        erased = true;
      }
  }
}

/// extract_slice(generic(ins)) -> generic(extract_slice(ins)) for an
/// elementwise op (a candidate) whose only user is a static, unit-stride,
/// rank-preserving slice, and whose operands are read through maps whose
/// results are loop dimensions or the constant 0 of a broadcast dimension
/// (upstream's bubble-up pattern takes projected permutations only).
static LogicalResult computeOnlySlice(tensor::ExtractSliceOp slice) {
  auto generic = slice.getSource().getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic->hasOneUse() || !isCandidate(generic) ||
      !slice.hasUnitStride() || !slice.getType().hasStaticShape() ||
      slice.getType().getRank() != slice.getSourceType().getRank() ||
      !generic.getIndexingMapsArray().back().isIdentity())
    return failure();
  SmallVector<int64_t> offsets(slice.getStaticOffsets()),
      sizes(slice.getStaticSizes());
  if (ShapedType::isDynamicShape(offsets))
    return failure();
  OpBuilder b(slice);
  Location loc = generic.getLoc();
  SmallVector<Value> inputs;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type) {
      inputs.push_back(input->get()); // a scalar
      continue;
    }
    SmallVector<OpFoldResult> inOffsets, inSizes, inStrides;
    for (AffineExpr e : map.getResults()) {
      inStrides.push_back(b.getIndexAttr(1));
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        inOffsets.push_back(b.getIndexAttr(offsets[dim.getPosition()]));
        inSizes.push_back(b.getIndexAttr(sizes[dim.getPosition()]));
        continue;
      }
      auto zero = dyn_cast<AffineConstantExpr>(e);
      if (!zero || zero.getValue() != 0)
        return failure();
      inOffsets.push_back(b.getIndexAttr(0));
      inSizes.push_back(b.getIndexAttr(1));
    }
    inputs.push_back(tensor::ExtractSliceOp::create(
        b, loc, input->get(), inOffsets, inSizes, inStrides));
  }
  Value init = tensor::EmptyOp::create(b, loc, slice.getType().getShape(),
                                       slice.getType().getElementType());
  auto sliced = linalg::GenericOp::create(
      b, loc, TypeRange{slice.getType()}, inputs, ValueRange{init},
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray());
  IRMapping map;
  generic.getRegion().cloneInto(&sliced.getRegion(), map);
  slice.replaceAllUsesWith(sliced.getResult(0));
  slice.erase();
  Operation *empty = generic.getDpsInitOperand(0)->get().getDefiningOp();
  generic.erase();
  if (empty->use_empty())
    empty->erase();
  return success();
}

void mlir::mix::rematerialize(FunctionOpInterface function, bool elementwise) {
  SmallVector<Operation *> candidates;
  function.walk([&](Operation *op) {
    if (isCandidate(op) && (elementwise || isa<linalg::FillOp>(op)))
      candidates.push_back(op);
  });
  for (Operation *op : candidates)
    rematerializeAtUses(op);
  // A copy read through one slice (a stream's part of the gate-scaled
  // input) computes only that slice.
  SmallVector<tensor::ExtractSliceOp> slices;
  function.walk([&](tensor::ExtractSliceOp slice) { slices.push_back(slice); });
  for (tensor::ExtractSliceOp slice : slices)
    (void)computeOnlySlice(slice);
}

namespace {
struct MixRematerializePass
    : mlir::mix::impl::MixRematerializePassBase<MixRematerializePass> {
  using Base::Base;
  void runOnOperation() override { rematerialize(getOperation(), elementwise); }
};
} // namespace
