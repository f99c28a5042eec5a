//===- FlashAttentionKernels.cpp - Attention without its score matrix -----===//
//
// The fused attention ops on buffers become kernels that hold one tile of
// keys (or queries) in workgroup memory at a time (FlashAttention's online
// softmax): memory grows linearly in the sequence length, and the scores
// never leave the block that computes them.
//
// Layout: `qkv` is (B,S,3d) with q, k and v of head h in columns
// [h dh, (h+1) dh) of their third; `out` is (B,S,d) with the heads merged
// the same way; `lse` is (B,heads,S); prefixes are (P,heads,T_p,dh), and
// batch row b belongs to stream b / (B/P).
//
// Each kernel is a grid of (tiles of 64 rows, heads, batch rows or
// streams), a thread a row. A row's vectors (q, its accumulators) live in
// the thread's private memory; the tiles they meet are loaded by the whole
// block, adjacent threads reading adjacent elements.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"
#include "WarpMma.h"

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXFLASHATTENTIONKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Rows (queries or keys) a block: 16 a warp, the rows of the tensor
/// cores' products.
constexpr int64_t kRows = 64;
constexpr int64_t kThreads = kRows / 16 * 32;
/// Floats of each workgroup tile: 16 KiB, two tiles a kernel.
constexpr int64_t kTileFloats = 4096;

/// Rows of a workgroup tile of vectors of \p paddedDim floats: up to 64, a
/// power of two, at least \p depth (the products' k).
int64_t tileRows(int64_t paddedDim, int64_t depth) {
  int64_t rows = kRows;
  while (rows > depth && rows * paddedDim > kTileFloats)
    rows /= 2;
  return rows;
}

/// A key (or query) row's vectors: element `c` of part `part` (0 = the
/// key, 1 = the value; or 0 = q, 1 = dout) of the row `row`, which the
/// caller keeps in bounds.
using RowLoad = std::function<Value(Emitter &, Value row, Value c, int part)>;
/// An element of a matrix held in memory, (row, column) kept in bounds by
/// the caller.
using ElementLoad = std::function<Value(Value row, Value c)>;

/// What every kernel of one attention knows: its sizes and the current
/// block's (batch row, head) and the columns of its head.
struct Attention {
  AttentionShape shape;
  /// The head's width rounded up to the products' k (zero columns).
  int64_t padded;
  int64_t tile;
  double scale;
  OperandRounding rounding;
  Value qkv, prefixK, prefixV;

  /// Column of element `c` of part `part` (0 q, 1 k, 2 v) of head `h`.
  Value column(Emitter &e, Value h, int part, Value c) const {
    return e.addi(e.muli(h, e.idx(shape.headDim)),
                  e.addi(e.idx(part * shape.width), c));
  }
  /// Element `c` of part `part` of row `row` of batch row `batch`.
  Value qkvAt(Emitter &e, Value batch, Value row, Value h, int part,
              Value c) const {
    return e.load(qkv, {batch, row, column(e, h, part, c)});
  }
  /// Keys and values of the real positions of batch row `batch`.
  RowLoad realKeys(Value batch, Value h) const {
    return [this, batch, h](Emitter &e, Value row, Value c, int part) {
      return qkvAt(e, batch, row, h, part + 1, c);
    };
  }
  /// Keys and values of the prefix of stream `stream`.
  RowLoad prefixKeys(Value stream, Value h) const {
    return [this, stream, h](Emitter &e, Value row, Value c, int part) {
      return e.load(part == 0 ? prefixK : prefixV, {stream, h, row, c});
    };
  }
  Value streamOf(Emitter &e, Value batch) const {
    return e.divi(batch, e.idx(shape.batch / shape.streams));
  }
  /// Column `c` of head `h` in a (B, S, d) tensor.
  Value headColumn(Emitter &e, Value h, Value c) const {
    return e.addi(e.muli(h, e.idx(shape.headDim)), c);
  }
};

