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
/// Rows (queries or keys) a block, one a thread.
constexpr int64_t kRows = 64;
/// Floats of each workgroup tile: 16 KiB, two tiles a kernel.
constexpr int64_t kTileFloats = 4096;

/// Rows of a workgroup tile of vectors of \p headDim floats: up to 64, a
/// power of two, at least one.
int64_t tileRows(int64_t headDim) {
  int64_t rows = kRows;
  while (rows > 1 && rows * headDim > kTileFloats)
    rows /= 2;
  return rows;
}

/// A key (or query) row's vectors: element `c` of part `part` (0 = the
/// key, 1 = the value; or 0 = q, 1 = dout) of the row `row`, which the
/// caller keeps in bounds.
using RowLoad = std::function<Value(Emitter &, Value row, Value c, int part)>;

/// What every kernel of one attention knows: its sizes and the current
/// block's (batch row, head) and the columns of its head.
struct Attention {
  AttentionShape shape;
  int64_t tile;
  double scale;
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
};

/// Loads rows [first, first + tile) of the two parts of \p rows into the
/// workgroup tiles \p part0 and \p part1 (tile x dh), rows at or past
/// \p end as zeros, between barriers; every thread of the block calls it.
/// Part 0 is multiplied by \p scale0.
void loadTile(Emitter &e, const Attention &a, Value tid, Value first, Value end,
              const RowLoad &rows, Value part0, Value part1, Value scale0) {
  int64_t dh = a.shape.headDim;
  e.barrier();
  e.loop(
      tid, e.idx(a.tile * dh), e.idx(kRows), {}, [&](Value flat, ValueRange) {
        Value r = e.divi(flat, e.idx(dh)), c = e.remi(flat, e.idx(dh));
        Value row = e.addi(first, r);
        Value inside = e.lt(row, end);
        Value clamped = e.mini(row, e.subi(end, e.idx(1)));
        Value zero = e.f32(0.0);
        Value v0 = e.mulf(rows(e, clamped, c, 0), scale0);
        e.store(e.select(inside, v0, zero), part0, {r, c});
        e.store(e.select(inside, rows(e, clamped, c, 1), zero), part1, {r, c});
        return SmallVector<Value>();
      });
  e.barrier();
}

/// The dot product of the thread's private vector \p vec with row \p r of
/// the workgroup tile \p tile.
Value dotRow(Emitter &e, int64_t dh, Value vec, Value tile, Value r) {
  return e.sum(dh, e.f32(0.0), [&](Value c) {
    return e.mulf(e.load(vec, {c}), e.load(tile, {r, c}));
  });
}

/// The blocks' common frame: a launch of (tiles of 64 rows of `rows`,
/// heads, `third`), the thread's row and its clamped form.
struct Frame {
  gpu::LaunchOp launch;
  Value tid, first, row, clamped, inside, h, z;
};

