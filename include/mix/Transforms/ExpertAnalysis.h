//===- ExpertAnalysis.h - Is a mixture a dynamic convolution? ---*- C++ -*-===//
//
// Decides the conditions of Theorem 4.1 for a mix.mixture, by abstract
// interpretation of its experts, and explains the verdict.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TRANSFORMS_EXPERTANALYSIS_H
#define MIX_TRANSFORMS_EXPERTANALYSIS_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include <string>

namespace mlir {
namespace mix {

/// How a value depends on the mixture input x. Ordered: a join of two
/// classes is the larger one, except that Constant and Linear join to Affine.
enum class XDependence {
  /// Independent of x.
  Constant,
  /// Linear in x: v(a x + b y) = a v(x) + b v(y).
  Linear,
  /// Linear in x plus a term independent of x.
  Affine,
  /// Depends on x through a weight computed from x (outside the expert).
  Weight,
  /// Anything else: a nonlinearity, a product of x-dependent values, an op
  /// that mixes tokens, or an op the analysis does not know.
  Nonlinear,
};

/// The verdict on one mixture.
struct ExpertVerdict {
  bool proved = false;
  /// Proved: the facts used, one sentence each.
  SmallVector<std::string> facts;
  /// Refused: the condition of Theorem 4.1 that fails and why.
  std::string reason;
  /// Refused: concrete values at which the mixture differs from every
  /// dynamic convolution, computed by evaluating it; empty if none found.
  std::string counterexample;
  /// Refused without a counterexample: what the search tried.
  std::string searchNote;
  /// The op at which the analysis gave up, if any.
  Operation *culprit = nullptr;
  /// Whether the dynamic convolution needs a bias shared by all experts.
  bool sharedBias = false;
  /// With a shared bias: whether the gate rows sum to one, so that the bias
  /// passes through the mixture unchanged (otherwise it is gate-summed).
  bool gateRowsSumToOne = false;
};

/// Decides whether `op` equals a dynamic convolution (Theorem 4.1).
ExpertVerdict analyzeMixture(MixtureOp op);

/// Whether `value` is computed from `root` (through operands, and through
/// values that regions of defining ops use from above).
bool dependsOn(Value value, Value root);

/// The name of the attribute that records the verdict on a mixture.
inline constexpr llvm::StringLiteral kProofAttrName = "mix.proof";

/// Records `verdict` on `op` as a dictionary attribute `mix.proof`.
void recordVerdict(MixtureOp op, const ExpertVerdict &verdict);

/// Whether `op` carries a `mix.proof` that says `proved`.
bool isProved(MixtureOp op);

} // namespace mix
} // namespace mlir

#endif // MIX_TRANSFORMS_EXPERTANALYSIS_H
