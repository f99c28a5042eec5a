//===- Counterexamples.h - Inputs that separate a refused mixture -*- C++
//-*-===//
//
// Private to lib/Transforms: the prover's counterexample search.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TRANSFORMS_COUNTEREXAMPLES_H
#define MIX_LIB_TRANSFORMS_COUNTEREXAMPLES_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include <string>

namespace mlir {
namespace mix {

/// What a counterexample search found.
struct Counterexample {
  /// Whether `text` is a counterexample (both sides and their values).
  bool found = false;
  /// The counterexample, or what was tried when none was found (and why,
  /// if the interpreter could not evaluate the mixture).
  std::string text;
};

/// Searches, with the reference interpreter, for concrete inputs at which
/// the mixture \p op behaves as no dynamic convolution can: with the gate
/// and weights held fixed, a dynamic convolution is affine in x, its output
/// at a token depends on that token's input alone, and two tokens with the
/// same input and gate get the same output. Each test evaluates the mixture
/// as it is written, at a few seeded random points; the first that
/// separates its two sides is returned, with both values.
Counterexample findCounterexample(MixtureOp op);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TRANSFORMS_COUNTEREXAMPLES_H
