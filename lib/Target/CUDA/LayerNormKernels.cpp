//===- LayerNormKernels.cpp - A LayerNorm in one pass over each row -------===//
//
// The fused LayerNorm ops on buffers become kernels that keep a row's
// statistics in registers and workgroup memory:
//   forward:  a block of 256 threads a row: the row's sum, then the sum of
//             its centred squares (each a block reduction), then every
//             element normalized, scaled and shifted; thread 0 writes the
//             row's mean and 1/std for the backward pass;
//   backward: a block a chunk of rows computes, row after row, dinput from
//             the saved statistics and the row's two sums, sum(g) and
//             sum(g * xhat) with g = dresult * weight, and keeps in each
//             thread the chunk's column sums of dresult * xhat and dresult
//             for its columns (the weight's and bias's gradients), written
//             as a partial a chunk; a second launch folds the chunks in a
//             fixed order (no atomics: deterministic).
// Elementwise neighbours ride along: the residual add that writes the
// forward pass's input, the residual gradient's add that reads dinput, and
// the sum that writes dresult (a mixture layer's two input gradients).
// The arithmetic is in the order of the decomposed form (PrimitiveBuilder::
// layerNorm and its autodiff), in f32.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXLAYERNORMKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Threads a block; blocks (chunks of rows) of the backward pass, at most:
/// enough for several waves over an H200's 132 SMs, few enough that the
/// chunks' partial column sums are small.
constexpr int64_t kBlock = 256;
constexpr int64_t kMaxChunks = 1024;

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

/// The elementwise operation that writes \p input, which \p op reads,
/// just before it (the forward pass's residual add; the backward pass's sum
/// of a mixture layer's two input gradients): a `linalg.generic` whose
/// loops are all parallel, whose operands all have the input's shape with
/// identity maps, whose one output is the input buffer, and with nothing
/// in between that touches the input or the operation's operands but
/// their deallocations, which go to \p toMove (to be moved after the
/// LayerNorm). Null if there is none.
linalg::GenericOp findInputProducer(Operation *op, Value input,
                                    SmallVectorImpl<Operation *> &toMove) {
  Value root = getBufferRoot(input);
  auto generic =
      dyn_cast_or_null<linalg::GenericOp>(findPreviousWriter(op, input));
  if (!generic || !isDistinctBuffer(root))
    return nullptr;
  Block &body = generic.getRegion().front();
  if (!generic.hasPureBufferSemantics() ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !body.getArgument(generic.getNumDpsInputs()).use_empty() ||
      !llvm::all_of(generic->getOperands(),
                    [&](Value v) { return v.getType() == input.getType(); }))
    return nullptr;
  // The kernel stores the input in its first pass and computes it again
  // from the operands in the others: no operand may be the input's own
  // buffer (an add in place), and they must still hold what the generic
  // read when the LayerNorm runs. One freed in between (its last reader
  // was the generic) is freed after the LayerNorm instead.
  SmallVector<Value> roots;
  for (Value in : generic.getDpsInputs()) {
    Value inRoot = getBufferRoot(in);
    if (inRoot == root || !isDistinctBuffer(inRoot))
      return nullptr;
    roots.push_back(inRoot);
  }
  SmallVector<Operation *> moved;
  for (Operation *mid = generic->getNextNode(); mid != op;
       mid = mid->getNextNode()) {
    if (isa<ViewLikeOpInterface>(mid) || isMemoryEffectFree(mid) ||
        llvm::is_contained(moved, mid))
      continue;
    SmallVector<Operation *> deallocation = getDeallocation(mid, roots);
    if (!deallocation.empty()) {
      llvm::append_range(moved, deallocation);
      continue;
    }
    for (Value inRoot : roots)
      if (!leavesBufferAlone(mid, inRoot))
        return nullptr;
  }
  llvm::append_range(toMove, moved);
  return generic;
}

/// An elementwise producer that the kernel runs where it reads what the
/// producer writes (findInputProducer): its operands freed before the
/// LayerNorm \p op are freed after it, and an element is computed from
/// its operands, viewed as rows.
struct ProducedInput {
  linalg::GenericOp producer;
  SmallVector<Value> operands;

  ProducedInput(Emitter &e, Operation *op, linalg::GenericOp producer,
                ArrayRef<Operation *> deallocations)
      : producer(producer) {
    Operation *after = op;
    for (Operation *d : deallocations) {
      d->moveAfter(after);
      after = d;
    }
    if (producer)
      for (Value in : producer.getDpsInputs())
        operands.push_back(e.viewAs(in, 2));
  }

