//===- AllocateAtFirstUse.cpp - Allocate each buffer at its first use -----===//
//
// One-shot bufferization allocates a buffer where its tensor.empty was, and
// CSE merges the empty tensors of a type into one at the first position, so
// in a training step buffers of the last layer's backward pass were
// allocated before the first layer's forward pass. Each operand-less
// memref.alloc moves down to just before the first operation of its block
// that uses it; with mix-free-after-last-use a buffer then lives only from
// its first use to its last.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXALLOCATEATFIRSTUSEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The first operation of \p alloc's block that uses its buffer; null when
/// there is none or a use lies outside the block. Views of the buffer are
/// made by such users, so the direct uses are enough.
static Operation *findFirstUse(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *first = nullptr;
  for (Operation *user : alloc->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock)
      return nullptr;
    if (!first || inBlock->isBeforeInBlock(first))
      first = inBlock;
  }
  return first;
}

void mlir::mix::allocateAtFirstUse(FunctionOpInterface function) {
  SmallVector<memref::AllocOp> allocs;
  function.walk([&](memref::AllocOp alloc) {
    if (alloc->getNumOperands() == 0)
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs)
    if (Operation *first = findFirstUse(alloc))
      alloc->moveBefore(first);
}

namespace {
struct MixAllocateAtFirstUsePass
    : mlir::mix::impl::MixAllocateAtFirstUsePassBase<
          MixAllocateAtFirstUsePass> {
  void runOnOperation() override { allocateAtFirstUse(getOperation()); }
};
} // namespace
