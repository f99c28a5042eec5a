//===- MixFusedOps.td - Ops a target computes as one kernel -*- tablegen -*-===//
//
// Ops that a target keeps whole instead of decomposing into primitives,
// because its code for them does the whole job in one pass: attention
// without its score matrix in memory (FlashAttention's online softmax),
// the cross-entropy and its gradient in one pass over the logits each,
// a LayerNorm in one pass over each row each way, and the optimizer over
// every parameter at once (multi-tensor kernels).
// Each comes as a value-semantic op on tensors, which autodiff
// differentiates, and as an op on buffers, which bufferization produces and
// a target's kernel generator lowers.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_DIALECT_MIX_IR_MIXFUSEDOPS_TD
#define MIX_DIALECT_MIX_IR_MIXFUSEDOPS_TD

include "mix/Dialect/Mix/IR/MixBase.td"
include "mix/Dialect/Mix/IR/MixInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mix_FloatBuffer : Type<And<[MemRefOf<[F32]>.predicate,
                                CPred<"::llvm::cast<::mlir::MemRefType>($_self)"
                                      ".hasStaticShape()">]>,
                           "statically shaped f32 memref",
                           "::mlir::MemRefType">;

// An output the CUDA target may write in bfloat16 (rounded to nearest
// even) where the value's only reader took it rounded, or an input it may
// read so (mixc --precision bf16: mix-round-into-producers).
def Mix_RoundableBuffer
    : Type<And<[MemRefOf<[F32, BF16]>.predicate,
                CPred<"::llvm::cast<::mlir::MemRefType>($_self)"
                      ".hasStaticShape()">]>,
           "statically shaped f32 or bf16 memref", "::mlir::MemRefType">;

//===----------------------------------------------------------------------===//
// Attention on tensors
//===----------------------------------------------------------------------===//

