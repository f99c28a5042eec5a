//===- Structured.cpp - Reductions, broadcasts and matmuls to linalg ------===//
//
// Reductions as linalg.generic with reduction iterators, broadcasts as
// generics with constant-0 maps, transposes, and matrix products as
// linalg.matmul / linalg.batch_matmul.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include <limits>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

namespace {
/// Reductions of at most this many elements an output are unrolled.
constexpr int64_t kMaxUnrolledReduction = 8;

template <typename SourceOp, bool IsMax>
struct ReducePattern : OpRewritePattern<SourceOp> {
  using OpRewritePattern<SourceOp>::OpRewritePattern;

  /// A reduction of at most kMaxUnrolledReduction elements an output (the
  /// N streams of a mixture, a gate's softmax over N) as an elementwise
  /// generic that reads the input once for each reduced position (constant
  /// indices in its maps) and folds them in order: no fill of the output
  /// first and no read-modify-write of it an element, and the elementwise
  /// producer fuses into it. The same operations in the same order as the
  /// loop from the identity (0 + a = a, but for a zero's sign, and
  /// max(-inf, a) = a).
  LogicalResult unrolled(SourceOp op, ArrayRef<bool> reduced,
                         PatternRewriter &rewriter) const {
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType in = tensorType(op.getInput());
    RankedTensorType out = tensorType(op.getResult());
    int64_t rank = in.getRank(), count = 1;
    for (int64_t i = 0; i < rank; ++i)
      if (reduced[i])
        count *= in.getDimSize(i);
    if (count > kMaxUnrolledReduction || !in.hasStaticShape())
      return failure();
    SmallVector<AffineMap> maps;
    SmallVector<int64_t> position(rank, 0);
    for (int64_t e = 0; e < count; ++e) {
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i < rank; ++i)
        exprs.push_back(reduced[i] ? getAffineConstantExpr(position[i], ctx)
                                   : getAffineDimExpr(i, ctx));
      maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
      // The next reduced position, row-major.
      for (int64_t i = rank - 1; i >= 0; --i) {
        if (!reduced[i])
          continue;
        if (++position[i] < in.getDimSize(i))
          break;
        position[i] = 0;
      }
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<Value> inputs(count, op.getInput());
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, out.getShape(),
                                          out.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, out, inputs, ValueRange{empty}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value r = args[0];
          for (Value a : args.drop_back().drop_front())
            r = IsMax ? Value(arith::MaximumFOp::create(b, l, r, a))
                      : Value(arith::AddFOp::create(
                            b, l, r, a, arith::FastMathFlags::reassoc));
          linalg::YieldOp::create(b, l, r);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }

  LogicalResult matchAndRewrite(SourceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType in = tensorType(op.getInput());
    RankedTensorType out = tensorType(op.getResult());
    int64_t rank = in.getRank();
    SmallVector<bool> reduced(rank, false);
    for (int64_t d : op.getDims())
      reduced[d] = true;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t i = 0; i < rank; ++i) {
      outExprs.push_back(reduced[i] ? getAffineConstantExpr(0, ctx)
                                    : getAffineDimExpr(i, ctx));
      iterators.push_back(reduced[i] ? utils::IteratorType::reduction
                                     : utils::IteratorType::parallel);
    }
    if (succeeded(unrolled(op, reduced, rewriter)))
      return success();
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank),
                                AffineMap::get(rank, 0, outExprs, ctx)};
    double init = IsMax ? -std::numeric_limits<double>::infinity() : 0.0;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, out, ValueRange{op.getInput()},
        ValueRange{filled(rewriter, loc, out, init)}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // A sum may be reassociated: LLVM then vectorizes it (partial
          // sums in vector lanes) rather than adding one element at a
          // time; a float32 sum of a few thousand terms changes in its
          // last bits.
          Value r =
              IsMax ? Value(arith::MaximumFOp::create(b, l, args[0], args[1]))
                    : Value(arith::AddFOp::create(
                          b, l, args[0], args[1],
                          arith::FastMathFlags::reassoc));
          linalg::YieldOp::create(b, l, r);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct BroadcastPattern : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    Value r = elementwise(
        rewriter, op.getLoc(), tensorType(op.getResult()), op.getInput(),
        [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct TransposePattern : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto t = linalg::TransposeOp::create(
        rewriter, loc, op.getInput(),
        empty(rewriter, loc, tensorType(op.getResult())), op.getPermutation());
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

/// Swaps the last two dimensions of `v`.
static Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = tensorType(v);
  int64_t r = t.getRank();
  SmallVector<int64_t> perm, shape(t.getShape());
  for (int64_t i = 0; i < r; ++i)
    perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  std::swap(shape[r - 1], shape[r - 2]);
  auto out = RankedTensorType::get(shape, t.getElementType());
  return linalg::TransposeOp::create(b, loc, v, empty(b, loc, out), perm)
      .getResult()[0];
}

struct MatmulPattern : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    if (op.getTransposeLhs())
      a = transposeLast2(rewriter, loc, a);
    if (op.getTransposeRhs())
      b = transposeLast2(rewriter, loc, b);
    RankedTensorType out = tensorType(op.getResult());
    int64_t r = out.getRank();
    Type f32 = out.getElementType();
    if (r == 2) {
      auto mm =
          linalg::MatmulOp::create(rewriter, loc, ValueRange{a, b},
                                   ValueRange{filled(rewriter, loc, out, 0.0)});
      if (Attribute t = op->getAttr(kTriangleAttr))
        mm->setAttr(kTriangleAttr, t);
      rewriter.replaceOp(op, mm.getResult(0));
      return success();
    }
    // Fold every batch dimension into one for linalg.batch_matmul.
    int64_t batch = 1;
    for (int64_t d : out.getShape().drop_back(2))
      batch *= d;
    auto flat = [&](Value v) {
      ArrayRef<int64_t> s = tensorType(v).getShape();
      return reshape(rewriter, loc, v,
                     RankedTensorType::get({batch, s[r - 2], s[r - 1]}, f32));
    };
    auto flatOut = RankedTensorType::get(
        {batch, out.getDimSize(r - 2), out.getDimSize(r - 1)}, f32);
    auto bmm = linalg::BatchMatmulOp::create(
        rewriter, loc, ValueRange{flat(a), flat(b)},
        ValueRange{filled(rewriter, loc, flatOut, 0.0)});
    // Transposes of the operands are separate ops: the triangle's kind
    // (stated for A as the product reads it) carries over as it is.
    if (Attribute t = op->getAttr(kTriangleAttr))
      bmm->setAttr(kTriangleAttr, t);
    rewriter.replaceOp(op, reshape(rewriter, loc, bmm.getResult(0), out));
    return success();
  }
};
} // namespace

void lowering::populateStructuredPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<ReducePattern<ReduceSumOp, false>, ReducePattern<ReduceMaxOp, true>,
           BroadcastPattern, TransposePattern, MatmulPattern>(ctx);
}
