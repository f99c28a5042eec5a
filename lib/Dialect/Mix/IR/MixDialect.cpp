//===- MixDialect.cpp - The mix dialect -----------------------------------===//
//
// Registers the ops of the mix dialect and materialises its constants.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mix;

#include "mix/Dialect/Mix/IR/MixOpsDialect.cpp.inc"

void MixDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mix/Dialect/Mix/IR/MixOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mix/Dialect/Mix/IR/MixFusedOps.cpp.inc"
      >();
}

Operation *MixDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}
