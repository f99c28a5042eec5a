//===- ModelBuilder.h - Model spec to mix IR --------------------*- C++ -*-===//
//
// Builds the forward pass and loss of a model (docs/models.md §2-5) as one function of
// mix ops on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_FRONTEND_MODELBUILDER_H
#define MIX_FRONTEND_MODELBUILDER_H

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Frontend/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
namespace mix {

/// Builds `func.func @forward(params..., tokens, targets) -> (loss, ce, aux)`
/// for fixed `batch` and `seq`, and `@logits` with the same arguments
/// returning the logits (B,S,V); parameters come in paramTable(spec) order,
/// each argument tagged with its name.
/// Builds @forward and @logits of \p spec for a (batch, seq) batch. With
/// \p streamShards > 1 (cMoLLM only, dividing the streams), each rank holds
/// 1/streamShards of every layer's stream kernels: it computes its streams'
/// share of the mixture, and `mix.all_reduce` sums the shares.
///
/// With \p decodeBatch > 0, also `@decode(params..., tokens (Bd,1),
/// position, state...) -> (logits (Bd,1,V), state...)`: one new token of
/// each of Bd = decodeBatch sequences at `position` (a 0-d i32), given the
/// state of the earlier positions (decodeStateTable order), which each
/// returned state value updates in place (mix.updates). With
/// \p prefillChunk > 1 too, `@prefill`: the same for prefillChunk new
/// tokens a sequence (tokens (Bd,C), logits (Bd,C,V)), at positions
/// `position .. position + C - 1`.
OwningOpRef<ModuleOp> buildModel(MLIRContext *context, const ModelSpec &spec,
                                 int64_t batch, int64_t seq,
                                 int64_t streamShards = 1,
                                 int64_t decodeBatch = 0,
                                 int64_t prefillChunk = 0);

} // namespace mix
} // namespace mlir

#endif // MIX_FRONTEND_MODELBUILDER_H
