//===- ExtractKernels.h - The kernels of a proved region mixture -*- C++
//-*-===//
//
// Private to lib/Transforms: mix-moe-to-dynamic-conv's kernel extraction.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_TRANSFORMS_EXTRACTKERNELS_H
#define MIX_LIB_TRANSFORMS_EXTRACTKERNELS_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir {
namespace mix {

/// A dynamic convolution's operands: the kernels (N, f, d), and either
/// per-expert biases (N, f) or one bias shared by all experts (f), or none.
struct ExtractedExperts {
  Value kernels, bias, sharedBias;
};

/// Emits, at the builder's insertion point (before \p op), the IR that
/// computes the kernels and biases of the region mixture \p op, whose
/// experts the prover accepted. Fails, with the reason in \p why, on a
/// region it cannot follow; the caller erases what was emitted.
FailureOr<ExtractedExperts> extractKernels(OpBuilder &b, MixtureOp op,
                                           std::string &why);

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_TRANSFORMS_EXTRACTKERNELS_H
