//===- BlockReductions.cpp - A block of threads for each reduced row ------===//
//
// The generic mapping gives a reduction one thread for each element of its
// result, which then runs the whole reduction alone: a LayerNorm's mean
// over 768 features is 768 dependent steps of one thread, and a sum to a
// scalar is one thread for the whole tensor. Here a reduction whose
// innermost loop reduces becomes a launch with one block for each result
// element: the block's threads stride over the reduced elements (adjacent
// threads on adjacent elements, so loads coalesce), each folding its share
// into a register, then the warps combine their values by shuffles and
// the block combines its warps' through shared memory, and one thread
// folds the result into the output, which holds the reduction's initial
// value as in linalg; where that is a fill of the combiner's identity just
// before (a gradient's zeros), the result is stored instead and the fill
// goes. Two sibling reductions of one buffer, one over its rows and one
// over the other dimensions of its columns (a mixture's gate and input
// gradients from dX), share one launch and one pass over it.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXBLOCKREDUCTIONSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Threads of a warp, and the most threads a reduction's block gets.
constexpr int64_t kWarp = 32;
constexpr int64_t kMaxBlock = 256;
/// Column reductions: a block is 32 columns by kColumnGroups groups of
/// reduced elements; the reduced elements are split over blocks until the
/// launch has about kTargetBlocks blocks (two an H200 SM), as long as each
/// thread keeps kMinSteps elements.
constexpr int64_t kColumnGroups = 8;
constexpr int64_t kTargetBlocks = 264;
constexpr int64_t kMinSteps = 16;
constexpr int64_t kMaxGridY = 65535;

/// The kind of a combiner op, if it is one this pass can split: an
/// associative, commutative operation with an identity (float addition and
/// multiplication only where the op allows reassociation).
std::optional<arith::AtomicRMWKind> combinerKind(Operation *op) {
  auto reassoc = [&](auto fop) {
    return arith::bitEnumContainsAll(fop.getFastmath(),
                                     arith::FastMathFlags::reassoc);
  };
  if (auto add = dyn_cast<arith::AddFOp>(op))
    return reassoc(add) ? std::optional(arith::AtomicRMWKind::addf)
                        : std::nullopt;
  if (auto mul = dyn_cast<arith::MulFOp>(op))
    return reassoc(mul) ? std::optional(arith::AtomicRMWKind::mulf)
                        : std::nullopt;
  return llvm::TypeSwitch<Operation *, std::optional<arith::AtomicRMWKind>>(op)
      .Case([](arith::MaximumFOp) { return arith::AtomicRMWKind::maximumf; })
      .Case([](arith::MinimumFOp) { return arith::AtomicRMWKind::minimumf; })
      .Case([](arith::MaxNumFOp) { return arith::AtomicRMWKind::maxnumf; })
      .Case([](arith::MinNumFOp) { return arith::AtomicRMWKind::minnumf; })
      .Case([](arith::AddIOp) { return arith::AtomicRMWKind::addi; })
      .Case([](arith::MulIOp) { return arith::AtomicRMWKind::muli; })
      .Case([](arith::MaxSIOp) { return arith::AtomicRMWKind::maxs; })
      .Case([](arith::MinSIOp) { return arith::AtomicRMWKind::mins; })
      .Case([](arith::MaxUIOp) { return arith::AtomicRMWKind::maxu; })
      .Case([](arith::MinUIOp) { return arith::AtomicRMWKind::minu; })
      .Case([](arith::AndIOp) { return arith::AtomicRMWKind::andi; })
      .Case([](arith::OrIOp) { return arith::AtomicRMWKind::ori; })
      .Default([](Operation *) { return std::nullopt; });
}

/// A reduction this pass maps: the op, its combiner (the payload's only
/// use of the output's block argument, whose result is yielded) and the
/// combiner's other operand, the value folded in.
struct Reduction {
  linalg::GenericOp op;
  Operation *combiner;
  Value folded;
  arith::AtomicRMWKind kind;
  SmallVector<int64_t> sizes; // the static loop ranges
  SmallVector<unsigned> parallel, reduced;
  int64_t rows = 1, length = 1; // output elements, reduced elements each
  bool columns = false;         // the innermost loop is parallel
  /// The fill of the combiner's identity that the output held just before
  /// (its previous access): the result is stored over it, and it goes.
  linalg::FillOp identityFill;
  /// The elementwise op that wrote the input `produced` reads, run in the
  /// reduction's kernel at its own place (findProducer): each element is
  /// computed where the reduction reads it, and stored.
  linalg::GenericOp producer;
  OpOperand *produced = nullptr;
  unsigned producedResult = 0; // which of the producer's outputs
};

