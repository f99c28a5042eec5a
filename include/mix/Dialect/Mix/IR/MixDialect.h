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

#endif // MIX_DIALECT_MIX_IR_MIXDIALECT_H
