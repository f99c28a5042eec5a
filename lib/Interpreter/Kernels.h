//===- Kernels.h - The reference interpreter's op kernels -------*- C++ -*-===//
//
// The kernels of the reference interpreter, one family a file: each takes
// an op whose operands are known, as RefTensors, and computes its result or
// says why it cannot. Private to lib/Interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_INTERPRETER_KERNELS_H
#define MIX_LIB_INTERPRETER_KERNELS_H

#include "mix/Interpreter/ReferenceInterpreter.h"

#include "llvm/ADT/Twine.h"

#include <string>

namespace mlir {
namespace mix {
namespace interp {

/// The values of an op's operands, and where a kernel reports an error.
struct KernelArgs {
  Operation *op;
  /// The value of each operand of `op`, in order.
  ArrayRef<const RefTensor *> operands;
  std::string &error;

  const RefTensor &operator[](unsigned i) const { return *operands[i]; }
  /// The value of the operand `v` of `op`; null if `v` is null (an absent
  /// optional operand).
  const RefTensor *valueOf(Value v) const {
    if (v)
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        if (operand == v)
          return operands[i];
    return nullptr;
  }
  /// Records `message` and fails.
  LogicalResult fail(const Twine &message) const {
    error = message.str();
    return failure();
  }
};

/// `shape` as "(2,3,4)", for messages.
std::string shapeStr(ArrayRef<int64_t> shape);
/// The static shape of `v`'s ranked tensor type (empty if it has none).
ArrayRef<int64_t> typeShape(Value v);
/// The product of `shape`.
int64_t product(ArrayRef<int64_t> shape);
/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Calls `fn(index)` for every multi-index of `shape` in row-major order;
/// `index` is valid for the call only.
template <typename Fn> void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  SmallVector<int64_t> index(shape.size(), 0);
  int64_t total = product(shape);
  for (int64_t flat = 0; flat < total; ++flat) {
    fn(ArrayRef<int64_t>(index));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// `x W^T + b` over the last dimension of `x`, for `w` (out, in) and an
/// optional `b` (out): mix.linear, and a stacked expert.
FailureOr<RefTensor> linear(const RefTensor &x, const RefTensor &w,
                            const RefTensor *b, std::string &error);

/// The elementwise ops (Elementwise.cpp): binary with size-1 broadcasting,
/// unary and the activations.
bool isElementwiseOp(Operation *op);
FailureOr<RefTensor> computeElementwise(Operation *op, const KernelArgs &args);

/// Constants, shape and data movement (Shapes.cpp): reshapes, transpose,
/// slice, pad, concat, broadcast, reductions, cumsum, prefix_mean,
/// causal_mask.
bool isShapeOp(Operation *op);
FailureOr<RefTensor> computeShapeOp(Operation *op, const KernelArgs &args);

/// Layers and gated mixing (Mixing.cpp): linear, matmul, layer_norm, gate
/// and dynamic_conv. Mixtures are evaluated by the interpreter itself,
/// which owns the evaluation of their regions, and mixed by mixExperts().
bool isMixingOp(Operation *op);
FailureOr<RefTensor> computeMixingOp(Operation *op, const KernelArgs &args);

/// `sum_k g_k E_k` for the experts' outputs `experts[k]` of shape
/// (lead..., f), with the gate `g` of shape (lead'..., N) or
/// (lead'..., H, N) as mix.mixture reads it.
FailureOr<RefTensor> mixExperts(const RefTensor &gate,
                                ArrayRef<RefTensor> experts,
                                std::string &error);

/// Slice `k` of `stacked` along its first dimension.
FailureOr<RefTensor> sliceLeading(const RefTensor &stacked, int64_t k,
                                  std::string &error);

} // namespace interp
} // namespace mix
} // namespace mlir

#endif // MIX_LIB_INTERPRETER_KERNELS_H