/// \p op's output's fill with \p kind's identity, if that fill is the
/// output's previous access (in between, only views, operations without
/// memory effects and operations on other buffers); null otherwise.
linalg::FillOp findIdentityFill(linalg::GenericOp op,
                                arith::AtomicRMWKind kind) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(
      findPreviousWriter(op, op.getDpsInits()[0]));
  Attribute value;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return nullptr;
  OpBuilder b(op);
  Type type = fill.getInputs()[0].getType();
  TypedAttr identity = arith::getIdentityValueAttr(kind, type, b, op.getLoc());
  // Any zero is addition's identity for this purpose: the sum of the
  // folded values alone differs only in the sign of a zero.
  auto f = dyn_cast<FloatAttr>(value);
  bool zeroForSum =
      kind == arith::AtomicRMWKind::addf && f && f.getValue().isZero();
  return value == identity || zeroForSum ? fill : nullptr;
}

/// Whether \p op is a reduction this pass maps, and how.
std::optional<Reduction> match(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  Reduction r;
  r.op = op;
  // Adjacent threads must read adjacent elements: along the reduced
  // innermost loop (rows), or along the parallel one (columns).
  r.columns = iterators.back() == utils::IteratorType::parallel;
  r.sizes = op.getStaticLoopRanges();
  if (llvm::any_of(r.sizes, ShapedType::isDynamic))
    return std::nullopt;
  for (auto [i, it] : llvm::enumerate(iterators)) {
    (it == utils::IteratorType::parallel ? r.parallel : r.reduced).push_back(i);
    (it == utils::IteratorType::parallel ? r.rows : r.length) *= r.sizes[i];
  }
  // Rows: long enough for a warp, few enough for a grid. Columns: any
  // reduction (the generic mapping would launch a kernel for each reduced
  // index from a host loop), with the tiles of the innermost loop in x and
  // the other output elements in y.
  if (r.length < (r.columns ? 2 : kWarp) || r.rows < 1 ||
      r.rows > (int64_t(1) << 31) - 1)
    return std::nullopt;
  if (r.columns && r.rows / r.sizes.back() > kMaxGridY)
    return std::nullopt;
  // The output is indexed by the parallel loops only.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  for (unsigned d : r.reduced)
    if (outMap.isFunctionOfDim(d))
      return std::nullopt;
  // One combiner over the output's block argument, whose result is yielded.
  Block *body = op.getBlock();
  BlockArgument out = op.getMatchingBlockArgument(init);
  Type type = out.getType();
  if (!type.isF32() && !type.isInteger(32))
    return std::nullopt; // what a 32-bit shuffle moves
  if (!out.hasOneUse())
    return std::nullopt;
  r.combiner = *out.getUsers().begin();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (r.combiner->getNumOperands() != 2 || r.combiner->getNumResults() != 1 ||
      yield.getOperand(0) != r.combiner->getResult(0) ||
      !r.combiner->getResult(0).hasOneUse())
    return std::nullopt;
  std::optional<arith::AtomicRMWKind> kind = combinerKind(r.combiner);
  if (!kind)
    return std::nullopt;
  r.kind = *kind;
  r.folded = r.combiner->getOperand(0) == out ? r.combiner->getOperand(1)
                                              : r.combiner->getOperand(0);
  r.identityFill = findIdentityFill(op, r.kind);
  return r;
}

/// Whether \p op is elementwise: every loop parallel, static ranges, a
/// pure payload that does not read its outputs, every output written
/// through a permutation (each element once).
bool isElementwise(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return false;
  if (!llvm::all_of(op.getBlock()->without_terminator(),
                    [](Operation &p) { return isPure(&p); }))
    return false;
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    return op.getMatchingIndexingMap(&init).isPermutation() &&
           !op.payloadUsesValueFromOperand(&init);
  });
}

