//===- MixPrimitiveOps.cpp - Verifiers of the primitive mix ops -----------===//
//
// Shape checks of the primitive ops that model-level ops decompose into.
// They guard the compiler's own decompositions and autodiff.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "VerifyUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::detail;

LogicalResult DivOp::verify() { return verifyBroadcast(*this); }
LogicalResult MaxOp::verify() { return verifyBroadcast(*this); }

/// Checks `dims` against a rank, without duplicates.
static LogicalResult verifyDims(Operation *op, ArrayRef<int64_t> dims,
                                int64_t rank) {
  llvm::SmallVector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return op->emitOpError()
             << "dimension " << d << " is out of range for rank " << rank;
    if (seen[d])
      return op->emitOpError() << "dimension " << d << " is listed twice";
    seen[d] = true;
  }
  return success();
}

template <typename OpTy> static LogicalResult verifyReduce(OpTy op) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  if (failed(verifyDims(op, op.getDims(), in.size())))
    return failure();
  SmallVector<int64_t> want(in);
  for (int64_t d : op.getDims())
    want[d] = 1;
  return expectShape(op, "result", op.getResult(), want);
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  if (in.size() != out.size())
    return emitOpError("input and result must have the same rank");
  for (auto [i, o] : llvm::zip(in, out))
    if (i != o && i != 1)
      return emitOpError() << "cannot broadcast " << shapeStr(in) << " to "
                           << shapeStr(out);
  return success();
}

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs());
  if (a.size() < 2 || a.size() != b.size())
    return emitOpError("operands must have the same rank, at least 2");
  size_t r = a.size();
  if (a.drop_back(2) != b.drop_back(2))
    return emitOpError("batch dimensions differ");
  int64_t m = getTransposeLhs() ? a[r - 1] : a[r - 2];
  int64_t k = getTransposeLhs() ? a[r - 2] : a[r - 1];
  int64_t kb = getTransposeRhs() ? b[r - 1] : b[r - 2];
  int64_t n = getTransposeRhs() ? b[r - 2] : b[r - 1];
  if (k != kb)
    return emitOpError() << "contraction sizes differ: " << k << " and " << kb;
  SmallVector<int64_t> want(a.drop_back(2));
  want.push_back(m);
  want.push_back(n);
  return expectShape(*this, "result", getResult(), want);
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != in.size())
    return emitOpError("permutation must list every dimension once");
  if (failed(verifyDims(*this, perm, in.size())))
    return failure();
  SmallVector<int64_t> want;
  for (int64_t p : perm)
    want.push_back(in[p]);
  return expectShape(*this, "result", getResult(), want);
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << shapeStr(in.getShape())
                         << " to " << shapeStr(out.getShape());
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

/// Whether `small` equals `big` outside dimension `dim`, as a part of it
/// along `dim` does; fails, with the error, unless both have the same rank
/// and `dim` is one of its dimensions.
static FailureOr<bool> matchesOutside(Operation *op, ArrayRef<int64_t> big,
                                      ArrayRef<int64_t> small, int64_t dim) {
  if (big.size() != small.size() || dim >= static_cast<int64_t>(big.size())) {
    op->emitOpError("operands must have the same rank, and dim must be one "
                    "of its dimensions");
    return failure();
  }
  SmallVector<int64_t> want(big);
  want[dim] = small[dim];
  return ArrayRef<int64_t>(want) == small;
}

/// Slice and pad: `small` is `big` with dimension `dim` cut to
/// `[offset, offset + small[dim])`.
static LogicalResult verifySliceLike(Operation *op, Value big, Value small,
                                     int64_t dim, int64_t offset) {
  ArrayRef<int64_t> b = shapeOf(big), s = shapeOf(small);
  FailureOr<bool> same = matchesOutside(op, b, s, dim);
  if (failed(same))
    return failure();
  if (!*same || offset + s[dim] > b[dim])
    return op->emitOpError()
           << "range [" << offset << ", " << offset + s[dim]
           << ") of dimension " << dim << " does not fit " << shapeStr(b);
  return success();
}

LogicalResult SliceOp::verify() {
  return verifySliceLike(*this, getInput(), getResult(), getDim(), getOffset());
}

LogicalResult PadOp::verify() {
  return verifySliceLike(*this, getResult(), getInput(), getDim(), getOffset());
}

