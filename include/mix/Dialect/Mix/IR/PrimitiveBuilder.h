//===- PrimitiveBuilder.h - Building primitive mix ops ----------*- C++ -*-===//
//
// A thin builder over the primitive mix ops that infers every result type,
// used by the decompositions and by autodiff.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_PRIMITIVEBUILDER_H
#define MIX_DIALECT_MIX_IR_PRIMITIVEBUILDER_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mix {

class PrimitiveBuilder {
public:
  PrimitiveBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location getLoc() const { return loc; }
  void setLoc(Location l) { loc = l; }

  static ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  static int64_t rank(Value v) { return shape(v).size(); }
  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }

  /// A splat constant.
  Value splat(ArrayRef<int64_t> shape, double value);
  /// A scalar constant shaped (1, ..., 1) to broadcast against rank `rank`.
  Value scalar(int64_t rank, double value) {
    return splat(SmallVector<int64_t>(rank, 1), value);
  }

  Value add(Value a, Value c) { return binary<AddOp>(a, c); }
  Value sub(Value a, Value c) { return binary<SubOp>(a, c); }
  Value mul(Value a, Value c) { return binary<MulOp>(a, c); }
  Value div(Value a, Value c) { return binary<DivOp>(a, c); }
  Value max(Value a, Value c) { return binary<MaxOp>(a, c); }
  Value scale(Value a, double s) { return mul(a, scalar(rank(a), s)); }

  template <typename OpTy> Value unary(Value a) {
    return OpTy::create(b, loc, a.getType(), a);
  }
  Value exp(Value a) { return unary<ExpOp>(a); }
  Value log(Value a) { return unary<LogOp>(a); }
  Value neg(Value a) { return unary<NegOp>(a); }
  Value tanh(Value a) { return unary<TanhOp>(a); }
  Value step(Value a) { return unary<StepOp>(a); }
  Value rsqrt(Value a) { return unary<RsqrtOp>(a); }
  Value stopGradient(Value a) { return unary<StopGradientOp>(a); }

  Value reduceSum(Value a, ArrayRef<int64_t> dims);
  Value reduceMax(Value a, ArrayRef<int64_t> dims);
  /// Sum over every dimension, as a rank-0 tensor.
  Value sumAll(Value a);
  Value broadcastTo(Value a, ArrayRef<int64_t> shape);
  /// Sums the broadcast dimensions of `a` away so it has `shape` (the
  /// adjoint of broadcasting `shape` up to `a`'s shape; same rank).
  Value sumTo(Value a, ArrayRef<int64_t> shape);
  Value reshape(Value a, ArrayRef<int64_t> shape);
  Value transpose(Value a, ArrayRef<int64_t> perm);
  Value matmul(Value a, Value c, bool transposeA = false,
               bool transposeB = false);
  Value slice(Value a, int64_t dim, int64_t offset, int64_t size);
  Value pad(Value a, int64_t dim, int64_t offset, int64_t size);
  Value concat(Value a, Value c, int64_t dim);
  Value cumsum(Value a, int64_t dim, bool reverse = false);

  /// Softmax over the last dimension (max-shifted).
  Value softmax(Value a);
  Value sigmoid(Value a);
  Value gelu(Value a);
  /// x W^T + b for any leading dimensions; `bias` may be null.
  Value linear(Value x, Value w, Value bias);
  /// LayerNorm over the last dimension with the biased variance.
  Value layerNorm(Value x, Value w, Value bias, double eps);

private:
  template <typename OpTy> Value binary(Value a, Value c) {
    SmallVector<int64_t> out;
    for (auto [x, y] : llvm::zip(shape(a), shape(c)))
      out.push_back(std::max(x, y));
    return OpTy::create(b, loc, f32(out), a, c);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mix
} // namespace mlir

#endif // MIX_DIALECT_MIX_IR_PRIMITIVEBUILDER_H
