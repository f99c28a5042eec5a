//===- Passes.td - Code generation passes both targets use -*- tablegen -*-===//
//
// The project's own steps of code generation that the CPU and the CUDA
// targets share: from linalg on tensors to buffers (fusion,
// rematerialization, in-place updates, buffer lifetimes), matrix products
// as calls of the support library, and the entry points' one C signature.
// The pipelines of lib/Pipelines run them in order.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CODEGEN_PASSES_TD
#define MIX_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def MixFoldSumsIntoAccumulatorsPass
    : InterfacePass<"mix-fold-sums-into-accumulators",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Add a sum into a matrix product's accumulator";
  let description = [{
    On tensors: an elementwise `linalg.generic` whose body is one `addf` of
    a `linalg.matmul` / `linalg.batch_matmul` result (accumulating into a
    fill of zeros, used only there) and another tensor becomes the product
    accumulating into that tensor, broadcast the way the add broadcast it
    (or into the tensor itself where it has the product's shape: a sum of
    products accumulates in place).
    A linear layer's bias, and the sums of gradient contributions in the
    backward pass, are then added by the library's accumulation (the sum
    post-op of the oneDNN matmul primitive) rather than by a separate pass
    over the product.

    ```mlir
    %p = linalg.matmul ins(%a, %b) outs(%zeros)
    %y = linalg.generic {add, bias broadcast over rows} ins(%p, %bias)
    // becomes
    %init = linalg.generic {broadcast} ins(%bias) outs(%empty)
    %y = linalg.matmul ins(%a, %b) outs(%init)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MixFuseElementwisePass
    : InterfacePass<"mix-fuse-elementwise",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Fuse elementwise ops, recomputing small shared ones";
  let description = [{
    On tensors: an elementwise `linalg.generic` (all loops parallel) fuses
    into an elementwise consumer (upstream's elementwise fusion), and into a
    reduction `linalg.generic` that reads each of its elements once (the
    operand's indexing map a permutation): the squares of a gradient norm or
    of a layer norm's variance are then summed as they are made, never
    stored. Never into a contraction: the producer would be recomputed for
    every element of the reduced dimension, and a product would no longer
    reach the library call.

    A producer with several users fuses into each of them, and so is never
    stored, when all of its users are such consumers and its body has at
    most 24 operations; it is recomputed in a user only if the user then
    reads at most 2 whole operands (an element per iteration), and stored
    for the others. The backward pass reads most forward intermediates
    again; without this every step of an elementwise chain (the terms of
    GELU's tanh form, a normalization's scaled rows) lived from the forward
    pass to the backward as a buffer of its own. Recomputing costs a few
    arithmetic operations an element where storing cost a buffer and a
    round trip through memory: the small dense model's step keeps 567 MiB
    live at its peak instead of 797 MiB, at the same speed and with
    bit-identical results. The bound on whole reads stops chains: the
    residual stream is a sum of every earlier block's output, and without
    it each of its users (the next layer norm's statistics, its backward
    pass) summed all of them again, up to 9 full reads a loop in the small
    dense model; with it the sum is stored (14 MiB more at the peak of the
    small dense model's step, 18 ms less of loops a step).

    With `shared-reads-once` (the cuda target) a value that both the
    producer and the consumer read whole counts once: a softmax's gradient
    recomputes the producer p * dp at each of a row's positions from the p
    and dp it reads anyway, one kernel where two were (the CPU pipeline
    keeps the bound measured above).
  }];
  let options = [
    Option<"sharedReadsOnce", "shared-reads-once", "bool", /*default=*/"false",
           "Count a value read whole by both producer and consumer once">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MixFoldReshapesIntoSlicesPass : InterfacePass<
    "mix-fold-reshapes-into-slices", "::mlir::FunctionOpInterface"> {
  let summary = "Insert results into their slots without a unit-dim reshape";
  let description = [{
    On tensors, before bufferization. A value inserted into a slice of a
    larger tensor through a `tensor.expand_shape` that only adds unit
    dimensions (a mixture's per-stream gradient, made [heads, tokens, d],
    put in slot k of [heads, tokens, streams, d] as [heads, tokens, 1, d])
    is inserted directly, as a rank-reducing `tensor.insert_slice`.
    Bufferization's
    empty-tensor elimination then finds the insertion behind the op that
    makes the value and has it write into the slot in place; through the
    reshape it could not, and the value was made in a buffer of its own
    and copied into the slot: four copies of d_ff-sized activations a layer
    in a GPT-2-small cMoLLM's backward pass.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def MixRematerializePass : InterfacePass<"mix-rematerialize",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Recompute fills and broadcasts at each use, not store them";
  let description = [{
    On tensors, after `mix-fuse-elementwise`. Two kinds of value are cheaper
    to make again than to keep:
    - a `linalg.fill` of a `tensor.empty`: the zeros a product accumulates
      into. CSE leaves one per type, shared by every product of that shape;
      bufferization then kept the filled buffer from the first product to
      the last and copied it into each;
    - an elementwise `linalg.generic` with a body of at most 24 operations,
      such as the gate-scaled input of a mixture (a stream count times its
      input): the backward pass reads it again for the kernels' gradient,
      and keeping it from the forward pass costs its whole size for the
      rest of the step, where recomputing costs one pass over it and keeps
      only its operands, which the backward pass reads anyway.

    Each linalg operation of the block that reads such a value (through
    reshapes and `tensor.extract_slice`), other than the first user, gets
    a copy computed right before it, with a `tensor.empty` of its own, when
    that keeps less alive than storing it: the operands the copy needs
    that would otherwise be dead by then hold at most half its elements.
    A write of the value into a destination
    (`bufferization.materialize_in_destination`, AdamW's new moments) gets
    no copy: the value is computed in place there. A copy read through one
    slice computes only that slice. `mix-free-after-last-use` then frees
    the first copy after its first user.

    With `elementwise=false` (the cuda target) only the zero fills are
    computed again: a GPU's step is bound by the bytes its kernels move,
    and a copy moves its operands and its result once more (the gate-scaled
    inputs of a mixture, a GELU's output), where an H200's memory holds the
    stored values of GPT-2-size steps with room to spare.
  }];
  let options = [
    Option<"elementwise", "elementwise", "bool", /*default=*/"true",
           "Recompute elementwise ops too, not only zero fills">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MixHeadProductsPass : InterfacePass<"mix-head-products",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Attention products read and write the heads' layout in place";
  let description = [{
    On tensors. The attention's products lower to `linalg.batch_matmul`
    over one batch dimension of B*h matrices: each operand a
    `tensor.collapse_shape [[0, 1], [2], [3]]` of a `linalg.transpose` that
    moves the heads out of the (B, S, h, dh) layout the projections make
    (and the probabilities' P^T made the same way), each result expanded
    and transposed back. Every one of those transposes is a copy of a whole
    activation: Q, K, V, the attention's output and their gradients, four
    to eight a layer in a training step.

    This pass rewrites such a product as a `linalg.contract` over
    (b0, b1, m, n, k) whose indexing maps absorb the transposes: it reads
    the transpose's input and, when its result's one use is an expansion
    and a transpose and it overwrites a fill, writes the transposed layout
    directly (a fill of the transpose's destination). A product none of
    whose transposes folds is left alone; transposes and reshapes no longer
    used are erased. `mix-matmuls-to-library-calls` then calls
    `mixrt_batch2_matmul`, which hands oneDNN the strided 4-d views.

    ```mlir
    %t = linalg.transpose ins(%x : tensor<8x256x4x64xf32>)
           outs(%e : tensor<8x4x256x64xf32>) permutation = [0, 2, 1, 3]
    %a = tensor.collapse_shape %t [[0, 1], [2], [3]]
    %c = linalg.batch_matmul ins(%a, %b) outs(%zeros)
    // becomes, with %b4 the 4-d form of %b
    %c = linalg.contract indexing_maps = [
           affine_map<(b0, b1, m, n, k) -> (b0, m, b1, k)>,
           affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
           affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>]
           ins(%x, %b4) outs(%zeros4)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MixTransposedOperandsPass
    : InterfacePass<"mix-transposed-operands",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Products read transposed operands as views, not copies";
  let description = [{
    On buffers. A transposed operand of a matrix product is lowered as a
    `linalg.transpose` into a fresh buffer that only products read (the
    backward pass's X^T and dY^T, each a full copy; a stream mixture's dH^T
    is read by every stream's kernel gradient). The products become
    library calls that take any strides, so this pass gives each of them
    `memref.transpose` of the source instead, through the
    same `memref.collapse_shape` of batch dimensions where there is one
    (when the strides allow it), and removes the copy and its buffer. It
    applies only when nothing between the copy and the product may write
    the source's buffer, and runs before `mix-free-after-last-use`, which
    then keeps the source alive until the product.

    With `generics`, `linalg.generic` ops may be among the readers too:
    they read the source through their indexing maps composed with the
    permutation (the cuda target: a reduction over tokens of a gate's
    gradient, read in the layout the gate computed it in instead of a
    transposed copy's launch; the CPU pipeline keeps its contiguous
    reads).
  }];
  let options = [
    Option<"generics", "generics", "bool", /*default=*/"false",
           "Also fold the transposes read by linalg.generic ops into their "
           "indexing maps">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixTransposedResultsPass
    : InterfacePass<"mix-transposed-results",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Results computed in their copy's destination, not copied";
  let description = [{
    On buffers; the mirror of `mix-transposed-operands`. A
    `linalg.transpose` from an allocation (or a reshape of one) that linalg
    ops write before it into an allocation that nothing uses before it: the
    ops compute in the destination instead, through `memref.transpose` of
    it with the inverse permutation (and the inverse reshapes), and the
    copy and the source's buffer go. A multi-head mixture's products (one
    batch a gate head) so write the token-major layout the rest of the
    layer reads, a batch stride of f/H and a leading dimension of f apart,
    where they wrote the head-major one that a copy then transposed. The
    destination is allocated where the source was and freed where the
    later of the two was. The cuda target runs it before its products
    become library calls, which take any strides.

    The source may be used after the copy too, through the view, when the
    transpose moves elements only within runs of at most 32 (a warp's
    loads of the view stay in the same 128 bytes) and no product would
    read a view without a contiguous dimension: after the copy the two
    layouts share one buffer, so each may be written only once the other
    is no longer used. A gate's softmax so writes its probabilities in the
    mixing's (token, stream, head) layout, the balance loss reads them
    there, and the backward pass later updates them in place into their
    gradient.

    A `memref.copy` from an allocation (through collapses and expansions,
    each used once) into a view of an argument or of an earlier
    allocation (static subviews and reshapes) is treated alike when
    nothing between the allocation and the copy accesses the target's
    buffer: the view is made again where the allocation was and the ops
    compute in it, through the inverse reshapes (a stream's kernel
    gradient written into its slice of the gradient of all the kernels,
    where a copy launch moved it).

    Bufferization may give one buffer to a value of each layer (the gate's
    logits of every layer in one allocation, and their transposed copy in
    another); a transpose's source and destination are then used again
    after the copy. Such a buffer is first split: the values from the
    write that starts them (a fill, a transpose or a copy into it, or an
    elementwise op that ignores its old values) to the next such write get
    an allocation of their own, freed after their last use, and a view of
    the buffer made earlier and shared between the layers is made again
    for the uses in the range. The memory plan packs allocations by
    lifetime, so this costs no memory; each layer's copy then goes.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixUpdateArgumentsInPlacePass
    : InterfacePass<"mix-update-arguments-in-place",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Write results marked mix.updates into their argument";
  let description = [{
    On tensors, before bufferization: a function result carrying
    `mix.updates = i` becomes a `bufferization.materialize_in_destination`
    into argument `i` and is no longer returned; that argument is marked
    `bufferization.writable`, and every other tensor argument of a function
    with such a result is marked read-only. One-shot bufferization then
    computes the result in the argument's buffer (with empty-tensor
    elimination, where its reads allow) or copies it there, and fails,
    rather than miscompiling, where the argument's old value is still read
    after it is overwritten. AdamW's new parameters and moments are written
    over the old ones this way, so that the training loop holds one copy
    of each.

    Functions without `mix.updates` results are left as they are, their
    arguments included.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def MixRecordEntryOutputsPass
    : Pass<"mix-record-entry-outputs", "::mlir::func::FuncOp"> {
  let summary = "Record how many out-parameters bufferization will append";
  let description = [{
    On tensors, right before bufferization (after
    `mix-update-arguments-in-place`, which drops the results it writes
    into arguments): marks each defined function that returns results with
    `mix.entry_outputs = N`, the number of its results. After
    `buffer-results-to-out-params` its last N arguments are those results'
    buffers, which nothing else in the IR tells apart from the inputs; the
    passes that treat an entry point's outputs specially (the gradients'
    ready points of the cuda target) read the mark. A function without
    results is left unmarked.
  }];
}

def MixWriteResultsInPlacePass
    : InterfacePass<"mix-write-results-in-place",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Compute returned buffers in their out-parameters";
  let description = [{
    On buffers, after `buffer-results-to-out-params`, which replaces a
    returned buffer by its out-parameter only when the function returns
    the allocation itself; otherwise it copies the result into the
    out-parameter at the end. A training step's gradients are results:
    each was computed into a buffer of its own that lived to the end of the
    step, every gradient at once, and was then copied. Here, for a
    `memref.copy` into an argument that nothing else uses, from an
    allocation of the same block or a reshape of one, the allocation is
    replaced by the argument (through the inverse reshape) and the copy and
    the allocation's frees go. The caller's out-parameters must not alias
    its other arguments, as the runtime guarantees.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixAllocateAtFirstUsePass
    : InterfacePass<"mix-allocate-at-first-use",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Allocate each buffer just before its first use";
  let description = [{
    The mirror of `mix-free-after-last-use`. One-shot bufferization
    allocates where the `tensor.empty` was, and CSE leaves one empty tensor
    of each type at its first position: a buffer the backward pass of the
    last layer writes was allocated before the forward pass of the first,
    and held through it. This pass moves each `memref.alloc` without
    operands to just before the first operation of its block that uses the
    buffer (a use nested in an operation's regions counts as that
    operation's). An allocation with a use outside its block stays.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixFreeAfterLastUsePass
    : InterfacePass<"mix-free-after-last-use",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    MLIR's ownership-based buffer deallocation frees a block's buffers at
    the end of the block. A training step is one straight-line block, so
    every buffer stayed allocated until the step returned and the step's
    peak memory was the sum of all of its buffers. This pass moves each
    `memref.dealloc` of a buffer allocated in the same block to just after
    the last operation of the block that uses the buffer or any memref
    derived from it (any result of memref type of an operation that takes
    it counts as derived, conservatively). Uses nested in a later
    operation's regions count as uses by that operation.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixReportPeakMemoryPass
    : InterfacePass<"mix-report-peak-memory",
                  "::mlir::FunctionOpInterface"> {
  let summary = "Remark on each function's peak of live buffers";
  let description = [{
    On buffers, after `mix-free-after-last-use`: for each function that
    allocates, walks its body in order, adding each statically shaped
    `memref.alloc` and subtracting each `memref.dealloc` of the function's
    block, and emits a remark on the function with the peak (allocations
    inside a nested region count while that operation runs), the operation
    where it is first reached, and a note for each of the largest buffers
    live there at the location of the operation that allocated it (which
    names the model's layer). Buffers that are never freed in the block
    (returned ones) stay live to the end. Arguments are not counted: they
    are the caller's. `mixc --remarks` prints this for every entry point;
    it is what guides the memory work of docs/compiling.md.
  }];
  let options = [
    Option<"largest", "largest", "unsigned", /*default=*/"8",
           "How many of the largest live buffers to name">,
  ];
}

def MixMatmulsToLibraryCallsPass
    : Pass<"mix-matmuls-to-library-calls", "::mlir::ModuleOp"> {
  let summary = "Call the support library for matrix products on memrefs";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs (after
    bufferization) by calls of `mixrt_matmul` / `mixrt_batch_matmul`, which
    compute C += A B in the package's C support code through a oneDNN matmul
    primitive made once per call site; products of bf16 operands into f32
    (after `mix-bf16-matmuls`) call `mixrt_matmul_bf16` /
    `mixrt_batch_matmul_bf16`. Each call passes its site number and,
    for each operand, the base buffer, offset, sizes and strides
    (`memref.extract_strided_metadata`), so transposed views need no copy.

    A `linalg.contract` over (b0, b1, m, n, k) on rank-4 memrefs, a product
    with two batch dimensions (`mix-head-products`), calls
    `mixrt_batch2_matmul`: each operand is passed as the `memref.transpose`
    view of it in the order (b0, b1, rows, columns), with four sizes and
    four strides. The forms below apply to it as to the others.

    With `overwrite-zeros` (mixc's CPU and CUDA targets), a product whose
    accumulator was zero-filled just before (nothing but views and
    operations without memory effects in between) calls the `_set` form
    instead, which computes C = A B, and the fill goes: one pass over C
    fewer, and the product does not read the zeros.

    With `fuse-bias` (mixc's CPU and CUDA targets), a 2-d product whose
    accumulator was just filled with a row vector in every row (the
    `linalg.generic` that a linear layer's bias lowers to) calls the
    `_bias` form, which computes C = A B + bias with the vector as oneDNN's
    bias argument or cuBLASLt's BIAS epilogue (added as the product is
    stored), and the broadcast goes.

    With `fuse-bias-grad` (mixc's CUDA target), a 2-d product in the `_set`
    form whose A is `memref.transpose` of a matrix X, where the column sums
    of X into a zero-filled 1 x M vector come before it with nothing in
    between writing X or touching the vector (a linear layer's bias
    gradient, the column sums of dY, beside its weight gradient dY^T H),
    calls the `_set_bgrad`
    form: C = A B and the vector = the sums of A's rows, cuBLASLt's BGRADB
    epilogue (computed as the product reads A); the sum and its fill go.

    With `fuse-gelu` (mixc's CUDA target), the GELU's steps beside their
    products become cuBLASLt epilogues, each step recognized by evaluating
    its body at fixed points against the closed form (however autodiff and
    fusion arranged its operations), U's rows a multiple of 8 floats apart:
      * forward: a 2-d product in the `_bias` form into a fresh buffer U
        whose GELU an elementwise op then computes into H, with nothing in
        between touching H or writing U, calls the `_bias_gelu` form: the
        product writes H = gelu(A B + bias) and U = A B + bias (kept for the
        backward pass), cuBLASLt's GELU_AUX_BIAS epilogue with U as its
        auxiliary output (passed last, as a 2-d matrix); the op goes;
      * backward: a 2-d product in the
    `_set` form into a fresh buffer dH that only one elementwise op reads,
    an op that multiplies dH by the tanh-approximated GELU's derivative at
    a pre-activation U into dU, with nothing in between touching dU or
    writing U, calls the `_set_dgelu` form: the product writes dU =
    gelu'(U) * (A B) itself, cuBLASLt's DGELU epilogue with U as its
    auxiliary input (passed last); the elementwise op and dH go.
    With bf16 operands (mixc --precision bf16) the GELU may write H rounded
    to bf16, and its backward step dU (their body's last operation a
    `arith.truncf`): the forms are then `_bias_gelu_bf16_to_bf16` and
    `_set_dgelu_bf16_to_bf16`, whose C, bias and U are bf16 (cuBLASLt gives
    the bias and auxiliary matrix D's type). Forward, the bias row is
    rounded into a bf16 vector (at the function's start when it is a
    function argument) and U's value goes to a bf16 allocation of its own,
    which the elementwise ops that read that value (up to the buffer's next
    overwrite or deallocation) read through the same reshapes, widened
    (`arith.extf`); another reader of it keeps the GELU apart. Backward, U
    must be bf16 too.

    With `triangular` (mixc's CPU target), a product marked `mix.triangle
    = array<i64: kind, p>` (mix-causal-products) calls the `_tri` form
    (`mixrt_batch_matmul_tri[_set][_bf16]`), which takes the kind and p as
    two more arguments and computes only the blocks of rows and columns
    outside the triangle.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string",
           /*default=*/"MIXRT_CPU_MATMUL_PREFIX",
           "The support routines' common prefix (mixrt_cuda_ for the CUDA "
           "target's cuBLASLt calls)">,
    Option<"overwriteZeros", "overwrite-zeros", "bool", /*default=*/"false",
           "Products into zero-filled accumulators overwrite them">,
    Option<"fuseBias", "fuse-bias", "bool", /*default=*/"false",
           "Products into accumulators filled with a row vector take it as "
           "their bias">,
    Option<"fuseBiasGrad", "fuse-bias-grad", "bool", /*default=*/"false",
           "Products of a transposed matrix whose column sums are taken "
           "just before write them too">,
    Option<"fuseGelu", "fuse-gelu", "bool", /*default=*/"false",
           "A GELU after a linear layer, and its backward step after the "
           "product that only it reads, ride on the products">,
    Option<"triangular", "triangular", "bool", /*default=*/"false",
           "Products marked mix.triangle skip the triangle">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MixRecordEntrySignaturesPass
    : Pass<"mix-record-entry-signatures", "::mlir::ModuleOp"> {
  let summary = "Record each function's bufferized signature for the runtime";
  let description = [{
    On buffers, after bufferization turned results into out-parameters:
    marks every defined `func.func` with `mix.entry_signature`, the array of
    its argument types (static, identity-layout memrefs). The marks survive
    the lowering to the LLVM dialect, where pointers no longer say how large
    a buffer is; `mix-pack-entry-points` and the package writer read them.
  }];
}

def MixPackEntryPointsPass
    : Pass<"mix-pack-entry-points", "::mlir::ModuleOp"> {
  let summary = "Give each entry point the runtime's one C signature";
  let description = [{
    In the LLVM dialect: each function marked `mix.entry_signature` becomes
    `llvm.func @mix_<name>(!llvm.ptr)`, which reads its memref arguments
    (one pointer each under the bare-pointer convention) from an array, so
    the runtime calls every entry point through `void (void **)`. The entry
    takes over the function's body, each argument a load from the array
    where it is used: a wrapper calling the function would pass hundreds of
    stack arguments, which sends LLVM's store merging quadratic. With
    `optnone` (the CPU target), the entry is marked `noinline` and
    `optnone`: what is left in it is straight-line glue around the outlined
    loop nests, which optimisation would not speed up and LLVM's passes are
    superlinear in. The packed entry points are appended to the module in
    the order of `entry-points`, then any other marked function's.
  }];
  let options = [
    ListOption<"entryPoints", "entry-points", "std::string",
               "Functions that must be packed (an error if one is missing); "
               "every marked function is packed either way">,
    Option<"optnone", "optnone", "bool", /*default=*/"true",
           "Mark the entry points noinline and optnone">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MIX_CODEGEN_PASSES_TD
