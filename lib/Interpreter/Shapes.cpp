//===- Shapes.cpp - Data-movement and reduction kernels -------------------===//
//
// Constants, reshapes (mix.reshape, tensor.collapse_shape and
// tensor.expand_shape), transpose, slice, pad, concat, broadcast, the
// keep-dimension reductions, cumsum, prefix_mean and causal_mask.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::interp;

bool interp::isShapeOp(Operation *op) {
  return isa<arith::ConstantOp, ReshapeOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, TransposeOp, SliceOp, PadOp, ConcatOp,
             BroadcastOp, ReduceSumOp, ReduceMaxOp, CumsumOp, PrefixMeanOp,
             CausalMaskOp, DynamicSliceOp, DynamicUpdateSliceOp>(op);
}

/// A dense float tensor constant (splat or not), in double.
static FailureOr<RefTensor> constant(arith::ConstantOp op,
                                     ArrayRef<int64_t> shape,
                                     const KernelArgs &args) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return args.fail("only dense float tensor constants are supported");
  RefTensor r;
  r.shape.assign(shape.begin(), shape.end());
  for (APFloat v : attr.getValues<APFloat>()) {
    bool losesInfo;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
    r.data.push_back(v.convertToDouble());
  }
  return r;
}

/// The same elements in row-major order, with the result's shape.
static FailureOr<RefTensor> reshape(ArrayRef<int64_t> shape,
                                    const KernelArgs &args) {
  if (product(shape) != args[0].numel())
    return args.fail("cannot reshape " + shapeStr(args[0].shape) + " to " +
                     shapeStr(shape));
  RefTensor r = args[0];
  r.shape.assign(shape.begin(), shape.end());
  return r;
}

/// Result dimension r is input dimension `perm[r]`.
static FailureOr<RefTensor> transpose(ArrayRef<int64_t> perm,
                                      const KernelArgs &args) {
  const RefTensor &x = args[0];
  size_t rank = x.shape.size();
  SmallVector<bool> seen(rank, false);
  if (perm.size() != rank)
    return args.fail("the permutation does not list every dimension");
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return args.fail("the permutation is not one of the input's "
                       "dimensions");
    seen[p] = true;
  }
  SmallVector<int64_t> shape, inStrides = stridesOf(x.shape), strides;
  for (int64_t p : perm) {
    shape.push_back(x.shape[p]);
    strides.push_back(inStrides[p]);
  }
  RefTensor r = RefTensor::zeros(shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t from = 0;
    for (size_t d = 0; d < rank; ++d)
      from += index[d] * strides[d];
    r.data[flat++] = x.data[from];
  });
  return r;
}

/// Copies `small` into the range [offset, offset + small[dim]) of dimension
/// `dim` of `big` (toBig), or that range of `big` into `small` (!toBig).
static LogicalResult copyRange(RefTensor &big, RefTensor &small, int64_t dim,
                               int64_t offset, bool toBig,
                               const KernelArgs &args) {
  if (big.shape.size() != small.shape.size() || dim < 0 ||
      dim >= static_cast<int64_t>(big.shape.size()))
    return args.fail(shapeStr(small.shape) + " and " + shapeStr(big.shape) +
                     " do not have dimension " + Twine(dim) + " in common");
  if (offset < 0 || offset + small.shape[dim] > big.shape[dim])
    return args.fail("range [" + Twine(offset) + ", " +
                     Twine(offset + small.shape[dim]) + ") of dimension " +
                     Twine(dim) + " does not fit " + shapeStr(big.shape));
  for (size_t d = 0; d < big.shape.size(); ++d)
    if (static_cast<int64_t>(d) != dim && big.shape[d] != small.shape[d])
      return args.fail(shapeStr(small.shape) + " and " + shapeStr(big.shape) +
                       " differ outside dimension " + Twine(dim));
  SmallVector<int64_t> bigStrides = stridesOf(big.shape);
  int64_t flat = 0;
  forEachIndex(small.shape, [&](ArrayRef<int64_t> index) {
    int64_t at = offset * bigStrides[dim];
    for (auto [d, i] : llvm::enumerate(index))
      at += i * bigStrides[d];
    if (toBig)
      big.data[at] = small.data[flat++];
    else
      small.data[flat++] = big.data[at];
  });
  return success();
}

