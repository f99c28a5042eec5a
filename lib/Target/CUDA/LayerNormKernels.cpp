//===- LayerNormKernels.cpp - A LayerNorm in one pass over each row -------===//
//
// The fused LayerNorm ops on buffers become kernels that keep a row's
// statistics in registers and workgroup memory:
//   forward:  a block of 256 threads a row: the row's sum, then the sum of
//             its centred squares (each a block reduction), then every
//             element normalized, scaled and shifted; thread 0 writes the
//             row's mean and 1/std for the backward pass;
//   backward: a block a row computes dinput from the saved statistics and
//             the row's two sums, sum(g) and sum(g * xhat) with g = dresult
//             * weight; the weight's and bias's gradients are column sums
//             over the rows: a launch of (column tiles x row chunks) blocks
//             writes a partial sum a chunk, a second folds the chunks in a
//             fixed order (no atomics: deterministic).
// The arithmetic is in the order of the decomposed form (PrimitiveBuilder::
// layerNorm and its autodiff), in f32.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXLAYERNORMKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Threads a block; row chunks of the column sums, at most.
constexpr int64_t kBlock = 256;
constexpr int64_t kMaxChunks = 128;

/// A launch of a block of kBlock threads for each of \p rows rows, with
/// two workgroup buffers of a float a warp for the block's two sums.
gpu::LaunchOp createRowLaunch(OpBuilder &builder, Location loc, int64_t rows) {
  Type f32 = builder.getF32Type();
  return createLaunch(builder, loc, {rows, 1, 1}, {kBlock, 1, 1},
                      {workgroupBuffer({kBlock / 32}, f32),
                       workgroupBuffer({kBlock / 32}, f32)});
}

/// `sum_{i = tid; i < n; i += kBlock} term(i)`, a thread's share of a row.
Value rowShare(Emitter &e, Value tid, int64_t n,
               llvm::function_ref<Value(Value)> term) {
  return e.loop(tid, e.idx(n), e.idx(kBlock), e.f32(0.0),
                [&](Value i, ValueRange acc) {
                  return SmallVector<Value>{e.addf(acc[0], term(i))};
                })[0];
}

void lowerForward(FusedLayerNormBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  Value x = e.viewAs(op.getInput(), 2), y = e.viewAs(op.getResult(), 2);
  Value means = e.viewAs(op.getMean(), 1), rstds = e.viewAs(op.getRstd(), 1);
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rows = shape[0], width = shape[1];
  float eps = static_cast<float>(op.getEps().convertToDouble());

  gpu::LaunchOp launch = createRowLaunch(builder, e.loc, rows);
  builder.setInsertionPoint(&launch.getBody().front().back());
  Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  auto scratch = launch.getWorkgroupAttributions();
  Value inv = e.f32(1.0 / double(width));
  Value sum = rowShare(e, tid, width, [&](Value i) {
    return e.load(x, {row, i});
  });
  Value mean = e.mulf(e.blockSum(sum, tid, scratch[0], kBlock), inv);
  Value squares = rowShare(e, tid, width, [&](Value i) {
    Value c = e.subf(e.load(x, {row, i}), mean);
    return e.mulf(c, c);
  });
  Value var = e.mulf(e.blockSum(squares, tid, scratch[1], kBlock), inv);
  Value rstd = math::RsqrtOp::create(builder, e.loc, e.addf(var, e.f32(eps)));
  e.loop(tid, e.idx(width), e.idx(kBlock), {}, [&](Value i, ValueRange) {
    Value c = e.subf(e.load(x, {row, i}), mean);
    Value v = e.mulf(e.mulf(c, rstd), e.load(op.getWeight(), {i}));
    e.store(e.addf(v, e.load(op.getBias(), {i})), y, {row, i});
    return SmallVector<Value>();
  });
  e.when(e.eq(tid, e.idx(0)), [&] {
    e.store(mean, means, {row});
    e.store(rstd, rstds, {row});
  });
}

