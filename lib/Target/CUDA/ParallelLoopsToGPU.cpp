//===- ParallelLoopsToGPU.cpp - scf.parallel to flat gpu.launch -----------===//
//
// Each scf.parallel in a host function becomes a 1-D launch with one thread
// an iteration: the thread's flat index is delinearized row-major into the
// loop's induction variables, so neighbouring threads take neighbouring
// innermost indices and their memory accesses coalesce.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXPARALLELLOOPSTOGPUPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

static LogicalResult convert(scf::ParallelOp loop) {
  if (!loop.getInitVals().empty())
    return loop.emitError("scf.parallel with reductions is not supported on "
                          "the CUDA target");
  SmallVector<int64_t> lower, upper, step, counts;
  for (auto [lb, ub, st] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(st);
    if (!l || !u || !s || *s <= 0)
      return loop.emitError("scf.parallel needs constant bounds and positive "
                            "steps on the CUDA target");
    lower.push_back(*l);
    upper.push_back(*u);
    step.push_back(*s);
    counts.push_back(*u > *l ? (*u - *l + *s - 1) / *s : 0);
  }
  int64_t total = 1;
  for (int64_t c : counts)
    total *= c;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  if (total == 0) {
    loop.erase();
    return success();
  }
  int64_t threads = std::min(total, kFlatBlockSize);
  if ((total + threads - 1) / threads > (int64_t(1) << 31) - 1)
    return loop.emitError("scf.parallel of ")
           << total << " iterations exceeds one launch's grid";
  Value id = createGuardedFlatLaunch(b, loc, total);
  // Row-major: the last induction variable varies fastest.
  IRMapping map;
  Value rest = id;
  for (int64_t i = int64_t(counts.size()) - 1; i >= 0; --i) {
    Value count = arith::ConstantIndexOp::create(b, loc, counts[i]);
    Value index = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, count);
    if (i != 0)
      rest = arith::DivUIOp::create(b, loc, rest, count);
    Value iv = arith::AddIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, lower[i]),
        arith::MulIOp::create(b, loc, index,
                              arith::ConstantIndexOp::create(b, loc, step[i])));
    map.map(loop.getInductionVars()[i], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  loop.erase();
  return success();
}

LogicalResult mlir::mix::convertParallelLoopsToGPU(ModuleOp module) {
  SmallVector<scf::ParallelOp> loops;
  module.walk([&](func::FuncOp fn) {
    fn.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<gpu::LaunchOp>() &&
          !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
  });
  for (scf::ParallelOp loop : loops)
    if (failed(convert(loop)))
      return failure();
  return success();
}

namespace {
struct MixParallelLoopsToGPUPass
    : mlir::mix::impl::MixParallelLoopsToGPUPassBase<
          MixParallelLoopsToGPUPass> {
  void runOnOperation() override {
    if (failed(convertParallelLoopsToGPU(getOperation())))
      signalPassFailure();
  }
};
} // namespace