  /// The element (\p row, \p i): the producer's payload on its operands
  /// there, or a load of \p rows without a producer.
  Value at(Emitter &e, Value rows, Value row, Value i) {
    if (!producer)
      return e.load(rows, {row, i});
    IRMapping map;
    Block *body = &producer.getRegion().front();
    for (auto [arg, in] : llvm::zip(body->getArguments(), operands))
      map.map(arg, e.load(in, {row, i}));
    for (Operation &inner : body->without_terminator())
      e.b.clone(inner, map);
    return map.lookupOrDefault(body->getTerminator()->getOperand(0));
  }
};

void lowerForward(FusedLayerNormBuffersOp op) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  Value x = e.viewAs(op.getInput(), 2), y = e.viewAs(op.getResult(), 2);
  Value means = e.viewAs(op.getMean(), 1), rstds = e.viewAs(op.getRstd(), 1);
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rows = shape[0], width = shape[1];
  float eps = static_cast<float>(op.getEps().convertToDouble());
  // The input's producer (a residual add) runs in the kernel: the first
  // pass computes the input from the producer's operands and stores it
  // (what follows reads it), the others compute it again from them.
  SmallVector<Operation *> deallocations;
  linalg::GenericOp producer =
      findInputProducer(op, op.getInput(), deallocations);
  ProducedInput produced(e, op, producer, deallocations);
  auto inputAt = [&](Value row, Value i) { return produced.at(e, x, row, i); };

  gpu::LaunchOp launch = createRowLaunch(builder, e.loc, rows);
  builder.setInsertionPoint(&launch.getBody().front().back());
  Value row = launch.getBlockIds().x, tid = launch.getThreadIds().x;
  auto scratch = launch.getWorkgroupAttributions();
  Value inv = e.f32(1.0 / double(width));
  Value sum = rowShare(e, tid, width, [&](Value i) {
    Value v = inputAt(row, i);
    if (producer)
      e.store(v, x, {row, i});
    return v;
  });
  Value mean = e.mulf(e.blockSum(sum, tid, scratch[0], kBlock), inv);
  Value squares = rowShare(e, tid, width, [&](Value i) {
    Value c = e.subf(inputAt(row, i), mean);
    return e.mulf(c, c);
  });
  Value var = e.mulf(e.blockSum(squares, tid, scratch[1], kBlock), inv);
  Value rstd = math::RsqrtOp::create(builder, e.loc, e.addf(var, e.f32(eps)));
  e.loop(tid, e.idx(width), e.idx(kBlock), {}, [&](Value i, ValueRange) {
    Value c = e.subf(inputAt(row, i), mean);
    Value v = e.mulf(e.mulf(c, rstd), e.load(op.getWeight(), {i}));
    e.store(e.addf(v, e.load(op.getBias(), {i})), y, {row, i});
    return SmallVector<Value>();
  });
  e.when(e.eq(tid, e.idx(0)), [&] {
    e.store(mean, means, {row});
    e.store(rstd, rstds, {row});
  });
  if (producer)
    producer.erase();
}

/// Whether \p a and \p b are the same elements of one allocation in the
/// same order (sameElementOrder, through reshapes of an allocation).
bool sameElements(Value a, Value b) {
  auto ta = dyn_cast<MemRefType>(a.getType());
  return ta && ta.getLayout().isIdentity() && ta.hasStaticShape() &&
         sameElementOrder(a, b) &&
         isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(
             getReshapeRoot(a).getDefiningOp());
}