/// Loads rows [first, first + tile) of the two parts of \p rows into the
/// workgroup tiles \p part0 and \p part1 (tile x padded), rounded as the
/// products' operands, rows at or past \p end and columns past the head
/// as zeros, between barriers; every thread of the block calls it. Part 0
/// is multiplied by \p scale0 first.
void loadTile(Emitter &e, WarpMma &m, const Attention &a, Value tid,
              Value first, Value end, const RowLoad &rows, Value part0,
              Value part1, Value scale0) {
  int64_t dp = a.padded, dh = a.shape.headDim;
  e.barrier();
  e.loop(tid, e.idx(a.tile * dp), e.idx(kThreads), {},
         [&](Value flat, ValueRange) {
           Value r = e.divi(flat, e.idx(dp)), c = e.remi(flat, e.idx(dp));
           Value row = e.addi(first, r);
           Value inside = e.andi(e.lt(row, end), e.lt(c, e.idx(dh)));
           Value cr = e.mini(row, e.subi(end, e.idx(1)));
           Value cc = e.mini(c, e.idx(dh - 1));
           Value zero = e.f32(0.0);
           Value v0 = m.round(e.mulf(rows(e, cr, cc, 0), scale0));
           Value v1 = m.round(rows(e, cr, cc, 1));
           e.store(e.select(inside, v0, zero), part0, {r, c});
           e.store(e.select(inside, v1, zero), part1, {r, c});
           return SmallVector<Value>();
         });
  e.barrier();
}

/// The blocks' common frame: a launch of (tiles of 64 rows of `rows`,
/// heads, `third`) with four warps of 16 rows, the thread's lane and its
/// warp's first row.
struct Frame {
  gpu::LaunchOp launch;
  Value tid, lane, first, warpFirst, h, z;
};

Frame openFrame(Emitter &e, int64_t rows, int64_t heads, int64_t third,
                TypeRange shared) {
  Frame f;
  f.launch = createLaunch(e.b, e.loc,
                          {llvm::divideCeilSigned(rows, kRows), heads, third},
                          {kThreads, 1, 1}, shared, {});
  e.b.setInsertionPoint(&f.launch.getBody().front().back());
  f.tid = f.launch.getThreadIds().x;
  f.lane = e.remi(f.tid, e.idx(32));
  f.first = e.muli(f.launch.getBlockIds().x, e.idx(kRows));
  f.warpFirst = e.addi(f.first, e.muli(e.divi(f.tid, e.idx(32)), e.idx(16)));
  f.h = f.launch.getBlockIds().y;
  f.z = f.launch.getBlockIds().z;
  return f;
}

/// The A fragments of the warp's 16 rows of a (rows x dh) matrix, one
/// for each k columns of the padded head: \p at(row, c) times \p scale,
/// rounded; rows past the end repeat the last (their results are never
/// stored), columns past the head are zeros.
SmallVector<WarpMma::AFrag>
loadRowFragments(Emitter &e, WarpMma &m, const Attention &a, Value warpFirst,
                 int64_t rows, const ElementLoad &at, double scale) {
  int64_t dh = a.shape.headDim;
  SmallVector<WarpMma::AFrag> frags;
  for (int64_t s = 0; s < a.padded / m.k; ++s) {
    WarpMma::AFrag frag;
    for (int v = 0; v < m.aValues(); ++v) {
      Value row = e.mini(e.addi(warpFirst, m.aRow(v)), e.idx(rows - 1));
      Value c = e.addi(e.idx(m.k * s), m.aCol(v));
      Value x = at(row, e.mini(c, e.idx(dh - 1)));
      if (scale != 1.0)
        x = e.mulf(x, e.f32(scale));
      frag.push_back(e.select(e.lt(c, e.idx(dh)), m.round(x), e.f32(0.0)));
    }
    frags.push_back(frag);
  }
  return frags;
}