def Mix_FlashAttentionOp : Mix_Op<"flash_attention", [
    Pure, AttrSizedOperandSegments, Mix_Differentiable]> {
  let summary = "causal attention without the score matrix, and its row "
                "statistics";
  let description = [{
    Computes what `mix.attention` computes, with the same operands, and also
    returns `lse`, the log-sum-exp of each query's scaled, masked scores
    (shape `(B,heads,S)`): the only statistic of the softmax that the
    backward pass (`mix.flash_attention_grad`) needs to recompute the
    attention probabilities one tile at a time. A target lowers the op to
    code that never holds more than a tile of the scores (mix-fuse-attention
    makes it from `mix.attention` where the target has such code).

    Its vector-Jacobian product is `mix.flash_attention_grad` and takes the
    adjoint of `result` only: `lse` is an auxiliary result that only that op
    reads.

    Example:
    ```mlir
    %o, %lse = mix.flash_attention %qkv heads 4 : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x4x8xf32>)
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$qkv,
                       Optional<Mix_FloatTensor>:$prefix_k,
                       Optional<Mix_FloatTensor>:$prefix_v,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Mix_FloatTensor:$result, Mix_FloatTensor:$lse);
  let assemblyFormat = [{
    $qkv (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `heads` $heads attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_FlashAttentionGradOp : Mix_Op<"flash_attention_grad", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "the gradients of mix.flash_attention's operands";
  let description = [{
    Given the operands of a `mix.flash_attention`, its results `out` and
    `lse`, and the adjoint `dout` of `out`, returns the adjoint of `qkv`
    and, when the attention has prefixes, of `prefix_k` and `prefix_v` (in
    `dprefix`, in that order). With `P = softmax(scores)` recomputed from
    `lse` and `D = rowsum(dout * out)`: `dV = P^T dout`,
    `dS = P * (dout V^T - D)`, `dQ = dS K / sqrt(dh)`, `dK = dS^T Q /
    sqrt(dh)`; the prefixes' adjoints sum over the rows of their stream.

    Example:
    ```mlir
    %dqkv = mix.flash_attention_grad %qkv, %o, %lse, %do heads 4 : (tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x48xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$qkv,
                       Optional<Mix_FloatTensor>:$prefix_k,
                       Optional<Mix_FloatTensor>:$prefix_v,
                       Mix_FloatTensor:$out, Mix_FloatTensor:$lse,
                       Mix_FloatTensor:$dout,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let results = (outs Mix_FloatTensor:$dqkv,
                      Variadic<Mix_FloatTensor>:$dprefix);
  let assemblyFormat = [{
    $qkv (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `,` $out `,` $lse `,`
    $dout `heads` $heads attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention on buffers
//===----------------------------------------------------------------------===//

def Mix_FlashAttentionBuffersOp : Mix_Op<"flash_attention_buffers", [
    AttrSizedOperandSegments]> {
  let summary = "mix.flash_attention after bufferization";
  let description = [{
    Reads `qkv` (and the prefixes) and writes every element of `result`
    and `lse`, as `mix.flash_attention` defines them. One-shot
    bufferization turns a `mix.flash_attention` into a fresh allocation of
    each result and this op; the CUDA target's mix-flash-attention-kernels
    lowers it to a kernel.
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$qkv,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemRead]>:$prefix_k,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemRead]>:$prefix_v,
                       Arg<Mix_RoundableBuffer, "", [MemWrite]>:$result,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$lse,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let assemblyFormat = [{
    $qkv (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `into` $result `,` $lse
    `heads` $heads attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

def Mix_FlashAttentionGradBuffersOp : Mix_Op<"flash_attention_grad_buffers", [
    AttrSizedOperandSegments]> {
  let summary = "mix.flash_attention_grad after bufferization";
  let description = [{
    Reads the operands of a `mix.flash_attention_grad` and writes every
    element of `dqkv` (and of `dprefix_k` and `dprefix_v` with prefixes).
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$qkv,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemRead]>:$prefix_k,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemRead]>:$prefix_v,
                       Arg<Mix_RoundableBuffer, "", [MemRead]>:$out,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$lse,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$dout,
                       Arg<Mix_RoundableBuffer, "", [MemWrite]>:$dqkv,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemWrite]>:$dprefix_k,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemWrite]>:$dprefix_v,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads);
  let assemblyFormat = [{
    $qkv (`prefix` `(` $prefix_k^ `,` $prefix_v `)`)? `,` $out `,` $lse `,`
    $dout `into` $dqkv (`prefix` `(` $dprefix_k^ `,` $dprefix_v `)`)?
    `heads` $heads attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

def Mix_IndexBuffer : Type<And<[MemRefOf<[I32, I64]>.predicate,
                                CPred<"::llvm::cast<::mlir::MemRefType>($_self)"
                                      ".hasStaticShape()">]>,
                           "statically shaped i32 or i64 memref",
                           "::mlir::MemRefType">;

def Mix_FusedCrossEntropyOp : Mix_Op<"fused_cross_entropy", [
    Pure, Mix_Differentiable]> {
  let summary = "mean token cross-entropy, and each row's log-sum-exp";
  let description = [{
    Computes what `mix.cross_entropy` computes, with the same operands, and
    also returns `lse`, the log-sum-exp of each row of the logits (shape
    `(B,S)`), from which `mix.fused_cross_entropy_grad` computes the
    gradient in one pass over the logits, never materialising the
    probabilities. mix-fuse-cross-entropy makes it from
    `mix.cross_entropy` where the target has kernels for it.

    Example:
    ```mlir
    %ce, %lse = mix.fused_cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> (tensor<f32>, tensor<2x8xf32>)
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$logits, Mix_IndexTensor:$targets);
  let results = (outs Mix_Scalar:$result, Mix_FloatTensor:$lse);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_FusedCrossEntropyGradOp : Mix_Op<"fused_cross_entropy_grad", [Pure]> {
  let summary = "the gradient of mix.fused_cross_entropy's logits";
  let description = [{
    `dlogits[b,s,v] = scale * dresult / (B S) * (exp(logits[b,s,v] -
    lse[b,s]) - (v == targets[b,s]))`: the softmax minus the one-hot
    target, scaled by the adjoint of the mean, which is `scale` times the
    optional `dresult` (1 without it). A constant `dresult` folds into
    `scale`, so that a compiled step does not copy the constant to the
    device.

    Example:
    ```mlir
    %d = mix.fused_cross_entropy_grad %logits, %targets, %lse, %dce : (tensor<2x8x256xf32>, tensor<2x8xi32>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8x256xf32>
    %e = mix.fused_cross_entropy_grad %logits, %targets, %lse scale 0.5 : (tensor<2x8x256xf32>, tensor<2x8xi32>, tensor<2x8xf32>) -> tensor<2x8x256xf32>
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$logits, Mix_IndexTensor:$targets,
                       Mix_FloatTensor:$lse, Optional<Mix_Scalar>:$dresult,
                       DefaultValuedAttr<F32Attr, "1.0">:$scale);
  let results = (outs Mix_FloatTensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $targets `,` $lse (`,` $dresult^)? (`scale` $scale^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Mix_FusedCrossEntropyBuffersOp : Mix_Op<"fused_cross_entropy_buffers"> {
  let summary = "mix.fused_cross_entropy after bufferization";
  let description = [{
    Reads `logits` and `targets` and writes the mean cross-entropy into the
    rank-0 `result` and every row's log-sum-exp into `lse`, as
    `mix.fused_cross_entropy` defines them; the CUDA target's
    mix-cross-entropy-kernels lowers it.
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$logits,
                       Arg<Mix_IndexBuffer, "", [MemRead]>:$targets,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$result,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$lse);
  let assemblyFormat = [{
    $logits `,` $targets `into` $result `,` $lse attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

def Mix_FusedCrossEntropyGradBuffersOp
    : Mix_Op<"fused_cross_entropy_grad_buffers"> {
  let summary = "mix.fused_cross_entropy_grad after bufferization";
  let description = [{
    Reads the operands of a `mix.fused_cross_entropy_grad` and writes every
    element of `dlogits`.
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$logits,
                       Arg<Mix_IndexBuffer, "", [MemRead]>:$targets,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$lse,
                       Arg<Optional<Mix_FloatBuffer>, "", [MemRead]>:$dresult,
                       Arg<Mix_RoundableBuffer, "", [MemWrite]>:$dlogits,
                       DefaultValuedAttr<F32Attr, "1.0">:$scale);
  let assemblyFormat = [{
    $logits `,` $targets `,` $lse (`,` $dresult^)? `into` $dlogits
    (`scale` $scale^)? attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The optimizer over every parameter at once
//===----------------------------------------------------------------------===//

def Mix_MultiTensorSumSquaresOp : Mix_Op<"multi_tensor_sum_squares", [Pure]> {
  let summary = "the sum of the squares of every element of every operand";
  let description = [{
    `result = sum_i sum(tensors[i] * tensors[i])`: the squared global norm
    of the gradients that AdamW's clipping divides by, computed by a
    target in one pass over all of them (mix-append-adamw{fused=1} makes
    it where the target has such kernels) instead of a reduction for
    each tensor and a chain of scalar additions. The order of the
    additions is the target's.

    Example:
    ```mlir
    %s = mix.multi_tensor_sum_squares %g0, %g1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Mix_FloatTensor>:$tensors);
  let results = (outs Mix_Scalar:$result);
  let assemblyFormat = [{
    $tensors attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_MultiTensorAdamWOp : Mix_Op<"multi_tensor_adamw", [
    Pure, AttrSizedOperandSegments]> {
  let summary = "PyTorch's AdamW step on every parameter at once";
  let description = [{
    For each parameter `p` (of `params`) with its gradient `g`, first and
    second moments `m` and `v`, with `hyper = [lr, 1 - beta1^t, 1 -
    beta2^t]` and the clip coefficient `clip` (a scalar), in this order
    and in f32:
    ```
    g  = g * clip
    p  = p - p * (lr * weight_decay)        (where decay[i])
    m' = m * beta1 + g * (1 - beta1)
    v' = v * beta2 + (g * g) * (1 - beta2)
    p' = p - lr * ((m' / (1 - beta1^t)) / (sqrt(v' / (1 - beta2^t)) + epsilon))
    ```
    The results are the new parameters, then the new first moments, then
    the new second moments, in the order of `params`; the op writes them
    over `params`, `m` and `v` where bufferization can (it is the
    optimizer's update in place). A target computes every parameter in a
    few launches (multi-tensor kernels) instead of a kernel or more each.

    Example:
    ```mlir
    %p, %m, %v = mix.multi_tensor_adamw params(%p0) grads(%g0) m(%m0) v(%v0) hyper %h clip %c {beta1 = 0.9 : f64, beta2 = 0.95 : f64, decay = array<i1: true>, epsilon = 1.0e-8 : f64, weight_decay = 0.1 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    ```
  }];
  let arguments = (ins Variadic<Mix_FloatTensor>:$params,
                       Variadic<Mix_FloatTensor>:$grads,
                       Variadic<Mix_FloatTensor>:$m,
                       Variadic<Mix_FloatTensor>:$v,
                       Mix_FloatTensor:$hyper, Mix_Scalar:$clip,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon,
                       F64Attr:$weight_decay, DenseBoolArrayAttr:$decay);
  let results = (outs Variadic<Mix_FloatTensor>:$updated);
  let assemblyFormat = [{
    `params` `(` $params `)` `grads` `(` $grads `)` `m` `(` $m `)`
    `v` `(` $v `)` `hyper` $hyper `clip` $clip attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The new parameters, first and second moments.
    ::mlir::ValueRange getNewParams() {
      return getUpdated().take_front(getParams().size());
    }
    ::mlir::ValueRange getNewM() {
      return getUpdated().slice(getParams().size(), getParams().size());
    }
    ::mlir::ValueRange getNewV() {
      return getUpdated().take_back(getParams().size());
    }
  }];
  let hasVerifier = 1;
}

def Mix_MultiTensorSumSquaresBuffersOp
    : Mix_Op<"multi_tensor_sum_squares_buffers"> {
  let summary = "mix.multi_tensor_sum_squares after bufferization";
  let description = [{
    Reads every element of `tensors` and writes the sum of their squares
    into the rank-0 `result`; the CUDA target's mix-multi-tensor-kernels
    lowers it.
  }];
  let arguments = (ins Arg<Variadic<Mix_FloatBuffer>, "", [MemRead]>:$tensors,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$result);
  let assemblyFormat = [{
    $tensors `:` type($tensors) `into` $result `:` type($result) attr-dict
  }];
  let hasVerifier = 1;
}

def Mix_MultiTensorAdamWBuffersOp
    : Mix_Op<"multi_tensor_adamw_buffers", [AttrSizedOperandSegments]> {
  let summary = "mix.multi_tensor_adamw after bufferization: in place";
  let description = [{
    Updates `params`, `m` and `v` in place with the AdamW step that
    `mix.multi_tensor_adamw` defines, reading `grads`, `hyper` and `clip`.
  }];
  let arguments = (ins Arg<Variadic<Mix_FloatBuffer>, "",
                           [MemRead, MemWrite]>:$params,
                       Arg<Variadic<Mix_FloatBuffer>, "", [MemRead]>:$grads,
                       Arg<Variadic<Mix_FloatBuffer>, "",
                           [MemRead, MemWrite]>:$m,
                       Arg<Variadic<Mix_FloatBuffer>, "",
                           [MemRead, MemWrite]>:$v,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$hyper,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$clip,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon,
                       F64Attr:$weight_decay, DenseBoolArrayAttr:$decay);
  let assemblyFormat = [{
    `params` `(` $params `:` type($params) `)`
    `grads` `(` $grads `:` type($grads) `)`
    `m` `(` $m `:` type($m) `)` `v` `(` $v `:` type($v) `)`
    `hyper` $hyper `:` type($hyper) `clip` $clip `:` type($clip) attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

def Mix_FusedLayerNormOp : Mix_Op<"fused_layer_norm", [
    Pure, Mix_Differentiable]> {
  let summary = "layer normalisation, and each row's mean and 1/std";
  let description = [{
    Computes what `mix.layer_norm` computes, with the same operands, and
    also returns each row's `mean` and `rstd = 1 / sqrt(var + eps)` (the
    input's shape without its last dimension), from which
    `mix.fused_layer_norm_grad` computes the gradients in one pass over
    each row. mix-fuse-layer-norm makes it from `mix.layer_norm` where the
    target has kernels for it.

    Example:
    ```mlir
    %y, %mean, %rstd = mix.fused_layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$weight,
                       Mix_FloatTensor:$bias, F64Attr:$eps);
  let results = (outs Mix_FloatTensor:$result, Mix_FloatTensor:$mean,
                      Mix_FloatTensor:$rstd);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `eps` $eps attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_FusedLayerNormGradOp : Mix_Op<"fused_layer_norm_grad", [Pure]> {
  let summary = "the gradients of mix.fused_layer_norm's operands";
  let description = [{
    With `xhat = (input - mean) * rstd` and `g = dresult * weight`:
    `dinput = rstd * (g - mean_row(g) - xhat * mean_row(g * xhat))`,
    `dweight = sum_rows(dresult * xhat)`, `dbias = sum_rows(dresult)`.

    Example:
    ```mlir
    %dx, %dw, %db = mix.fused_layer_norm_grad %x, %w, %mean, %rstd, %dy : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Mix_FloatTensor:$input, Mix_FloatTensor:$weight,
                       Mix_FloatTensor:$mean, Mix_FloatTensor:$rstd,
                       Mix_FloatTensor:$dresult);
  let results = (outs Mix_FloatTensor:$dinput, Mix_FloatTensor:$dweight,
                      Mix_FloatTensor:$dbias);
  let assemblyFormat = [{
    $input `,` $weight `,` $mean `,` $rstd `,` $dresult attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Mix_FusedLayerNormBuffersOp : Mix_Op<"fused_layer_norm_buffers"> {
  let summary = "mix.fused_layer_norm after bufferization";
  let description = [{
    Reads `input`, `weight` and `bias` and writes every element of
    `result`, `mean` and `rstd`, as `mix.fused_layer_norm` defines them;
    the CUDA target's mix-layer-norm-kernels lowers it.
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$input,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$weight,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$bias,
                       Arg<Mix_RoundableBuffer, "", [MemWrite]>:$result,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$mean,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$rstd,
                       F64Attr:$eps);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `into` $result `,` $mean `,` $rstd
    `eps` $eps attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

def Mix_FusedLayerNormGradBuffersOp
    : Mix_Op<"fused_layer_norm_grad_buffers"> {
  let summary = "mix.fused_layer_norm_grad after bufferization";
  let description = [{
    Reads the operands of a `mix.fused_layer_norm_grad` and writes every
    element of `dinput`, `dweight` and `dbias`.
  }];
  let arguments = (ins Arg<Mix_FloatBuffer, "", [MemRead]>:$input,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$weight,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$mean,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$rstd,
                       Arg<Mix_FloatBuffer, "", [MemRead]>:$dresult,
                       Arg<Mix_RoundableBuffer, "", [MemWrite]>:$dinput,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$dweight,
                       Arg<Mix_FloatBuffer, "", [MemWrite]>:$dbias);
  let assemblyFormat = [{
    $input `,` $weight `,` $mean `,` $rstd `,` $dresult `into` $dinput `,`
    $dweight `,` $dbias attr-dict `:` type(operands)
  }];
  let hasVerifier = 1;
}

#endif // MIX_DIALECT_MIX_IR_MIXFUSEDOPS_TD