/// The elementwise operation that consumes \p op's dinput, if it can run
/// in the kernel's store of it (a residual gradient's add): a
/// `linalg.generic` whose loops are all parallel, with identity maps on
/// operands of dinput's type, that reads dinput and does not read its own
/// output (one, or two with a bf16 copy of the first: mixc --precision
/// bf16, mix-round-into-producers); dinput an allocation of its own that
/// nothing else reads; and
/// nothing in between that touches its operands, its output or dinput.
/// Its output may be dresult's buffer itself (the residual stream's
/// gradient, updated in place): the kernel reads each element of dresult
/// before the thread that owns it writes it. Null if there is none.
linalg::GenericOp findDinputConsumer(FusedLayerNormGradBuffersOp op) {
  Value dinput = op.getDinput();
  if (!isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(dinput.getDefiningOp()))
    return nullptr;
  linalg::GenericOp consumer;
  for (Operation *user : dinput.getUsers()) {
    if (user == op || isa<memref::DeallocOp, gpu::DeallocOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || consumer)
      return nullptr;
    consumer = generic;
  }
  auto dinputType = cast<MemRefType>(dinput.getType());
  auto likeDinput = [&](Value v) {
    return v.getType() == dinputType ||
           v.getType() == dinputType.clone(BFloat16Type::get(v.getContext()));
  };
  if (!consumer || consumer->getBlock() != op->getBlock() ||
      !op->isBeforeInBlock(consumer) || consumer.getNumDpsInits() > 2 ||
      !consumer.hasPureBufferSemantics() ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      !llvm::all_of(consumer.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !llvm::all_of(consumer.getDpsInputs(),
                    [&](Value v) { return v.getType() == dinputType; }) ||
      consumer.getDpsInits()[0].getType() != dinputType ||
      !llvm::all_of(consumer.getDpsInits(), likeDinput))
    return nullptr;
  Block &body = consumer.getRegion().front();
  if (llvm::any_of(body.getArguments().drop_front(consumer.getNumDpsInputs()),
                   [](BlockArgument a) { return !a.use_empty(); }) ||
      llvm::count(consumer.getDpsInputs(), dinput) != 1)
    return nullptr;
  // Every buffer the consumer touches: another buffer of its own than the
  // ones the LayerNorm reads, and left alone until the consumer.
  SmallVector<Value> read{op.getInput(), op.getDresult(), op.getMean(),
                          op.getRstd(), op.getWeight()};
  SmallVector<Value> touched;
  for (Value v : consumer->getOperands()) {
    Value root = getBufferRoot(v);
    if (v == dinput)
      continue;
    if (!isDistinctBuffer(root))
      return nullptr;
    if (llvm::is_contained(consumer.getDpsInits(), v))
      for (Value r : read)
        if (getBufferRoot(r) == root &&
            !(r == op.getDresult() && sameElements(v, r)))
          return nullptr;
    touched.push_back(root);
  }
  touched.push_back(dinput);
  for (Operation *mid = op->getNextNode(); mid != consumer;
       mid = mid->getNextNode()) {
    if (isa<ViewLikeOpInterface>(mid) || isMemoryEffectFree(mid))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(mid);
        dealloc &&
        !llvm::is_contained(touched, getBufferRoot(dealloc.getMemref())))
      continue;
    for (Value root : touched)
      if (!leavesBufferAlone(mid, root))
        return nullptr;
  }
  return consumer;
}

/// Whether every element of \p root's buffer is written, none read, by
/// \p op: a fill of all of it, or an elementwise `linalg.generic` with
/// identity maps that writes all of it and reads neither it (payload or
/// inputs) nor any other view of it.
bool overwritesWhole(Operation *op, Value root) {
  auto whole = [&](Value v) {
    return getBufferRoot(v) == root && sameElements(v, root);
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return whole(fill.getDpsInits()[0]);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      llvm::any_of(generic.getDpsInputs(),
                   [&](Value v) { return getBufferRoot(v) == root; }))
    return false;
  bool writes = false;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    if (getBufferRoot(init.get()) != root)
      continue;
    if (!whole(init.get()) || generic.payloadUsesValueFromOperand(&init))
      return false;
    writes = true;
  }
  return writes;
}

/// The elementwise operation that writes \p op's dresult just before it, if
/// the kernel can compute dresult from its operands where it reads it (a
/// mixture layer's sum of its gate's and its experts' input gradients): as
/// findInputProducer finds the forward pass's residual add, and besides,
/// dresult read by \p op alone: its buffer (an allocation) is next written
/// whole without being read (by \p consumer, the kernel's dinput consumer,
/// updating it in place; by a fill; by an elementwise op), or freed, or
/// never accessed again. The deallocations to move after \p op go to
/// \p toMove. Null if there is none.
linalg::GenericOp findDresultProducer(FusedLayerNormGradBuffersOp op,
                                      linalg::GenericOp consumer,
                                      SmallVectorImpl<Operation *> &toMove) {
  Value root = getBufferRoot(op.getDresult());
  if (!isa_and_nonnull<memref::AllocOp, gpu::AllocOp>(root.getDefiningOp()))
    return nullptr;
  SmallVector<Operation *> moved;
  linalg::GenericOp producer = findInputProducer(op, op.getDresult(), moved);
  if (!producer || producer.getNumDpsInits() != 1)
    return nullptr;
  // The kernel reads the producer's operands where it read dresult: the
  // consumer's stores must not reach them.
  if (consumer)
    for (Value out : consumer.getDpsInits())
      for (Value in : producer.getDpsInputs())
        if (getBufferRoot(out) == getBufferRoot(in))
          return nullptr;
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (isa<ViewLikeOpInterface>(next) || isMemoryEffectFree(next) ||
        leavesBufferAlone(next, root))
      continue;
    if (!getDeallocation(next, {root}).empty())
      break;
    if ((next == consumer.getOperation() || isa<linalg::FillOp>(next) ||
         isa<linalg::GenericOp>(next)) &&
        overwritesWhole(next, root))
      break;
    return nullptr;
  }
  llvm::append_range(toMove, moved);
  return producer;
}