/// Sets \p r's producer: the elementwise op that last wrote an input of
/// r's op (others may read it in between), when the reduction's kernel can
/// run it at the producer's place: the reduction reads that input whole,
/// each element once (a permutation), in the same element order as the
/// producer writes it (sameElementOrder); the producer reads nothing the
/// reduction's inputs or output hold and writes nothing else they hold;
/// and in between, nothing writes the reduction's inputs or touches its
/// output (but its identity fill, which goes, and its allocation, which
/// \p toHoist gets, to move before the producer).
void findProducer(Reduction &r, SmallVectorImpl<Operation *> &toHoist) {
  linalg::GenericOp op = r.op;
  Value outRoot = getBufferRoot(op.getDpsInits()[0]);
  if (!isDistinctBuffer(outRoot))
    return;
  SmallVector<Value> inRoots;
  for (Value in : op.getDpsInputs())
    if (isa<MemRefType>(in.getType()))
      inRoots.push_back(getBufferRoot(in));
  if (!llvm::all_of(inRoots, isDistinctBuffer))
    return;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType()) ||
        !op.getMatchingIndexingMap(input).isPermutation())
      continue;
    Value root = getBufferRoot(input->get());
    Operation *writer = nullptr;
    for (Operation *prev = op->getPrevNode(); prev && !writer;
         prev = prev->getPrevNode())
      if (!isa<ViewLikeOpInterface>(prev) && !isMemoryEffectFree(prev) &&
          !leavesBufferUnwritten(prev, root))
        writer = prev;
    auto producer = dyn_cast_or_null<linalg::GenericOp>(writer);
    if (!producer || !isElementwise(producer))
      continue;
    std::optional<unsigned> result;
    bool ok = true;
    for (OpOperand &init : producer.getDpsInitsMutable()) {
      Value written = getBufferRoot(init.get());
      if (written == root && sameElementOrder(init.get(), input->get()) &&
          !result)
        result = init.getOperandNumber() - producer.getNumDpsInputs();
      else
        ok &= written != outRoot && !llvm::is_contained(inRoots, written);
    }
    for (Value in : producer.getDpsInputs())
      ok &= !isa<MemRefType>(in.getType()) ||
            (getBufferRoot(in) != outRoot &&
             !llvm::is_contained(inRoots, getBufferRoot(in)));
    if (!result || !ok)
      continue;
    for (Operation *mid = producer->getNextNode(); ok && mid != op;
         mid = mid->getNextNode()) {
      if (isa<ViewLikeOpInterface>(mid) || isMemoryEffectFree(mid) ||
          mid == r.identityFill ||
          (isa<memref::AllocOp, gpu::AllocOp>(mid) &&
           mid->getResult(0) == outRoot))
        continue;
      ok &= leavesBufferAlone(mid, outRoot) &&
            llvm::all_of(inRoots, [&](Value in) {
              return leavesBufferUnwritten(mid, in);
            });
    }
    // What the reduction's operands are made by after the producer: views
    // and pure ops, and the output's allocation, which move before it.
    SmallVector<Operation *> hoist;
    std::function<bool(Value)> reachable = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != producer->getBlock() ||
          def->isBeforeInBlock(producer) || llvm::is_contained(hoist, def))
        return true;
      if (isa<memref::AllocOp, gpu::AllocOp>(def) && v == outRoot) {
        SmallVector<Operation *> group = getAllocation(def);
        for (Operation *g : group)
          for (Value operand : g->getOperands())
            if (Operation *d = operand.getDefiningOp();
                d && !llvm::is_contained(group, d) && !reachable(operand))
              return false;
        llvm::append_range(hoist, group);
        return true;
      }
      if (def->getNumRegions() ||
          !(isa<ViewLikeOpInterface, memref::TransposeOp>(def) ||
            isMemoryEffectFree(def)))
        return false;
      if (!llvm::all_of(def->getOperands(), reachable))
        return false;
      hoist.push_back(def);
      return true;
    };
    ok &= llvm::all_of(op->getOperands(), reachable);
    if (!ok)
      continue;
    r.producer = producer;
    r.produced = input;
    r.producedResult = *result;
    llvm::append_range(toHoist, hoist);
    return;
  }
}

/// Where \p r's launch goes: at its producer (findProducer) when its grid
/// of \p blocks blocks spreads the producer's elements over enough of
/// the device, or when they are few enough that its threads compute them
/// in about the steps they take to reduce anyway (a launch of their own
/// would cost more than they do); the allocation of the output moves
/// before it. Else at the reduction (no producer).
Operation *launchPoint(Reduction &r, int64_t blocks) {
  constexpr int64_t kMinProducerBlocks = 128;
  SmallVector<Operation *> hoist;
  if (blocks >= kMinProducerBlocks ||
      r.rows * r.length <= blocks * kMaxBlock * kMinSteps)
    findProducer(r, hoist);
  if (!r.producer)
    return r.op;
  llvm::sort(hoist,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : hoist)
    op->moveBefore(r.producer);
  return r.producer;
}

/// \p flat's row-major indices over the loops \p dims of \p r.
void delinearize(OpBuilder &b, Location loc, Value flat, const Reduction &r,
                 ArrayRef<unsigned> dims, SmallVectorImpl<Value> &ivs) {
  Value rest = flat;
  for (int64_t i = int64_t(dims.size()) - 1; i > 0; --i) {
    Value size = arith::ConstantIndexOp::create(b, loc, r.sizes[dims[i]]);
    ivs[dims[i]] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  if (!dims.empty())
    ivs[dims[0]] = rest;
}

/// The indices \p map gives for the loop indices \p ivs.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange ivs) {
  SmallVector<Value> out;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr e = map.getResult(i);
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      out.push_back(ivs[dim.getPosition()]);
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      out.push_back(arith::ConstantIndexOp::create(b, loc, c.getValue()));
    else
      out.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
  }
  return out;
}

/// combiner(a, b), as the payload's combiner computes it.
Value combine(OpBuilder &b, const Reduction &r, Value x, Value y) {
  IRMapping map;
  map.map(r.combiner->getOperand(0), x);
  map.map(r.combiner->getOperand(1), y);
  return b.clone(*r.combiner, map)->getResult(0);
}

