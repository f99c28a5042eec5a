//===- MergeIndependentKernels.cpp - Horizontal fusion of launches --------===//
//
// A kernel whose grid is smaller than one wave of the device leaves SMs
// idle for as long as it runs, and costs a launch of its own. When a
// neighbouring launch neither depends on it nor it on the neighbour, the
// two become one launch whose blocks run either body: the small kernel's
// blocks fill the SMs beside the other's, and one launch goes (XLA calls
// this horizontal fusion). A mixture layer's gate, balance loss and
// LayerNorm weight sums are such kernels.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMERGEINDEPENDENTKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// A launch's constant sizes.
struct Shape {
  std::array<int64_t, 3> grid, block;
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t threads() const { return blocks() * block[0] * block[1] * block[2]; }
};

/// The sizes of \p launch if it can merge at all: synchronous, constant
/// sizes, no dynamic shared memory or clusters, one block of body, and
/// no ids this pass does not recover (global or cluster ids).
std::optional<Shape> getMergeableShape(gpu::LaunchOp launch) {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
      !launch.getBody().hasOneBlock())
    return std::nullopt;
  Shape shape;
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value sizes[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
  for (int i = 0; i < 6; ++i) {
    std::optional<int64_t> c = getConstantIntValue(sizes[i]);
    if (!c || *c <= 0)
      return std::nullopt;
    (i < 3 ? shape.grid[i] : shape.block[i - 3]) = *c;
  }
  WalkResult ids = launch.getBody().walk([](Operation *op) {
    return isa<gpu::GlobalIdOp, gpu::ClusterIdOp, gpu::ClusterDimOp,
               gpu::ClusterBlockIdOp, gpu::ClusterDimBlocksOp, gpu::ReturnOp>(
               op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (ids.wasInterrupted())
    return std::nullopt;
  return shape;
}

/// The bytes of \p launch's workgroup buffers.
int64_t workgroupBytes(gpu::LaunchOp launch) {
  int64_t bytes = 0;
  for (BlockArgument arg : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(arg.getType());
    bytes += type.getNumElements() *
             llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return bytes;
}

/// Static workgroup memory a kernel may declare (without opting in to
/// more through dynamic shared memory).
constexpr int64_t kMaxWorkgroupBytes = 48 * 1024;

/// A kernel's parameters, 8 bytes each, within PTX 8.0's 4 KiB, with the
/// room mix-multi-tensor-kernels leaves for what outlining adds.
constexpr int64_t kMaxParameters = 4096 / 8 - 32;

/// The kernel parameters the values \p launches use from above take once
/// outlined: a buffer its pointer and the offset and strides of its layout
/// that are not static, any other value one; constants are sunk into the
/// kernel.
int64_t countParameters(ArrayRef<gpu::LaunchOp> launches) {
  llvm::SetVector<Value> used;
  for (gpu::LaunchOp launch : launches)
    getUsedValuesDefinedAbove(launch.getBody(), used);
  int64_t count = 0;
  for (Value v : used) {
    if (matchPattern(v, m_Constant()))
      continue;
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type) {
      ++count;
      continue;
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    count += failed(type.getStridesAndOffset(strides, offset))
                 ? 2 + type.getRank()
                 : 1 + ShapedType::isDynamic(offset) +
                       llvm::count_if(strides, ShapedType::isDynamic);
  }
  return count;
}

/// Whether \p launch's body synchronizes or shares anything within its
/// block: then its threads must all run it.
bool synchronizesThreads(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty())
    return true;
  WalkResult result = launch.getBody().walk([](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::TerminatorOp>(op))
      return WalkResult::advance();
    StringRef dialect = op->getName().getDialectNamespace();
    return dialect == "gpu" || dialect == "nvvm" || dialect == "nvgpu"
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The buffers a launch reads and writes, by root (BufferAliasing.h).
/// Unknown when it reaches memory other than through memrefs of distinct
/// buffers.
struct Accesses {
  SmallVector<Value> reads, writes;
  bool unknown = false;

  bool isWritten(Value root) const { return llvm::is_contained(writes, root); }
  bool isTouched(Value root) const {
    return isWritten(root) || llvm::is_contained(reads, root);
  }
};

Accesses getAccesses(gpu::LaunchOp launch) {
  Accesses a;
  Region &body = launch.getBody();
  std::function<void(Value, bool, bool)> note = [&](Value v, bool read,
                                                    bool write) {
    Value root = getBufferRoot(v);
    if (body.isAncestor(root.getParentRegion())) {
      // A buffer the body picks (a multi-tensor kernel's block selecting
      // its tensor): each it may pick.
      if (auto select = root.getDefiningOp<arith::SelectOp>()) {
        note(select.getTrueValue(), read, write);
        note(select.getFalseValue(), read, write);
        return;
      }
      // The launch's own: workgroup and private buffers, allocas.
      if (!isa<BlockArgument>(root) && !root.getDefiningOp<memref::AllocaOp>())
        a.unknown = true;
      return;
    }
    if (!isDistinctBuffer(root)) {
      a.unknown = true;
      return;
    }
    if (read && !llvm::is_contained(a.reads, root))
      a.reads.push_back(root);
    if (write && !a.isWritten(root))
      a.writes.push_back(root);
  };
  body.walk([&](Operation *op) {
    // A pointer taken out of a memref reaches memory the effects do not
    // show.
    if (isa<memref::ExtractAlignedPointerAsIndexOp>(op) ||
        llvm::any_of(op->getOperandTypes(),
                     llvm::IsaPred<LLVM::LLVMPointerType>))
      a.unknown = true;
    if (isMemoryEffectFree(op))
      return;
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &e : instances) {
        if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(e.getEffect()))
          continue;
        if (Value v = e.getValue()) {
          note(v, isa<MemoryEffects::Read>(e.getEffect()),
               isa<MemoryEffects::Write>(e.getEffect()));
          continue;
        }
        // A barrier or another intrinsic of the device: device memory is
        // reached through memrefs at this stage.
        if (!isa<gpu::GPUDialect, NVVM::NVVMDialect>(op->getDialect()))
          a.unknown = true;
      }
      return;
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return;
    for (Value v : op->getOperands())
      if (isa<BaseMemRefType>(v.getType()))
        note(v, /*read=*/true, /*write=*/true);
  });
  return a;
}

/// Whether launches with accesses \p a and \p b may run in either order,
/// or at once: neither writes what the other touches.
bool areIndependent(const Accesses &a, const Accesses &b) {
  if (a.unknown || b.unknown)
    return false;
  return llvm::none_of(a.writes, [&](Value r) { return b.isTouched(r); }) &&
         llvm::none_of(b.writes, [&](Value r) { return a.isTouched(r); });
}

/// Whether \p first (with accesses \p a) can move down to just before
/// \p second: every operation in between leaves its buffers alone, but the
/// deallocations of them, which go to \p toMove (to follow the merged
/// launch).
bool canSink(gpu::LaunchOp first, gpu::LaunchOp second, const Accesses &a,
             SmallVectorImpl<Operation *> &toMove) {
  if (first->getBlock() != second->getBlock())
    return false;
  SmallVector<Value> roots(a.reads);
  for (Value w : a.writes)
    if (!llvm::is_contained(roots, w))
      roots.push_back(w);
  llvm::SmallPtrSet<Operation *, 8> moving;
  for (Operation *op = first->getNextNode(); op && op != second;
       op = op->getNextNode()) {
    if (moving.contains(op) || isMemoryEffectFree(op))
      continue;
    SmallVector<Operation *> dealloc = getDeallocation(op, roots);
    if (!dealloc.empty()) {
      moving.insert(dealloc.begin(), dealloc.end());
      llvm::append_range(toMove, dealloc);
      continue;
    }
    if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      if (!areIndependent(a, getAccesses(launch)))
        return false;
      continue;
    }
    for (Value root : roots)
      if (a.isWritten(root) ? !leavesBufferAlone(op, root)
                            : !leavesBufferUnwritten(op, root))
        return false;
  }
  return true;
}

/// Merges \p first into \p second (see the pass's description), moving
/// \p toMove after the merged launch; returns it.
gpu::LaunchOp merge(gpu::LaunchOp first, const Shape &s1, gpu::LaunchOp second,
                    const Shape &s2, ArrayRef<Operation *> toMove) {
  OpBuilder b(second);
  Location loc = b.getFusedLoc({first.getLoc(), second.getLoc()});
  std::array<int64_t, 3> block = s1.block;
  if (s1.block != s2.block)
    block = {std::max(s1.block[0], s2.block[0]), 1, 1};
  SmallVector<Type> workgroup, priv;
  for (gpu::LaunchOp l : {first, second}) {
    for (BlockArgument arg : l.getWorkgroupAttributions())
      workgroup.push_back(arg.getType());
    for (BlockArgument arg : l.getPrivateAttributions())
      priv.push_back(arg.getType());
  }
  gpu::LaunchOp merged = createLaunch(b, loc, {s1.blocks() + s2.blocks(), 1, 1},
                                      block, workgroup, priv);
  b.setInsertionPointToStart(&merged.getBody().front());
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value bid = merged.getBlockIds().x;
  Value inFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, bid,
                                        c(s1.blocks()));
  auto split = scf::IfOp::create(b, loc, inFirst, /*withElseRegion=*/true);
  split->setAttr(kBlockSplitAttr, b.getI64IntegerAttr(s1.blocks()));

  unsigned workgroupOffset = 0, privateOffset = 0;
  auto emitPart = [&](Block *dest, gpu::LaunchOp part, const Shape &s,
                      int64_t firstBlock) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(dest->getTerminator());
    if (s.block != block) {
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                merged.getThreadIds().x, c(s.block[0]));
      auto threads = scf::IfOp::create(b, loc, inside);
      threads->setAttr(kThreadSplitAttr, b.getI64IntegerAttr(s.block[0]));
      b.setInsertionPoint(threads.thenBlock()->getTerminator());
    }
    // The part's block ids, from its index among the part's blocks.
    Value linear =
        firstBlock ? arith::SubIOp::create(b, loc, bid, c(firstBlock)) : bid;
    std::array<Value, 3> ids;
    if (s.grid[1] == 1 && s.grid[2] == 1) {
      ids = {linear, c(0), c(0)};
    } else {
      Value x = c(s.grid[0]);
      Value rest = arith::DivUIOp::create(b, loc, linear, x);
      ids = {arith::RemUIOp::create(b, loc, linear, x),
             arith::RemUIOp::create(b, loc, rest, c(s.grid[1])),
             arith::DivUIOp::create(b, loc, linear, c(s.grid[0] * s.grid[1]))};
    }
    std::array<Value, 3> gridSizes = {c(s.grid[0]), c(s.grid[1]), c(s.grid[2])};
    std::array<Value, 3> blockSizes = {c(s.block[0]), c(s.block[1]),
                                       c(s.block[2])};
    IRMapping map;
    gpu::KernelDim3 partIds = part.getBlockIds(),
                    partThreads = part.getThreadIds(),
                    partGrid = part.getGridSize(),
                    partBlock = part.getBlockSize();
    gpu::KernelDim3 threads = merged.getThreadIds();
    map.map(partIds.x, ids[0]);
    map.map(partIds.y, ids[1]);
    map.map(partIds.z, ids[2]);
    map.map(partThreads.x, threads.x);
    map.map(partThreads.y, threads.y);
    map.map(partThreads.z, threads.z);
    map.map(partGrid.x, gridSizes[0]);
    map.map(partGrid.y, gridSizes[1]);
    map.map(partGrid.z, gridSizes[2]);
    map.map(partBlock.x, blockSizes[0]);
    map.map(partBlock.y, blockSizes[1]);
    map.map(partBlock.z, blockSizes[2]);
    for (BlockArgument arg : part.getWorkgroupAttributions())
      map.map(arg, merged.getWorkgroupAttributions()[workgroupOffset++]);
    for (BlockArgument arg : part.getPrivateAttributions())
      map.map(arg, merged.getPrivateAttributions()[privateOffset++]);
    SmallVector<Operation *> cloned;
    for (Operation &op : part.getBody().front().without_terminator())
      cloned.push_back(b.clone(op, map));
    // The id operations in the body: the part's values.
    auto index = [](gpu::Dimension d) { return static_cast<unsigned>(d); };
    for (Operation *top : cloned)
      top->walk([&](Operation *op) {
        Value value;
        if (auto id = dyn_cast<gpu::BlockIdOp>(op))
          value = ids[index(id.getDimension())];
        else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
          value = gridSizes[index(dim.getDimension())];
        else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
          value = blockSizes[index(dim.getDimension())];
        if (value) {
          op->getResult(0).replaceAllUsesWith(value);
          op->erase();
        }
      });
  };
  emitPart(split.thenBlock(), first, s1, 0);
  emitPart(split.elseBlock(), second, s2, s1.blocks());
  Operation *after = merged;
  for (Operation *op : toMove) {
    op->moveAfter(after);
    after = op;
  }
  first.erase();
  second.erase();
  return merged;
}

