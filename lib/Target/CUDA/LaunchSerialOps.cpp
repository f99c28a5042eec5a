//===- LaunchSerialOps.cpp - One-thread kernels for serial linalg ops -----===//
//
// A linalg op with no parallel loop (a sum to a scalar, a rank-0 update)
// lowers to loops that no scf.parallel carries to the device; it moves into
// a gpu.launch of one thread instead.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXLAUNCHSERIALOPSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

/// Creates `gpu.launch` of \p blocks blocks of \p threads threads before
/// \p before and returns it, its body ending in gpu.terminator.
gpu::LaunchOp mlir::mix::createFlatLaunch(OpBuilder &b, Location loc,
                                          int64_t blocks, int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value gridX = arith::ConstantIndexOp::create(b, loc, blocks);
  Value blockX = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, gridX, one, one, blockX, one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  return launch;
}

void mlir::mix::launchSerialOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> serial;
  module.walk([&](func::FuncOp fn) {
    fn.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>() || !op.hasPureBufferSemantics())
        return;
      if (op.getNumParallelLoops() == 0)
        serial.push_back(op);
    });
  });
  for (linalg::LinalgOp op : serial) {
    OpBuilder b(op);
    gpu::LaunchOp launch = createFlatLaunch(b, op.getLoc(), 1, 1);
    op->moveBefore(&launch.getBody().front().back());
  }
}

namespace {
struct MixLaunchSerialOpsPass
    : mlir::mix::impl::MixLaunchSerialOpsPassBase<MixLaunchSerialOpsPass> {
  void runOnOperation() override { launchSerialOps(getOperation()); }
};
} // namespace