/// Folds the values of a warp's lanes into every lane (xor butterfly).
Value warpReduce(OpBuilder &b, Location loc, const Reduction &r, Value v) {
  Value width = arith::ConstantIntOp::create(b, loc, kWarp, 32);
  for (int64_t offset = kWarp / 2; offset >= 1; offset /= 2) {
    Value o = arith::ConstantIntOp::create(b, loc, offset, 32);
    Value other =
        gpu::ShuffleOp::create(b, loc, v, o, width, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = combine(b, r, v, other);
  }
  return v;
}

/// The input elements loaded at one set of loop indices, by memref and
/// indexing map: reductions folded at the same indices (siblings) load an
/// element they share once.
using LoadCache = SmallVector<std::tuple<Value, AffineMap, Value>>;

/// The value of \p r's producer at the element the reduction reads at the
/// loop indices \p ivs: its inputs loaded, its payload run, every result
/// stored (each element is read once, so each is written once).
Value produce(OpBuilder &b, Location loc, const Reduction &r, ValueRange ivs) {
  linalg::GenericOp p = r.producer;
  OpOperand *written = &p.getDpsInitsMutable()[r.producedResult];
  linalg::GenericOp reduction = r.op;
  SmallVector<Value> at =
      applyMap(b, loc, reduction.getMatchingIndexingMap(r.produced), ivs);
  // Through reshapes: the same element of the buffer, in row-major order.
  auto readType = cast<MemRefType>(r.produced->get().getType());
  auto writtenType = cast<MemRefType>(written->get().getType());
  if (readType.getShape() != writtenType.getShape()) {
    Value flat = at.front();
    for (auto [index, size] :
         llvm::zip(ArrayRef(at).drop_front(), readType.getShape().drop_front()))
      flat = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, flat,
                                arith::ConstantIndexOp::create(b, loc, size)),
          index);
    at.assign(writtenType.getRank(), Value());
    for (int64_t d = writtenType.getRank() - 1; d > 0; --d) {
      Value size =
          arith::ConstantIndexOp::create(b, loc, writtenType.getDimSize(d));
      at[d] = arith::RemUIOp::create(b, loc, flat, size);
      flat = arith::DivUIOp::create(b, loc, flat, size);
    }
    at[0] = flat;
  }
  // The producer's loop indices: its output's map is a permutation.
  AffineMap outMap = p.getMatchingIndexingMap(written);
  SmallVector<Value> pivs(p.getNumLoops());
  for (unsigned i = 0; i < outMap.getNumResults(); ++i)
    pivs[outMap.getDimPosition(i)] = at[i];
  IRMapping map;
  for (OpOperand *input : p.getDpsInputOperands()) {
    BlockArgument arg = p.getMatchingBlockArgument(input);
    Value value = input->get();
    if (!arg.use_empty() && isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(
          b, loc, value,
          applyMap(b, loc, p.getMatchingIndexingMap(input), pivs));
    map.map(arg, value);
  }
  for (Operation &payload : p.getBlock()->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(payload)) {
      map.map(index.getResult(), pivs[index.getDim()]);
      continue;
    }
    b.clone(payload, map);
  }
  Operation *yield = p.getBlock()->getTerminator();
  for (OpOperand &init : p.getDpsInitsMutable())
    memref::StoreOp::create(
        b, loc,
        map.lookupOrDefault(
            yield->getOperand(init.getOperandNumber() - p.getNumDpsInputs())),
        init.get(), applyMap(b, loc, p.getMatchingIndexingMap(&init), pivs));
  return map.lookupOrDefault(yield->getOperand(r.producedResult));
}

/// combine(acc, the payload's value at the loop indices \p ivs): loads the
/// inputs there (or takes them from \p cache, or computes the produced
/// one) and runs the payload.
Value foldOne(OpBuilder &b, Location loc, const Reduction &r, ValueRange ivs,
              Value acc, LoadCache *cache = nullptr) {
  linalg::GenericOp op = r.op;
  IRMapping map;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (input == r.produced) {
      map.map(arg, produce(b, loc, r, ivs));
      continue;
    }
    if (arg.use_empty())
      continue;
    Value value = input->get();
    if (isa<MemRefType>(value.getType())) {
      AffineMap indexing = op.getMatchingIndexingMap(input);
      auto cached = cache
                        ? llvm::find_if(*cache,
                                        [&](const auto &entry) {
                                          return std::get<0>(entry) == value &&
                                                 std::get<1>(entry) == indexing;
                                        })
                        : nullptr;
      if (cache && cached != cache->end()) {
        value = std::get<2>(*cached);
      } else {
        Value memref = value;
        value = memref::LoadOp::create(b, loc, memref,
                                       applyMap(b, loc, indexing, ivs));
        if (cache)
          cache->emplace_back(memref, indexing, value);
      }
    }
    map.map(arg, value);
  }
  for (Operation &payload : op.getBlock()->without_terminator()) {
    if (&payload == r.combiner)
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(payload)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(payload, map);
  }
  return combine(b, r, acc, map.lookupOrDefault(r.folded));
}

/// Folds \p value into the output element at the parallel indices of
/// \p ivs, in the payload's operand order (stores it there, where the
/// output held the combiner's identity).
void foldIntoOutput(OpBuilder &b, Location loc, const Reduction &r,
                    ArrayRef<Value> ivs, Value value) {
  linalg::GenericOp op = r.op;
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Value> at(ivs);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (unsigned d : r.reduced)
    at[d] = zero; // the output does not depend on them
  SmallVector<Value> indices =
      applyMap(b, loc, op.getMatchingIndexingMap(init), at);
  if (r.identityFill) {
    // The output holds the identity: the result replaces it.
    memref::StoreOp::create(b, loc, value, init->get(), indices);
    return;
  }
  Value before = memref::LoadOp::create(b, loc, init->get(), indices);
  bool outFirst = r.combiner->getOperand(0) != r.folded;
  Value result =
      outFirst ? combine(b, r, before, value) : combine(b, r, value, before);
  memref::StoreOp::create(b, loc, result, init->get(), indices);
}