/// The warp's 16 x 8 product of its row fragments \p rows with rows
/// [8j, 8j + 8) of the workgroup tile \p tile, transposed: the scores of
/// the warp's rows against 8 keys (or queries) of the tile.
WarpMma::Acc productWithRows(Emitter &e, WarpMma &m,
                             ArrayRef<WarpMma::AFrag> rows, Value tile,
                             int64_t j) {
  WarpMma::Acc acc = m.zero();
  Value r = e.addi(e.idx(8 * j), m.g);
  for (auto [s, frag] : llvm::enumerate(rows)) {
    WarpMma::BFrag b;
    for (int v = 0; v < m.bValues(); ++v)
      b.push_back(e.load(tile, {r, e.addi(e.idx(m.k * s), m.bRow(v))}));
    acc = m.mma(frag, b, acc);
  }
  return acc;
}

/// Adds to each accumulator `accs[u]` (columns [8u, 8u + 8) of the head)
/// the product of the 16 x k matrix that \p left holds (the accumulators
/// of k / 8 successive products with 8 rows of the workgroup tile each,
/// rows [k j, k j + k) of it) with those rows of \p tile.
void accumulateTileRows(Emitter &e, WarpMma &m, ArrayRef<WarpMma::Acc> left,
                        Value tile, int64_t j,
                        MutableArrayRef<WarpMma::Acc> accs) {
  WarpMma::AFrag a = m.accAsA(left);
  for (auto [u, acc] : llvm::enumerate(accs)) {
    Value c = e.addi(e.idx(8 * u), m.g);
    WarpMma::BFrag b;
    for (int v = 0; v < m.bValues(); ++v)
      b.push_back(e.load(tile, {e.addi(e.idx(m.k * j), m.bRow(v)), c}));
    acc = m.mma(a, b, acc);
  }
}

/// Accumulators of products with 8 rows of a workgroup tile each, gathered
/// until they make one k-deep left operand for accumulateTileRows.
struct PendingRows {
  SmallVector<WarpMma::Acc, 2> accs;
  int64_t next = 0;
  /// Adds \p acc (rows [8i, 8i + 8) of \p tile, i the count so far) and,
  /// once there are k / 8, their product with the tile's rows into \p out.
  void add(Emitter &e, WarpMma &m, const WarpMma::Acc &acc, Value tile,
           MutableArrayRef<WarpMma::Acc> out) {
    accs.push_back(acc);
    if (static_cast<int64_t>(accs.size()) < m.k / 8)
      return;
    accumulateTileRows(e, m, accs, tile, next++, out);
    accs.clear();
  }
};

/// Accumulators as the values a loop carries, and back.
void flatten(ArrayRef<WarpMma::Acc> accs, SmallVectorImpl<Value> &out) {
  for (const WarpMma::Acc &acc : accs)
    out.append(acc.begin(), acc.end());
}
SmallVector<WarpMma::Acc> unflatten(ValueRange values, int64_t count) {
  SmallVector<WarpMma::Acc> accs(count);
  for (int64_t u = 0; u < count; ++u)
    for (int v = 0; v < 4; ++v)
      accs[u][v] = values[4 * u + v];
  return accs;
}

/// Stores, for each element of the accumulators \p accs (columns [8u,
/// 8u + 8) of the head) whose row (\p rowOf the element's i = v / 2) is
/// below \p rows and whose column is in the head, \p store(row, c, value).
void storeRows(Emitter &e, WarpMma &m, const Attention &a,
               ArrayRef<WarpMma::Acc> accs, ArrayRef<Value> rowOf, int64_t rows,
               llvm::function_ref<void(Value row, Value c, Value v)> store) {
  for (size_t u = 0; u < accs.size(); ++u)
    for (int v = 0; v < 4; ++v) {
      Value row = rowOf[v / 2];
      Value c = e.addi(e.idx(8 * u), m.accCol(v));
      e.when(e.andi(e.lt(row, e.idx(rows)), e.lt(c, e.idx(a.shape.headDim))),
             [&] { store(row, c, accs[u][v]); });
    }
}

/// The lane's two rows among its warp's 16 (accumulator rows g, g + 8).
std::array<Value, 2> laneRows(Emitter &e, WarpMma &m, Value warpFirst) {
  return {e.addi(warpFirst, m.accRow(0)), e.addi(warpFirst, m.accRow(2))};
}

