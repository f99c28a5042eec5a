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

    The ops at a run-time position (a decode step's `dynamic_slice`,
    `dynamic_update_slice` and `causal_mask at`) read the position, a 0-d
    tensor, where `positions-on-device` says: by default the host code
    reads it for the slices' offsets (views, and an insertion of the new
    row that bufferizes in place); with the option it is read only inside
    loop nests, as a target whose arguments live in device memory needs
    (the CUDA target): a slice is gathered, and an update becomes a select
    over the whole tensor.
  }];
  let options = [
    Option<"positionsOnDevice", "positions-on-device", "bool", "false",
           "Read run-time positions only inside loop nests (a device's "
           "kernels), never in host code">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // MIX_CONVERSION_PASSES_TD