void lowerBackward(FusedLayerNormGradBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  Type f32 = builder.getF32Type();
  Value x = e.viewAs(op.getInput(), 2), dy = e.viewAs(op.getDresult(), 2);
  Value dx = e.viewAs(op.getDinput(), 2);
  Value means = e.viewAs(op.getMean(), 1), rstds = e.viewAs(op.getRstd(), 1);
  Value w = op.getWeight();
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rows = shape[0], width = shape[1];
  auto xhatAt = [&](Value row, Value i, Value mean, Value rstd) {
    return e.mulf(e.subf(e.load(x, {row, i}), mean), rstd);
  };

  // dinput, a block a row.
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch = createRowLaunch(builder, e.loc, rows);
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    auto scratch = launch.getWorkgroupAttributions();
    Value mean = e.load(means, {row}), rstd = e.load(rstds, {row});
    auto gAt = [&](Value i) {
      return e.mulf(e.load(dy, {row, i}), e.load(w, {i}));
    };
    SmallVector<Value> shares =
        e.loop(tid, e.idx(width), e.idx(kBlock), {e.f32(0.0), e.f32(0.0)},
               [&](Value i, ValueRange acc) {
                 Value g = gAt(i);
                 return SmallVector<Value>{
                     e.addf(acc[0], g),
                     e.addf(acc[1], e.mulf(g, xhatAt(row, i, mean, rstd)))};
               });
    Value inv = e.f32(1.0 / double(width));
    Value meanG = e.mulf(e.blockSum(shares[0], tid, scratch[0], kBlock), inv);
    Value meanGX = e.mulf(e.blockSum(shares[1], tid, scratch[1], kBlock), inv);
    e.loop(tid, e.idx(width), e.idx(kBlock), {}, [&](Value i, ValueRange) {
      Value centred = e.subf(gAt(i), meanG);
      Value d = e.subf(centred, e.mulf(xhatAt(row, i, mean, rstd), meanGX));
      e.store(e.mulf(d, rstd), dx, {row, i});
      return SmallVector<Value>();
    });
  }

  // dweight and dbias: partial column sums over chunks of rows, then their
  // sum over the chunks.
  int64_t perChunk = llvm::divideCeil(rows, std::min(rows, kMaxChunks));
  int64_t chunks = llvm::divideCeil(rows, perChunk);
  int64_t tiles = llvm::divideCeil(width, kBlock);
  auto partialType = MemRefType::get({chunks, width}, f32);
  Value partialW = allocOnDevice(builder, e.loc, partialType);
  Value partialB = allocOnDevice(builder, e.loc, partialType);
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {tiles, chunks, 1}, {kBlock, 1, 1}, {});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value col = e.addi(e.muli(launch.getBlockIds().x, e.idx(kBlock)),
                       launch.getThreadIds().x);
    Value chunk = launch.getBlockIds().y;
    Value first = e.muli(chunk, e.idx(perChunk));
    Value last = e.mini(e.addi(first, e.idx(perChunk)), e.idx(rows));
    e.when(e.lt(col, e.idx(width)), [&] {
      SmallVector<Value> sums =
          e.loop(first, last, e.idx(1), {e.f32(0.0), e.f32(0.0)},
                 [&](Value row, ValueRange acc) {
                   Value g = e.load(dy, {row, col});
                   Value xhat = xhatAt(row, col, e.load(means, {row}),
                                       e.load(rstds, {row}));
                   return SmallVector<Value>{e.addf(acc[0], e.mulf(g, xhat)),
                                             e.addf(acc[1], g)};
                 });
      e.store(sums[0], partialW, {chunk, col});
      e.store(sums[1], partialB, {chunk, col});
    });
  }
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {tiles, 1, 1}, {kBlock, 1, 1}, {});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value col = e.addi(e.muli(launch.getBlockIds().x, e.idx(kBlock)),
                       launch.getThreadIds().x);
    e.when(e.lt(col, e.idx(width)), [&] {
      e.store(e.sum(chunks, e.f32(0.0),
                    [&](Value c) {
                      return e.load(partialW, {c, col});
                    }),
              op.getDweight(), {col});
      e.store(e.sum(chunks, e.f32(0.0),
                    [&](Value c) {
                      return e.load(partialB, {c, col});
                    }),
              op.getDbias(), {col});
    });
  }
  deallocOnDevice(builder, e.loc, partialW);
  deallocOnDevice(builder, e.loc, partialB);
}

struct LayerNormKernelsPass
    : mix::impl::MixLayerNormKernelsPassBase<LayerNormKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FusedLayerNormBuffersOp, FusedLayerNormGradBuffersOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<FusedLayerNormBuffersOp>(op))
        lowerForward(fwd);
      else
        lowerBackward(cast<FusedLayerNormGradBuffersOp>(op));
      op->erase();
    }
  }
};
} // namespace
