//===- Shapes.cpp - Reshapes, slices, pads and concats to tensor ops ------===//
//
// Layout ops become tensor reshapes and slices, which bufferize to views
// (or, for pad and concat, to copies into a filled buffer).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::lowering;

Value lowering::reshape(OpBuilder &b, Location loc, Value v,
                        RankedTensorType type) {
  RankedTensorType from = tensorType(v);
  if (from == type)
    return v;
  // Through rank 0 when every dimension is 1, else through one dimension.
  auto allOnes = [](RankedTensorType t) {
    return llvm::all_of(t.getShape(), [](int64_t d) { return d == 1; });
  };
  if (from.getRank() == 0 || type.getRank() == 0 ||
      (allOnes(from) && allOnes(type))) {
    auto scalar = RankedTensorType::get({}, from.getElementType());
    Value s = v;
    if (from.getRank() != 0)
      s = tensor::CollapseShapeOp::create(b, loc, scalar, v,
                                          ArrayRef<ReassociationIndices>{});
    if (type.getRank() == 0)
      return s;
    return tensor::ExpandShapeOp::create(b, loc, type, s,
                                         ArrayRef<ReassociationIndices>{});
  }
  auto flatType =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  auto all = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t i = 0; i < rank; ++i)
      group.push_back(i);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat = v;
  if (from.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, flatType, v,
                                           all(from.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all(type.getRank()));
}

lowering::SliceParams::SliceParams(OpBuilder &b, ArrayRef<int64_t> small,
                                   int64_t dim, OpFoldResult offset) {
  for (auto [i, s] : llvm::enumerate(small)) {
    offsets.push_back(static_cast<int64_t>(i) == dim
                          ? offset
                          : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(s));
    strides.push_back(b.getIndexAttr(1));
  }
}

/// A concatenation whose only user is a concatenation along the same
/// dimension: the outer one lowers it (see ConcatPattern).
bool mlir::mix::lowering::isInnerConcat(ConcatOp op) {
  if (!op->hasOneUse())
    return false;
  auto outer = dyn_cast<ConcatOp>(*op->user_begin());
  return outer && outer.getDim() == op.getDim();
}

namespace {
struct ReshapePattern : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshape(rewriter, op.getLoc(), op.getInput(),
                                   tensorType(op.getResult())));
    return success();
  }
};

struct SlicePattern : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType out = tensorType(op.getResult());
    SliceParams p(rewriter, out.getShape(), op.getDim(),
                  rewriter.getIndexAttr(op.getOffset()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, out, op.getInput(), p.offsets, p.sizes, p.strides);
    return success();
  }
};

struct PadPattern : OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType out = tensorType(op.getResult());
    SliceParams p(rewriter, tensorType(op.getInput()).getShape(), op.getDim(),
                  rewriter.getIndexAttr(op.getOffset()));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        op, op.getInput(), filled(rewriter, loc, out, 0.0), p.offsets, p.sizes,
        p.strides);
    return success();
  }
};

/// A tree of concatenations along one dimension (the adjoint of slicing a
/// tensor into N parts is such a chain) becomes one insertion of each leaf
/// into one tensor, where lowering each concatenation alone would copy the
/// first parts once per level.
struct ConcatPattern : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (isInnerConcat(op))
      return rewriter.notifyMatchFailure(op, "lowered with the outer concat");
    int64_t dim = op.getDim();
    SmallVector<Value> leaves;
    SmallVector<ConcatOp> inner;
    std::function<void(Value)> flatten = [&](Value v) {
      auto concat = v.getDefiningOp<ConcatOp>();
      if (concat && concat != op && !isInnerConcat(concat))
        concat = nullptr;
      if (!concat) {
        leaves.push_back(v);
        return;
      }
      if (concat != op)
        inner.push_back(concat);
      flatten(concat.getLhs());
      flatten(concat.getRhs());
    };
    flatten(op.getResult());
    Location loc = op.getLoc();
    Block *block = op->getBlock();
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (Value leaf : leaves) {
      offsets.push_back(offset);
      offset += tensorType(leaf).getDimSize(dim);
    }
    // Each part goes in just after it is made (the parts in the order they
    // are made), so that bufferization can compute each one in place in
    // its slice of the result (eliminate-empty-tensors needs the tensor it
    // is inserted into to exist where the part's computation starts).
    auto definedIn = [&](Value v) -> Operation * {
      Operation *def = v.getDefiningOp();
      return def && def->getBlock() == block ? def : nullptr;
    };
    SmallVector<unsigned> order(leaves.size());
    std::iota(order.begin(), order.end(), 0);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      Operation *x = definedIn(leaves[a]), *y = definedIn(leaves[b]);
      return y && (!x || x->isBeforeInBlock(y));
    });
    Value result;
    Operation *last = nullptr;
    for (unsigned i : order) {
      Operation *def = definedIn(leaves[i]);
      if (def && (!last || last->isBeforeInBlock(def)))
        last = def;
      OpBuilder::InsertionGuard guard(rewriter);
      if (last)
        rewriter.setInsertionPointAfter(last);
      if (!result)
        result = empty(rewriter, loc, tensorType(op.getResult()));
      ArrayRef<int64_t> shape = tensorType(leaves[i]).getShape();
      SliceParams p(rewriter, shape, dim, rewriter.getIndexAttr(offsets[i]));
      auto insert = tensor::InsertSliceOp::create(
          rewriter, loc, leaves[i], result, p.offsets, p.sizes, p.strides);
      result = insert;
      last = insert;
    }
    rewriter.replaceOp(op, result);
    // Outermost first: each is unused once the one above it is gone.
    for (ConcatOp concat : inner)
      rewriter.eraseOp(concat);
    return success();
  }
};
} // namespace

void lowering::populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapePattern, SlicePattern, PadPattern, ConcatPattern>(
      patterns.getContext());
}
