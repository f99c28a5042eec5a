//===- MultiTensorKernels.cpp - The optimizer in a few launches -----------===//
//
// AdamW touches every parameter, and a model has a hundred or more of
// them: a kernel for each (and a reduction for each one's share of the
// gradient norm) is hundreds of launches a step, most of them on tensors
// too small to fill the device. The multi-tensor ops on buffers become
// launches over many tensors at once, as apex's and PyTorch's
// multi_tensor_apply do:
//   * the tensors are cut into chunks of kChunk elements, and a launch has
//     a block for each chunk of each of its tensors; a block finds its
//     tensor by comparing its index with the (static) first block of each
//     tensor, selecting that tensor's buffers as views of one type;
//   * a launch takes as many tensors as keep its kernel's parameters
//     within the 4 KiB that PTX 8.0 allows: 8 bytes for each buffer (the
//     bare-pointer convention; more for a view whose layout is dynamic)
//     and for each of the per-tensor constants that the outlining passes
//     as arguments (the first block, the size and the index), so a long
//     list of tensors takes a few launches;
//   * the sum of squares writes one partial sum a block (a warp-shuffle
//     and workgroup reduction) and a last launch of one block adds the
//     partials in a fixed order: no atomics, the same result every run;
//   * the AdamW update reads a parameter's gradient and moments and writes
//     the parameter and the moments in place, one element a thread a step
//     of a block-strided walk over the chunk.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMULTITENSORKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Threads a block, elements a thread handles, and so elements a block.
constexpr int64_t kBlock = 256;
constexpr int64_t kPerThread = 16;
constexpr int64_t kChunk = kBlock * kPerThread;
/// The 8-byte kernel parameters a launch may take (4 KiB), less room for
/// those that are not a tensor's (hyperparameters, float constants).
constexpr int64_t kMaxParameters = 4096 / 8 - 32;
/// The constants of each tensor that the kernel takes as parameters.
constexpr int64_t kConstantsPerTensor = 3;

/// The element count of a statically shaped buffer.
int64_t numElements(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getNumElements();
}

/// The chunks of a group of tensors: tensor i's blocks are [first[i],
/// first[i] + its chunks), and the group has `blocks` in all.
struct Chunks {
  SmallVector<int64_t> first;
  int64_t blocks = 0;

  explicit Chunks(ArrayRef<int64_t> sizes) {
    for (int64_t n : sizes) {
      first.push_back(blocks);
      blocks += llvm::divideCeil(n, kChunk);
    }
  }
};

/// \p buffer as a 1-D view of one type for every tensor, so that a select
/// can choose among them.
Value flatView(Emitter &e, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  MLIRContext *ctx = e.b.getContext();
  Value flat = e.viewAs(buffer, 1);
  auto anyFlat =
      MemRefType::get({ShapedType::kDynamic}, type.getElementType(),
                      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {1}));
  return memref::CastOp::create(e.b, e.loc, anyFlat, flat);
}

/// What a block works on: its tensor's buffers (flat views), element
/// count and index in the group, and the first element of its chunk.
struct BlockTensor {
  SmallVector<Value> buffers;
  Value size, index, firstElement;
};

/// The tensor of the group (each row of \p buffers: one tensor's buffers)
/// that block \p block works on, by comparisons with the first block of
/// each tensor: a chain of selects, uniform over the block.
BlockTensor selectTensor(Emitter &e, Value block,
                         ArrayRef<SmallVector<Value>> buffers,
                         const Chunks &chunks) {
  BlockTensor t;
  Value first;
  for (auto [i, row] : llvm::enumerate(buffers)) {
    SmallVector<Value> views;
    for (Value buffer : row)
      views.push_back(flatView(e, buffer));
    Value size = e.idx(numElements(row.front()));
    Value index = e.idx(int64_t(i)), start = e.idx(chunks.first[i]);
    if (i == 0) {
      t = {views, size, index, Value()};
      first = start;
      continue;
    }
    Value here = e.cmpi(arith::CmpIPredicate::uge, block, start);
    for (auto [chosen, view] : llvm::zip(t.buffers, views))
      chosen = e.select(here, view, chosen);
    t.size = e.select(here, size, t.size);
    t.index = e.select(here, index, t.index);
    first = e.select(here, start, first);
  }
  t.firstElement = e.muli(e.subi(block, first), e.idx(kChunk));
  return t;
}

/// The kernel parameters \p buffer takes: its pointer, and the offset
/// and strides of its layout that are not static.
int64_t parametersOf(Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return 1 + 1 + type.getRank();
  return 1 + ShapedType::isDynamic(offset) +
         llvm::count_if(strides, ShapedType::isDynamic);
}