struct MergeIndependentKernelsPass
    : mix::impl::MixMergeIndependentKernelsPassBase<
          MergeIndependentKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      SmallVector<gpu::LaunchOp> seen;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        auto launch = dyn_cast<gpu::LaunchOp>(&op);
        if (!launch)
          continue;
        seen.push_back(launch);
        while (gpu::LaunchOp merged = mergeWithEarlier(seen))
          seen.back() = merged;
      }
    }
  }

  /// Merges the last of \p seen with the nearest earlier one it can take
  /// (removed from \p seen); returns the merged launch, or null.
  gpu::LaunchOp mergeWithEarlier(SmallVectorImpl<gpu::LaunchOp> &seen) {
    gpu::LaunchOp second = seen.back();
    std::optional<Shape> s2 = getMergeableShape(second);
    if (!s2)
      return nullptr;
    Accesses a2 = getAccesses(second);
    size_t n = seen.size() - 1;
    for (size_t i = n; i-- > 0 && n - i <= window;) {
      gpu::LaunchOp first = seen[i];
      std::optional<Shape> s1 = getMergeableShape(first);
      if (!s1 || std::min(s1->threads(), s2->threads()) > threads ||
          workgroupBytes(first) + workgroupBytes(second) > kMaxWorkgroupBytes ||
          countParameters({first, second}) > kMaxParameters)
        continue;
      if (s1->block != s2->block) {
        const Shape &small = s1->block[0] < s2->block[0] ? *s1 : *s2;
        gpu::LaunchOp smaller = &small == &*s1 ? first : second;
        bool oneD = s1->block[1] == 1 && s1->block[2] == 1 &&
                    s2->block[1] == 1 && s2->block[2] == 1;
        if (!oneD || synchronizesThreads(smaller))
          continue;
      }
      Accesses a1 = getAccesses(first);
      SmallVector<Operation *> toMove;
      if (!areIndependent(a1, a2) || !canSink(first, second, a1, toMove))
        continue;
      gpu::LaunchOp merged = merge(first, *s1, second, *s2, toMove);
      seen.erase(seen.begin() + i);
      return merged;
    }
    return nullptr;
  }
};
} // namespace
