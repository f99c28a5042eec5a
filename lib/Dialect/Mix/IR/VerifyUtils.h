//===- VerifyUtils.h - Shared pieces of the mix verifiers -------*- C++ -*-===//
//
// Shape rendering and checks that the verifiers of the model-level and the
// primitive ops share. Private to lib/Dialect/Mix/IR.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_DIALECT_MIX_IR_VERIFYUTILS_H
#define MIX_LIB_DIALECT_MIX_IR_VERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir {
namespace mix {
namespace detail {

/// Renders a shape as `(2,8,16)`.
inline std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '(';
  llvm::interleave(shape, os, ",");
  os << ')';
  return s;
}

inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Checks that `v` (described as `what`) has exactly `expected` as shape.
inline LogicalResult expectShape(Operation *op, StringRef what, Value v,
                                 ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> got = shapeOf(v);
  if (got == expected)
    return success();
  return op->emitOpError() << what << " must have shape " << shapeStr(expected)
                           << ", got " << shapeStr(got);
}

/// Checks size-1 broadcasting of every operand against the result.
inline LogicalResult verifyBroadcast(Operation *op) {
  ArrayRef<int64_t> res = shapeOf(op->getResult(0));
  for (auto [idx, operand] : llvm::enumerate(op->getOperands())) {
    ArrayRef<int64_t> shape = shapeOf(operand);
    if (shape.size() != res.size())
      return op->emitOpError()
             << "operand #" << idx << " has rank " << shape.size()
             << ", but the result has rank " << res.size();
    for (auto [d, sizes] : llvm::enumerate(llvm::zip(shape, res))) {
      auto [have, want] = sizes;
      if (have != want && have != 1)
        return op->emitOpError()
               << "operand #" << idx << " dimension " << d << " is " << have
               << ", expected " << want << " (the result's) or 1";
    }
  }
  for (size_t d = 0; d < res.size(); ++d) {
    int64_t want = res[d];
    bool reached = llvm::any_of(op->getOperands(),
                                [&](Value v) { return shapeOf(v)[d] == want; });
    if (!reached)
      return op->emitOpError() << "result dimension " << d << " is " << want
                               << ", but no operand has that size";
  }
  return success();
}

} // namespace detail
} // namespace mix
} // namespace mlir

#endif // MIX_LIB_DIALECT_MIX_IR_VERIFYUTILS_H