/// The frame of the kernels whose warps hold 16 queries each (forward,
/// dQ): tiles of keys and values in workgroup memory, the lane's two query
/// rows, and q (scaled) as the products' left operand.
struct QueryBlock {
  Frame f;
  Value keys, values;
  WarpMma m;
  std::array<Value, 2> rowOf;
  SmallVector<WarpMma::AFrag> q;

  static Frame open(Emitter &e, const Attention &a) {
    Type f32 = e.b.getF32Type();
    return openFrame(e, a.shape.seq, a.shape.heads, a.shape.batch,
                     {workgroupBuffer({a.tile, a.padded}, f32),
                      workgroupBuffer({a.tile, a.padded}, f32)});
  }
  QueryBlock(Emitter &e, const Attention &a)
      : f(open(e, a)), keys(f.launch.getWorkgroupAttributions()[0]),
        values(f.launch.getWorkgroupAttributions()[1]),
        m(e, a.rounding, f.lane), rowOf(laneRows(e, m, f.warpFirst)) {
    Value batch = f.z, h = f.h;
    q = loadRowFragments(
        e, m, a, f.warpFirst, a.shape.seq,
        [&](Value row, Value c) { return a.qkvAt(e, batch, row, h, 0, c); },
        a.scale);
  }
};

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