/// `small` is `big` but for a size of dimension `dim` that is not larger.
static LogicalResult verifyDynamicSlice(Operation *op, Value big, Value small,
                                        int64_t dim) {
  ArrayRef<int64_t> b = shapeOf(big), s = shapeOf(small);
  FailureOr<bool> same = matchesOutside(op, b, s, dim);
  if (failed(same))
    return failure();
  if (!*same || s[dim] > b[dim])
    return op->emitOpError() << shapeStr(s) << " is not a range of dimension "
                             << dim << " of " << shapeStr(b);
  return success();
}

LogicalResult DynamicSliceOp::verify() {
  return verifyDynamicSlice(*this, getInput(), getResult(), getDim());
}

LogicalResult DynamicUpdateSliceOp::verify() {
  if (getInput().getType() != getResult().getType())
    return emitOpError("result must have the input's type");
  return verifyDynamicSlice(*this, getInput(), getUpdate(), getDim());
}

/// The whole `big` and one rank's share `small` of its dimension `dim`.
static LogicalResult verifyShard(Operation *op, Value big, Value small,
                                 int64_t dim, int64_t shards) {
  ArrayRef<int64_t> b = shapeOf(big), s = shapeOf(small);
  FailureOr<bool> same = matchesOutside(op, b, s, dim);
  if (failed(same))
    return failure();
  if (!*same || s[dim] * shards != b[dim])
    return op->emitOpError()
           << shapeStr(s) << " is not one of " << shards
           << " equal parts of dimension " << dim << " of " << shapeStr(b);
  return success();
}

LogicalResult RankSliceOp::verify() {
  return verifyShard(*this, getInput(), getResult(), getDim(), getShards());
}

LogicalResult RankPadOp::verify() {
  return verifyShard(*this, getResult(), getInput(), getDim(), getShards());
}

LogicalResult ConcatOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs());
  int64_t dim = getDim();
  if (a.size() != b.size() || dim >= static_cast<int64_t>(a.size()))
    return emitOpError("operands must have the same rank, and dim must be "
                       "one of its dimensions");
  SmallVector<int64_t> want(a);
  want[dim] += b[dim];
  SmallVector<int64_t> bb(b);
  bb[dim] = a[dim];
  if (ArrayRef<int64_t>(bb) != a)
    return emitOpError("operands differ outside the concatenated dimension");
  return expectShape(*this, "result", getResult(), want);
}

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> table = shapeOf(getTable()), ids = shapeOf(getIds());
  if (table.size() != 2)
    return emitOpError("table must be (V, d)");
  SmallVector<int64_t> want(ids);
  want.push_back(table[1]);
  return expectShape(*this, "result", getResult(), want);
}

LogicalResult ScatterAddOp::verify() {
  ArrayRef<int64_t> ids = shapeOf(getIds()), res = shapeOf(getResult());
  if (res.size() != 2)
    return emitOpError("result must be (V, d)");
  SmallVector<int64_t> want(ids);
  want.push_back(res[1]);
  return expectShape(*this, "updates", getUpdates(), want);
}

LogicalResult TakeAlongOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), ids = shapeOf(getIds());
  if (in.drop_back() != ids)
    return emitOpError("ids must have the input's shape without its last "
                       "dimension");
  SmallVector<int64_t> want(ids);
  want.push_back(1);
  return expectShape(*this, "result", getResult(), want);
}

LogicalResult PutAlongOp::verify() {
  ArrayRef<int64_t> res = shapeOf(getResult()), ids = shapeOf(getIds());
  if (res.drop_back() != ids)
    return emitOpError("ids must have the result's shape without its last "
                       "dimension");
  SmallVector<int64_t> want(ids);
  want.push_back(1);
  return expectShape(*this, "input", getInput(), want);
}

LogicalResult CumsumOp::verify() {
  if (getDim() >= shapeOf(getInput()).size())
    return emitOpError("dim is out of range");
  return success();
}

LogicalResult CausalMaskOp::verify() {
  ArrayRef<int64_t> r = shapeOf(getResult());
  if (getPosition()) {
    if (r.size() != 2 || r[1] < r[0] + static_cast<int64_t>(getPrefix()))
      return emitOpError() << "result must be (Q, prefix + K) with K >= Q, got "
                           << shapeStr(r);
    return success();
  }
  if (r.size() != 2 || r[1] != r[0] + static_cast<int64_t>(getPrefix()))
    return emitOpError() << "result must be (S, prefix + S), got "
                         << shapeStr(r);
  return success();
}
