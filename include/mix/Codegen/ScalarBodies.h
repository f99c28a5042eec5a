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
/// add, subtract, multiply, divide, negate, `math.tanh`, `math.exp` and
/// `arith.extf` (exact), or yields other than one value. With \p result,
/// the value of \p result (a value of the body) instead of the yielded
/// one.
std::optional<double> evaluateScalarBody(Block &body, ArrayRef<double> args,
                                         Value result = {});

/// The tanh-approximated GELU's derivative times an incoming gradient:
/// `dy * d/du [0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))]`.
double geluGradient(double dy, double u);

/// The tanh-approximated GELU: 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715
/// u^3))).
double gelu(double u);

/// Whether \p body (one float input and the output, which it must not
/// read) yields gelu of its input, checked as computesGeluGradient is.
/// Inputs and results are f32, except as \p rounded allows.
bool computesGelu(Block &body, bool rounded = false);

/// Whether \p body (two float inputs and the output, which it must not
/// read) yields geluGradient of its inputs, with \p gradInput (0 or 1) the
/// incoming gradient's: checked at fixed points spread over both signs and
/// the GELU's bend and tails, to a float computation's accuracy. A
/// function of two variables that agrees with the closed form there and
/// differs elsewhere is not what autodiff produces from the model's ops.
/// With \p rounded, the forms --precision bf16 leaves (mix-round-into-
/// producers): the result is yielded as bf16 (`arith.truncf` of the
/// computed f32 value, the body's last operation), and an input may be
/// bf16, widened by `arith.extf`; inputs and results are f32 otherwise.
bool computesGeluGradient(Block &body, unsigned &gradInput,
                          bool rounded = false);

} // namespace mlir::mix

#endif // MIX_CODEGEN_SCALARBODIES_H
