//===- Positions.cpp - Ops at a run-time position to tensor ops -----------===//
//
// A decode step reads a row of a table at its position and writes the new
// keys and values into the caches there. On the host (the CPU target) the
// position becomes the offset of a view and of an insertion, which
// bufferizes in place: the step touches only the row. A target whose
// arguments live in device memory cannot read the position in host code,
// so there (positions-on-device) the slice is gathered inside a loop nest
// and the update is a select over the whole tensor, each element reading
// the position.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

Value lowering::readPosition(OpBuilder &b, Location loc, Value position) {
  Value at = tensor::ExtractOp::create(b, loc, position, ValueRange{});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), at);
}

namespace {
/// The identity maps and parallel iterators of a nest over \p type.
linalg::GenericOp nestOver(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange inputs,
    Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, ValueRange)> body) {
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  return linalg::GenericOp::create(
      b, loc, type, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nl, d));
        linalg::YieldOp::create(nb, nl, body(nb, nl, idx, args));
      });
}

struct DynamicSlicePattern : OpRewritePattern<DynamicSliceOp> {
  DynamicSlicePattern(MLIRContext *ctx, bool onDevice)
      : OpRewritePattern(ctx), onDevice(onDevice) {}

  LogicalResult matchAndRewrite(DynamicSliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    int64_t dim = op.getDim();
    if (!onDevice) {
      SliceParams p(rewriter, out.getShape(), dim,
                    readPosition(rewriter, loc, op.getOffset()));
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          op, out, op.getInput(), p.offsets, p.sizes, p.strides);
      return success();
    }
    // result[..., i, ...] = input[..., position + i, ...].
    auto gather = nestOver(
        rewriter, loc, out, {}, empty(rewriter, loc, out),
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange) {
          SmallVector<Value> at(idx);
          at[dim] = arith::AddIOp::create(b, l, at[dim],
                                          readPosition(b, l, op.getOffset()));
          return Value(tensor::ExtractOp::create(b, l, op.getInput(), at));
        });
    rewriter.replaceOp(op, gather.getResult(0));
    return success();
  }

  bool onDevice;
};

struct DynamicUpdateSlicePattern : OpRewritePattern<DynamicUpdateSliceOp> {
  DynamicUpdateSlicePattern(MLIRContext *ctx, bool onDevice)
      : OpRewritePattern(ctx), onDevice(onDevice) {}

  LogicalResult matchAndRewrite(DynamicUpdateSliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorType(op.getResult());
    RankedTensorType updateType = tensorType(op.getUpdate());
    int64_t dim = op.getDim();
    if (!onDevice) {
      SliceParams p(rewriter, updateType.getShape(), dim,
                    readPosition(rewriter, loc, op.getOffset()));
      rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
          op, op.getUpdate(), op.getInput(), p.offsets, p.sizes, p.strides);
      return success();
    }
    // result[..., i, ...] = position <= i < position + n
    //     ? update[..., i - position, ...] : input[..., i, ...],
    // written over the input (in place where it may be written).
    int64_t n = updateType.getDimSize(dim);
    auto select = nestOver(
        rewriter, loc, type, {}, op.getInput(),
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange args) {
          Value position = readPosition(b, l, op.getOffset());
          Value rel = arith::SubIOp::create(b, l, idx[dim], position);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value hit = arith::AndIOp::create(
              b, l,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, rel, zero),
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, rel,
                                    arith::ConstantIndexOp::create(b, l, n)));
          // Where it does not land, read the update at 0 along `dim` (in
          // range) and keep the input.
          SmallVector<Value> at(idx);
          at[dim] = arith::SelectOp::create(b, l, hit, rel, zero);
          Value update = tensor::ExtractOp::create(b, l, op.getUpdate(), at);
          return Value(arith::SelectOp::create(b, l, hit, update, args[0]));
        });
    rewriter.replaceOp(op, select.getResult(0));
    return success();
  }

  bool onDevice;
};
} // namespace

void lowering::populatePositionPatterns(RewritePatternSet &patterns,
                                        bool positionsOnDevice) {
  patterns.add<DynamicSlicePattern, DynamicUpdateSlicePattern>(
      patterns.getContext(), positionsOnDevice);
}
