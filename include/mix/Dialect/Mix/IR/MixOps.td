//===- MixOps.td - Operations of the mix dialect -----------*- tablegen -*-===//
//
// The ops of the mix dialect: gated-stream mixing (gate, mixture, dynamic
// convolution, balance loss, ParaScale streams, AltUp) and the model-level
// ops a whole GPT-2-style model is built from.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXOPS_TD
#define MIX_DIALECT_MIX_IR_MIXOPS_TD

include "mix/Dialect/Mix/IR/MixBase.td"
include "mix/Dialect/Mix/IR/MixAttrs.td"
include "mix/Dialect/Mix/IR/MixInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise arithmetic and activations
//===----------------------------------------------------------------------===//

class Mix_BinaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Mix_Op<mnemonic, !listconcat([Pure], traits)> {
  let summary = "elementwise " # formula # " with size-1 broadcasting";
  let description = [{
    Computes `}] # formula # [{` elementwise. Both operands have the result's
    rank; every dimension of an operand either equals the result's or is 1,
    in which case that operand is broadcast along it (so a `(B,S,1)` scale
    multiplies a `(B,S,d)` tensor).

    Example:
    ```mlir
    %y = mix.}] # mnemonic # [{ %a, %b : tensor<2x8x16xf32>, tensor<2x8x1xf32> -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$lhs, Mix_FloatTensor:$rhs);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_AddOp : Mix_BinaryOp<"add", "lhs + rhs", [Mix_Differentiable]> {
  // The sum of two zero-pads of adjacent ranges is a pad of their
  // concatenation (the adjoint of slicing one tensor into parts).
  let hasCanonicalizer = 1;
}
def Mix_SubOp : Mix_BinaryOp<"sub", "lhs - rhs", [Mix_Differentiable]>;
def Mix_MulOp : Mix_BinaryOp<"mul", "lhs * rhs", [Mix_Differentiable]>;

class Mix_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Mix_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType], traits)> {
  let summary = "elementwise " # mnemonic;
  let description = [{
    Computes `}] # formula # [{` elementwise.