/// The fold of every thread's \p partial over a block of \p warps warps,
/// in every thread: shuffles within each warp, then (with more than one)
/// the warps' values through \p smem (one element a warp) after a barrier.
Value blockReduce(OpBuilder &b, Location loc, const Reduction &r, Value partial,
                  Value tid, int64_t warps, Value smem) {
  Type type = partial.getType();
  partial = warpReduce(b, loc, r, partial);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  if (warps > 1) {
    // Lane 0 of each warp leaves its warp's value in shared memory; after
    // the barrier every warp folds those (the first `warps` lanes load one
    // each), so all threads take part in the shuffles.
    Value warpSize = arith::ConstantIndexOp::create(b, loc, kWarp);
    Value lane = arith::RemUIOp::create(b, loc, tid, warpSize);
    Value warp = arith::DivUIOp::create(b, loc, tid, warpSize);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
    auto leader = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(leader.thenBlock());
      memref::StoreOp::create(b, loc, partial, smem, warp);
    }
    gpu::BarrierOp::create(b, loc);
    Value holds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                              arith::ConstantIndexOp::create(b, loc, warps));
    auto pick = scf::IfOp::create(b, loc, TypeRange{type}, holds,
                                  /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(pick.thenBlock());
      scf::YieldOp::create(
          b, loc, memref::LoadOp::create(b, loc, smem, lane).getResult());
      b.setInsertionPointToStart(pick.elseBlock());
      scf::YieldOp::create(b, loc,
                           arith::getIdentityValue(r.kind, type, b, loc));
    }
    partial = warpReduce(b, loc, r, pick.getResult(0));
  }
  return partial;
}

/// The innermost loop reduces: a block an output element. A sum to one
/// scalar (one block) takes kMaxBlock threads however few the elements:
/// idle threads cost it nothing, and it can then share a launch with an
/// independent neighbour of that block size (mix-merge-independent-kernels
/// merges different block sizes only where the smaller synchronizes
/// nothing): a balance loss's last sum rides in the next LayerNorm's.
void lowerRows(Reduction &r) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  OpBuilder b(launchPoint(r, r.rows));
  int64_t threads =
      r.rows == 1 ? kMaxBlock
                  : std::min<int64_t>(
                        kMaxBlock, llvm::divideCeil(r.length, kWarp) * kWarp);
  int64_t warps = threads / kWarp;
  Type type = r.folded.getType();
  SmallVector<Type> shared;
  if (warps > 1)
    shared.push_back(workgroupBuffer({warps}, type));
  gpu::LaunchOp launch =
      createLaunch(b, loc, {r.rows, 1, 1}, {threads, 1, 1}, shared);
  b.setInsertionPoint(&launch.getBody().front().back());
  Value row = launch.getBlockIds().x;
  Value tid = launch.getThreadIds().x;
  SmallVector<Value> ivs(r.sizes.size());
  delinearize(b, loc, row, r, r.parallel, ivs);
  Value identity = arith::getIdentityValue(r.kind, type, b, loc);

  // Each thread folds elements tid, tid + threads, ... into a register.
  auto loop = scf::ForOp::create(
      b, loc, tid, arith::ConstantIndexOp::create(b, loc, r.length),
      arith::ConstantIndexOp::create(b, loc, threads), ValueRange{identity});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> all(ivs);
    delinearize(b, loc, loop.getInductionVar(), r, r.reduced, all);
    scf::YieldOp::create(b, loc,
                         foldOne(b, loc, r, all, loop.getRegionIterArg(0)));
  }
  Value partial =
      blockReduce(b, loc, r, loop.getResult(0), tid, warps,
                  warps > 1 ? launch.getWorkgroupAttributions()[0] : nullptr);
  // Thread 0 folds the block's value into the output's.
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto store = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  foldIntoOutput(b, loc, r, ivs, partial);
  op.erase();
}

