//===- LaunchSerialOps.cpp - Kernels for the work no parallel loop carries ===//
//
// Two kinds of device work are left outside kernels once the linalg ops
// with parallel loops are mapped: linalg ops with none (a sum to a scalar,
// a rank-0 update), and host loop nests from the tensor program that read
// and write memory directly (the embedding gradient's scatter-add over the
// tokens). Both move into launches: one thread in general; for a two-deep
// nest whose inner iterations provably touch disjoint memory (every store,
// and every load of stored memory, indexes its last dimension by the inner
// induction variable, and nothing else aliases what is stored), one thread
// an inner iteration, each running the outer loop in order.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXLAUNCHSERIALOPSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

gpu::LaunchOp mlir::mix::createFlatLaunch(OpBuilder &b, Location loc,
                                          int64_t blocks, int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value gridX =
      blocks == 1 ? one : arith::ConstantIndexOp::create(b, loc, blocks);
  Value blockX =
      threads == 1 ? one : arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, gridX, one, one, blockX, one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  return launch;
}

gpu::LaunchOp mlir::mix::createLaunch(OpBuilder &b, Location loc,
                                      std::array<int64_t, 3> grid,
                                      std::array<int64_t, 3> block,
                                      TypeRange workgroup, TypeRange priv) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto launch = gpu::LaunchOp::create(
      b, loc, c(grid[0]), c(grid[1]), c(grid[2]), c(block[0]), c(block[1]),
      c(block[2]), /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange{}, workgroup,
      priv);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  return launch;
}

static MemRefType bufferIn(gpu::AddressSpace space, ArrayRef<int64_t> shape,
                           Type type) {
  return MemRefType::get(shape, type, MemRefLayoutAttrInterface(),
                         gpu::AddressSpaceAttr::get(type.getContext(), space));
}

MemRefType mlir::mix::workgroupBuffer(ArrayRef<int64_t> shape, Type type) {
  return bufferIn(gpu::AddressSpace::Workgroup, shape, type);
}

MemRefType mlir::mix::privateBuffer(ArrayRef<int64_t> shape, Type type) {
  return bufferIn(gpu::AddressSpace::Private, shape, type);
}

Value mlir::mix::createGuardedFlatLaunch(OpBuilder &b, Location loc,
                                         int64_t count) {
  int64_t threads = std::min(count, kFlatBlockSize);
  gpu::LaunchOp launch =
      createFlatLaunch(b, loc, (count + threads - 1) / threads, threads);
  b.setInsertionPoint(&launch.getBody().front().back());
  Value id = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                            launch.getBlockSize().x),
      launch.getThreadIds().x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id,
                            arith::ConstantIndexOp::create(b, loc, count));
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  return id;
}

/// The memref a load or store accesses, if it is device memory.
static Value getDeviceMemref(Operation *op) {
  Value memref;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    memref = load.getMemref();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    memref = store.getMemref();
  else
    return {};
  if (isHostBookkeeping(cast<MemRefType>(memref.getType())))
    return {};
  return memref;
}

/// The buffer a view is of: through subviews, reshapes and casts.
static Value getRootBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    memref = view.getViewSource();
  }
  return memref;
}

