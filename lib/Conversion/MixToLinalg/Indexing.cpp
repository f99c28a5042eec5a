//===- Indexing.cpp - Index-driven and sequential mix ops -----------------===//
//
// Gather, take-along and put-along as linalg.generic with tensor.extract;
// scatter-add and cumsum as scf.for loops on tensors; the causal mask from
// linalg.index.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

/// The loop indices of the enclosing linalg.generic, dimensions [0, n).
static SmallVector<Value> loopIndices(OpBuilder &b, Location loc, int64_t n) {
  SmallVector<Value> idx;
  for (int64_t i = 0; i < n; ++i)
    idx.push_back(linalg::IndexOp::create(b, loc, i));
  return idx;
}

static Value toIndex(OpBuilder &b, Location loc, Value id) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
}

/// A generic over `out` that reads `ids` (the output's leading dimensions)
/// and computes each element with `body(id, indices)`.
static Value indexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType out, Value ids,
    ValueRange extraInputs, ArrayRef<AffineMap> extraMaps,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange, ValueRange)>
        body) {
  MLIRContext *ctx = b.getContext();
  int64_t r = out.getRank();
  SmallVector<AffineExpr> lead;
  for (int64_t i = 0; i + 1 < r; ++i)
    lead.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(r, 0, lead, ctx)};
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.push_back(b.getMultiDimIdentityMap(r));
  SmallVector<Value> inputs{ids};
  inputs.append(extraInputs.begin(), extraInputs.end());
  SmallVector<utils::IteratorType> iterators(r, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, out, inputs, ValueRange{empty(b, loc, out)}, maps,
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value id = toIndex(nb, nl, args[0]);
               SmallVector<Value> idx = loopIndices(nb, nl, r);
               Value v = body(nb, nl, id, idx, args.drop_front().drop_back());
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}

namespace {
/// Sequential scf.for loops over [0, count) by 1. The index constants 0, 1
/// and each count are created once, up front and in that order, so that
/// nested loops (and the loop bodies) share them.
class CountedLoops {
public:
  using Body = function_ref<void(OpBuilder &, Location, Value, ValueRange)>;

  CountedLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> counts) {
    zero = arith::ConstantIndexOp::create(b, loc, 0);
    one = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t count : counts)
      bounds.push_back(arith::ConstantIndexOp::create(b, loc, count));
  }

  /// The index constant of counts[i].
  Value getBound(size_t i) const { return bounds[i]; }

  /// A loop over [0, counts[i]) carrying \p inits; \p body yields.
  scf::ForOp create(OpBuilder &b, Location loc, size_t i, ValueRange inits,
                    Body body) const {
    return scf::ForOp::create(b, loc, zero, bounds[i], one, inits, body);
  }

private:
  Value zero, one;
  SmallVector<Value> bounds;
};

struct GatherPattern : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    Value table = op.getTable();
    Value r = indexedGeneric(
        rewriter, op.getLoc(), tensorType(op.getResult()), op.getIds(), {}, {},
        [&](OpBuilder &b, Location l, Value id, ValueRange idx, ValueRange) {
          return Value(tensor::ExtractOp::create(b, l, table,
                                                 ValueRange{id, idx.back()}));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct TakeAlongPattern : OpRewritePattern<TakeAlongOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TakeAlongOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    Value r = indexedGeneric(
        rewriter, op.getLoc(), tensorType(op.getResult()), op.getIds(), {}, {},
        [&](OpBuilder &b, Location l, Value id, ValueRange idx, ValueRange) {
          SmallVector<Value> at(idx.drop_back());
          at.push_back(id);
          return Value(tensor::ExtractOp::create(b, l, input, at));
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct PutAlongPattern : OpRewritePattern<PutAlongOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PutAlongOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = tensorType(op.getResult());
    MLIRContext *ctx = rewriter.getContext();
    int64_t r = out.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i + 1 < r; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx));
    exprs.push_back(getAffineConstantExpr(0, ctx));
    AffineMap inMap = AffineMap::get(r, 0, exprs, ctx);
    Value v = indexedGeneric(
        rewriter, op.getLoc(), out, op.getIds(), ValueRange{op.getInput()},
        {inMap},
        [&](OpBuilder &b, Location l, Value id, ValueRange idx, ValueRange in) {
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                            idx.back(), id);
          Value zero = arith::ConstantOp::create(
              b, l, b.getFloatAttr(in[0].getType(), 0.0));
          return Value(arith::SelectOp::create(b, l, hit, in[0], zero));
        });
    rewriter.replaceOp(op, v);
    return success();
  }
};

