//===- SMTCheck.h - Z3 equivalence checks of mix rewrites -------*- C++ -*-===//
//
// An independent check of a rewrite, as Alive2 checks LLVM peepholes: both
// values are encoded over the reals at small sizes and Z3 decides whether
// they can differ.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_VERIFICATION_SMTCHECK_H
#define MIX_VERIFICATION_SMTCHECK_H

#include "mlir/IR/Value.h"

#include <string>

namespace mlir {
namespace mix {

struct SMTCheckResult {
  enum class Status {
    /// Equal for every input: proved by Z3.
    Equivalent,
    /// Z3 found inputs where the two differ; `message` gives them.
    Counterexample,
    /// Outside what the encoder handles, or Z3 ran out of time.
    Unknown,
  };
  Status status = Status::Unknown;
  /// The sizes the check ran at, the counterexample, or why it is unknown.
  std::string message;
};

/// Decides whether `source` and `target` (two values of the same type
/// computed from the same inputs) are equal over the reals. Values computed
/// by ops the encoder does not know are free variables; the results of a
/// softmax mix.gate are any rows of non-negative reals summing to one, those
/// of a sigmoid gate any reals in (0, 1); constants keep their values.
/// Dimensions are shrunk to small sizes (token dimensions to 2) in a way that
/// keeps every divisibility the verifiers rely on; a constant's sizes are
/// not shrunk.
SMTCheckResult checkEquivalence(Value source, Value target,
                                unsigned timeoutMs = 10000);

} // namespace mix
} // namespace mlir

#endif // MIX_VERIFICATION_SMTCHECK_H
