//===- Collectives.cpp - Stream-parallel ops to calls of the runtime ------===//
//
// A model compiled with its streams sharded over ranks reads its rank and
// sums over the ranks through two functions of the package's support code,
// which the runtime connects to its communicator:
//
//   int64_t mix_comm_rank(void);
//   void mix_comm_all_reduce(float *base, int64_t offset, int64_t count);
//
// `mix.rank_slice` and `mix.rank_pad` become tensor slices at an offset
// computed from the rank; `mix.grad_all_reduce` is the identity in the
// forward direction and disappears. `mix.all_reduce` stays: it bufferizes
// (in the target's codegen) to a copy and the in-place call.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mix/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

void lowering::declareCollectives(ModuleOp module) {
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto declare = [&](StringRef name, FunctionType type) {
    if (module.lookupSymbol(name))
      return;
    func::FuncOp::create(b, module.getLoc(), name, type).setPrivate();
  };
  declare(kCommRank, b.getFunctionType({}, {b.getI64Type()}));
  declare(kCommAllReduce,
          b.getFunctionType({MemRefType::get({}, b.getF32Type()),
                             b.getIndexType(), b.getIndexType()},
                            {}));
}

/// Where this rank's share of a dimension starts: rank * share.
static Value rankOffset(OpBuilder &b, Location loc, int64_t share) {
  Value rank =
      func::CallOp::create(b, loc, kCommRank, b.getI64Type(), ValueRange{})
          .getResult(0);
  return arith::MulIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), rank),
      arith::ConstantIndexOp::create(b, loc, share));
}

namespace {
struct RankSlicePattern : OpRewritePattern<RankSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RankSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = tensorType(op.getResult());
    int64_t dim = op.getDim();
    SliceParams p(rewriter, out.getShape(), dim,
                  rankOffset(rewriter, op.getLoc(), out.getShape()[dim]));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, out, op.getInput(), p.offsets, p.sizes, p.strides);
    return success();
  }
};

struct RankPadPattern : OpRewritePattern<RankPadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RankPadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> share = tensorType(op.getInput()).getShape();
    int64_t dim = op.getDim();
    SliceParams p(rewriter, share, dim, rankOffset(rewriter, loc, share[dim]));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getInput(),
        filled(rewriter, loc, tensorType(op.getResult()), 0.0), p.offsets,
        p.sizes, p.strides);
    return success();
  }
};

struct GradAllReducePattern : OpRewritePattern<GradAllReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GradAllReduceOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};
} // namespace

void lowering::populateCollectivePatterns(RewritePatternSet &patterns) {
  patterns.add<RankSlicePattern, RankPadPattern, GradAllReducePattern>(
      patterns.getContext());
}