/// The innermost loop is parallel (a sum over rows for each column): a
/// block is 32 adjacent columns (the lanes) by kColumnGroups groups that
/// stride over the reduced elements; the reduced elements are split over
/// `splits` blocks in z when the tiles alone leave the device idle. Each
/// block's groups combine through workgroup memory; with one split, group
/// 0 folds the column's value into the output, else into a partial buffer
/// [splits][other output elements][columns] that the last block to finish
/// folds into the output, its threads striding over the output elements.
void lowerColumns(Reduction &r, ModuleOp module) {
  linalg::GenericOp op = r.op;
  Location loc = op.getLoc();
  Type type = r.folded.getType();
  unsigned columnDim = r.parallel.back();
  int64_t columns = r.sizes[columnDim];
  int64_t others = r.rows / columns;
  SmallVector<unsigned> otherDims(r.parallel.begin(),
                                  std::prev(r.parallel.end()));
  int64_t tiles = llvm::divideCeil(columns, kWarp);
  int64_t splits = std::clamp<int64_t>(
      llvm::divideCeil(kTargetBlocks, tiles * others), 1,
      std::max<int64_t>(1, r.length / (kColumnGroups * kMinSteps)));
  splits = std::min(splits, kMaxGridY);
  int64_t chunk = llvm::divideCeil(r.length, splits);
  splits = llvm::divideCeil(r.length, chunk); // no empty split
  OpBuilder b(launchPoint(r, tiles * others * splits));

  Value partials;
  SmallVector<Type> shared{workgroupBuffer({kColumnGroups, kWarp}, type)};
  if (splits > 1) {
    partials =
        allocOnDevice(b, loc, MemRefType::get({splits, others, columns}, type));
    shared.push_back(workgroupBuffer({1}, b.getI32Type()));
  }
  gpu::LaunchOp launch = createLaunch(b, loc, {tiles, others, splits},
                                      {kWarp, kColumnGroups, 1}, shared);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(&launch.getBody().front().back());
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
    Value column = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, c(kWarp)),
        tx);
    Value split = launch.getBlockIds().z;
    SmallVector<Value> ivs(r.sizes.size());
    delinearize(b, loc, launch.getBlockIds().y, r, otherDims, ivs);
    ivs[columnDim] = column;
    Value identity = arith::getIdentityValue(r.kind, type, b, loc);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         column, c(columns));
    auto guarded = scf::IfOp::create(b, loc, TypeRange{type}, inside,
                                     /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(guarded.thenBlock());
      Value begin = arith::MulIOp::create(b, loc, split, c(chunk));
      Value end = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, begin, c(chunk)), c(r.length));
      auto loop =
          scf::ForOp::create(b, loc, arith::AddIOp::create(b, loc, begin, ty),
                             end, c(kColumnGroups), ValueRange{identity});
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> all(ivs);
        delinearize(b, loc, loop.getInductionVar(), r, r.reduced, all);
        scf::YieldOp::create(b, loc,
                             foldOne(b, loc, r, all, loop.getRegionIterArg(0)));
      }
      scf::YieldOp::create(b, loc, loop.getResult(0));
      b.setInsertionPointToStart(guarded.elseBlock());
      scf::YieldOp::create(b, loc, identity);
    }
    // The groups' values meet in workgroup memory; group 0 folds them.
    Value smem = launch.getWorkgroupAttributions()[0];
    memref::StoreOp::create(b, loc, guarded.getResult(0), smem,
                            ValueRange{ty, tx});
    gpu::BarrierOp::create(b, loc);
    Value lead = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ty, c(0)),
        inside);
    auto leader = scf::IfOp::create(b, loc, lead, /*withElse=*/false);
    b.setInsertionPointToStart(leader.thenBlock());
    auto fold = scf::ForOp::create(b, loc, c(0), c(kColumnGroups), c(1),
                                   ValueRange{identity});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(fold.getBody());
      Value v = memref::LoadOp::create(b, loc, smem,
                                       ValueRange{fold.getInductionVar(), tx});
      scf::YieldOp::create(b, loc, combine(b, r, fold.getRegionIterArg(0), v));
    }
    if (splits == 1) {
      foldIntoOutput(b, loc, r, ivs, fold.getResult(0));
    } else {
      memref::StoreOp::create(
          b, loc, fold.getResult(0), partials,
          ValueRange{split, launch.getBlockIds().y, column});
      // The last block folds the splits' partial values, its threads
      // striding over the output elements.
      b.setInsertionPoint(&launch.getBody().front().back());
      Value counter = createBlockCounter(b, loc, module, "__mix_blocks_done");
      createLastBlockSection(b, loc, launch, counter,
                             launch.getWorkgroupAttributions()[1],
                             tiles * others * splits);
      Value tid = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, ty, c(kWarp)), tx);
      auto each = scf::ForOp::create(b, loc, tid, c(others * columns),
                                     c(kWarp * kColumnGroups));
      b.setInsertionPoint(each.getBody()->getTerminator());
      Value flat = each.getInductionVar();
      Value outColumn = arith::RemUIOp::create(b, loc, flat, c(columns));
      Value other = arith::DivUIOp::create(b, loc, flat, c(columns));
      SmallVector<Value> at(r.sizes.size());
      delinearize(b, loc, other, r, otherDims, at);
      at[columnDim] = outColumn;
      auto loop = scf::ForOp::create(b, loc, c(0), c(splits), c(1),
                                     ValueRange{identity});
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(loop.getBody());
        Value v = memref::LoadOp::create(
            b, loc, partials,
            ValueRange{loop.getInductionVar(), other, outColumn});
        scf::YieldOp::create(b, loc,
                             combine(b, r, loop.getRegionIterArg(0), v));
      }
      foldIntoOutput(b, loc, r, at, loop.getResult(0));
    }
  }
  if (splits > 1) {
    b.setInsertionPoint(op);
    deallocOnDevice(b, loc, partials);
  }
  op.erase();
}