void lowerForward(FlashAttentionBuffersOp op, const Attention &a) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  int64_t dp = a.padded, tile = a.tile, seq = a.shape.seq;
  int64_t steps = dp / 8, groups = tile / 8;
  QueryBlock qb(e, a);
  Frame &f = qb.f;
  WarpMma &m = qb.m;
  Value batch = f.z, one = e.f32(1.0);

  // One tile of keys [t0, t0 + tile) below `end`: the online softmax
  // update of (max, sum, output) for each of the lane's two rows. The sums
  // are the lane's share (its columns), added over the group at the end.
  auto tileStep = [&](Value t0, Value end, bool causal, ValueRange carried,
                      const RowLoad &rows) -> SmallVector<Value> {
    loadTile(e, m, a, f.tid, t0, end, rows, qb.keys, qb.values, one);
    SmallVector<WarpMma::Acc> scores;
    Value tileMax[2] = {e.negInf(), e.negInf()};
    for (int64_t j = 0; j < groups; ++j) {
      WarpMma::Acc s = productWithRows(e, m, qb.q, qb.keys, j);
      for (int v = 0; v < 4; ++v) {
        Value key = e.addi(t0, e.addi(e.idx(8 * j), m.accCol(v)));
        Value ok = e.lt(key, end);
        if (causal)
          ok = e.andi(ok, e.le(key, qb.rowOf[v / 2]));
        s[v] = e.select(ok, s[v], e.negInf());
        tileMax[v / 2] = e.maxf(tileMax[v / 2], s[v]);
      }
      scores.push_back(s);
    }
    SmallVector<Value> next(6);
    Value base[2], corr[2], rowSum[2];
    for (int i = 0; i < 2; ++i) {
      Value mOld = carried[i];
      Value mNew = e.maxf(mOld, m.quadMax(tileMax[i]));
      // Nothing seen yet: keep the exponents finite (every term is zero).
      base[i] = e.select(e.isNegInf(mNew), e.f32(0.0), mNew);
      corr[i] = e.exp(e.subf(mOld, base[i]));
      rowSum[i] = e.f32(0.0);
      next[i] = mNew;
    }
    for (WarpMma::Acc &s : scores)
      for (int v = 0; v < 4; ++v) {
        s[v] = e.exp(e.subf(s[v], base[v / 2]));
        rowSum[v / 2] = e.addf(rowSum[v / 2], s[v]);
      }
    for (int i = 0; i < 2; ++i)
      next[2 + i] = e.addf(e.mulf(carried[2 + i], corr[i]), rowSum[i]);
    SmallVector<WarpMma::Acc> out = unflatten(carried.drop_front(4), steps);
    for (WarpMma::Acc &acc : out)
      for (int v = 0; v < 4; ++v)
        acc[v] = e.mulf(acc[v], corr[v / 2]);
    PendingRows probs;
    for (const WarpMma::Acc &p : scores)
      probs.add(e, m, p, qb.values, out);
    next.resize(4);
    flatten(out, next);
    return next;
  };

  SmallVector<Value> carried{e.negInf(), e.negInf(), e.f32(0.0), e.f32(0.0)};
  flatten(SmallVector<WarpMma::Acc>(steps, m.zero()), carried);
  if (a.prefixK) {
    Value end = e.idx(a.shape.prefix);
    RowLoad rows = a.prefixKeys(a.streamOf(e, batch), f.h);
    carried = e.loop(e.idx(0), end, e.idx(tile), carried,
                     [&](Value t0, ValueRange c) {
                       return tileStep(t0, end, /*causal=*/false, c, rows);
                     });
  }
  // The real keys up to the block's last query.
  Value end = e.mini(e.addi(f.first, e.idx(kRows)), e.idx(seq));
  RowLoad rows = a.realKeys(batch, f.h);
  carried =
      e.loop(e.idx(0), end, e.idx(tile), carried, [&](Value t0, ValueRange c) {
        return tileStep(t0, end, /*causal=*/true, c, rows);
      });

  // Every query sees itself: the sums are positive.
  Value sum[2], inv[2];
  for (int i = 0; i < 2; ++i) {
    sum[i] = m.quadSum(carried[2 + i]);
    inv[i] = e.divf(one, sum[i]);
  }
  SmallVector<WarpMma::Acc> out =
      unflatten(ValueRange(carried).drop_front(4), steps);
  for (WarpMma::Acc &acc : out)
    for (int v = 0; v < 4; ++v)
      acc[v] = e.mulf(acc[v], inv[v / 2]);
  storeRows(e, m, a, out, qb.rowOf, seq, [&](Value row, Value c, Value v) {
    e.store(v, op.getResult(), {batch, row, a.headColumn(e, f.h, c)});
  });
  Value first = e.eq(m.t, e.idx(0));
  for (int i = 0; i < 2; ++i)
    e.when(e.andi(first, e.lt(qb.rowOf[i], e.idx(seq))), [&] {
      e.store(e.addf(carried[i], e.log(sum[i])), op.getLse(),
              {batch, f.h, qb.rowOf[i]});
    });
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// dQ: a warp 16 queries, over the tiles of keys they see.
void lowerQueryGrads(FlashAttentionGradBuffersOp op, const Attention &a) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  int64_t dp = a.padded, tile = a.tile, seq = a.shape.seq, dh = a.shape.headDim;
  int64_t steps = dp / 8, groups = tile / 8;
  QueryBlock qb(e, a);
  Frame &f = qb.f;
  WarpMma &m = qb.m;
  Value batch = f.z, one = e.f32(1.0);
  // dout as a left operand too; D = dout . out and the log-sum-exp of
  // each of the lane's rows.
  auto doutAt = [&](Value row, Value c) {
    return e.load(op.getDout(), {batch, row, a.headColumn(e, f.h, c)});
  };
  SmallVector<WarpMma::AFrag> dout =
      loadRowFragments(e, m, a, f.warpFirst, seq, doutAt, 1.0);
  Value d[2], lse[2];
  for (int i = 0; i < 2; ++i) {
    Value row = e.mini(qb.rowOf[i], e.idx(seq - 1));
    // The lane's columns of the row: t, t + 4, t + 8, ...
    Value part = e.loop(
        m.t, e.idx(dh), e.idx(4), e.f32(0.0), [&](Value c, ValueRange acc) {
          Value x = e.mulf(
              doutAt(row, c),
              e.load(op.getOut(), {batch, row, a.headColumn(e, f.h, c)}));
          return SmallVector<Value>{e.addf(acc[0], x)};
        })[0];
    d[i] = m.quadSum(part);
    lse[i] = e.load(op.getLse(), {batch, f.h, row});
  }

  auto tileStep = [&](Value t0, Value end, bool causal, ValueRange carried,
                      const RowLoad &rows) -> SmallVector<Value> {
    loadTile(e, m, a, f.tid, t0, end, rows, qb.keys, qb.values, one);
    SmallVector<WarpMma::Acc> dq = unflatten(carried, steps);
    PendingRows dss;
    for (int64_t j = 0; j < groups; ++j) {
      WarpMma::Acc s = productWithRows(e, m, qb.q, qb.keys, j);
      WarpMma::Acc dpv = productWithRows(e, m, dout, qb.values, j);
      WarpMma::Acc ds;
      for (int v = 0; v < 4; ++v) {
        Value key = e.addi(t0, e.addi(e.idx(8 * j), m.accCol(v)));
        Value ok = e.lt(key, end);
        if (causal)
          ok = e.andi(ok, e.le(key, qb.rowOf[v / 2]));
        Value prob = e.exp(e.subf(e.select(ok, s[v], e.negInf()), lse[v / 2]));
        ds[v] = e.mulf(prob, e.subf(dpv[v], d[v / 2]));
      }
      dss.add(e, m, ds, qb.keys, dq);
    }
    SmallVector<Value> next;
    flatten(dq, next);
    return next;
  };

  SmallVector<Value> carried;
  flatten(SmallVector<WarpMma::Acc>(steps, m.zero()), carried);
  if (a.prefixK) {
    Value end = e.idx(a.shape.prefix);
    RowLoad rows = a.prefixKeys(a.streamOf(e, batch), f.h);
    carried = e.loop(e.idx(0), end, e.idx(tile), carried,
                     [&](Value t0, ValueRange c) {
                       return tileStep(t0, end, /*causal=*/false, c, rows);
                     });
  }
  Value end = e.mini(e.addi(f.first, e.idx(kRows)), e.idx(seq));
  RowLoad rows = a.realKeys(batch, f.h);
  carried =
      e.loop(e.idx(0), end, e.idx(tile), carried, [&](Value t0, ValueRange c) {
        return tileStep(t0, end, /*causal=*/true, c, rows);
      });

  storeRows(e, m, a, unflatten(carried, steps), qb.rowOf, seq,
            [&](Value row, Value c, Value v) {
              e.store(e.mulf(v, e.f32(a.scale)), op.getDqkv(),
                      {batch, row, a.column(e, f.h, 0, c)});
            });
}