/// The tensors (each row of \p buffers: one tensor's buffers, \p sizes
/// their element counts) of one launch, and their chunks.
struct Group {
  size_t first; // the index of its first tensor
  ArrayRef<SmallVector<Value>> rows;
  Chunks chunks;
};

/// Cuts the tensors into groups whose launch stays within
/// kMaxParameters.
SmallVector<Group> groups(ArrayRef<SmallVector<Value>> buffers,
                          ArrayRef<int64_t> sizes) {
  SmallVector<std::pair<size_t, size_t>> ranges;
  int64_t used = 0;
  for (auto [i, row] : llvm::enumerate(buffers)) {
    int64_t cost = kConstantsPerTensor;
    for (Value buffer : row)
      cost += parametersOf(buffer);
    if (ranges.empty() || used + cost > kMaxParameters) {
      ranges.emplace_back(i, i);
      used = 0;
    }
    ranges.back().second = i + 1;
    used += cost;
  }
  SmallVector<Group> result;
  for (auto [begin, end] : ranges)
    result.push_back({begin, buffers.slice(begin, end - begin),
                      Chunks(sizes.slice(begin, end - begin))});
  return result;
}

void lowerSumSquares(MultiTensorSumSquaresBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  Type f32 = builder.getF32Type();
  SmallVector<int64_t> sizes;
  for (Value t : op.getTensors())
    sizes.push_back(numElements(t));
  int64_t totalBlocks = Chunks(sizes).blocks;
  Value partials =
      allocOnDevice(builder, e.loc, MemRefType::get({totalBlocks}, f32));

  // A partial sum for each chunk.
  SmallVector<SmallVector<Value>> all;
  for (Value t : op.getTensors())
    all.push_back({t});
  int64_t offset = 0;
  for (const Group &group : groups(all, sizes)) {
    ArrayRef<SmallVector<Value>> rows = group.rows;
    const Chunks &chunks = group.chunks;
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {chunks.blocks, 1, 1}, {kBlock, 1, 1},
                     {workgroupBuffer({kBlock / 32}, f32)});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value block = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    BlockTensor t = selectTensor(e, block, rows, chunks);
    Value last = e.subi(t.size, e.idx(1));
    Value mine = e.sum(kPerThread, e.f32(0.0), [&](Value k) {
      Value at = e.addi(t.firstElement, e.addi(e.muli(k, e.idx(kBlock)), tid));
      Value x = e.load(t.buffers[0], {e.mini(at, last)});
      return e.select(e.lt(at, t.size), e.mulf(x, x), e.f32(0.0));
    });
    Value total =
        e.blockSum(mine, tid, launch.getWorkgroupAttributions()[0], kBlock);
    e.when(e.eq(tid, e.idx(0)),
           [&] { e.store(total, partials, {e.addi(block, e.idx(offset))}); });
    offset += chunks.blocks;
  }

  // Their sum, in one block, in a fixed order.
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {1, 1, 1}, {kBlock, 1, 1},
                     {workgroupBuffer({kBlock / 32}, f32)});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value tid = launch.getThreadIds().x;
    Value mine = e.loop(tid, e.idx(totalBlocks), e.idx(kBlock), e.f32(0.0),
                        [&](Value i, ValueRange acc) {
                          return SmallVector<Value>{
                              e.addf(acc[0], e.load(partials, {i}))};
                        })[0];
    Value total =
        e.blockSum(mine, tid, launch.getWorkgroupAttributions()[0], kBlock);
    e.when(e.eq(tid, e.idx(0)),
           [&] { e.store(total, op.getResult(), ValueRange()); });
  }
  deallocOnDevice(builder, e.loc, partials);
}