struct CausalMaskPattern : OpRewritePattern<CausalMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    int64_t prefix = op.getPrefix();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, out, ValueRange{}, ValueRange{empty(rewriter, loc, out)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(2)},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(b, l, 0);
          Value j = linalg::IndexOp::create(b, l, 1);
          // Key j is visible to query i when j < prefix + i + 1.
          Value limit = arith::AddIOp::create(
              b, l, i, arith::ConstantIndexOp::create(b, l, prefix + 1));
          // At a run-time position, query i is position `position + i`;
          // read inside the loop nest, where a device's kernel reads it.
          if (Value position = op.getPosition())
            limit = arith::AddIOp::create(b, l, limit,
                                          readPosition(b, l, position));
          Value visible =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j, limit);
          Type f32 = out.getElementType();
          Value zero =
              arith::ConstantOp::create(b, l, b.getFloatAttr(f32, 0.0));
          Value ninf = arith::ConstantOp::create(
              b, l,
              b.getFloatAttr(f32, -std::numeric_limits<double>::infinity()));
          linalg::YieldOp::create(
              b, l, Value(arith::SelectOp::create(b, l, visible, zero, ninf)));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// table[ids[t], j] += updates[t, j], sequentially (ids may repeat).
struct ScatterAddPattern : OpRewritePattern<ScatterAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterAddOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    RankedTensorType idsType = tensorType(op.getIds());
    int64_t tokens = idsType.getNumElements(), d = out.getDimSize(1);
    Value ids =
        reshape(rewriter, loc, op.getIds(),
                RankedTensorType::get({tokens}, idsType.getElementType()));
    Value updates =
        reshape(rewriter, loc, op.getUpdates(),
                RankedTensorType::get({tokens, d}, out.getElementType()));
    CountedLoops loops(rewriter, loc, {tokens, d});
    auto outer = loops.create(
        rewriter, loc, 0, ValueRange{filled(rewriter, loc, out, 0.0)},
        [&](OpBuilder &b, Location l, Value t, ValueRange acc) {
          Value id = toIndex(b, l, tensor::ExtractOp::create(b, l, ids, t));
          auto inner = loops.create(
              b, l, 1, acc,
              [&](OpBuilder &ib, Location il, Value j, ValueRange a) {
                Value u = tensor::ExtractOp::create(ib, il, updates,
                                                    ValueRange{t, j});
                Value o =
                    tensor::ExtractOp::create(ib, il, a[0], ValueRange{id, j});
                Value s = arith::AddFOp::create(ib, il, o, u);
                Value n = tensor::InsertOp::create(ib, il, s, a[0],
                                                   ValueRange{id, j});
                scf::YieldOp::create(ib, il, n);
              });
          scf::YieldOp::create(b, l, inner.getResults());
        });
    rewriter.replaceOp(op, outer.getResult(0));
    return success();
  }
};

/// Inclusive prefix (or suffix) sums along `dim`, one slice at a time.
struct CumsumPattern : OpRewritePattern<CumsumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CumsumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getResult());
    int64_t dim = op.getDim(), n = type.getDimSize(dim);
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[dim] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    auto params = [&](OpBuilder &b, Value pos) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (auto [i, s] : llvm::enumerate(sliceShape)) {
        offsets.push_back(static_cast<int64_t>(i) == dim
                              ? OpFoldResult(pos)
                              : OpFoldResult(b.getIndexAttr(0)));
        sizes.push_back(b.getIndexAttr(s));
        strides.push_back(b.getIndexAttr(1));
      }
      return std::make_tuple(offsets, sizes, strides);
    };
    CountedLoops loops(rewriter, loc, {n, n - 1});
    Value last = loops.getBound(1);
    bool reverse = op.getReverse();
    auto loop = loops.create(
        rewriter, loc, 0,
        ValueRange{empty(rewriter, loc, type),
                   filled(rewriter, loc, sliceType, 0.0)},
        [&](OpBuilder &b, Location l, Value s, ValueRange acc) {
          Value pos = reverse ? Value(arith::SubIOp::create(b, l, last, s)) : s;
          auto [offsets, sizes, strides] = params(b, pos);
          Value cur = tensor::ExtractSliceOp::create(
              b, l, sliceType, op.getInput(), offsets, sizes, strides);
          Value run = elementwise(
              b, l, sliceType, ValueRange{acc[1], cur},
              [](OpBuilder &eb, Location el, ValueRange a) {
                return Value(arith::AddFOp::create(eb, el, a[0], a[1]));
              });
          Value out = tensor::InsertSliceOp::create(b, l, run, acc[0], offsets,
                                                    sizes, strides);
          scf::YieldOp::create(b, l, ValueRange{out, run});
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};
} // namespace

void lowering::populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherPattern, TakeAlongPattern, PutAlongPattern,
               CausalMaskPattern, ScatterAddPattern, CumsumPattern>(
      patterns.getContext());
}