/// Whether \p op (a host loop, branch or access) can run inside a kernel as
/// it is: no launches, library calls, allocations or linalg ops within.
static bool isKernelBody(Operation *op) {
  WalkResult result = op->walk([](Operation *inner) {
    if (isa<gpu::LaunchOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            gpu::WaitOp, func::CallOp, memref::AllocOp, memref::AllocaOp,
            memref::DeallocOp>(inner) ||
        isa<linalg::LinalgOp>(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The inner loop of \p outer when the two-deep nest may run one thread an
/// inner iteration (see the file comment), else null.
static scf::ForOp getParallelInnerLoop(scf::ForOp outer) {
  if (!outer.getInitArgs().empty())
    return {};
  scf::ForOp inner;
  for (Operation &op : outer.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (inner)
        return {};
      inner = loop;
    } else if (isa<memref::StoreOp>(op) || op.getNumRegions() != 0) {
      return {};
    }
  }
  if (!inner || !inner.getInitArgs().empty() ||
      !getConstantIntValue(inner.getLowerBound()) ||
      !getConstantIntValue(inner.getUpperBound()) ||
      !getConstantIntValue(inner.getStep()))
    return {};
  Value iv = inner.getInductionVar();
  // What is stored, by value and by buffer.
  llvm::SmallPtrSet<Value, 4> stored, storedRoots;
  bool ok = true;
  outer->walk([&](memref::StoreOp store) {
    if (store.getIndices().empty() || store.getIndices().back() != iv)
      ok = false;
    stored.insert(store.getMemref());
    storedRoots.insert(getRootBuffer(store.getMemref()));
  });
  outer->walk([&](Operation *op) {
    if (op->getNumRegions() != 0 && op != outer && op != inner)
      ok = false;
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load)
      return;
    if (stored.contains(load.getMemref())) {
      if (load.getIndices().empty() || load.getIndices().back() != iv)
        ok = false;
    } else if (storedRoots.contains(getRootBuffer(load.getMemref()))) {
      ok = false; // another view of stored memory
    }
  });
  return ok ? inner : scf::ForOp();
}

/// Moves \p op into a launch of one thread.
static void launchOneThread(Operation *op) {
  OpBuilder b(op);
  gpu::LaunchOp launch = createFlatLaunch(b, op->getLoc(), 1, 1);
  op->moveBefore(&launch.getBody().front().back());
}

/// Runs \p outer as one thread an iteration of \p inner.
static void launchPerInnerIteration(scf::ForOp outer, scf::ForOp inner) {
  int64_t lower = *getConstantIntValue(inner.getLowerBound());
  int64_t upper = *getConstantIntValue(inner.getUpperBound());
  int64_t step = *getConstantIntValue(inner.getStep());
  int64_t count = upper > lower ? (upper - lower + step - 1) / step : 0;
  if (count == 0) {
    outer.erase();
    return;
  }
  Location loc = outer.getLoc();
  OpBuilder b(outer);
  Value id = createGuardedFlatLaunch(b, loc, count);
  Value iv = arith::AddIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, lower),
      arith::MulIOp::create(b, loc, id,
                            arith::ConstantIndexOp::create(b, loc, step)));
  auto loop = scf::ForOp::create(b, loc, outer.getLowerBound(),
                                 outer.getUpperBound(), outer.getStep());
  b.setInsertionPointToStart(loop.getBody());
  IRMapping map;
  map.map(outer.getInductionVar(), loop.getInductionVar());
  map.map(inner.getInductionVar(), iv);
  for (Operation &op : outer.getBody()->without_terminator()) {
    if (&op != inner.getOperation()) {
      b.clone(op, map);
      continue;
    }
    for (Operation &innerOp : inner.getBody()->without_terminator())
      b.clone(innerOp, map);
  }
  outer.erase();
}

LogicalResult mlir::mix::launchSerialOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> serial;
  llvm::SetVector<Operation *> nests;
  bool failedNest = false;
  module.walk([&](func::FuncOp fn) {
    fn.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<linalg::LinalgOp>())
        return;
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (linalgOp.hasPureBufferSemantics() &&
            linalgOp.getNumParallelLoops() == 0)
          serial.push_back(linalgOp);
        return;
      }
      if (!getDeviceMemref(op))
        return;
      // The outermost enclosing loop or branch that can run in a kernel.
      Operation *unit = op;
      for (Operation *parent = op->getParentOp();
           parent && !isa<func::FuncOp>(parent) && isKernelBody(parent);
           parent = parent->getParentOp())
        unit = parent;
      if (unit->getNumResults() != 0 && !isa<memref::LoadOp>(unit)) {
        unit->emitError("a host loop with results reads or writes device "
                        "memory; the CUDA target cannot run it");
        failedNest = true;
        return;
      }
      nests.insert(unit);
    });
  });
  if (failedNest)
    return failure();
  for (linalg::LinalgOp op : serial)
    launchOneThread(op);
  for (Operation *unit : nests) {
    // A load at the top level feeds host code: the host cannot read device
    // memory.
    if (isa<memref::LoadOp>(unit))
      return unit->emitError("the host code reads device memory directly; "
                             "the CUDA target cannot run it");
    auto outer = dyn_cast<scf::ForOp>(unit);
    if (scf::ForOp inner = outer ? getParallelInnerLoop(outer) : scf::ForOp())
      launchPerInnerIteration(outer, inner);
    else
      launchOneThread(unit);
  }
  return success();
}

namespace {
struct MixLaunchSerialOpsPass
    : mlir::mix::impl::MixLaunchSerialOpsPassBase<MixLaunchSerialOpsPass> {
  void runOnOperation() override {
    if (failed(launchSerialOps(getOperation())))
      signalPassFailure();
  }
};
} // namespace