/// dK and dV: a warp 16 keys, over the tiles of the queries that see
/// them. \p keyCount keys (the sequence, or a stream's prefix) in a grid
/// of \p third (batch rows, or streams); \p keyRows loads the block's keys
/// and values; the queries are those of batch rows [firstBatch(z),
/// firstBatch(z) + batchRows), causal or all; \p write stores the
/// gradients of a key.
void lowerKeyGrads(
    FlashAttentionGradBuffersOp op, const Attention &a, int64_t keyCount,
    int64_t third, bool causal, int64_t batchRows,
    llvm::function_ref<Value(Emitter &, Value z)> firstBatch,
    llvm::function_ref<RowLoad(Emitter &, Value z, Value h)> keyRows,
    llvm::function_ref<void(Emitter &, Value z, Value h, Value row, Value c,
                            Value dk, Value dv)>
        write) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  int64_t dp = a.padded, tile = a.tile, seq = a.shape.seq, dh = a.shape.headDim;
  int64_t steps = dp / 8, groups = tile / 8;
  Type f32 = builder.getF32Type();
  Frame f = openFrame(
      e, keyCount, a.shape.heads, third,
      {workgroupBuffer({tile, dp}, f32), workgroupBuffer({tile, dp}, f32),
       workgroupBuffer({tile}, f32), workgroupBuffer({tile}, f32)});
  ValueRange shared = f.launch.getWorkgroupAttributions();
  Value queries = shared[0], douts = shared[1], lses = shared[2],
        ds = shared[3];
  WarpMma m(e, a.rounding, f.lane);
  std::array<Value, 2> rowOf = laneRows(e, m, f.warpFirst);

  // The warp's keys and values as left operands (the queries in the
  // tiles carry the scale).
  RowLoad own = keyRows(e, f.z, f.h);
  auto part = [&](int i) -> ElementLoad {
    return [&, i](Value row, Value c) { return own(e, row, c, i); };
  };
  SmallVector<WarpMma::AFrag> k =
      loadRowFragments(e, m, a, f.warpFirst, keyCount, part(0), 1.0);
  SmallVector<WarpMma::AFrag> v =
      loadRowFragments(e, m, a, f.warpFirst, keyCount, part(1), 1.0);

  Value batch0 = firstBatch(e, f.z);
  // The first query that sees any key of the block.
  Value qStart = causal ? f.first : e.idx(0);
  Value seqEnd = e.idx(seq);
  SmallVector<Value> carried;
  flatten(SmallVector<WarpMma::Acc>(2 * steps, m.zero()), carried);
  carried = e.loop(
      e.idx(0), e.idx(batchRows), e.idx(1), carried,
      [&](Value bOff, ValueRange outer) -> SmallVector<Value> {
        Value batch = e.addi(batch0, bOff);
        auto doutAt = [&, batch](Emitter &em, Value row, Value c) {
          return em.load(op.getDout(), {batch, row, a.headColumn(em, f.h, c)});
        };
        RowLoad queryRows = [&, batch](Emitter &em, Value row, Value c,
                                       int which) {
          return which == 0 ? a.qkvAt(em, batch, row, f.h, 0, c)
                            : doutAt(em, row, c);
        };
        return e.loop(
            qStart, seqEnd, e.idx(tile), outer,
            [&](Value q0, ValueRange inner) -> SmallVector<Value> {
              loadTile(e, m, a, f.tid, q0, seqEnd, queryRows, queries, douts,
                       e.f32(a.scale));
              // The tile's log-sum-exps and D = dout . out (unrounded), a
              // thread a query.
              e.when(e.lt(f.tid, e.idx(tile)), [&] {
                Value row = e.mini(e.addi(q0, f.tid), e.idx(seq - 1));
                Value d = e.sum(dh, e.f32(0.0), [&](Value c) {
                  return e.mulf(doutAt(e, row, c),
                                e.load(op.getOut(),
                                       {batch, row, a.headColumn(e, f.h, c)}));
                });
                e.store(d, ds, {f.tid});
                e.store(e.load(op.getLse(), {batch, f.h, row}), lses, {f.tid});
              });
              e.barrier();
              SmallVector<WarpMma::Acc> dk = unflatten(inner, steps);
              SmallVector<WarpMma::Acc> dv =
                  unflatten(inner.drop_front(4 * steps), steps);
              PendingRows probs, dss;
              for (int64_t j = 0; j < groups; ++j) {
                // Transposed scores: the warp's keys against 8 queries.
                WarpMma::Acc s = productWithRows(e, m, k, queries, j);
                WarpMma::Acc dpv = productWithRows(e, m, v, douts, j);
                WarpMma::Acc prob, dsv;
                for (int w = 0; w < 4; ++w) {
                  Value col = e.addi(e.idx(8 * j), m.accCol(w));
                  Value qi = e.addi(q0, col);
                  Value ok = e.lt(qi, seqEnd);
                  if (causal)
                    ok = e.andi(ok, e.le(rowOf[w / 2], qi));
                  prob[w] = e.exp(e.subf(e.select(ok, s[w], e.negInf()),
                                         e.load(lses, {col})));
                  dsv[w] = e.mulf(prob[w], e.subf(dpv[w], e.load(ds, {col})));
                }
                probs.add(e, m, prob, douts, dv);
                dss.add(e, m, dsv, queries, dk);
              }
              SmallVector<Value> next;
              flatten(dk, next);
              flatten(dv, next);
              return next;
            });
      });

  SmallVector<WarpMma::Acc> dk = unflatten(carried, steps);
  SmallVector<WarpMma::Acc> dv =
      unflatten(ValueRange(carried).drop_front(4 * steps), steps);
  for (int64_t u = 0; u < steps; ++u)
    for (int w = 0; w < 4; ++w) {
      Value row = rowOf[w / 2];
      Value c = e.addi(e.idx(8 * u), m.accCol(w));
      e.when(e.andi(e.lt(row, e.idx(keyCount)), e.lt(c, e.idx(dh))),
             [&] { write(e, f.z, f.h, row, c, dk[u][w], dv[u][w]); });
    }
}

