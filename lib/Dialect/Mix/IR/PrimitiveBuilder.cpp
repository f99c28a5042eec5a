//===- PrimitiveBuilder.cpp - Building primitive mix ops ------------------===//
//
// Shape inference for the primitive ops, and the small compositions
// (softmax, GELU, linear, layer norm) that several decompositions share.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mix;

Value PrimitiveBuilder::splat(ArrayRef<int64_t> shp, double value) {
  auto type = f32(shp);
  return arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(b.getF32Type(), value)));
}

Value PrimitiveBuilder::reduceSum(Value a, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return a;
  SmallVector<int64_t> out(shape(a));
  for (int64_t d : dims)
    out[d] = 1;
  return ReduceSumOp::create(b, loc, f32(out), a, dims);
}

Value PrimitiveBuilder::reduceMax(Value a, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> out(shape(a));
  for (int64_t d : dims)
    out[d] = 1;
  return ReduceMaxOp::create(b, loc, f32(out), a, dims);
}

Value PrimitiveBuilder::sumAll(Value a) {
  SmallVector<int64_t> dims;
  for (int64_t i = 0, e = rank(a); i < e; ++i)
    dims.push_back(i);
  return reshape(reduceSum(a, dims), {});
}

Value PrimitiveBuilder::broadcastTo(Value a, ArrayRef<int64_t> shp) {
  if (shape(a) == shp)
    return a;
  return BroadcastOp::create(b, loc, f32(shp), a);
}

Value PrimitiveBuilder::sumTo(Value a, ArrayRef<int64_t> shp) {
  SmallVector<int64_t> dims;
  for (auto [i, sizes] : llvm::enumerate(llvm::zip(shape(a), shp))) {
    auto [have, want] = sizes;
    if (have != want) {
      assert(want == 1 && "sumTo reduces only broadcast dimensions");
      dims.push_back(i);
    }
  }
  return reduceSum(a, dims);
}

Value PrimitiveBuilder::reshape(Value a, ArrayRef<int64_t> shp) {
  if (shape(a) == shp)
    return a;
  return ReshapeOp::create(b, loc, f32(shp), a);
}

Value PrimitiveBuilder::transpose(Value a, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return a;
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape(a)[p]);
  return TransposeOp::create(b, loc, f32(out), a, perm);
}

Value PrimitiveBuilder::matmul(Value a, Value c, bool ta, bool tb) {
  ArrayRef<int64_t> sa = shape(a), sc = shape(c);
  size_t r = sa.size();
  SmallVector<int64_t> out(sa.drop_back(2));
  out.push_back(ta ? sa[r - 1] : sa[r - 2]);
  out.push_back(tb ? sc[r - 2] : sc[r - 1]);
  return MatmulOp::create(b, loc, f32(out), a, c, ta, tb);
}

Value PrimitiveBuilder::slice(Value a, int64_t dim, int64_t offset,
                              int64_t size) {
  if (offset == 0 && size == shape(a)[dim])
    return a;
  SmallVector<int64_t> out(shape(a));
  out[dim] = size;
  return SliceOp::create(b, loc, f32(out), a, dim, offset);
}

Value PrimitiveBuilder::pad(Value a, int64_t dim, int64_t offset,
                            int64_t size) {
  if (offset == 0 && size == shape(a)[dim])
    return a;
  SmallVector<int64_t> out(shape(a));
  out[dim] = size;
  return PadOp::create(b, loc, f32(out), a, dim, offset);
}

Value PrimitiveBuilder::concat(Value a, Value c, int64_t dim) {
  SmallVector<int64_t> out(shape(a));
  out[dim] += shape(c)[dim];
  return ConcatOp::create(b, loc, f32(out), a, c, dim);
}

Value PrimitiveBuilder::cumsum(Value a, int64_t dim, bool reverse) {
  return CumsumOp::create(b, loc, a.getType(), a, dim, reverse);
}

Value PrimitiveBuilder::softmax(Value a) {
  int64_t last = rank(a) - 1;
  Value m = stopGradient(reduceMax(a, {last}));
  Value e = exp(sub(a, m));
  return div(e, reduceSum(e, {last}));
}

Value PrimitiveBuilder::sigmoid(Value a) {
  Value one = scalar(rank(a), 1.0);
  return div(one, add(one, exp(neg(a))));
}

Value PrimitiveBuilder::gelu(Value u) {
  int64_t r = rank(u);
  Value u3 = mul(mul(u, u), u);
  Value inner = scale(add(u, scale(u3, 0.044715)), std::sqrt(2.0 / M_PI));
  Value t = add(scalar(r, 1.0), tanh(inner));
  return mul(scale(u, 0.5), t);
}

Value PrimitiveBuilder::linear(Value x, Value w, Value bias) {
  ArrayRef<int64_t> sx = shape(x);
  int64_t in = sx.back(), out = shape(w)[0];
  int64_t tokens = 1;
  for (int64_t d : sx.drop_back())
    tokens *= d;
  Value y = matmul(reshape(x, {tokens, in}), w, false, true);
  if (bias)
    y = add(y, reshape(bias, {1, out}));
  SmallVector<int64_t> res(sx.drop_back());
  res.push_back(out);
  return reshape(y, res);
}

Value PrimitiveBuilder::layerNorm(Value x, Value w, Value bias, double eps) {
  int64_t r = rank(x), d = shape(x).back();
  int64_t last = r - 1;
  Value mean = scale(reduceSum(x, {last}), 1.0 / d);
  Value xc = sub(x, mean);
  Value var = scale(reduceSum(mul(xc, xc), {last}), 1.0 / d);
  Value inv = rsqrt(add(var, scalar(r, eps)));
  SmallVector<int64_t> paramShape(r, 1);
  paramShape.back() = d;
  Value y = mul(mul(xc, inv), reshape(w, paramShape));
  return add(y, reshape(bias, paramShape));
}
