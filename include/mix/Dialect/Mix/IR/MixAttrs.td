//===- MixAttrs.td - Enumerations of the mix dialect -------*- tablegen -*-===//
//
// The enumerated attributes of the mix dialect: gating kinds, gate
// normalisations, and the mixing orders of a dynamic convolution.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXATTRS_TD
#define MIX_DIALECT_MIX_IR_MIXATTRS_TD

include "mlir/IR/EnumAttr.td"

def Mix_GatingKind : I32EnumAttr<"GatingKind", "cMoLLM gating variant (docs/models.md §3)", [
    I32EnumAttrCase<"simple", 0>,
    I32EnumAttrCase<"context_aware", 1>,
    I32EnumAttrCase<"multi_head", 2>,
    I32EnumAttrCase<"adaptive", 3>
  ]> {
  let cppNamespace = "::mlir::mix";
}

def Mix_GateNormalization : I32EnumAttr<"GateNormalization",
    "how gate logits become routing weights", [
    I32EnumAttrCase<"softmax", 0>,
    I32EnumAttrCase<"sigmoid", 1>
  ]> {
  let cppNamespace = "::mlir::mix";
}

def Mix_MixingOrder : I32EnumAttr<"MixingOrder",
    "the order in which a dynamic convolution mixes and applies kernels", [
    I32EnumAttrCase<"apply_then_mix", 0>,
    I32EnumAttrCase<"mix_then_apply", 1>,
    I32EnumAttrCase<"stack_then_mix", 2>
  ]> {
  let cppNamespace = "::mlir::mix";
}

#endif // MIX_DIALECT_MIX_IR_MIXATTRS_TD