    Example:
    ```mlir
    %y = mix.}] # mnemonic # [{ %x : tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Mix_GeluOp : Mix_UnaryOp<"gelu",
    "0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))",
    [Mix_Decomposable]>;
def Mix_ReluOp : Mix_UnaryOp<"relu", "max(u, 0)", [Mix_Decomposable]>;
def Mix_SigmoidOp : Mix_UnaryOp<"sigmoid", "1 / (1 + exp(-u))",
                                 [Mix_Decomposable]>;
def Mix_TanhOp : Mix_UnaryOp<"tanh", "tanh(u)", [Mix_Differentiable]>;
def Mix_SiluOp : Mix_UnaryOp<"silu", "u * sigmoid(u)", [Mix_Decomposable]>;

//===----------------------------------------------------------------------===//
// Model-level ops
//===----------------------------------------------------------------------===//

def Mix_LinearOp : Mix_Op<"linear", [Mix_Decomposable, Pure]> {
  let summary = "affine map of the last dimension: x W^T + b";
  let description = [{
    `torch.nn.Linear`: `result[..., o] = sum_i input[..., i] weight[o, i] +
    bias[o]`, with `weight` of shape `(out, in)` and an optional `bias` of
    shape `(out)`. Leading dimensions are carried through.

    Example:
    ```mlir
    %y = mix.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$weight,
                       Optional<Mix_FloatTensor>:$bias);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_EmbeddingOp : Mix_Op<"embedding", [Mix_Decomposable, Pure]> {
  let summary = "token plus position embedding";
  let description = [{
    `result[b, s] = wte[tokens[b, s]] + wpe[s]` for tokens of shape `(B,S)`,
    `wte` of shape `(V,d)` and `wpe` of shape `(n_positions,d)` with
    `S <= n_positions` (docs/models.md §2). Token ids outside `[0,V)` are undefined
    behaviour here; the runtime rejects them before a step runs.

    Example:
    ```mlir
    %x = mix.embedding %tokens, %wte, %wpe : (tensor<2x8xi32>, tensor<256x16xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_IndexTensor:$tokens, Mix_FloatTensor:$wte,
                       Mix_FloatTensor:$wpe);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $tokens `,` $wte `,` $wpe attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_LayerNormOp : Mix_Op<"layer_norm", [Mix_Decomposable, Pure]> {
  let summary = "layer normalisation of the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias` over the last dimension,
    with the biased variance (docs/models.md §2). `weight` and `bias` have the shape of
    the last dimension; `eps` must be positive.

    Example:
    ```mlir
    %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$weight,
                       Mix_FloatTensor:$bias, F64Attr:$eps);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `eps` $eps attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_AttentionOp : Mix_Op<"attention", [
    Mix_Decomposable, Pure, AttrSizedOperandSegments]> {
  let summary = "causal multi-head self-attention, with optional prefixes";
  let description = [{
    Takes the fused projection `qkv` of shape `(B,S,3d)` (q, k, v in that
    order, docs/models.md §2), splits each into `heads` heads of `dh = d/heads`, and
    returns `merge_heads(softmax(q k^T / sqrt(dh) + causal_mask) v)` of shape
    `(B,S,d)`.

    With `prefix(%k, %v)` (ParaScale, docs/models.md §4) the batch is stream-major,
    `B = P * B0`, and the prefixes have shape `(P,heads,T_p,dh)`: row
    `p * B0 + b` attends to the `T_p` prefix positions of stream `p` as well as
    to the causal real positions.

    Example:
    ```mlir
    %o = mix.attention %qkv heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
    %p = mix.attention %qkv2 prefix(%pk, %pv) heads 4 : (tensor<4x8x48xf32>, tensor<2x4x3x4xf32>, tensor<2x4x3x4xf32>) -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$qkv,
                       Optional<Mix_FloatTensor>:$prefix_k,
                       Optional<Mix_FloatTensor>:$prefix_v,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $qkv (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `heads` $heads attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_CachedAttentionOp : Mix_Op<"cached_attention", [
    Mix_Decomposable, Pure, AttrSizedOperandSegments]> {
  let summary = "causal attention of new positions against a key-value cache";
  let description = [{
    The attention of `mix.attention` for `Q` new positions of each sequence,
    `position .. position + Q - 1`, given the keys and values of the
    positions before them: a decode step (`Q = 1`). `qkv` is the new
    positions' fused projection `(B,Q,3d)`; `k_cache` and `v_cache`, of
    shape `(B,heads,K,dh)`, hold the keys and values of positions
    `0 .. position - 1` (what lies beyond is not read: it is masked, and
    must be finite). The op writes the new keys and values at `position`
    and returns, with the attention's output `(B,Q,d)`, the caches so
    updated. Prefixes are as for `mix.attention` (ParaScale: `B = P * B0`,
    stream-major). `position + Q <= K` is required of the caller.

    Example:
    ```mlir
    %o, %k2, %v2 = mix.cached_attention %qkv, %k, %v at %pos heads 4 : (tensor<1x1x48xf32>, tensor<1x4x64x4xf32>, tensor<1x4x64x4xf32>, tensor<i32>) -> (tensor<1x1x16xf32>, tensor<1x4x64x4xf32>, tensor<1x4x64x4xf32>)
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$qkv, Mix_FloatTensor:$k_cache,
                       Mix_FloatTensor:$v_cache, Mix_Position:$position,
                       Optional<Mix_FloatTensor>:$prefix_k,
                       Optional<Mix_FloatTensor>:$prefix_v,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Mix_FloatTensor:$result, Mix_FloatTensor:$new_k_cache,
                      Mix_FloatTensor:$new_v_cache);
  let assemblyFormat = [{
    $qkv `,` $k_cache `,` $v_cache `at` $position
    (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `heads` $heads attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_PrefixMeanOp : Mix_Op<"prefix_mean", [
    Mix_Decomposable, Pure, SameOperandsAndResultType]> {
  let summary = "causal prefix mean along the sequence";
  let description = [{
    `result[b, s] = mean_{t <= s} input[b, t]` for an input of shape
    `(B,S,d)`: the pooled context of cMoLLM's `context_aware` and `adaptive`
    gates (docs/models.md §3), which sees no future position.

    Example:
    ```mlir
    %c = mix.prefix_mean %m : tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Mix_CrossEntropyOp : Mix_Op<"cross_entropy", [Mix_Decomposable, Pure]> {
  let summary = "mean token cross-entropy";
  let description = [{
    `mean_{b,s} (logsumexp(logits[b,s]) - logits[b,s,targets[b,s]])` for
    logits of shape `(B,S,V)` and integer targets of shape `(B,S)`; the
    result is a scalar.

    Example:
    ```mlir
    %ce = mix.cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$logits, Mix_IndexTensor:$targets);
  let results = (outs Mix_Scalar:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gated-stream mixing (cMoLLM)
//===----------------------------------------------------------------------===//

def Mix_GateOp : Mix_Op<"gate", [
    Mix_Decomposable, Pure, AttrSizedOperandSegments]> {
  let summary = "routing weights over N streams from token features";
  let description = [{
    Produces the routing weights `g` of cMoLLM (docs/models.md §3) from token features
    `input` of shape `(B,S,d)`. The gating `kind` decides the operands:

    | kind | operands | result |
    |---|---|---|
    | `simple` | `weight (N,d)`, `bias (N)` | `(B,S,N)` |
    | `multi_head` | `weight (H,N,d/H)`, `bias (H,N)` | `(B,S,H,N)` |
    | `context_aware` | as simple, plus `modulation (B,S,d)` and `norm(w, b)` of shape `(d)` | `(B,S,N)` |
    | `adaptive` | as simple, plus `scale (B,S,1)` | `(B,S,N)` |

    The logits are `input @ weight^T + bias` (per head chunk for
    `multi_head`; of `LN(input * modulation; norm)` for `context_aware`;
    multiplied by `scale` for `adaptive`), and `normalization` turns them into
    weights: `softmax` over the N streams, whose rows sum to one, or
    `sigmoid`, whose rows do not. The prove pass relies on that difference.
    The modulation and the adaptive scale are ordinary values computed by the
    model (from `mix.prefix_mean`), so the gate itself stays local to a token.

    Example:
    ```mlir
    %g = mix.gate simple softmax %m, %w, %b : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x8x4xf32>
    %h = mix.gate multi_head softmax %m, %wh, %bh : (tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> tensor<2x8x2x4xf32>
    %c = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<2x8x16xf32>, tensor<4x16xf32>, tensor<4xf32>, tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x4xf32>
    ```
  }];
  let arguments = (ins Mix_GatingKind:$kind,
                       Mix_GateNormalization:$normalization,
                       Mix_FloatTensor:$input, Mix_FloatTensor:$weight,
                       Mix_FloatTensor:$bias,
                       Optional<Mix_FloatTensor>:$modulation,
                       Optional<Mix_FloatTensor>:$norm_weight,
                       Optional<Mix_FloatTensor>:$norm_bias,
                       Optional<Mix_FloatTensor>:$scale,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $normalization $input `,` $weight `,` $bias
    (`modulation` $modulation^)?
    (`norm` `(` $norm_weight^ `,` $norm_bias `)`)?
    (`scale` $scale^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether every row of routing weights sums to one.
    bool rowsSumToOne() {
      return getNormalization() == GateNormalization::softmax;
    }
    int64_t getNumStreams() {
      return getResult().getType().getShape().back();
    }
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mix_MixtureOp : Mix_Op<"mixture", [
    Mix_Decomposable, RecursiveMemoryEffects, AttrSizedOperandSegments]> {
  let summary = "mixture of experts: sum_k g_k E_k(x)";
  let description = [{
    The MoE form of a gated-stream layer: `result = sum_k g_k E_k(input)`
    over N experts, for `input` of shape `(..., d)` and a `gate` of shape
    `(..., N)` (one weight per token and expert), or `(..., H, N)` with
    per-head gates where head `j` weights output channels
    `[j f/H, (j+1) f/H)`. Leading gate dimensions equal the input's or are 1
    (a gate shared across the sequence is `(B,1,N)`).

    The experts come in one of two forms.

    *Stacked linear kernels*: `kernels` of shape `(N,f,d)` and
    `E_k(x) = x K_k^T + b_k`, where the bias is either per expert
    (`bias`, shape `(N,f)`) or one `shared_bias` of shape `(f)` added inside
    every expert, or absent.

    *A region* computing `E_k(x)`: `experts(%w1, ...)` are stacked per-expert
    weights with a leading dimension N; the region's block receives the
    input and the k-th slice of each weight, and yields `E_k(x)` of shape
    `(..., f)`. Any ops may appear, so ReLU, GELU or two-layer experts are
    expressible; the region may also use values defined above it.

    `mix-prove-dynamic-conv` decides whether the mixture equals a
    `mix.dynamic_conv` (Theorem 4.1) and records the verdict in the
    `mix.proof` attribute.

    Example:
    ```mlir
    %u = mix.mixture %x, %g kernels %K bias %b : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
    %r = mix.mixture %x, %g experts(%K) : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>) -> tensor<2x8x64xf32> {
    ^bb0(%xi: tensor<2x8x16xf32>, %k: tensor<64x16xf32>):
      %y = mix.linear %xi, %k : (tensor<2x8x16xf32>, tensor<64x16xf32>) -> tensor<2x8x64xf32>
      %z = mix.relu %y : tensor<2x8x64xf32>
      mix.yield %z : tensor<2x8x64xf32>
    }
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$gate,
                       Optional<Mix_FloatTensor>:$kernels,
                       Optional<Mix_FloatTensor>:$bias,
                       Optional<Mix_FloatTensor>:$shared_bias,
                       Variadic<Mix_FloatTensor>:$expert_weights);
  let results = (outs Mix_FloatTensor:$result);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $input `,` $gate (`kernels` $kernels^)? (`bias` $bias^)?
    (`shared_bias` $shared_bias^)? (`experts` `(` $expert_weights^ `)`)?
    attr-dict `:` functional-type(operands, results) ($body^)?
  }];
  let extraClassDeclaration = [{
    /// Whether the experts are given by a region rather than stacked kernels.
    bool hasExpertRegion() { return !getBody().empty(); }
    int64_t getNumStreams() {
      return getGate().getType().getShape().back();
    }
    /// The number of gate heads: 1 unless the gate has a head dimension.
    int64_t getNumGateHeads();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "Type":$resultType, "Value":$input, "Value":$gate,
                   "Value":$kernels, "Value":$bias, "Value":$sharedBias)>
  ];
}

def Mix_YieldOp : Mix_Op<"yield", [Pure, Terminator, ReturnLike,
                                   HasParent<"MixtureOp">]> {
  let summary = "the value of one expert";
  let description = [{
    Terminates a `mix.mixture` region with the expert's output `E_k(x)`.

    Example:
    ```mlir
    mix.yield %e : tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Mix_DynamicConvOp : Mix_Op<"dynamic_conv", [
    Mix_Decomposable, Pure, AttrSizedOperandSegments]> {
  let summary = "dynamic 1x1 convolution: x (sum_k g_k K_k)^T + sum_k g_k b_k";
  let description = [{
    The convolution form of a mixture of linear experts (Theorem 4.1): the
    kernel applied to each token is the gate-weighted sum of the N stacked
    kernels `(N,f,d)`, `result = x Ktilde^T + btilde` with
    `Ktilde = sum_k g_k K_k` and `btilde = sum_k g_k b_k` for a per-expert
    `bias (N,f)`; a `shared_bias (f)` is added once, unweighted. Gates are as
    for `mix.mixture` (per token, per sequence, or per head).

    `order`, chosen by `mix-select-mixing-order`, says how to lower it:
    `apply_then_mix` (the default) scales the input by each stream's gate
    weights, `[g_1 x | ... | g_N x]`, and applies each stream's kernel to its
    part (no `(T,N,f)` intermediate); `stack_then_mix` applies the kernels
    stacked as one `(N f, d)` matrix in one product and mixes the N outputs
    with the gate; `mix_then_apply` forms `Ktilde` once per distinct gate row
    and applies it (the better choice when a gate is shared by a sequence).

    Example:
    ```mlir
    %u = mix.dynamic_conv %x, %g kernels %K bias %b order apply_then_mix : (tensor<2x8x16xf32>, tensor<2x8x4xf32>, tensor<4x64x16xf32>, tensor<4x64xf32>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$gate,
                       Mix_FloatTensor:$kernels,
                       Optional<Mix_FloatTensor>:$bias,
                       Optional<Mix_FloatTensor>:$shared_bias,
                       OptionalAttr<Mix_MixingOrder>:$order);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gate `kernels` $kernels (`bias` $bias^)?
    (`shared_bias` $shared_bias^)? (`order` $order^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    int64_t getNumStreams() {
      return getGate().getType().getShape().back();
    }
    int64_t getNumGateHeads();
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Mix_BalanceLossOp : Mix_Op<"balance_loss", [Mix_Decomposable, Pure]> {
  let summary = "cMoLLM load-balancing loss of one layer";
  let description = [{
    For routing weights of shape `(B,S,N)` or `(B,S,H,N)`: per sequence b,
    `p_k = mean over s (and heads) of g_k`, and the result is
    `mean_b (alpha * N * sum_k p_k^2)` (docs/models.md §3), a scalar. It is
    `alpha` exactly when every sequence spreads its weight evenly.

    Example:
    ```mlir
    %aux = mix.balance_loss %g alpha 1.000000e-02 : tensor<2x8x4xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$gate, F64Attr:$alpha);
  let results = (outs Mix_Scalar:$result);
  let assemblyFormat = [{
    $gate `alpha` $alpha attr-dict `:` type($gate) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Streams (ParaScale) and alternating updates (AltUp)
//===----------------------------------------------------------------------===//

def Mix_ReplicateStreamsOp : Mix_Op<"replicate_streams", [
    Mix_Decomposable, Pure]> {
  let summary = "replicate a batch into P stream-major copies";
  let description = [{
    For an input of shape `(B, ...)`, the result of shape `(P*B, ...)` holds
    stream p's copy of row b at row `p*B + b` (docs/models.md §4). ParaScale uses it
    for its P streams; AltUp for its K blocks.

    Example:
    ```mlir
    %r = mix.replicate_streams %x streams 4 : tensor<2x8x16xf32> -> tensor<8x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$streams);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `streams` $streams attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mix_SelectStreamOp : Mix_Op<"select_stream", [Mix_Decomposable, Pure]> {
  let summary = "one stream of a stream-major batch";
  let description = [{
    Rows `[index*B, (index+1)*B)` of an input of shape `(P*B, ...)`:
    stream `index` of `streams`.

    Example:
    ```mlir
    %a = mix.select_stream %x stream 1 of 2 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$index,
                       ConfinedAttr<I64Attr, [IntPositive]>:$streams);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `stream` $index `of` $streams attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_MeanStreamsOp : Mix_Op<"mean_streams", [Mix_Decomposable, Pure]> {
  let summary = "the mean of the streams of a stream-major batch";
  let description = [{
    `result[b] = mean_p input[p*B + b]` for an input of shape `(P*B, ...)`:
    AltUp's final `mean_i y_i` (docs/models.md §5).

    Example:
    ```mlir
    %m = mix.mean_streams %y streams 2 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$streams);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `streams` $streams attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Mix_AggregateStreamsOp : Mix_Op<"aggregate_streams", [
    Mix_Decomposable, Pure]> {
  let summary = "ParaScale's learned aggregation of P streams";
  let description = [{
    For stream outputs of shape `(P*B,S,d)` (stream-major), forms
    `cat = [z^0 | ... | z^(P-1)]` of shape `(B,S,P*d)`, the weights
    `w = softmax_P(silu(cat fc1^T + b1) fc2^T + b2)` smoothed to
    `(1 - smoothing) w + smoothing / P`, and returns `sum_p w_p z^p` of
    shape `(B,S,d)` (docs/models.md §4). `fc1` is `(d, P*d)`, `fc2` is `(P, d)`.

    Example:
    ```mlir
    %z = mix.aggregate_streams %zs, %w1, %b1, %w2, %b2 smoothing 1.000000e-02 : (tensor<4x8x16xf32>, tensor<16x32xf32>, tensor<16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<2x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$fc1_weight,
                       Mix_FloatTensor:$fc1_bias, Mix_FloatTensor:$fc2_weight,
                       Mix_FloatTensor:$fc2_bias, F64Attr:$smoothing);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $fc1_weight `,` $fc1_bias `,` $fc2_weight `,` $fc2_bias
    `smoothing` $smoothing attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    int64_t getNumStreams() {
      return getFc2Weight().getType().getShape().front();
    }
  }];
  let hasVerifier = 1;
}

def Mix_AltUpPredictOp : Mix_Op<"altup_predict", [Mix_Decomposable, Pure]> {
  let summary = "AltUp prediction: xhat_i = sum_q predict[i,q] x_q";
  let description = [{
    For K blocks stored stream-major, `input` of shape `(K*B,S,d)`, and a
    `predict` matrix `(K,K)`, returns the predicted blocks
    `xhat_i = sum_q predict[i,q] x_q` in the same layout (docs/models.md §5).

    Example:
    ```mlir
    %xh = mix.altup_predict %x, %p : (tensor<4x8x16xf32>, tensor<2x2xf32>) -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$predict);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $predict attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_AltUpCorrectOp : Mix_Op<"altup_correct", [Mix_Decomposable, Pure]> {
  let summary = "AltUp correction: y_i = xhat_i + correct_i (xtil - xhat_j)";
  let description = [{
    Given the predicted blocks `xhat` `(K*B,S,d)`, the output `computed`
    `(B,S,d)` of the transformer block on the active block `active = j`, and
    the per-block coefficients `correct` `(K)`, returns
    `y_i = xhat_i + correct_i * (computed - xhat_j)` (docs/models.md §5).

    Example:
    ```mlir
    %y = mix.altup_correct %xh, %xt, %c active 1 : (tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<2xf32>) -> tensor<4x8x16xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$predicted, Mix_FloatTensor:$computed,
                       Mix_FloatTensor:$correct,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$active);
  let results = (outs Mix_FloatTensor:$result);
  let assemblyFormat = [{
    $predicted `,` $computed `,` $correct `active` $active attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

include "mix/Dialect/Mix/IR/MixPrimitiveOps.td"

#endif // MIX_DIALECT_MIX_IR_MIXOPS_TD
