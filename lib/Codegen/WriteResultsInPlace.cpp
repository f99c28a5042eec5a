//===- WriteResultsInPlace.cpp - Returned buffers in their out-params -----===//
//
// buffer-results-to-out-params hoists a returned allocation into its
// out-parameter only when the function returns the allocation itself. A
// result returned through a reshape (a gradient collapsed to its
// parameter's shape), or one bufferization did not return directly, is
// copied into the out-parameter at the end instead, and its buffer lives
// to the end of the step. Here such an allocation becomes a view of the
// out-parameter.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXWRITERESULTSINPLACEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// Replaces the allocation that \p copy reads (directly or through one
/// reshape) by its target, an out-parameter of \p func; false if the copy
/// is not of that form.
static bool computeInTarget(func::FuncOp func, memref::CopyOp copy) {
  auto target = dyn_cast<BlockArgument>(copy.getTarget());
  if (!target || target.getOwner() != &func.getBody().front() ||
      !target.hasOneUse())
    return false;
  Value source = copy.getSource();
  Operation *reshape = source.getDefiningOp();
  if (reshape && isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(reshape))
    source = reshape->getOperand(0);
  else
    reshape = nullptr;
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  auto targetType = dyn_cast<MemRefType>(target.getType());
  if (!alloc || alloc->getBlock() != copy->getBlock() || !targetType ||
      !targetType.getLayout().isIdentity() ||
      !alloc.getType().getLayout().isIdentity() ||
      alloc.getType().getElementType() != targetType.getElementType())
    return false;
  // Nothing may access the buffer, or a view of it, after the copy but its
  // frees: a write there would now reach the out-parameter.
  if (reshape && !reshape->hasOneUse())
    return false;
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == copy || user == reshape || isa<memref::DeallocOp>(user))
        continue;
      Operation *inBlock = copy->getBlock()->findAncestorOpInBlock(*user);
      if (!inBlock || copy->isBeforeInBlock(inBlock))
        return false;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }

  OpBuilder b(alloc);
  Value view = target;
  if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(reshape)) {
    view = memref::ExpandShapeOp::create(b, alloc.getLoc(),
                                         alloc.getType().getShape(), target,
                                         collapse.getReassociationIndices());
  } else if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(reshape)) {
    view = memref::CollapseShapeOp::create(b, alloc.getLoc(), target,
                                           expand.getReassociationIndices());
  } else if (alloc.getType() != targetType) {
    return false;
  }
  if (view.getType() != alloc.getType()) {
    if (Operation *made = view.getDefiningOp())
      made->erase();
    return false;
  }
  copy->erase();
  if (reshape)
    reshape->erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  alloc->replaceAllUsesWith(ValueRange{view});
  alloc->erase();
  return true;
}

void mlir::mix::writeResultsInPlace(FunctionOpInterface function) {
  auto func = dyn_cast<func::FuncOp>(function.getOperation());
  if (!func || func.isDeclaration())
    return;
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies)
    computeInTarget(func, copy);
}

namespace {
struct MixWriteResultsInPlacePass
    : mlir::mix::impl::MixWriteResultsInPlacePassBase<
          MixWriteResultsInPlacePass> {
  void runOnOperation() override { writeResultsInPlace(getOperation()); }
};
} // namespace