static FailureOr<RefTensor> slice(SliceOp op, ArrayRef<int64_t> shape,
                                  const KernelArgs &args) {
  RefTensor big = args[0], r = RefTensor::zeros(shape);
  if (failed(copyRange(big, r, op.getDim(), op.getOffset(), false, args)))
    return failure();
  return r;
}

/// The value of a 0-d position operand, which must be an integer.
static FailureOr<int64_t> position(const RefTensor &t, const KernelArgs &args) {
  if (t.numel() != 1 || t.data[0] != std::floor(t.data[0]))
    return args.fail("a position must be one integer");
  return static_cast<int64_t>(t.data[0]);
}

static FailureOr<RefTensor> dynamicSlice(DynamicSliceOp op,
                                         ArrayRef<int64_t> shape,
                                         const KernelArgs &args) {
  RefTensor big = args[0], r = RefTensor::zeros(shape);
  FailureOr<int64_t> offset = position(args[1], args);
  if (failed(offset) ||
      failed(copyRange(big, r, op.getDim(), *offset, false, args)))
    return failure();
  return r;
}

static FailureOr<RefTensor> dynamicUpdateSlice(DynamicUpdateSliceOp op,
                                               const KernelArgs &args) {
  RefTensor r = args[0], small = args[1];
  FailureOr<int64_t> offset = position(args[2], args);
  if (failed(offset) ||
      failed(copyRange(r, small, op.getDim(), *offset, true, args)))
    return failure();
  return r;
}

static FailureOr<RefTensor> pad(PadOp op, ArrayRef<int64_t> shape,
                                const KernelArgs &args) {
  RefTensor r = RefTensor::zeros(shape), small = args[0];
  if (failed(copyRange(r, small, op.getDim(), op.getOffset(), true, args)))
    return failure();
  return r;
}

/// lhs then rhs along `dim`.
static FailureOr<RefTensor> concat(ConcatOp op, const KernelArgs &args) {
  int64_t dim = op.getDim();
  RefTensor a = args[0], b = args[1];
  if (a.shape.size() != b.shape.size() || dim < 0 ||
      dim >= static_cast<int64_t>(a.shape.size()))
    return args.fail("cannot concatenate " + shapeStr(a.shape) + " and " +
                     shapeStr(b.shape) + " along dimension " + Twine(dim));
  SmallVector<int64_t> shape(a.shape);
  shape[dim] += b.shape[dim];
  RefTensor r = RefTensor::zeros(shape);
  if (failed(copyRange(r, a, dim, 0, true, args)) ||
      failed(copyRange(r, b, dim, a.shape[dim], true, args)))
    return failure();
  return r;
}

/// Each size-1 input dimension repeated to the result's size.
static FailureOr<RefTensor> broadcast(ArrayRef<int64_t> shape,
                                      const KernelArgs &args) {
  const RefTensor &x = args[0];
  if (x.shape.size() != shape.size())
    return args.fail("cannot broadcast " + shapeStr(x.shape) + " to " +
                     shapeStr(shape));
  SmallVector<int64_t> strides = stridesOf(x.shape);
  for (auto [d, size] : llvm::enumerate(x.shape)) {
    if (size == 1)
      strides[d] = 0;
    else if (size != shape[d])
      return args.fail("cannot broadcast " + shapeStr(x.shape) + " to " +
                       shapeStr(shape));
  }
  RefTensor r = RefTensor::zeros(shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t from = 0;
    for (auto [d, i] : llvm::enumerate(index))
      from += i * strides[d];
    r.data[flat++] = x.data[from];
  });
  return r;
}

/// The sum or maximum over `dims`, which stay as size-1 dimensions.
static FailureOr<RefTensor> reduce(ArrayRef<int64_t> dims, bool isMax,
                                   const KernelArgs &args) {
  const RefTensor &x = args[0];
  SmallVector<int64_t> shape(x.shape);
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(shape.size()))
      return args.fail("dimension " + Twine(d) + " is out of range for " +
                       shapeStr(x.shape));
    shape[d] = 1;
  }
  RefTensor r = RefTensor::zeros(shape);
  if (isMax)
    r.data.assign(r.data.size(), -std::numeric_limits<double>::infinity());
  SmallVector<int64_t> strides = stridesOf(shape);
  for (int64_t d : dims)
    strides[d] = 0;
  int64_t flat = 0;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index) {
    int64_t to = 0;
    for (auto [d, i] : llvm::enumerate(index))
      to += i * strides[d];
    double v = x.data[flat++];
    r.data[to] = isMax ? std::max(r.data[to], v) : r.data[to] + v;
  });
  return r;
}

