//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
//
// The CPU target's own steps (bf16 products, outlined and threaded loop
// nests, inline math, arith for LLVM), as passes so that mix-opt and lit
// can run each one alone; the steps both targets share are in
// include/mix/Codegen/Passes.td. The pipelines of lib/Pipelines run them in
// order.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TARGET_CPU_PASSES_TD
#define MIX_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def MixBF16MatmulsPass : InterfacePass<"mix-bf16-matmuls",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Round the operands of f32 matrix products to bfloat16";
  let description = [{
    The mixed-precision training step of `mixc --precision bf16`. On
    tensors, each f32 `linalg.matmul` and `linalg.batch_matmul` takes its
    operands rounded to bf16 (`arith.truncf`, round to nearest even) and
    still accumulates into its f32 init: by linalg's semantics each bf16
    element is extended to f32, multiplied and summed in f32. Everything
    else (parameters, gradients, optimizer state, normalizations, softmax,
    the loss) stays f32.

    A value is rounded once, however many products use it; an operand made
    by transposes, `tensor.collapse_shape` or `tensor.expand_shape` of a
    tensor is rounded before them (the chain is replayed on bf16), so they
    move half the bytes.

    ```mlir
    %t = linalg.transpose ins(%w : tensor<64x32xf32>) ...
    %y = linalg.matmul ins(%x, %t : tensor<8x64xf32>, tensor<32x64xf32>) ...
    // becomes
    %wb = linalg.generic {truncf} ins(%w) -> tensor<64x32xbf16>
    %tb = linalg.transpose ins(%wb : tensor<64x32xbf16>) ...
    %xb = linalg.generic {truncf} ins(%x) -> tensor<8x64xbf16>
    %y = linalg.matmul ins(%xb, %tb : tensor<8x64xbf16>, tensor<32x64xbf16>)
                       outs(%init : tensor<8x32xf32>)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MixAttentionCallsPass : Pass<"mix-attention-calls", "::mlir::ModuleOp"> {
  let summary = "Fused attention on buffers as calls of the CPU kernels";
  let description = [{
    Each `mix.flash_attention_buffers` and `mix.flash_attention_grad_buffers`
    becomes a call of `mixrt_flash_attention` or
    `mixrt_flash_attention_grad` in the package's support code
    (runtime/support/CPUAttention.c): FlashAttention-2's tiles of 64
    queries against 64 keys with an online softmax, the probabilities
    recomputed in the backward pass from the row log-sum-exp, so that no
    score matrix is ever held whole. Each buffer is passed as its base
    pointer and offset (the bare-pointer convention), then the sizes:
    batch, sequence, heads, head width, prefix streams and prefix length
    (0 and 0 without prefixes, whose buffers are then qkv's). A buffer that
    is not contiguous is first copied into one that is (and back, for
    results).

    ```mlir
    mix.flash_attention_buffers %qkv into %out, %lse heads 4
        : memref<2x8x48xf32>, memref<2x8x16xf32>, memref<2x4x8xf32>
    // becomes
    %base, %offset, ... = memref.extract_strided_metadata %qkv ...
    func.call @mixrt_flash_attention(%base, %offset, %base, %offset, %base,
        %offset, %obase, %ooffset, %lbase, %loffset, %c2, %c8, %c4, %c4,
        %c0, %c0) : (memref<f32>, index, ...) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MixOutlineLoopNestsPass
    : Pass<"mix-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop nest into a function of its own";
  let description = [{
    Every top-level `scf.for` or `scf.parallel` nest of every function moves
    into a private function `@<caller>_loop<N>` called in its place;
    constants are cloned in, other values passed. Nests that are identical
    up to their operands share one function. LLVM's loop passes are
    superlinear in function size, and a model's function has thousands of
    nests; outlined, code size grows with the kinds of nest, not with depth.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"threadRanges", "thread-ranges", "bool", /*default=*/"false",
           "Outline a large enough scf.parallel nest as @f(t0, t1, ...), "
           "running iterations [t0, t1) of its outer loop, marked "
           "mix.threaded (for mix-parallelize-outlined-calls)">
  ];
}

def MixParallelizeOutlinedCallsPass
    : Pass<"mix-parallelize-outlined-calls", "::mlir::ModuleOp"> {
  let summary = "Run threadable outlined loop nests on the OpenMP threads";
  let description = [{
    In the LLVM dialect, each call of a function marked `mix.threaded`
    (outlined by `mix-outline-loop-nests{thread-ranges}` as
    `f(t0, t1, args...)`, its arguments pointers and i64) becomes a call of
    the support code's
    `mix_parallel_for(&f, t0, t1, nargs, args)`, with the arguments packed
    into an i64 array on the stack. `mix_parallel_for` splits `[t0, t1)`
    into one contiguous range a thread of the OpenMP team, the one oneDNN's
    matrix products run on.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MixApproximateMathPass
    : Pass<"mix-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace exp, log and tanh by inline polynomial approximations";
  let description = [{
    Rewrites `math.exp`, `math.log` and `math.tanh` with MLIR's polynomial
    approximations (a few ulp of float32): inline arithmetic that LLVM
    vectorizes with the rest of the loop, where a libm call (what
    `convert-math-to-libm` would emit) runs one element at a time and keeps
    the loop scalar. Measured before this pass existed: 14% of a training
    step in libm's expf, tanhf and logf.
  }];
  // A vector operand's approximation broadcasts its constants.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def MixExpandArithPass : Pass<"mix-expand-arith", "::mlir::ModuleOp"> {
  let summary = "Expand bf16 roundings and ceil/floor divisions for LLVM";
  let description = [{
    Expands what `convert-arith-to-llvm` does not lower well: bf16
    truncations and extensions (`mix-bf16-matmuls`) become integer
    arithmetic, where LLVM would call a runtime library's `__truncsfbf2` on
    CPUs without AVX-512 BF16, and ceil/floor divisions become plain ones.
    Not upstream's `arith-expand` as a whole: that also expands `maximumf`
    into compares and selects, and LLVM vectorizes a reduction of
    `llvm.maximum` (a softmax's row maximum) but not that chain.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // MIX_TARGET_CPU_PASSES_TD
