//===- Passes.td - Conversions out of the mix dialect ------*- tablegen -*-===//
//
// The lowering of primitive mix ops to linalg, tensor, arith and math.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CONVERSION_PASSES_TD
#define MIX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertMixToLinalgPass : Pass<"convert-mix-to-linalg"> {
  let summary = "Lower primitive mix ops to linalg on tensors";
  let description = [{
    Elementwise ops become `linalg.generic` with broadcasting indexing maps,
    reductions `linalg.generic` with reduction iterators, matrix products
    `linalg.matmul` / `linalg.batch_matmul`, layout ops `linalg.transpose`
    and tensor reshapes and slices, index ops (gather, take/put along)
    `linalg.generic` with `tensor.extract`, and the sequential ones
    (scatter-add, cumsum) `scf.for` loops on tensors. Model-level ops must
    have been decomposed first (`mix-decompose`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // MIX_CONVERSION_PASSES_TD
