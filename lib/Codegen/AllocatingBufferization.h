//===- AllocatingBufferization.h - Results in new buffers -------*- C++ -*-===//
//-*-===//
//
// The one-shot bufferization model shared by the mix ops that survive the
// lowering to linalg (`mix.all_reduce`, the fused ops): every operand is
// read, nothing is written in place, every result is a fresh allocation.
// A model derives from it and adds `bufferize`. Private to lib/Codegen.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_LIB_CODEGEN_ALLOCATINGBUFFERIZATION_H
#define MIX_LIB_CODEGEN_ALLOCATINGBUFFERIZATION_H

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace mix {

/// Every operand read, nothing written in place, every result a new
/// allocation of its tensor's shape.
template <typename Model, typename Op>
struct AllocatingBufferization
    : bufferization::BufferizableOpInterface::ExternalModel<Model, Op> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const bufferization::AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const bufferization::AnalysisState &) const {
    return false;
  }

  bufferization::AliasingValueList
  getAliasingValues(Operation *, OpOperand &,
                    const bufferization::AnalysisState &) const {
    return {};
  }

  FailureOr<bufferization::BufferLikeType> getBufferType(
      Operation *, Value value, const bufferization::BufferizationOptions &,
      const bufferization::BufferizationState &, SmallVector<Value> &) const {
    auto type = cast<RankedTensorType>(value.getType());
    return cast<bufferization::BufferLikeType>(
        MemRefType::get(type.getShape(), type.getElementType()));
  }
};

} // namespace mix
} // namespace mlir

#endif // MIX_LIB_CODEGEN_ALLOCATINGBUFFERIZATION_H