/// Two reductions over the same loops that read one buffer through the
/// same map, one pass over it for both: `rows` reduces the innermost loop
/// only; `columns` keeps it and reduces the loops `outer` that rows keeps
/// but columns does not; both keep the loops `grid`. A multi-head
/// mixture's backward step has this form: from dX (H, T, N, d) the gate's
/// gradient sums over d (rows) and the input's over H and N (columns).
struct Siblings {
  Reduction rows, columns;
  SmallVector<unsigned> grid, outer;
  /// The later of the two, where the fused launch goes.
  Operation *late;
};

/// The elements of a workgroup buffer of 32-bit values one launch may hold
/// for the columns' accumulators (48 KiB, the static limit).
constexpr int64_t kMaxSharedElements = 12 * 1024;

/// Whether \p a and \p b are such siblings, and their roles.
std::optional<Siblings> matchSiblings(const Reduction &a, const Reduction &b) {
  if (a.columns == b.columns || a.op->getBlock() != b.op->getBlock() ||
      a.sizes != b.sizes)
    return std::nullopt;
  Siblings s;
  s.rows = a.columns ? b : a;
  s.columns = a.columns ? a : b;
  const Reduction &rows = s.rows, &columns = s.columns;
  linalg::GenericOp rowsOp = rows.op, columnsOp = columns.op;
  unsigned inner = rows.sizes.size() - 1;
  if (rows.reduced.size() != 1 || rows.reduced[0] != inner)
    return std::nullopt;
  for (unsigned d : rows.parallel)
    (llvm::is_contained(columns.parallel, d) ? s.grid : s.outer).push_back(d);
  SmallVector<unsigned> kept(s.grid);
  kept.push_back(inner);
  if (s.outer.empty() || columns.reduced != s.outer || columns.parallel != kept)
    return std::nullopt;
  int64_t length = rows.sizes[inner];
  if (length < kWarp || length > kMaxSharedElements ||
      columns.rows / length > (int64_t(1) << 31) - 1)
    return std::nullopt;

  // One buffer both read through the same map.
  auto readsShared = [&] {
    for (OpOperand *x : rowsOp.getDpsInputOperands())
      for (OpOperand *y : columnsOp.getDpsInputOperands())
        if (isa<MemRefType>(x->get().getType()) && x->get() == y->get() &&
            rowsOp.getMatchingIndexingMap(x) ==
                columnsOp.getMatchingIndexingMap(y))
          return true;
    return false;
  };
  if (!readsShared())
    return std::nullopt;

  // The earlier one moves to the later: nothing in between may write what
  // it reads, or access what it writes; neither reads the other's output.
  bool aFirst = a.op->isBeforeInBlock(b.op);
  linalg::GenericOp early = aFirst ? a.op : b.op, late = aFirst ? b.op : a.op;
  linalg::FillOp lateFill = aFirst ? b.identityFill : a.identityFill;
  s.late = late;
  Value earlyOut = getBufferRoot(early.getDpsInits()[0]);
  Value lateOut = getBufferRoot(late.getDpsInits()[0]);
  if (!isDistinctBuffer(earlyOut) || !isDistinctBuffer(lateOut) ||
      earlyOut == lateOut)
    return std::nullopt;
  SmallVector<Value> earlyIns;
  for (Value in : early.getDpsInputs()) {
    if (!isa<MemRefType>(in.getType()))
      continue;
    Value root = getBufferRoot(in);
    if (root == lateOut)
      return std::nullopt;
    earlyIns.push_back(root);
  }
  for (Value in : late.getDpsInputs())
    if (isa<MemRefType>(in.getType()) && getBufferRoot(in) == earlyOut)
      return std::nullopt;
  for (Operation *op = early->getNextNode(); op != late.getOperation();
       op = op->getNextNode()) {
    if (lateFill && op == lateFill.getOperation())
      continue;
    if (!leavesBufferAlone(op, earlyOut) ||
        llvm::any_of(earlyIns, [&](Value root) {
          return !leavesBufferUnwritten(op, root);
        }))
      return std::nullopt;
  }
  return s;
}

/// The product of \p r's loop ranges over \p dims.
int64_t extent(const Reduction &r, ArrayRef<unsigned> dims) {
  int64_t n = 1;
  for (unsigned d : dims)
    n *= r.sizes[d];
  return n;
}

