//===- FreeAfterLastUse.cpp - Free each buffer after its last use ---------===//
//
// MLIR's ownership-based buffer deallocation frees a block's buffers at the
// end of the block. A training step is one straight-line block, so every
// buffer of the step stayed allocated until the step returned, and the
// step's peak memory was the sum of all its buffers. Here each
// `memref.dealloc` of a buffer allocated in the same block moves up to just
// after the last operation of the block that uses the buffer or any value
// derived from it (views, reshapes, casts: any operation result of memref
// type made from it counts, conservatively).
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFREEAFTERLASTUSEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The last operation of the alloc's block that uses \p buffer or a memref
/// derived from it, other than \p dealloc; null if a use lies outside the
/// block.
static Operation *findLastUse(memref::AllocOp alloc,
                              memref::DeallocOp dealloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  SmallVector<Value> worklist{alloc.getResult()};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (user == dealloc)
        continue;
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return nullptr;
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return last;
}

void mlir::mix::freeAfterLastUse(FunctionOpInterface function) {
  SmallVector<memref::DeallocOp> deallocs;
  function.walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
  for (memref::DeallocOp dealloc : deallocs) {
    auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != dealloc->getBlock())
      continue;
    Operation *last = findLastUse(alloc, dealloc);
    if (last && last->isBeforeInBlock(dealloc))
      dealloc->moveAfter(last);
  }
}

namespace {
struct MixFreeAfterLastUsePass
    : mlir::mix::impl::MixFreeAfterLastUsePassBase<MixFreeAfterLastUsePass> {
  void runOnOperation() override { freeAfterLastUse(getOperation()); }
};
} // namespace