void lowerBackward(FusedLayerNormGradBuffersOp op,
                   SmallVectorImpl<Operation *> &dinputToErase) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  Type f32 = builder.getF32Type();
  Value x = e.viewAs(op.getInput(), 2), dy = e.viewAs(op.getDresult(), 2);
  Value means = e.viewAs(op.getMean(), 1), rstds = e.viewAs(op.getRstd(), 1);
  Value w = op.getWeight();
  ArrayRef<int64_t> shape = cast<MemRefType>(x.getType()).getShape();
  int64_t rows = shape[0], width = shape[1];
  auto xhatAt = [&](Value row, Value i, Value mean, Value rstd) {
    return e.mulf(e.subf(e.load(x, {row, i}), mean), rstd);
  };
  // dinput's consumer (the residual gradient's add) runs in the kernel's
  // store: its output is written instead of dinput, which is not.
  linalg::GenericOp consumer = findDinputConsumer(op);
  // dresult's producer (the sum of a mixture layer's input gradients) runs
  // where the kernel reads dresult, which nothing else reads: the
  // producer's operands are read instead, and it goes. Its operands freed
  // before the LayerNorm are freed after it.
  SmallVector<Operation *> deallocations;
  linalg::GenericOp producer = findDresultProducer(op, consumer, deallocations);
  ProducedInput produced(e, op, producer, deallocations);
  auto dyAt = [&](Value row, Value i) { return produced.at(e, dy, row, i); };
  SmallVector<Value> dx;
  if (consumer)
    for (Value out : consumer.getDpsInits())
      dx.push_back(e.viewAs(out, 2));
  else
    dx.push_back(e.viewAs(op.getDinput(), 2));
  SmallVector<Value> consumerOperands;
  if (consumer)
    for (Value in : consumer.getDpsInputs())
      consumerOperands.push_back(in == op.getDinput() ? in : e.viewAs(in, 2));
  auto storeDinput = [&](Value d, Value row, Value i) {
    SmallVector<Value> values{d};
    if (consumer) {
      IRMapping map;
      Block *body = &consumer.getRegion().front();
      for (auto [arg, in] : llvm::zip(body->getArguments(), consumerOperands))
        map.map(arg, in == op.getDinput() ? d : e.load(in, {row, i}));
      for (Operation &inner : body->without_terminator())
        builder.clone(inner, map);
      values.clear();
      for (Value v : body->getTerminator()->getOperands())
        values.push_back(map.lookupOrDefault(v));
    }
    for (auto [v, out] : llvm::zip(values, dx))
      e.store(v, out, {row, i});
  };

  // A block a chunk of rows, one row after another: each row's dinput,
  // and the chunk's partial column sums of dweight and dbias, which each
  // thread keeps for its columns (tid, tid + kBlock, ...: the same ones in
  // every row) in registers, so dresult and the input are read once.
  int64_t perChunk = llvm::divideCeil(rows, std::min(rows, kMaxChunks));
  int64_t chunks = llvm::divideCeil(rows, perChunk);
  int64_t steps = llvm::divideCeil(width, kBlock); // columns a thread
  auto partialType = MemRefType::get({chunks, width}, f32);
  Value partialW = allocOnDevice(builder, e.loc, partialType);
  Value partialB = allocOnDevice(builder, e.loc, partialType);
  {
    OpBuilder::InsertionGuard guard(builder);
    gpu::LaunchOp launch = createRowLaunch(builder, e.loc, chunks);
    builder.setInsertionPoint(&launch.getBody().front().back());
    Value chunk = launch.getBlockIds().x, tid = launch.getThreadIds().x;
    auto scratch = launch.getWorkgroupAttributions();
    Value first = e.muli(chunk, e.idx(perChunk));
    Value last = e.mini(e.addi(first, e.idx(perChunk)), e.idx(rows));
    SmallVector<Value> zeros(2 * steps, e.f32(0.0));
    // The thread's k-th column and whether it is one.
    auto columnAt = [&](int64_t k) { return e.addi(tid, e.idx(k * kBlock)); };
    SmallVector<Value> sums =
        e.loop(first, last, e.idx(1), zeros, [&](Value row, ValueRange acc) {
          Value mean = e.load(means, {row}), rstd = e.load(rstds, {row});
          auto gAt = [&](Value i) {
            return e.mulf(dyAt(row, i), e.load(w, {i}));
          };
          SmallVector<Value> shares =
              e.loop(tid, e.idx(width), e.idx(kBlock), {e.f32(0.0), e.f32(0.0)},
                     [&](Value i, ValueRange s) {
                       Value g = gAt(i);
                       return SmallVector<Value>{
                           e.addf(s[0], g),
                           e.addf(s[1], e.mulf(g, xhatAt(row, i, mean, rstd)))};
                     });
          Value inv = e.f32(1.0 / double(width));
          Value meanG =
              e.mulf(e.blockSum(shares[0], tid, scratch[0], kBlock), inv);
          Value meanGX =
              e.mulf(e.blockSum(shares[1], tid, scratch[1], kBlock), inv);
          SmallVector<Value> next;
          for (int64_t k = 0; k < steps; ++k) {
            Value i = columnAt(k);
            auto inside = scf::IfOp::create(builder, e.loc, TypeRange{f32, f32},
                                            e.lt(i, e.idx(width)),
                                            /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard inner(builder);
              builder.setInsertionPointToStart(inside.thenBlock());
              // dresult's element is read before dinput's store, which
              // may overwrite it (a residual gradient updated in place).
              Value g = dyAt(row, i);
              Value xhat = xhatAt(row, i, mean, rstd);
              Value centred = e.subf(e.mulf(g, e.load(w, {i})), meanG);
              Value d = e.subf(centred, e.mulf(xhat, meanGX));
              storeDinput(e.mulf(d, rstd), row, i);
              scf::YieldOp::create(
                  builder, e.loc,
                  ValueRange{e.addf(acc[2 * k], e.mulf(g, xhat)),
                             e.addf(acc[2 * k + 1], g)});
              builder.setInsertionPointToStart(inside.elseBlock());
              scf::YieldOp::create(builder, e.loc,
                                   ValueRange{acc[2 * k], acc[2 * k + 1]});
            }
            next.append({inside.getResult(0), inside.getResult(1)});
          }
          return next;
        });
    for (int64_t k = 0; k < steps; ++k) {
      Value i = columnAt(k);
      e.when(e.lt(i, e.idx(width)), [&] {
        e.store(sums[2 * k], partialW, {chunk, i});
        e.store(sums[2 * k + 1], partialB, {chunk, i});
      });
    }
  }
  // dweight and dbias: the chunks' partial sums added in a fixed order (no
  // atomics: deterministic).
  int64_t tiles = llvm::divideCeil(width, kBlock);
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
  if (producer)
    producer.erase();
  if (consumer) {
    // dinput is never written now: its buffer goes, with the waits of its
    // allocation and deallocation on the device.
    Value dinput = op.getDinput();
    consumer.erase();
    for (Operation *user : llvm::make_early_inc_range(dinput.getUsers())) {
      if (!isa<memref::DeallocOp, gpu::DeallocOp>(user))
        continue;
      SmallVector<Operation *> group = getDeallocation(user, {dinput});
      if (group.empty())
        group.push_back(user); // a gpu.dealloc of another form
      for (Operation *d : llvm::reverse(group))
        d->erase();
    }
    // The op itself is erased by the caller, then the allocation.
    llvm::append_range(dinputToErase, getAllocation(dinput.getDefiningOp()));
  }
}

struct LayerNormKernelsPass
    : mix::impl::MixLayerNormKernelsPassBase<LayerNormKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FusedLayerNormBuffersOp, FusedLayerNormGradBuffersOp>(op))
        ops.push_back(op);
    });
    SmallVector<Operation *> dead;
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<FusedLayerNormBuffersOp>(op))
        lowerForward(fwd);
      else
        lowerBackward(cast<FusedLayerNormGradBuffersOp>(op), dead);
      op->erase();
    }
    for (Operation *alloc : dead)
      alloc->erase();
  }
};
} // namespace