Frame openFrame(Emitter &e, const Attention &a, int64_t rows, int64_t third,
                TypeRange shared, TypeRange priv) {
  Frame f;
  f.launch = createLaunch(
      e.b, e.loc, {llvm::divideCeilSigned(rows, kRows), a.shape.heads, third},
      {kRows, 1, 1}, shared, priv);
  e.b.setInsertionPoint(&f.launch.getBody().front().back());
  f.tid = f.launch.getThreadIds().x;
  f.first = e.muli(f.launch.getBlockIds().x, e.idx(kRows));
  f.row = e.addi(f.first, f.tid);
  f.inside = e.lt(f.row, e.idx(rows));
  f.clamped = e.mini(f.row, e.idx(rows - 1));
  f.h = f.launch.getBlockIds().y;
  f.z = f.launch.getBlockIds().z;
  return f;
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

void lowerForward(FlashAttentionBuffersOp op, const Attention &a) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  int64_t dh = a.shape.headDim, tile = a.tile;
  Type f32 = builder.getF32Type();
  Frame f = openFrame(
      e, a, a.shape.seq, a.shape.batch,
      {workgroupBuffer({tile, dh}, f32), workgroupBuffer({tile, dh}, f32)},
      {privateBuffer({dh}, f32), privateBuffer({dh}, f32),
       privateBuffer({tile}, f32)});
  Value keys = f.launch.getWorkgroupAttributions()[0];
  Value values = f.launch.getWorkgroupAttributions()[1];
  Value q = f.launch.getPrivateAttributions()[0];
  Value acc = f.launch.getPrivateAttributions()[1];
  Value p = f.launch.getPrivateAttributions()[2];
  Value batch = f.z, qi = f.row;
  Value one = e.f32(1.0);

  // q, scaled, and a zero accumulator.
  e.each(dh, [&](Value c) {
    e.store(e.mulf(a.qkvAt(e, batch, f.clamped, f.h, 0, c), e.f32(a.scale)), q,
            {c});
    e.store(e.f32(0.0), acc, {c});
  });

  // One tile of keys [t0, t0 + tile) below `end`: the online softmax
  // update of (max, sum, acc).
  auto tileStep = [&](Value t0, Value end, bool causal, ValueRange ml,
                      const RowLoad &rows) -> SmallVector<Value> {
    loadTile(e, a, f.tid, t0, end, rows, keys, values, one);
    Value tileMax =
        e.loop(e.idx(0), e.idx(tile), e.idx(1), e.negInf(),
               [&](Value r, ValueRange mx) {
                 Value key = e.addi(t0, r);
                 Value ok = e.lt(key, end);
                 if (causal)
                   ok = e.andi(ok, e.le(key, qi));
                 Value s = e.select(ok, dotRow(e, dh, q, keys, r), e.negInf());
                 e.store(s, p, {r});
                 return SmallVector<Value>{e.maxf(mx[0], s)};
               })[0];
    Value m = ml[0], l = ml[1];
    Value mNew = e.maxf(m, tileMax);
    // Nothing seen yet: keep the exponents finite (every term is zero).
    Value none = e.isNegInf(mNew);
    Value base = e.select(none, e.f32(0.0), mNew);
    Value corr = e.exp(e.subf(m, base));
    Value rowSum = e.sum(tile, e.f32(0.0), [&](Value r) {
      Value w = e.exp(e.subf(e.load(p, {r}), base));
      e.store(w, p, {r});
      return w;
    });
    e.each(dh, [&](Value c) {
      Value start = e.mulf(e.load(acc, {c}), corr);
      e.store(e.sum(tile, start,
                    [&](Value r) {
                      return e.mulf(e.load(p, {r}), e.load(values, {r, c}));
                    }),
              acc, {c});
    });
    return {mNew, e.addf(e.mulf(l, corr), rowSum)};
  };

  SmallVector<Value> ml{e.negInf(), e.f32(0.0)};
  if (a.prefixK) {
    Value end = e.idx(a.shape.prefix);
    RowLoad rows = a.prefixKeys(a.streamOf(e, batch), f.h);
    ml = e.loop(e.idx(0), end, e.idx(tile), ml,
                [&](Value t0, ValueRange carried) {
                  return tileStep(t0, end, /*causal=*/false, carried, rows);
                });
  }
  // The real keys up to the block's last query.
  Value end = e.mini(e.addi(f.first, e.idx(kRows)), e.idx(a.shape.seq));
  RowLoad rows = a.realKeys(batch, f.h);
  ml =
      e.loop(e.idx(0), end, e.idx(tile), ml, [&](Value t0, ValueRange carried) {
        return tileStep(t0, end, /*causal=*/true, carried, rows);
      });

  // Every query sees itself: the sum is positive.
  e.when(f.inside, [&] {
    Value inv = e.divf(one, ml[1]);
    e.each(dh, [&](Value c) {
      e.store(e.mulf(e.load(acc, {c}), inv), op.getResult(),
              {batch, qi, e.addi(e.muli(f.h, e.idx(dh)), c)});
    });
    e.store(e.addf(ml[0], e.log(ml[1])), op.getLse(), {batch, f.h, qi});
  });
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// dQ: a thread a query, over the tiles of keys it sees.
void lowerQueryGrads(FlashAttentionGradBuffersOp op, const Attention &a) {
  OpBuilder builder(op);
  Emitter e{builder, op.getLoc()};
  int64_t dh = a.shape.headDim, tile = a.tile;
  Type f32 = builder.getF32Type();
  Frame f = openFrame(
      e, a, a.shape.seq, a.shape.batch,
      {workgroupBuffer({tile, dh}, f32), workgroupBuffer({tile, dh}, f32)},
      {privateBuffer({dh}, f32), privateBuffer({dh}, f32),
       privateBuffer({dh}, f32), privateBuffer({tile}, f32)});
  Value keys = f.launch.getWorkgroupAttributions()[0];
  Value values = f.launch.getWorkgroupAttributions()[1];
  Value q = f.launch.getPrivateAttributions()[0];
  Value dout = f.launch.getPrivateAttributions()[1];
  Value dq = f.launch.getPrivateAttributions()[2];
  Value ds = f.launch.getPrivateAttributions()[3];
  Value batch = f.z, qi = f.row;
  Value one = e.f32(1.0);

  // q (scaled), dout, D = dout . out, and the row's log-sum-exp.
  Value d = e.sum(dh, e.f32(0.0), [&](Value c) {
    e.store(e.mulf(a.qkvAt(e, batch, f.clamped, f.h, 0, c), e.f32(a.scale)), q,
            {c});
    Value at = e.addi(e.muli(f.h, e.idx(dh)), c);
    Value g = e.load(op.getDout(), {batch, f.clamped, at});
    e.store(g, dout, {c});
    e.store(e.f32(0.0), dq, {c});
    return e.mulf(g, e.load(op.getOut(), {batch, f.clamped, at}));
  });
  Value lse = e.load(op.getLse(), {batch, f.h, f.clamped});

  auto tileStep = [&](Value t0, Value end, bool causal, const RowLoad &rows) {
    loadTile(e, a, f.tid, t0, end, rows, keys, values, one);
    e.each(tile, [&](Value r) {
      Value key = e.addi(t0, r);
      Value ok = e.lt(key, end);
      if (causal)
        ok = e.andi(ok, e.le(key, qi));
      Value s = e.select(ok, dotRow(e, dh, q, keys, r), e.negInf());
      Value prob = e.exp(e.subf(s, lse));
      Value dp = dotRow(e, dh, dout, values, r);
      e.store(e.mulf(prob, e.subf(dp, d)), ds, {r});
    });
    e.each(dh, [&](Value c) {
      e.store(e.sum(tile, e.load(dq, {c}),
                    [&](Value r) {
                      return e.mulf(e.load(ds, {r}), e.load(keys, {r, c}));
                    }),
              dq, {c});
    });
  };

  if (a.prefixK) {
    Value end = e.idx(a.shape.prefix);
    RowLoad rows = a.prefixKeys(a.streamOf(e, batch), f.h);
    e.loop(e.idx(0), end, e.idx(tile), {}, [&](Value t0, ValueRange) {
      tileStep(t0, end, /*causal=*/false, rows);
      return SmallVector<Value>();
    });
  }
  Value end = e.mini(e.addi(f.first, e.idx(kRows)), e.idx(a.shape.seq));
  RowLoad rows = a.realKeys(batch, f.h);
  e.loop(e.idx(0), end, e.idx(tile), {}, [&](Value t0, ValueRange) {
    tileStep(t0, end, /*causal=*/true, rows);
    return SmallVector<Value>();
  });

  e.when(f.inside, [&] {
    e.each(dh, [&](Value c) {
      e.store(e.mulf(e.load(dq, {c}), e.f32(a.scale)), op.getDqkv(),
              {batch, qi, a.column(e, f.h, 0, c)});
    });
  });
}

/// dK and dV: a thread a key, over the tiles of the queries that see it.
/// \p keyCount keys (the sequence, or a stream's prefix) in a grid of
/// \p third (batch rows, or streams); \p key loads the thread's key and
/// value; the queries are those of batch rows [firstBatch(z),
/// firstBatch(z) + batchRows), causal or all; \p write stores the
/// gradients of the thread's key.
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
  int64_t dh = a.shape.headDim, tile = a.tile, seq = a.shape.seq;
  Type f32 = builder.getF32Type();
  Frame f = openFrame(
      e, a, keyCount, third,
      {workgroupBuffer({tile, dh}, f32), workgroupBuffer({tile, dh}, f32),
       workgroupBuffer({tile}, f32), workgroupBuffer({tile}, f32)},
      {privateBuffer({dh}, f32), privateBuffer({dh}, f32),
       privateBuffer({dh}, f32), privateBuffer({dh}, f32)});
  ValueRange shared = f.launch.getWorkgroupAttributions();
  Value queries = shared[0], douts = shared[1], lses = shared[2],
        ds = shared[3];
  ValueRange priv = f.launch.getPrivateAttributions();
  Value k = priv[0], v = priv[1], dk = priv[2], dv = priv[3];
  Value kj = f.row;

  RowLoad own = keyRows(e, f.z, f.h);
  e.each(dh, [&](Value c) {
    e.store(own(e, f.clamped, c, 0), k, {c});
    e.store(own(e, f.clamped, c, 1), v, {c});
    e.store(e.f32(0.0), dk, {c});
    e.store(e.f32(0.0), dv, {c});
  });

  Value batch0 = firstBatch(e, f.z);
  // The first query that sees any key of the block.
  Value qStart = causal ? f.first : e.idx(0);
  Value seqEnd = e.idx(seq);
  e.each(batchRows, [&](Value bOff) {
    Value batch = e.addi(batch0, bOff);
    RowLoad queryRows = [&, batch](Emitter &em, Value row, Value c, int part) {
      if (part == 0)
        return a.qkvAt(em, batch, row, f.h, 0, c);
      return em.load(op.getDout(),
                     {batch, row, em.addi(em.muli(f.h, em.idx(dh)), c)});
    };
    e.loop(qStart, seqEnd, e.idx(tile), {}, [&](Value q0, ValueRange) {
      loadTile(e, a, f.tid, q0, seqEnd, queryRows, queries, douts,
               e.f32(a.scale));
      // The tile's log-sum-exps and D = dout . out, a thread a query.
      e.when(e.lt(f.tid, e.idx(tile)), [&] {
        Value row = e.mini(e.addi(q0, f.tid), e.idx(seq - 1));
        Value d = e.sum(dh, e.f32(0.0), [&](Value c) {
          Value at = e.addi(e.muli(f.h, e.idx(dh)), c);
          return e.mulf(e.load(douts, {f.tid, c}),
                        e.load(op.getOut(), {batch, row, at}));
        });
        e.store(d, ds, {f.tid});
        e.store(e.load(op.getLse(), {batch, f.h, row}), lses, {f.tid});
      });
      e.barrier();
      e.each(tile, [&](Value r) {
        Value qi = e.addi(q0, r);
        Value ok = e.lt(qi, seqEnd);
        if (causal)
          ok = e.andi(ok, e.le(kj, qi));
        Value s = e.select(ok, dotRow(e, dh, k, queries, r), e.negInf());
        Value prob = e.exp(e.subf(s, e.load(lses, {r})));
        Value dp = dotRow(e, dh, v, douts, r);
        Value dsr = e.mulf(prob, e.subf(dp, e.load(ds, {r})));
        e.each(dh, [&](Value c) {
          e.store(e.fma(prob, e.load(douts, {r, c}), e.load(dv, {c})), dv, {c});
          e.store(e.fma(dsr, e.load(queries, {r, c}), e.load(dk, {c})), dk,
                  {c});
        });
      });
      return SmallVector<Value>();
    });
  });

  e.when(f.inside, [&] {
    e.each(dh, [&](Value c) {
      write(e, f.z, f.h, kj, c, e.load(dk, {c}), e.load(dv, {c}));
    });
  });
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

template <typename OpTy> FailureOr<Attention> describe(OpTy op) {
  std::optional<ArrayRef<int64_t>> prefix;
  if (op.getPrefixK())
    prefix = op.getPrefixK().getType().getShape();
  FailureOr<AttentionShape> shape = getAttentionShape(
      op, op.getQkv().getType().getShape(), prefix, op.getHeads());
  if (failed(shape))
    return failure();
  Attention a;
  a.shape = *shape;
  a.tile = tileRows(shape->headDim);
  a.scale = 1.0 / std::sqrt(static_cast<double>(shape->headDim));
  a.qkv = op.getQkv();
  a.prefixK = op.getPrefixK();
  a.prefixV = op.getPrefixV();
  return a;
}

struct FlashAttentionKernelsPass
    : mix::impl::MixFlashAttentionKernelsPassBase<FlashAttentionKernelsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<FlashAttentionBuffersOp, FlashAttentionGradBuffersOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<FlashAttentionBuffersOp>(op)) {
        FailureOr<Attention> a = describe(fwd);
        if (failed(a))
          return signalPassFailure();
        lowerForward(fwd, *a);
      } else {
        auto bwd = cast<FlashAttentionGradBuffersOp>(op);
        FailureOr<Attention> a = describe(bwd);
        if (failed(a))
          return signalPassFailure();
        lowerBackward(bwd, *a);
      }
      op->erase();
    }
  }
};
} // namespace
