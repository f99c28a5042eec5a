//===- MixInterfaces.td - What a mix op means, with the op -*- tablegen -*-===//
//
// Op interfaces of the mix dialect: each op that implements one states it
// next to its definition (MixPrimitiveOps.td), and its implementation lives
// with the op's other methods, not in a switch of the pass that uses it.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXINTERFACES_TD
#define MIX_DIALECT_MIX_IR_MIXINTERFACES_TD

include "mlir/IR/OpBase.td"

def Mix_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    A primitive op whose vector-Jacobian product mix-autodiff can build:
    given the adjoint `dy` of the op's first result, `buildVJP` emits,
    with the primitive builder at the insertion point of the backward pass,
    each operand's adjoint and hands it to `accumulate(operand, adjoint)`,
    which adds it to what the operand's other uses contributed. An adjoint
    has its operand's type (broadcast operands are summed back to their
    shape). Operands through which no gradient flows (integer ids, a step
    function, `stop_gradient`) get nothing.
  }];
  let cppNamespace = "::mlir::mix";
  let methods = [
    InterfaceMethod<
      "Emits the adjoint of each operand given the adjoint of the result.",
      "void", "buildVJP",
      (ins "::mlir::mix::PrimitiveBuilder &":$builder,
           "::mlir::Value":$resultAdjoint,
           "::llvm::function_ref<void(::mlir::Value, ::mlir::Value)>":$accumulate)>
  ];
}

/// The trait list entry of a differentiable op.
defvar Mix_Differentiable =
    DeclareOpInterfaceMethods<Mix_DifferentiableOpInterface>;

def Mix_DecomposableOpInterface : OpInterface<"DecomposableOpInterface"> {
  let description = [{
    A model-level op that has an equivalent in smaller mix ops, in the style
    of `linalg::AggregatedOpInterface`: `decomposeOperation` emits the op's
    computation at the builder's insertion point and returns the values that
    replace its results. It fails, having created nothing, when this instance
    has no decomposition. mix-decompose applies it under the greedy driver
    until only primitives remain; a decomposition may emit other
    decomposable ops (a region mixture's cloned experts), which are then
    decomposed in turn.
  }];
  let cppNamespace = "::mlir::mix";
  let methods = [
    InterfaceMethod<
      "Emits the op as smaller mix ops; returns its results' replacements.",
      "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>",
      "decomposeOperation", (ins "::mlir::OpBuilder &":$builder)>
  ];
}

/// The trait list entry of a decomposable op.
defvar Mix_Decomposable =
    DeclareOpInterfaceMethods<Mix_DecomposableOpInterface>;

#endif // MIX_DIALECT_MIX_IR_MIXINTERFACES_TD