void lowerBackward(FlashAttentionGradBuffersOp op, const Attention &a) {
  lowerQueryGrads(op, a);
  const AttentionShape &s = a.shape;
  lowerKeyGrads(
      op, a, s.seq, s.batch, /*causal=*/true, /*batchRows=*/1,
      [](Emitter &, Value z) { return z; },
      [&](Emitter &, Value z, Value h) { return a.realKeys(z, h); },
      [&](Emitter &e, Value z, Value h, Value row, Value c, Value dk,
          Value dv) {
        e.store(dk, op.getDqkv(), {z, row, a.column(e, h, 1, c)});
        e.store(dv, op.getDqkv(), {z, row, a.column(e, h, 2, c)});
      });
  if (!a.prefixK)
    return;
  int64_t rowsPerStream = s.batch / s.streams;
  lowerKeyGrads(
      op, a, s.prefix, s.streams, /*causal=*/false, rowsPerStream,
      [&](Emitter &e, Value z) { return e.muli(z, e.idx(rowsPerStream)); },
      [&](Emitter &, Value z, Value h) { return a.prefixKeys(z, h); },
      [&](Emitter &e, Value z, Value h, Value row, Value c, Value dk,
          Value dv) {
        e.store(dk, op.getDprefixK(), {z, h, row, c});
        e.store(dv, op.getDprefixV(), {z, h, row, c});
      });
}

