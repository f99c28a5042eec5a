//===- MixOps.h - Operations of the mix dialect -----------------*- C++ -*-===//
//
// Declares the ops and enumerations of the mix dialect, and small queries
// over them that passes share.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXOPS_H
#define MIX_DIALECT_MIX_IR_MIXOPS_H

#include "mix/Dialect/Mix/IR/MixDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mix/Dialect/Mix/IR/MixEnums.h.inc"

namespace mlir {
namespace mix {
/// Whether `type` is a ranked tensor with static, non-zero dimensions.
bool isStaticNonEmpty(Type type);
class PrimitiveBuilder;
} // namespace mix
} // namespace mlir

#include "mix/Dialect/Mix/IR/MixInterfaces.h.inc"

#define GET_OP_CLASSES
#include "mix/Dialect/Mix/IR/MixOps.h.inc"

namespace mlir {
namespace mix {

/// Whether every row of the routing weights `gate` is known to sum to one:
/// produced by a softmax gate, or a constant whose rows all sum to one.
bool gateRowsSumToOne(Value gate);

/// Whether `gate` is known to be identically one (a normalised gate over a
/// single stream, or a splat constant 1).
bool gateIsOne(Value gate);

} // namespace mix
} // namespace mlir

#endif // MIX_DIALECT_MIX_IR_MIXOPS_H