/// Inclusive running sums along `dim`, from the end with `reverse`; with
/// `mean`, each divided by the number of terms.
static FailureOr<RefTensor> runningSum(int64_t dim, bool reverse, bool mean,
                                       const KernelArgs &args) {
  const RefTensor &x = args[0];
  if (dim < 0 || dim >= static_cast<int64_t>(x.shape.size()))
    return args.fail("dimension " + Twine(dim) + " is out of range for " +
                     shapeStr(x.shape));
  int64_t n = x.shape[dim], inner = stridesOf(x.shape)[dim];
  int64_t outer = x.numel() / (n * inner);
  RefTensor r = x;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      for (int64_t step = 0; step < n; ++step) {
        int64_t s = reverse ? n - 1 - step : step;
        int64_t at = (o * n + s) * inner + i;
        acc += x.data[at];
        r.data[at] = mean ? acc / (step + 1) : acc;
      }
    }
  return r;
}

/// `(S, P + S)`: 0 where query i may attend to key j (j < P, or
/// j - P <= i), -inf elsewhere.
static FailureOr<RefTensor> causalMask(CausalMaskOp op, ArrayRef<int64_t> shape,
                                       const KernelArgs &args) {
  int64_t prefix = op.getPrefix();
  if (op.getPosition()) {
    // Query i is position `position + i`; keys past it are masked.
    FailureOr<int64_t> at = position(args[0], args);
    if (failed(at))
      return failure();
    if (shape.size() != 2 || shape[1] < shape[0] + prefix)
      return args.fail("the result must be (Q, prefix + K), not " +
                       shapeStr(shape));
    RefTensor r = RefTensor::zeros(shape);
    for (int64_t i = 0; i < shape[0]; ++i)
      for (int64_t j = prefix + *at + i + 1; j < shape[1]; ++j)
        r.data[i * shape[1] + j] = -std::numeric_limits<double>::infinity();
    return r;
  }
  if (shape.size() != 2 || shape[1] != shape[0] + prefix)
    return args.fail("the result must be (S, prefix + S), not " +
                     shapeStr(shape));
  RefTensor r = RefTensor::zeros(shape);
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j)
      if (j >= prefix && j - prefix > i)
        r.data[i * shape[1] + j] = -std::numeric_limits<double>::infinity();
  return r;
}

FailureOr<RefTensor> interp::computeShapeOp(Operation *op,
                                            const KernelArgs &args) {
  ArrayRef<int64_t> shape = typeShape(op->getResult(0));
  return llvm::TypeSwitch<Operation *, FailureOr<RefTensor>>(op)
      .Case([&](arith::ConstantOp c) { return constant(c, shape, args); })
      .Case<ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          [&](Operation *) { return reshape(shape, args); })
      .Case([&](TransposeOp t) { return transpose(t.getPermutation(), args); })
      .Case([&](SliceOp s) { return slice(s, shape, args); })
      .Case([&](PadOp p) { return pad(p, shape, args); })
      .Case([&](ConcatOp c) { return concat(c, args); })
      .Case([&](BroadcastOp) { return broadcast(shape, args); })
      .Case([&](ReduceSumOp r) { return reduce(r.getDims(), false, args); })
      .Case([&](ReduceMaxOp r) { return reduce(r.getDims(), true, args); })
      .Case([&](CumsumOp c) {
        return runningSum(c.getDim(), c.getReverse(), false, args);
      })
      .Case([&](PrefixMeanOp) -> FailureOr<RefTensor> {
        // (B,S,d): the running mean over the sequence, dimension 1.
        if (args[0].shape.size() != 3)
          return args.fail("the input must be (B,S,d), not " +
                           shapeStr(args[0].shape));
        return runningSum(1, false, true, args);
      })
      .Case([&](CausalMaskOp m) { return causalMask(m, shape, args); })
      .Case([&](DynamicSliceOp d) { return dynamicSlice(d, shape, args); })
      .Case([&](DynamicUpdateSliceOp d) { return dynamicUpdateSlice(d, args); })
      .Default(
          [&](Operation *) { return args.fail("not a data-movement op"); });
}