template <typename OpTy>
FailureOr<Attention> describe(OpTy op, OperandRounding rounding) {
  std::optional<ArrayRef<int64_t>> prefix;
  if (op.getPrefixK())
    prefix = op.getPrefixK().getType().getShape();
  FailureOr<AttentionShape> shape = getAttentionShape(
      op, op.getQkv().getType().getShape(), prefix, op.getHeads());
  if (failed(shape))
    return failure();
  Attention a;
  a.shape = *shape;
  int64_t depth = WarpMma::depth(rounding);
  a.padded = llvm::alignTo(shape->headDim, depth);
  if (a.padded * depth > kTileFloats)
    return op.emitError() << "heads " << shape->headDim
                          << " wide: the flash attention kernels take heads "
                             "up to "
                          << kTileFloats / depth << " wide with "
                          << (depth == 8 ? "tf32" : "bf16") << " operands";
  a.tile = tileRows(a.padded, depth);
  a.rounding = rounding;
  a.scale = 1.0 / std::sqrt(static_cast<double>(shape->headDim));
  a.qkv = op.getQkv();
  a.prefixK = op.getPrefixK();
  a.prefixV = op.getPrefixV();
  return a;
}

struct FlashAttentionKernelsPass
    : mix::impl::MixFlashAttentionKernelsPassBase<FlashAttentionKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    OperandRounding rounding;
    if (this->rounding == "tf32") {
      rounding = OperandRounding::TF32;
    } else if (this->rounding == "bf16") {
      rounding = OperandRounding::BF16;
    } else {
      getOperation().emitError()
          << "mix-flash-attention-kernels: rounding '" << this->rounding
          << "' is neither tf32 nor bf16";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FlashAttentionBuffersOp, FlashAttentionGradBuffersOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<FlashAttentionBuffersOp>(op)) {
        FailureOr<Attention> a = describe(fwd, rounding);
        if (failed(a))
          return signalPassFailure();
        lowerForward(fwd, *a);
      } else {
        auto bwd = cast<FlashAttentionGradBuffersOp>(op);
        FailureOr<Attention> a = describe(bwd, rounding);
        if (failed(a))
          return signalPassFailure();
        lowerBackward(bwd, *a);
      }
      op->erase();
    }
  }
};
} // namespace