/// One launch for both siblings: a block for each index of the loops both
/// keep, its threads striding over the innermost loop (adjacent threads
/// on adjacent elements). For each index of the outer loops in turn, each
/// thread folds its elements into the rows' register, which the block
/// then reduces to the rows' output element, and into the columns'
/// accumulators in workgroup memory, one a column, which only the thread
/// that owns the column touches; at the end each thread folds its columns
/// into the columns' output. The shared element is loaded once.
void lowerSiblings(const Siblings &s) {
  const Reduction &rows = s.rows, &columns = s.columns;
  Location loc = s.late->getLoc();
  OpBuilder b(s.late);
  unsigned inner = rows.sizes.size() - 1;
  int64_t length = rows.sizes[inner];
  int64_t threads =
      std::min<int64_t>(kMaxBlock, llvm::divideCeil(length, kWarp) * kWarp);
  int64_t warps = threads / kWarp;
  Type rowType = rows.folded.getType(), columnType = columns.folded.getType();
  SmallVector<Type> shared{workgroupBuffer({length}, columnType)};
  if (warps > 1)
    shared.push_back(workgroupBuffer({warps}, rowType));
  gpu::LaunchOp launch = createLaunch(b, loc, {extent(rows, s.grid), 1, 1},
                                      {threads, 1, 1}, shared);
  b.setInsertionPoint(&launch.getBody().front().back());
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value tid = launch.getThreadIds().x;
  Value accumulators = launch.getWorkgroupAttributions()[0];
  Value warpValues = warps > 1 ? launch.getWorkgroupAttributions()[1] : nullptr;
  SmallVector<Value> ivs(rows.sizes.size());
  delinearize(b, loc, launch.getBlockIds().x, rows, s.grid, ivs);
  Value rowIdentity = arith::getIdentityValue(rows.kind, rowType, b, loc);
  Value columnIdentity =
      arith::getIdentityValue(columns.kind, columnType, b, loc);

  // Runs \p body(b, column) for the columns tid, tid + threads, ...
  auto forEachColumn =
      [&](ValueRange init,
          function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>
              body) {
        auto loop =
            scf::ForOp::create(b, loc, tid, c(length), c(threads), init);
        OpBuilder::InsertionGuard guard(b);
        // Without values carried, the loop has its yield already.
        if (init.empty())
          b.setInsertionPoint(loop.getBody()->getTerminator());
        else
          b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> results =
            body(b, loop.getInductionVar(), loop.getRegionIterArgs());
        if (!init.empty())
          scf::YieldOp::create(b, loc, results);
        return loop;
      };
  forEachColumn({}, [&](OpBuilder &b, Value column, ValueRange) {
    memref::StoreOp::create(b, loc, columnIdentity, accumulators, column);
    return SmallVector<Value>{};
  });

  auto outer = scf::ForOp::create(b, loc, c(0), c(extent(rows, s.outer)), c(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(outer.getBody()->getTerminator());
    SmallVector<Value> at(ivs);
    delinearize(b, loc, outer.getInductionVar(), rows, s.outer, at);
    auto loop = forEachColumn(
        rowIdentity, [&](OpBuilder &b, Value column, ValueRange acc) {
          SmallVector<Value> all(at);
          all[inner] = column;
          LoadCache cache;
          Value row = foldOne(b, loc, rows, all, acc[0], &cache);
          Value before = memref::LoadOp::create(b, loc, accumulators, column);
          memref::StoreOp::create(b, loc,
                                  foldOne(b, loc, columns, all, before, &cache),
                                  accumulators, column);
          return SmallVector<Value>{row};
        });
    Value total =
        blockReduce(b, loc, rows, loop.getResult(0), tid, warps, warpValues);
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, c(0));
    auto store = scf::IfOp::create(b, loc, isFirst, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(store.thenBlock());
      foldIntoOutput(b, loc, rows, at, total);
    }
    // The next index's warps reuse warpValues.
    if (warps > 1)
      gpu::BarrierOp::create(b, loc);
  }
  forEachColumn({}, [&](OpBuilder &b, Value column, ValueRange) {
    SmallVector<Value> all(ivs);
    all[inner] = column;
    foldIntoOutput(b, loc, columns, all,
                   memref::LoadOp::create(b, loc, accumulators, column));
    return SmallVector<Value>{};
  });
  linalg::GenericOp(rows.op).erase();
  linalg::GenericOp(columns.op).erase();
}

struct MixBlockReductionsPass
    : mlir::mix::impl::MixBlockReductionsPassBase<MixBlockReductionsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) { runOnFunction(fn); });
  }

  void runOnFunction(func::FuncOp fn) {
    ModuleOp module = getOperation();
    std::vector<Reduction> found;
    fn.walk([&](linalg::GenericOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<Reduction> r = match(op))
        found.push_back(*r);
    });
    // Siblings first (each reduction in one pair at most), then the rest
    // alone.
    SmallVector<bool> paired(found.size(), false);
    std::vector<Siblings> pairs;
    for (size_t i = 0; i < found.size(); ++i)
      for (size_t j = i + 1; j < found.size() && !paired[i]; ++j)
        if (!paired[j])
          if (std::optional<Siblings> s = matchSiblings(found[i], found[j])) {
            pairs.push_back(*s);
            paired[i] = paired[j] = true;
          }
    for (Siblings &s : pairs) {
      linalg::FillOp fills[] = {s.rows.identityFill, s.columns.identityFill};
      lowerSiblings(s);
      for (linalg::FillOp fill : fills)
        if (fill)
          fill.erase();
    }
    for (auto [r, done] : llvm::zip(found, paired)) {
      if (done)
        continue;
      r.columns ? lowerColumns(r, module) : lowerRows(r);
      if (r.identityFill)
        r.identityFill.erase();
      if (r.producer)
        r.producer.erase();
    }
  }
};
} // namespace
