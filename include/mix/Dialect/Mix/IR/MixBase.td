//===- MixBase.td - The mix dialect definition -------------*- tablegen -*-===//
//
// The `mix` dialect: gated-stream mixture language models as first-class IR.
// Declares the dialect and the base class of its ops.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXBASE_TD
#define MIX_DIALECT_MIX_IR_MIXBASE_TD

include "mlir/IR/OpBase.td"

def Mix_Dialect : Dialect {
  let name = "mix";
  let cppNamespace = "::mlir::mix";
  let summary = "Gated-stream mixture language models as first-class IR";
  let description = [{
    The `mix` dialect expresses the models of the cMoLLM paper ("Horizontal
    Scaling Laws for Convolutionally-Gated Mixture-of-LLMs") on value-semantic
    tensors: the GPT-2 backbone (embedding, layer norm, causal attention,
    linear, GELU, cross-entropy), and the gated-stream mixing that sets the
    architectures apart.

    Mixing is first-class: `mix.gate` produces routing weights and knows
    whether its rows sum to one; `mix.mixture` is the mixture-of-experts form
    `sum_k g_k E_k(x)`, with experts as stacked linear kernels or as a region;
    `mix.dynamic_conv` is the convolution form `x (sum_k g_k K_k)^T + sum_k
    g_k b_k`. The passes `mix-prove-dynamic-conv` and `mix-moe-to-dynamic-conv`
    prove and apply Theorem 4.1 of the paper between the two forms.
    ParaScale's stream replication and aggregation and AltUp's predict and
    correct steps are ops too, so that passes see the streams.

    All ops work on ranked, statically shaped `f32` tensors (token ids are
    integer tensors). Leading dimensions (batch, sequence) are free; the ops
    name the dimension they act on in their descriptions.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let hasConstantMaterializer = 1;
}

class Mix_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mix_Dialect, mnemonic, traits>;

// Models are compiled for fixed shapes: every tensor is static and
// non-empty, so verifiers can check (and divide by) every dimension.
class Mix_StaticTensorOf<list<Type> types>
    : Type<And<[RankedTensorOf<types>.predicate,
                CPred<"::mlir::mix::isStaticNonEmpty($_self)">]>,
           "statically shaped, non-empty " # RankedTensorOf<types>.summary,
           "::mlir::RankedTensorType">;

def Mix_FloatTensor : Mix_StaticTensorOf<[F32]>;
def Mix_IndexTensor : Mix_StaticTensorOf<[I32, I64]>;
def Mix_Scalar : 0DTensorOf<[F32]>;
/// A position in a sequence (a decode step's), as the entry points take it.
def Mix_Position : 0DTensorOf<[I32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI32Type())";
}

#endif // MIX_DIALECT_MIX_IR_MIXBASE_TD
