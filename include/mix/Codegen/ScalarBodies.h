//===- ScalarBodies.h - What an elementwise body computes -------*- C++ -*-===//
//
// The body of an elementwise `linalg.generic` as a function of its scalar
// inputs: evaluated in double at given points, so that a pass can tell
// which known function (the GELU's derivative, for a product's epilogue) a
// body computes, however autodiff and fusion arranged its operations.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CODEGEN_SCALARBODIES_H
#define MIX_CODEGEN_SCALARBODIES_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace mlir::mix {

/// The value \p body (a generic's region: block arguments, then
/// `linalg.yield` of one value) yields for the arguments \p args, computed
/// in double; none when it uses an operation other than float constants,
/// add, subtract, multiply, divide, negate, `math.tanh` and `math.exp`, or
/// yields other than one value.
std::optional<double> evaluateScalarBody(Block &body, ArrayRef<double> args);

/// The tanh-approximated GELU's derivative times an incoming gradient:
/// `dy * d/du [0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))]`.
double geluGradient(double dy, double u);

/// The tanh-approximated GELU: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715
/// u^3))).
double gelu(double u);

/// Whether \p body (one float input and the output, which it must not
/// read) yields gelu of its input, checked as computesGeluGradient is.
bool computesGelu(Block &body);

/// Whether \p body (two float inputs and the output, which it must not
/// read) yields geluGradient of its inputs, with \p gradInput (0 or 1) the
/// incoming gradient's: checked at fixed points spread over both signs and
/// the GELU's bend and tails, to a float computation's accuracy. A
/// function of two variables that agrees with the closed form there and
/// differs elsewhere is not what autodiff produces from the model's ops.
bool computesGeluGradient(Block &body, unsigned &gradInput);

} // namespace mlir::mix

#endif // MIX_CODEGEN_SCALARBODIES_H
