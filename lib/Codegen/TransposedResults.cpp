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
// result's bytes go.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

/// Computes what \p transpose copies in its destination; false (and
/// nothing changed) unless the source is an allocation that only linalg
/// ops before the copy use (and frees after it), and the destination an
/// allocation that nothing uses before the copy.
static bool writeInPlace(linalg::TransposeOp transpose) {
  if (!transpose.hasPureBufferSemantics())
    return false;
  Block *block = transpose->getBlock();
  memref::AllocOp source = getPlainAlloc(transpose.getInput(), block);
  memref::AllocOp target = getPlainAlloc(transpose.getInit(), block);
  if (!source || !target || source == target)
    return false;
  for (Operation *user : source->getUsers()) {
    if (user == transpose)
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock)
      return false;
    bool before = inBlock->isBeforeInBlock(transpose);
    if (isa<memref::DeallocOp>(user) ? before
                                     : !before || !isa<linalg::LinalgOp>(user))
      return false;
  }
  for (Operation *user : target->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || (user != transpose && !transpose->isBeforeInBlock(inBlock)))
      return false;
  }

  // linalg.transpose: the destination's dimension i is the source's
  // dimension perm[i]; the source is the destination's view whose
  // dimension k is the destination's dimension perm^-1[k].
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  target->moveBefore(source);
  OpBuilder b(source);
  auto view = memref::TransposeOp::create(
      b, transpose.getLoc(), target.getResult(),
      AffineMapAttr::get(
          AffineMap::getPermutationMap(inverse, transpose.getContext())));
  if (view.getType().getShape() != source.getType().getShape()) {
    view->erase();
    target->moveBefore(transpose);
    return false;
  }
  for (Operation *user : llvm::make_early_inc_range(source->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  transpose->erase();
  source->replaceAllUsesWith(ValueRange{view.getResult()});
  source->erase();
  return true;
}

void mlir::mix::writeTransposedResultsInPlace(FunctionOpInterface function) {
  SmallVector<linalg::TransposeOp> transposes;
  function.walk([&](linalg::TransposeOp t) { transposes.push_back(t); });
  for (linalg::TransposeOp t : transposes)
    writeInPlace(t);
}

namespace {
struct MixTransposedResultsPass
    : mlir::mix::impl::MixTransposedResultsPassBase<MixTransposedResultsPass> {
  void runOnOperation() override {
    writeTransposedResultsInPlace(getOperation());
  }
};
} // namespace
