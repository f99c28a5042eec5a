//===- Passes.td - Passes over the mix dialect -------------*- tablegen -*-===//
//
// The passes that prove, check and apply the MoE -> dynamic convolution
// rewrite (Theorem 4.1) and choose how a dynamic convolution is lowered.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TRANSFORMS_PASSES_TD
#define MIX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MixProveDynamicConvPass : Pass<"mix-prove-dynamic-conv"> {
  let summary = "Decide, for every mixture, whether it equals a dynamic "
                "convolution";
  let description = [{
    Theorem 4.1 of the cMoLLM paper: `sum_k g_k(x) E_k(x)` equals the dynamic
    1x1 convolution `x (sum_k g_k K_k)^T + sum_k g_k b_k` when

    1. every expert is affine in x: `E_k(x) = x K_k^T + b_k`;
    2. every expert acts on each token alone, with the same weights at every
       position (no op moves data across tokens, no constant that varies
       along them meets x); and
    3. the expert weights `K_k`, `b_k` do not depend on x.

    A bias shared by all experts leaves the mixture as `(sum_k g_k) c`: `c`
    behind a gate whose rows sum to one, the gate-summed bias otherwise;
    both are dynamic convolutions.

    The pass decides these facts for every `mix.mixture`, stacked or
    region-defined, by an abstract interpretation of the experts over the
    lattice constant < linear < affine < nonlinear in x that also checks,
    op by op, that every value of x keeps one row of features per token. It
    records the verdict as the `mix.proof` attribute: `{status = "proved",
    facts = [...]}`, or `{status = "refused", reason = "..."}` with a
    counterexample computed by evaluating the mixture with the reference
    interpreter (both values printed, and only when they differ). Each
    verdict is also reported as a remark.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixMoEToDynamicConvPass : Pass<"mix-moe-to-dynamic-conv"> {
  let summary = "Rewrite every proved mixture into a dynamic convolution";
  let description = [{
    Rewrites exactly the `mix.mixture` ops whose `mix.proof` says `proved` into
    `mix.dynamic_conv`, and no others: stacked mixtures map one to one; a
    region whose expert is one `mix.linear` of the input by a per-expert
    weight (and bias) becomes stacked kernels; any other proved region has
    its kernels and biases computed from its weights by IR emitted before
    the convolution (the region followed on affine forms `A x + c`). A
    shared bias behind a gate whose rows need not sum to one becomes every
    expert's bias. With `smt-check` (on by default) every rewrite is first
    checked independently with the Z3 SMT solver, as Alive2 checks LLVM
    peepholes: both forms are encoded over the reals at small sizes and
    their equality proved; a rewrite Z3 does not confirm is not made, and a
    remark says why. The pass never fails on valid input.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"smtCheck", "smt-check", "bool", /*default=*/"true",
           "Check every rewrite with the Z3 SMT solver before applying it">
  ];
}

def MixSMTCheckDynamicConvPass : Pass<"mix-smt-check-dynamic-conv"> {
  let summary = "Check with Z3 whether each mixture equals its dynamic "
                "convolution";
  let description = [{
    An independent check of Theorem 4.1 that does not trust the prove pass:
    for every stacked `mix.mixture`, encodes the mixture and the dynamic
    convolution with the same kernels over the reals at small sizes, and asks
    Z3 whether they can differ. Reports `equivalent` or a counterexample as a
    remark.
    Gates from a softmax `mix.gate` are encoded as any rows of non-negative
    reals summing to one; sigmoid gates as any reals in (0, 1).
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixSelectMixingOrderPass : Pass<"mix-select-mixing-order"> {
  let summary = "Choose how each dynamic convolution mixes its kernels";
  let description = [{
    A cost model over the static shapes picks, for every `mix.dynamic_conv`,
    one of three lowerings, counting the FLOPs and bytes of a training step's
    forward and backward passes (in 4-byte words) and taking the order with
    the least `max(FLOPs / balance, bytes)`:

    * `apply_then_mix`: the gate-scaled input `S = [g_1 x | ... | g_N x]`
      (`T N d` elements, H times that with H gate heads) against each
      stream's kernel, N products accumulating into the result; backward,
      `dS` from N products and read twice more. Cheapest in bytes when the
      output is wide (`f > H d`).
    * `stack_then_mix`: the N kernels as one `(N f, d)` matrix, one product
      `P = x Kf^T` (`T N f` elements, the biases in its epilogue) whose
      N outputs the gate mixes, `u = sum_k g_k P_k`; backward, `dP = g dU`
      and a linear layer's two products. One product each way instead of N,
      and no head needs an input of its own: cheapest when `f <= H d`.
    * `mix_then_apply`: `Ktilde = sum_k g_k K_k` once per distinct gate row
      G, then applied: the choice for a gate shared by a long sequence
      (G = B), and only for such a gate with one head.

    The estimate is reported as a remark and the choice stored in `order`;
    the `order` option (mixc `--mixing-order`) overrides the choice.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
  let options = [
    Option<"flopsPerByte", "flops-per-byte", "double", /*default=*/"8.0",
           "Machine balance: FLOPs the target executes in the time it moves "
           "one byte (time = FLOPs / balance + bytes, in byte units)">,
    Option<"considerStacked", "consider-stacked", "bool", /*default=*/"true",
           "Whether the cost model may choose stack_then_mix (the CPU "
           "target's pipeline says no: measured there, it ran no faster "
           "and held the stream outputs, more memory)">,
    Option<"order", "order", "std::string", /*default=*/"\"auto\"",
           "auto (the cost model's choice) or the order every dynamic "
           "convolution takes: apply_then_mix, stack_then_mix, or "
           "mix_then_apply (where it is lowered: one gate head shared by "
           "each sequence; others apply then mix)">
  ];
}

def MixFuseAttentionPass : Pass<"mix-fuse-attention"> {
  let summary = "Keep attention whole, for targets that fuse it";
  let description = [{
    Replaces each `mix.attention` by a `mix.flash_attention`, which
    mix-decompose leaves alone and mix-autodiff differentiates into a
    `mix.flash_attention_grad`: a target that computes attention without
    its score matrix (the CUDA target's flash attention kernels) then sees
    the attention, forward and backward, as one op each instead of the
    products, mask and softmax over `(B,heads,S,S)` scores that
    mix-decompose makes of it. mixc runs it for the CUDA target.

    Example:
    ```mlir
    %o = mix.attention %qkv heads 4 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
    // becomes
    %o, %lse = mix.flash_attention %qkv heads 4 : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x4x8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixFuseCrossEntropyPass : Pass<"mix-fuse-cross-entropy"> {
  let summary = "Keep the cross-entropy whole, for targets that fuse it";
  let description = [{
    Replaces each `mix.cross_entropy` by a `mix.fused_cross_entropy`, which
    also returns each row's log-sum-exp: mix-decompose leaves it alone and
    mix-autodiff differentiates it into one `mix.fused_cross_entropy_grad`.
    A target with kernels for them (the CUDA target) then reads the logits
    once forward and once backward, instead of the separate passes of the
    decomposed max, exponentials, sums and gather, and never materializes
    the probabilities. mixc runs it for the CUDA target.

    Example:
    ```mlir
    %ce = mix.cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
    // becomes
    %ce, %lse = mix.fused_cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> (tensor<f32>, tensor<2x8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixFuseLayerNormPass : Pass<"mix-fuse-layer-norm"> {
  let summary = "Keep the LayerNorm whole, for targets that fuse it";
  let description = [{
    Replaces each `mix.layer_norm` by a `mix.fused_layer_norm`, which also
    returns each row's mean and 1/std: mix-decompose leaves it alone and
    mix-autodiff differentiates it into one `mix.fused_layer_norm_grad`. A
    target with kernels for them (the CUDA target) then normalizes a row in
    one kernel forward and computes all three gradients from the saved
    statistics backward, instead of the decomposed form's separate
    reductions and elementwise passes. mixc runs it for the CUDA target.

    Example:
    ```mlir
    %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
    // becomes
    %y, %mean, %rstd = mix.fused_layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixDecomposePass : Pass<"mix-decompose"> {
  let summary = "Lower model-level mix ops to primitive mix ops";
  let description = [{
    Replaces linear, layer norm, attention, activations, embedding,
    cross-entropy, the prefix mean, gates, mixtures, dynamic convolutions
    (in their chosen mixing order), the balance loss and the stream ops by
    primitive mix ops (matmul, elementwise, reductions, reshapes, gather,
    cumsum, ...). Autodiff and the lowering to linalg work on this form.
    What each op becomes is its own `DecomposableOpInterface`; the pass
    applies it with the greedy driver (a region mixture's cloned experts are
    decomposed in turn) and turns the frontend's one-dimension
    `tensor.extract_slice`, `tensor.expand_shape` and
    `tensor.collapse_shape` into `mix.slice` and `mix.reshape`. It neither
    folds nor simplifies: the canonicalizer after it does.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect",
                           "::mlir::arith::ArithDialect"];
}

def MixAutodiffPass : Pass<"mix-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of a loss function";
  let description = [{
    From `@forward(args...) -> (loss, ...)` made of primitive mix ops,
    builds `@grad(args...) -> (loss, ..., d loss / d arg for every f32
    argument)`: the forward computation, then each op's vector-Jacobian
    product in reverse order, adjoints of values used more than once
    summed. Softmax and log-sum-exp shifts are `mix.stop_gradient`, whose
    adjoint is dropped (their gradient contributions cancel exactly).
  }];
  let dependentDialects = ["::mlir::mix::MixDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The function to differentiate">,
    Option<"gradFunction", "grad-function", "std::string",
           /*default=*/"\"grad\"", "The name of the gradient function">
  ];
}

def MixSimplifySoftmaxGradPass : Pass<"mix-simplify-softmax-grad"> {
  let summary = "Write the softmax's adjoint in terms of its output alone";
  let description = [{
    mix-autodiff differentiates a softmax `P = E / S`, `S = reduce_sum(E)`,
    op by op into `(G / S - reduce_sum(G / S * P)) * E`, which keeps both
    `E` and `P` for the backward pass. This pass rewrites it to the equal
    `(G - reduce_sum(G * P)) * P`: `E` dies once `P` is made (for the
    attention, one (B, h, S, S) tensor a layer less at the peak), and each
    element takes one division fewer.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixCausalProductsPass : Pass<"mix-causal-products"> {
  let summary = "Mark the products that a causal mask makes triangular";
  let description = [{
    A causal attention masks its scores to -inf above the diagonal p (the
    prefix length) before the softmax. Then the probabilities `P` and the
    scores' adjoint `(G - reduce_sum(G * P)) * P` are zero above that
    diagonal, and the entries above it of the scores `Q K^T` and of `P`'s
    adjoint `dO V^T` never affect anything: they are masked to -inf or
    multiplied by `P`'s zeros.

    The pass derives both facts by dataflow over the primitive ops:
    forward, -inf from `mix.causal_mask` through additions and
    subtractions, then zeros through `mix.exp`, products and quotients;
    backward, an entry is not needed if every use adds a -inf mask to it,
    multiplies it by a zero, or is an addition, subtraction, product or
    negation whose result's entry is not needed. It marks each
    `mix.matmul` whose left operand is zero above (or, transposed, below)
    the diagonal, or whose result is needed only on and below it, with
    `mix.triangle = array<i64: kind, p>`. The CPU code generator skips those
    blocks (`mixrt_[batch_]matmul_tri`), where the product's value is the
    same: the skipped terms are products with exact zeros, and the skipped
    result entries are written as zeros, which the mask or `P` then discard
    as it discarded the computed ones.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect"];
}

def MixAppendAdamWPass : Pass<"mix-append-adamw", "::mlir::ModuleOp"> {
  let summary = "Append the AdamW update of @forward's parameters";
  let description = [{
    Adds `@adamw(params..., grads..., m..., v..., hyper) -> (params'...,
    m'..., v'..., grad_norm)`, where `hyper = [lr, 1 - beta1^t, 1 -
    beta2^t]`: the gradients are clipped to a global norm of at most
    `max-grad-norm` (coefficient `min(1, max / (norm + 1e-6))`, as
    `torch.nn.utils.clip_grad_norm_`), then PyTorch's AdamW updates every
    parameter, with decoupled weight decay on tensors of rank >= 2 (docs/models.md
    §7). It is a separate entry point so that data-parallel training can
    all-reduce the gradients between @grad and @adamw.

    With `fused`, the squared norm is one `mix.multi_tensor_sum_squares`
    of the gradients (two with stream-sharded parameters, the sharded
    one all-reduced) and the update one `mix.multi_tensor_adamw`, for a
    target with multi-tensor kernels; otherwise both are primitive ops,
    a reduction and an update for each parameter.
  }];
  let dependentDialects = ["::mlir::mix::MixDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"fused", "fused", "bool", /*default=*/"false",
           "Build the norm and the update from the multi-tensor ops">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "">,
    Option<"beta2", "beta2", "double", /*default=*/"0.95", "">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.1", "">,
    Option<"maxGradNorm", "max-grad-norm", "double", /*default=*/"1.0", "">
  ];
}

def MixDropParameterAttrsPass
    : InterfacePass<"mix-drop-parameter-attrs",
                    "::mlir::FunctionOpInterface"> {
  let summary = "Drop the parameters' names and shard counts from arguments";
  let description = [{
    Removes the argument attributes `mix.param` (a parameter's name) and
    `mix.stream_shards` from every function. The package's manifest keeps
    the names; the compiled code needs only the arguments' positions, and
    the lowering to buffers and LLVM need not carry them.
  }];
}

#endif // MIX_TRANSFORMS_PASSES_TD
