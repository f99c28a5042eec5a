//===- MixDialect.h - The mix dialect ---------------------------*- C++ -*-===//
//
// Declares the mix dialect: gated-stream mixture language models as IR.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXDIALECT_H
#define MIX_DIALECT_MIX_IR_MIXDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"

#include "mix/Dialect/Mix/IR/MixOpsDialect.h.inc"

namespace mlir {
namespace mix {
/// On an argument of the model's functions: the parameter's name ("tokens"
/// and "targets" for the batch). The manifest keeps the names; the code
/// needs only positions (mix-drop-parameter-attrs removes them).
inline constexpr llvm::StringLiteral kParamNameAttr = "mix.param";
/// On a parameter argument of a model compiled with its streams sharded
/// over ranks: the number of shards. Each rank's argument is its
/// 1/shards of dimension 0.
inline constexpr llvm::StringLiteral kStreamShardsAttr = "mix.stream_shards";
/// On a result of a public function: the index of the argument whose
/// buffer the result is written into, in place (the caller sees the new
/// value there, and the result is not returned separately once the
/// function is bufferized). @adamw's new parameters and moments.
inline constexpr llvm::StringLiteral kUpdatesAttr = "mix.updates";
/// On @adamw (mix-append-adamw): the dictionary of the hyperparameters its
/// update was built with (beta1, beta2, epsilon, weight_decay,
/// max_grad_norm, f64 each). The package's manifest records them, and the
/// runtime computes the bias corrections it passes in with these betas.
inline constexpr llvm::StringLiteral kAdamWHyperparametersAttr = "mix.adamw";
/// On a matrix product (mix.matmul, then the linalg product it lowers to):
/// `array<i64: kind, p>`, a triangle of the product that need not be
/// computed (mix-causal-products). Kind 0: the left operand is zero above
/// the diagonal p (A[i, k] = 0 for k > i + p); 1: below it (A[i, k] = 0
/// for k < i - p); 2: the result's entries above the diagonal p are never
/// read to any effect, and any finite value may stand there.
inline constexpr llvm::StringLiteral kTriangleAttr = "mix.triangle";
} // namespace mix
} // namespace mlir

#endif // MIX_DIALECT_MIX_IR_MIXDIALECT_H