void lowerAdamW(MultiTensorAdamWBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  double epsilon = op.getEpsilon().convertToDouble();
  double weightDecay = op.getWeightDecay().convertToDouble();
  ArrayRef<bool> decay = op.getDecay();
  size_t n = op.getParams().size();
  SmallVector<int64_t> sizes;
  for (Value p : op.getParams())
    sizes.push_back(numElements(p));

  SmallVector<SmallVector<Value>> all;
  for (size_t i = 0; i < n; ++i)
    all.push_back(
        {op.getParams()[i], op.getGrads()[i], op.getM()[i], op.getV()[i]});
  for (const Group &group : groups(all, sizes)) {
    ArrayRef<SmallVector<Value>> rows = group.rows;
    const Chunks &chunks = group.chunks;
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch =
        createLaunch(builder, e.loc, {chunks.blocks, 1, 1}, {kBlock, 1, 1}, {});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value block = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    BlockTensor t = selectTensor(e, block, rows, chunks);
    // Whether the block's tensor decays: a select on its index.
    Value decays = arith::ConstantIntOp::create(builder, e.loc, 0, 1);
    for (size_t i = group.first; i < group.first + rows.size(); ++i)
      if (decay[i])
        decays = arith::OrIOp::create(
            builder, e.loc, decays,
            e.eq(t.index, e.idx(int64_t(i - group.first))));
    Value lr = e.load(op.getHyper(), {e.idx(0)});
    Value bc1 = e.load(op.getHyper(), {e.idx(1)});
    Value bc2 = e.load(op.getHyper(), {e.idx(2)});
    Value clip = e.load(op.getClip(), ValueRange());
    Value lrDecay = e.mulf(lr, e.f32(weightDecay));
    Value param = t.buffers[0], grad = t.buffers[1], m = t.buffers[2],
          v = t.buffers[3];
    e.each(kPerThread, [&](Value k) {
      Value at = e.addi(t.firstElement, e.addi(e.muli(k, e.idx(kBlock)), tid));
      e.when(e.lt(at, t.size), [&] {
        // The order of mix-append-adamw's primitive form, in f32.
        Value g = e.mulf(e.load(grad, {at}), clip);
        Value p = e.load(param, {at});
        p = e.select(decays, e.subf(p, e.mulf(p, lrDecay)), p);
        Value m2 = e.addf(e.mulf(e.load(m, {at}), e.f32(beta1)),
                          e.mulf(g, e.f32(1.0 - beta1)));
        Value v2 = e.addf(e.mulf(e.load(v, {at}), e.f32(beta2)),
                          e.mulf(e.mulf(g, g), e.f32(1.0 - beta2)));
        Value mhat = e.divf(m2, bc1), vhat = e.divf(v2, bc2);
        Value denom =
            e.addf(math::SqrtOp::create(builder, e.loc, vhat), e.f32(epsilon));
        e.store(e.subf(p, e.mulf(lr, e.divf(mhat, denom))), param, {at});
        e.store(m2, m, {at});
        e.store(v2, v, {at});
      });
    });
  }
}

/// Rounds each row's f32 buffer into its bf16 one, the rows' elements
/// over one launch (or a few), before \p before.
void lowerRoundings(Operation *before, ArrayRef<SmallVector<Value>> all) {
  OpBuilder builder(before);
  Emitter e{builder, before->getLoc()};
  SmallVector<int64_t> sizes;
  for (ArrayRef<Value> row : all)
    sizes.push_back(numElements(row.front()));
  for (const Group &group : groups(all, sizes)) {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch = createLaunch(
        builder, e.loc, {group.chunks.blocks, 1, 1}, {kBlock, 1, 1}, {});
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value block = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    BlockTensor t = selectTensor(e, block, group.rows, group.chunks);
    e.each(kPerThread, [&](Value k) {
      Value at = e.addi(t.firstElement, e.addi(e.muli(k, e.idx(kBlock)), tid));
      e.when(e.lt(at, t.size),
             [&] { e.store(e.load(t.buffers[0], {at}), t.buffers[1], {at}); });
    });
  }
}

/// The roundings of the function's arguments (mixc --precision bf16: the
/// weights, rounded for the products at the start of the step) in one
/// launch for each run of them that only allocations and waits separate
/// (the arguments are read-only there, and nothing reads the roundings
/// before the run's end, where the launch goes).
void batchArgumentRoundings(func::FuncOp function) {
  if (function.isExternal())
    return;
  Block &entry = function.getBody().front();
  SmallVector<linalg::GenericOp> run;
  auto flush = [&] {
    if (run.size() > 1) {
      SmallVector<SmallVector<Value>> rows;
      for (linalg::GenericOp op : run)
        rows.push_back({op.getDpsInputs()[0], op.getDpsInits()[0]});
      lowerRoundings(run.back()->getNextNode(), rows);
      for (linalg::GenericOp op : run)
        op.erase();
    }
    run.clear();
  };
  for (Operation &op : entry) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (generic && isRoundingToBF16(generic)) {
      auto arg = dyn_cast<BlockArgument>(generic.getDpsInputs()[0]);
      if (arg && arg.getOwner() == &entry) {
        run.push_back(generic);
        continue;
      }
    }
    if (isPure(&op) || isa<gpu::WaitOp, gpu::AllocOp, memref::AllocOp>(op))
      continue;
    flush();
  }
  flush();
}

struct MultiTensorKernelsPass
    : mix::impl::MixMultiTensorKernelsPassBase<MultiTensorKernelsPass> {
  void runOnOperation() override {
    batchArgumentRoundings(getOperation());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<MultiTensorSumSquaresBuffersOp, MultiTensorAdamWBuffersOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto sum = dyn_cast<MultiTensorSumSquaresBuffersOp>(op))
        lowerSumSquares(sum);
      else
        lowerAdamW(cast<MultiTensorAdamWBuffersOp>(op));
      op->erase();
    }
  }
};
} // namespace
