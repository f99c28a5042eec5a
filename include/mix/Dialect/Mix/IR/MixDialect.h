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
/// On a parameter argument of a model compiled with its streams sharded
/// over ranks: the number of shards. Each rank's argument is its
/// 1/shards of dimension 0.
inline constexpr llvm::StringLiteral kStreamShardsAttr = "mix.stream_shards";
} // namespace mix
} // namespace mlir

#endif // MIX_DIALECT_MIX_IR_MIXDIALECT_H
