//===- Passes.td - CUDA code generation passes -------------*- tablegen -*-===//
//
// The project's own steps of the CUDA lowering (linalg on memrefs to GPU
// kernels and their host-side launches), as passes so that mix-opt and lit
// can run each one alone. buildCUDACodegenPipeline (lib/Pipelines) runs
// them in order.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TARGET_CUDA_PASSES_TD
#define MIX_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def MixMemoryToDevicePass
    : Pass<"mix-memory-to-device", "::mlir::ModuleOp"> {
  let summary = "Put every buffer of the host functions in device memory";
  let description = [{
    In the functions of the module (the host side): `memref.alloc` and
    `memref.alloca` become `gpu.alloc` (an alloca freed by `gpu.dealloc`
    before each return), `memref.dealloc` becomes `gpu.dealloc`, and
    `memref.copy` becomes `linalg.copy`, so that it runs as a kernel like any
    other linalg op. Buffers of `i1` and `index` elements (the deallocation
    lowering's bookkeeping, which the host reads and writes) stay in host
    memory. A `memref.get_global` (a constant) becomes a device
    buffer filled from the host constant by `gpu.memcpy`. After this pass the
    host code only allocates, launches and calls; every value it names lives
    on the device.

    The allocations and copies take the asynchronous form (a stream from
    `gpu.wait async`, waited for at once), the one `gpu-to-llvm` lowers; the
    package's runtime issues everything on one in-order stream, so the
    waits cost nothing.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def MixLaunchSerialOpsPass
    : Pass<"mix-launch-serial-ops", "::mlir::ModuleOp"> {
  let summary = "Launch the device work that no parallel loop carries";
  let description = [{
    Two kinds of device work are left outside kernels once the linalg ops
    with parallel loops are mapped, and both move into `gpu.launch`es:

    * A linalg op on memrefs whose loops are all reductions (a sum to a
      scalar: the loss, a norm) or that has no loops at all (a rank-0
      update) runs as one block of one thread, where it is later lowered to
      loops like any other op.
    * A host loop nest from the tensor program that loads or stores device
      memory itself (the embedding gradient's scatter-add over the tokens)
      runs in a kernel: the outermost enclosing `scf.for`/`scf.if` that
      holds no launch, call, allocation or linalg op moves in whole. For a
      two-deep `scf.for` nest whose inner iterations provably touch
      disjoint memory (every store, and every load of stored memory,
      indexes its last dimension by the inner induction variable, and no
      other view of stored memory is read), each inner iteration gets a
      thread that runs the outer loop in order; otherwise the nest runs on
      one thread.

    Buffers of `i1` and `index` elements are the host's own bookkeeping
    (the deallocation lowering's ownership flags and pointer lists) and
    their loops stay on the host. A host loop with results, or a load at
    the top level, that touches device memory is an error.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixParallelLoopsToGPUPass
    : Pass<"mix-parallel-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Map each top-level scf.parallel onto a flat 1-D gpu.launch";
  let description = [{
    Every `scf.parallel` directly in a host function (constant bounds, as
    every shape here is static) becomes a `gpu.launch` of
    ceil(P / 256) blocks of min(P, 256) threads, P being the number of
    iterations. Thread `t = blockIdx.x * blockDim.x + threadIdx.x` runs
    iteration t (delinearized, row-major) if `t < P`. The loop body, with
    its inner sequential loops (reductions), is the kernel body; a flat
    mapping keeps consecutive threads on consecutive innermost indices, so
    loads and stores of the innermost dimension coalesce.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixMergeIndependentKernelsPass
    : Pass<"mix-merge-independent-kernels", "::mlir::func::FuncOp"> {
  let summary = "Launch a kernel too small to fill the device with an "
                "independent neighbour (horizontal fusion)";
  let description = [{
    Two `gpu.launch` ops of a host function become one when neither reads
    what the other writes, nor writes what the other reads or writes (a
    buffer the body picks with `arith.select`, as a multi-tensor kernel's
    block picks its tensor, counts as each it may pick; any other buffer
    made in the body, but workgroup, private and `memref.alloca` ones, as
    unknown: no merge), and
    the earlier one can move down to the later one: the operations between
    them leave its buffers alone (deallocations of its buffers move after
    the merged launch), and when at least one of the two is smaller than
    one wave of the device (`threads`, by default an H200's 132 SMs x
    2048 threads): alone it would leave SMs idle, merged its blocks run
    beside the other's and its launch goes. The merged launch has the sum
    of the two grids' blocks in x; a block below the first kernel's count
    runs the first body, the others the second, each with its own block
    ids recovered (delinearized) and its grid and block sizes as
    constants. Blocks of different sizes merge when the smaller has 1-D
    blocks and its body synchronizes nothing (no barrier, shuffle, workgroup
    memory, nvvm or nvgpu op): its threads past its block size skip it.
    Workgroup and private buffers are the two lists together (at most the
    48 KiB a kernel may declare statically), and the merged kernel's
    parameters stay within the 4 KiB of PTX 8.0. The branches
    carry `mix.block_split` (and `mix.thread_split`), which the traffic
    estimate reads to count each body for its share of the launch.

    Merging proceeds greedily, each launch with the nearest earlier one it
    can take (of the last `window` launches), so chains of small
    independent kernels (a mixture's gate, its balance loss, the LayerNorm
    weight sums) become one launch.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"132 * 2048",
           "A launch of at most this many threads is small (one wave)">,
    Option<"window", "window", "unsigned", /*default=*/"16",
           "How many earlier launches a launch may merge with">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixMergeGPUModulesPass
    : Pass<"mix-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Gather every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` a kernel. This pass moves
    every kernel into one module, `@mix_kernels` (renaming a kernel whose
    name is taken), and points each `gpu.launch_func` at it, so that the
    package has one PTX file, one `ptxas` run and one cubin to load.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def MixAssembleKernelsPass
    : Pass<"mix-assemble-kernels", "::mlir::ModuleOp"> {
  let summary = "Assemble the kernels' PTX into a cubin with ptxas";
  let description = [{
    After `gpu-module-to-binary{format=isa}`: the PTX of `gpu.binary
    @mix_kernels` is assembled by the toolkit's `ptxas` for the chip, and
    the binary holds the cubin instead, so a package carries kernels the
    driver loads without a JIT, and a PTX that ptxas rejects fails the
    compile (with ptxas's output), not the first run. The PTX stays on the
    binary as the string attribute `mix.ptx`, for the package and
    `mixc --emit=ptx`. A module without `@mix_kernels` is left alone.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "The CUDA toolkit whose bin/ptxas assembles the kernels">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU architecture ptxas assembles for">,
  ];
}

def MixEmulateKernelsPass
    : Pass<"mix-emulate-kernels", "::mlir::ModuleOp"> {
  let summary = "Turn the kernels into host functions for the CUDA emulator";
  let description = [{
    For `mixc --target cuda --emulate`, in place of the NVVM lowering: each
    kernel `gpu.func @k` of `gpu.module @mix_kernels` (after every pass of
    the CUDA pipeline) becomes a host function `func.func @__mixemu_k` with
    the kernel's arguments followed by twelve `index` arguments (the thread
    id, block id, block size and grid size in x, y, z, which replace
    `gpu.thread_id`, `gpu.block_id`, `gpu.block_dim` and `gpu.grid_dim`;
    the lane and subgroup ids and `gpu.global_id` are computed from them),
    the block's shared memory (`memref<49152xi8>`, the window the emulator
    gives each block) and the launch's dynamic shared memory size.
    Workgroup attributions become views into the window, each at a
    multiple of 16 bytes (more than 48 KiB is an error), followed by
    `gpu.dynamic_shared_memory`; private attributions become per-thread
    allocas; both start filled with 0xFF bytes, as uninitialized memory
    should not look like zeros. GPU address spaces are dropped.
    `gpu.barrier` becomes `mixemu_barrier(site)` and `gpu.shuffle`
    (32-bit values) `mixemu_shuffle(site, mode, value, offset, width)`,
    where `site` names the op's location; `gpu.subgroup_reduce` is first
    expanded into shuffles. A kernel that synchronizes is marked
    `mix.uses_barrier` or `mix.uses_shuffle`, so the emulator runs its
    threads as fibers. A runtime check (`cf.assert`, from
    `generate-runtime-verification` run on the kernels before this pass)
    becomes a call of `mixemu_fail(message)` with the kernel's name in the
    message. The kernel's `known_block_size` and `known_grid_size` are
    kept on the function, and `mix.emulated_kernel` names the kernel.
    `gpu.module @mix_kernels` becomes a `gpu.binary` whose object is the
    marker `MIXEMU01`, so the host code loads and launches the kernels
    exactly as on the device (`mgpuModuleLoad`, `mgpuModuleGetFunction`,
    `mgpuLaunchKernel`). Other GPU ops are refused by name.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def MixEmulatorLaunchersPass
    : Pass<"mix-emulator-launchers", "::mlir::ModuleOp"> {
  let summary = "Give each emulated kernel the entry point the emulator calls";
  let description = [{
    After the host code of an emulated package is in the LLVM dialect: for
    every function marked `mix.emulated_kernel = "k"` (from
    `mix-emulate-kernels`), emits `void mixemu_launch_k(void **params,
    const MixEmuThread *thread)`, which reads each argument from
    `cuLaunchKernel`'s parameter array (`params[i]` points at the i-th
    argument's value), the thread's twelve ids, its block's shared memory
    and the dynamic shared memory size, and runs one thread of the kernel;
    and the constants `int64_t mixemu_nparams_k` (the parameters the kernel
    takes), `mixemu_shared_bytes_k` (its static shared memory) and
    `mixemu_flags_k` (`MIXEMU_KERNEL_SYNCHRONIZES` when its threads must
    run as fibers). The emulator finds them by name
    (`runtime/emulator/include/mixemu/Emulator.h`).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MixKernelMemRefOffsetsPass
    : Pass<"mix-kernel-memref-offsets", "::mlir::ModuleOp"> {
  let summary = "Pass a kernel's strided memref views as buffer and offset";
  let description = [{
    Kernels take each memref as one pointer (the bare-pointer convention the
    host launches with), which needs a static layout. A view whose offset
    or strides are only known at run time (a slice taken in a host loop) is
    passed instead as its base buffer (a rank-0 memref, the pointer) and
    its offset and dynamic strides as `index` arguments
    (`memref.extract_strided_metadata` at each launch); the kernel rebuilds
    the view with `memref.reinterpret_cast`. Runs on `gpu.module
    @mix_kernels` and every `gpu.launch_func` of it.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MixGradientReadyPointsPass
    : Pass<"mix-gradient-ready-points", "::mlir::ModuleOp"> {
  let summary = "Mark where each output of grad is final, for the "
                "overlapped all-reduce";
  let description = [{
    On the host code of a cuda package (buffers, kernels outlined): in the
    entry point named by `entry`, after the last operation that reads or
    writes each output (`mix.entry_outputs`: the loss terms and the
    gradients), a call `@mix_gradient_ready(base)` on the output's buffer
    (its `memref.extract_strided_metadata` base, so `void *` in C). The
    backward pass makes the last layers' gradients first, so their calls
    come early. In a data-parallel run the support code averages the
    marked buffers over the ranks in buckets on a stream of its own while
    the rest of the backward pass runs (PackageABI.h:
    mixrt_nccl_begin_average); otherwise the call returns at once.

    "Last use" is by `leavesBufferAlone`: an operation, with what is nested
    in it, that may read or write the output through any view of it. A
    buffer that nothing after the call touches can be all-reduced in place
    while the package's stream runs on. An output that nothing touches is
    marked at the start; one whose element type is not f32 is not marked
    (the average after the call takes it). A function without the mark, or
    no function named `entry`, is left alone.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"grad\"",
           "The entry point whose outputs are averaged over the ranks">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MixRecordKernelTrafficPass
    : Pass<"mix-record-kernel-traffic", "::mlir::ModuleOp"> {
  let summary = "Record each kernel's estimated memory traffic and "
                "arithmetic in the package";
  let description = [{
    For the profile of a CUDA package (`MIXRT_CUDA_PROFILE=1`): estimates,
    for every kernel of `gpu.module @mix_kernels`, the bytes one launch
    reads from and writes to device memory and the floating-point
    operations it performs, and records them in the host module as the
    NUL-terminated string `@mixrt_kernel_traffic`, one line
    `NAME READ WRITTEN FLOPS` a kernel (PackageABI.h), which the support
    code reads. For each memref argument, the bytes of its loads (and,
    apart, of its stores) are the smaller of
      * the distinct bytes of the views it is accessed through (the
        product of the view's static sizes; compulsory traffic, as if
        every re-read hit the cache), and
      * the accesses themselves: the element (or vector) bytes of each
        load or store, times the trip counts of the `scf.for` loops around
        it, times the launch's threads (`known_block_size` times
        `known_grid_size`), so a gather of a few rows of a table counts
        those rows, not the table.
    An argument used by anything else (a call, an atomic) counts as read
    and written in full. The operations are the float adds, subtracts,
    multiplies, divides, minima, maxima and math functions (one an
    element, a fused multiply-add two) times the same trip counts and
    threads. A loop whose bounds vary over the threads (a strided loop
    from the thread id, the flash attention's causal walk up to its
    block's last row) counts the trips between its bounds' midpoints,
    bounded through thread and block ids, sums, products, quotients and
    minima: the average thread's. Runs after `mix-kernel-memref-offsets`,
    on the kernels the device (or the emulator) runs.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MixFlashAttentionKernelsPass
    : Pass<"mix-flash-attention-kernels", "::mlir::func::FuncOp"> {
  let summary = "Attention as flash kernels on the tensor cores: no score "
                "matrix in memory";
  let description = [{
    Lowers `mix.flash_attention_buffers` and
    `mix.flash_attention_grad_buffers` to launches whose blocks hold one
    tile of keys (or queries) in workgroup memory at a time, so that memory
    grows linearly in the sequence length (FlashAttention-2's online
    softmax and work split; Dao, 2023), and compute their products on the
    tensor cores, the scores and probabilities never leaving registers
    (float32 accumulators; `nvgpu.mma.sync` m16n8k8 with tf32 operands, or
    `nvvm.mma.sync` m16n8k16 with bf16 operands, two a register, at twice
    the rate, where an accumulator is the next product's left operand in
    place):
      * forward: a block of four warps for 64 queries of one (batch row,
        head), a warp 16 queries holding q (scaled by 1/sqrt(dh)) as the
        products' left operand, its output accumulators, running maxima
        and sums in registers; the block walks tiles of keys and values
        (64 keys for heads up to 64 wide, fewer for wider heads, 32 KiB of
        workgroup memory), the stream's prefix keys first (no mask) and
        then the real keys up to the block's last query (the causal mask
        within a tile); each tile rescales the accumulators once. It
        writes the output and each query's log-sum-exp;
      * backward, queries: the same blocks recompute the scores and
        probabilities from the log-sum-exp, with `D = dout . out`, and
        accumulate `dQ = sum_j P (dout . v_j - D) k_j / sqrt(dh)`;
      * backward, keys: a warp 16 keys holding k, v and their gradients;
        the block walks tiles of the queries that see its keys and
        accumulates `dV = P^T dout` and `dK = dS^T q / sqrt(dh)`;
      * backward, prefixes (ParaScale): the keys' kernel for each stream's
        prefix keys, over every query of the stream's batch rows.
    The operands are rounded as `rounding` says (tf32 to nearest, ties
    away; or bf16 to nearest even); heads are padded with zero columns to a
    multiple of the products' depth (8 for tf32, 16 for bf16), up to 512
    (tf32) or 256 (bf16). Nothing is accumulated atomically: every gradient element is
    summed by one lane, so results are deterministic.
  }];
  let options = [
    Option<"rounding", "rounding", "std::string", /*default=*/"\"tf32\"",
           "The products' operands: tf32 or bf16 (mixc --gpu-matmul)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def MixRoundIntoProducersPass
    : Pass<"mix-round-into-producers", "::mlir::func::FuncOp"> {
  let summary = "Have kernels write in bf16 what the products read rounded";
  let description = [{
    With `mixc --precision bf16` a product's operands are rounded to bf16
    by an elementwise `linalg.generic` of one `arith.truncf` (from
    `mix-bf16-matmuls`), each a launch that reads the f32 value and writes
    the bf16 one. For each such rounding of a fresh f32 allocation x into
    y:
      * a bias gradient's column sum of x (directly or through a reshape,
        after the rounding, x and y unchanged in between) sums y instead,
        widened: what cuBLASLt's BGRADB epilogue computes from the operand
        it reads, so that `mix-matmuls-to-library-calls` puts the sum on
        the weight gradient's product;
      * the attention's gradient reading x as the attention's output reads
        y (D = rowsum(dout . out) from the bf16 values, as FlashAttention-2
        does); y is then freed after it;
      * where what x's last writer wrote is read by the rounding alone (x
        is freed or overwritten next), that writer writes y instead: a
        fused op (the LayerNorm's result, the attention's result, the
        LayerNorm gradient's `dinput`, the attention gradient's `dqkv`,
        the cross-entropy gradient's `dlogits`; their kernels round each
        value as they store it, to nearest even) or an elementwise
        `linalg.generic` (its payload yields the value rounded); the
        rounding and, when no other value lives in it, x go;
      * where x is read again, an elementwise writer writes y besides x
        (one more output; a LayerNorm gradient's kernel that absorbs it,
        the residual gradient's add, stores both). So too where x is a
        view of a fresh allocation (`mix-transposed-results` computes a
        gate's probabilities, and then their gradient, through the
        transposed view of the mixing's buffer).
    y's allocation moves up before the writer.

    ```mlir
    %x = memref.alloc() : memref<2x8x64xf32>
    mix.fused_layer_norm_buffers %in, %w, %b into %x, %mean, %rstd ...
    %y = memref.alloc() : memref<2x8x64xbf16>
    linalg.generic {truncf} ins(%x) outs(%y)
    memref.dealloc %x
    // becomes
    %y = memref.alloc() : memref<2x8x64xbf16>
    mix.fused_layer_norm_buffers %in, %w, %b into %y, %mean, %rstd ...
    ```
  }];
}

def MixLayerNormKernelsPass
    : Pass<"mix-layer-norm-kernels", "::mlir::func::FuncOp"> {
  let summary = "A LayerNorm in one kernel forward, two backward";
  let description = [{
    Lowers `mix.fused_layer_norm_buffers` and
    `mix.fused_layer_norm_grad_buffers`:
      * forward: a block of 256 threads a row sums the row, then its
        centred squares (block reductions: warp shuffles, workgroup
        memory), then writes every element normalized, scaled and
        shifted, and the row's mean and 1/std. An elementwise op that
        writes the input just before (a residual add, identity maps, its
        operands in other buffers) runs in the kernel: the first pass
        stores the input it computes, the others compute it again;
      * backward: a block a chunk of rows (at most 1024 chunks), row after
        row: dinput from the saved statistics and the row's sums of g =
        dresult * weight and of g * xhat, and each thread's columns' sums
        of dresult * xhat and dresult over the chunk, written as partial
        sums that a second launch adds in a fixed order (dweight, dbias).
        The elementwise op that consumes dinput (the residual gradient's
        add) runs in the kernel's store of it, and dinput's buffer goes;
        the elementwise op that writes dresult just before (a mixture
        layer's sum of its gate's and its experts' input gradients) runs
        where the kernel reads dresult, when nothing else reads dresult
        (its buffer is next overwritten whole, freed, or never accessed):
        the op goes, and its operands freed in between are freed after the
        kernel.
    No atomics: every result is the same bits every run.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixMultiTensorKernelsPass
    : Pass<"mix-multi-tensor-kernels", "::mlir::func::FuncOp"> {
  let summary = "The optimizer's norm and update over many tensors a launch";
  let description = [{
    Lowers `mix.multi_tensor_sum_squares_buffers` and
    `mix.multi_tensor_adamw_buffers` to launches over many tensors each
    (multi_tensor_apply): the tensors are cut into chunks of 4096
    elements, a block a chunk, and a block selects its tensor's buffers by
    comparing its index with each tensor's first block; a launch takes as
    many tensors as keep the kernel's parameters (8 bytes for each buffer,
    more for a dynamic layout, and for each tensor's constants) within the
    4 KiB of a PTX 8.0 kernel.
      * sum of squares: a partial sum a chunk (256 threads, 16 elements
        each, warp shuffles and workgroup memory), then one block adds the
        partials in a fixed order (deterministic, no atomics);
      * AdamW: each thread updates 16 elements of its block's chunk,
        block-strided, the parameter and both moments in place, in the
        order of mix-append-adamw's primitive form.
    A model's optimizer step is then a handful of launches instead of two
    or three a parameter.

    The same way, the roundings of the function's arguments to bf16 (the
    weights under `mixc --precision bf16`, rounded at the start of the
    step for the products) that only allocations and waits separate become
    one launch (a few for many tensors) where the last of them was.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixCrossEntropyKernelsPass
    : Pass<"mix-cross-entropy-kernels", "::mlir::func::FuncOp"> {
  let summary = "The cross-entropy in one pass over the logits each way";
  let description = [{
    Lowers `mix.fused_cross_entropy_buffers` and
    `mix.fused_cross_entropy_grad_buffers` to kernels that never write the
    probabilities out:
      * forward: a block of 256 threads a row of the logits; each thread
        folds its strided share of the row (adjacent threads on adjacent
        elements) into an online (max, sum of exponentials) pair, the warps
        combine the pairs by `gpu.shuffle xor` and the block through
        workgroup memory after a `gpu.barrier`; thread 0 writes the row's
        log-sum-exp and its loss `lse - logits[target]` (into a temporary
        `gpu.alloc`). A second launch, one block, sums the losses in a
        fixed order into the mean: deterministic, no atomics;
      * backward: a block a row, each thread writing its share of
        `scale * dresult / rows * (exp(logit - lse) - (v == target))`
        (without `dresult`, the constant adjoint folded into `scale`: 1).
    So a training step reads the logits twice and writes their gradient
    once, instead of the decomposed form's separate max, exponential, sum,
    gather and softmax-gradient passes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def MixBlockReductionsPass
    : Pass<"mix-block-reductions", "::mlir::ModuleOp"> {
  let summary = "Reduce with blocks of threads: rows and columns";
  let description = [{
    A `linalg.generic` on buffers with one output indexed by its parallel
    loops only, a payload whose output value meets the folded value in one
    combiner (float add or multiply allowed to reassociate, min, max,
    integer add, multiply, and, or) and 32-bit elements becomes launches
    whose threads share each output element's work:
      * rows (the innermost loop reduces, at least 32 reduced elements): a
        block of up to 256 threads an output element (the parallel loops
        flattened row-major). Thread t folds the reduced elements t, t + T,
        ... (the reduction loops flattened row-major, so adjacent threads
        read adjacent elements) into a register from the combiner's
        identity, running the payload for each; the warps combine their
        lanes with `gpu.shuffle xor` and, for more than one warp, lane 0 of
        each leaves its value in workgroup memory and after a `gpu.barrier`
        every warp folds those; thread 0 combines the block's value with
        the output element (the reduction's initial value);
      * columns (the innermost loop is parallel; any number of reduced
        elements): a block is 32 adjacent columns (lanes) by 8 groups that
        stride over the reduced elements, blocks in x over the column
        tiles and in y over the other output elements; the groups meet in
        workgroup memory and group 0 folds them into the output. When the
        tiles are fewer than about 264 blocks, the reduced elements are
        split over blocks in z (each group keeping at least 16) into a
        partial buffer (`gpu.alloc`, freed after the launch), which the
        last block to finish folds into the output, its threads striding
        over the output elements and each folding the splits in order (the
        result does not depend on which block is last): each block, after
        storing its partial values, fences them at device scope
        (`llvm.fence syncscope("device") release`), synchronizes, and its
        thread 0 fences again and takes a ticket from a counter
        (`memref.atomic_rmw addi` on a zero-initialised `memref<1xi32>`
        global of the module, one a launch, `@__mix_blocks_done*`); the
        block with the last ticket fences (acquire), folds, and sets the
        counter back to zero for the next launch;
      * siblings, first: a rows reduction and a columns reduction over the
        same loops that read one buffer through the same map, where the
        rows one reduces only the innermost loop and the columns one keeps
        it and reduces exactly the loops the rows one keeps but it does
        not (a mixture's backward step: from dX (H, T, N, d), the gate's
        gradient sums over d, the input's over H and N), with nothing in
        between that writes what the earlier reads or touches what it
        writes. One launch at the later one's place reads the buffer once
        for both: a block for each index of the loops both keep, its
        threads over the innermost loop; for each index of the other
        loops in turn, each thread folds its elements into the rows'
        register, reduced by the block as for rows, and into the columns'
        accumulators, one a column in workgroup memory (at most 12288),
        which only the thread owning the column touches; at the end each
        thread folds its columns into the output.
    An elementwise `linalg.generic` that last wrote an input the reduction
    reads whole, each element once (a permutation map), in the element
    order it writes it (the same view, or views through reshapes with
    identity layouts), runs in the reduction's kernel when the grid has at
    least 128 blocks: the launch goes to the producer's place (views and
    the output's allocation that the reduction needs move before it), each
    thread computes the producer's elements where it reads them (its
    payload on its own inputs) and stores every result of the producer
    there, for the producer's other readers; the producer goes. This needs
    the producer to read and write nothing else the reduction touches, and
    nothing in between to write the reduction's inputs or touch its output
    (its identity fill aside). A gate's softmax and its balance loss's
    sums over tokens, and the softmax's gradient and the gate bias's
    gradient, are such pairs.
    Runs on the host functions before `mix-launch-serial-ops`, so a
    reduction to a scalar gets a block rather than one thread, and a
    reduction over rows one launch rather than a host loop of launches.
    A module pass: the counters are globals of the module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MixInlineScalarProducersPass
    : Pass<"mix-inline-scalar-producers", "::mlir::func::FuncOp"> {
  let summary = "Recompute a scalar where it is read instead of in a kernel of its own";
  let description = [{
    A `linalg.generic` without loops whose inputs are rank-0 buffers, whose
    payload is pure and does not read its output, and whose output is an
    allocation read only by later `linalg.generic`s of the same block (as
    a broadcast input, through views) is a one-thread kernel on the GPU
    (AdamW's clipping factor, recomputed before each parameter's update).
    Each reader instead takes the producer's inputs, broadcast, and
    recomputes the scalar at the start of its payload; the producer is
    erased. Done only when nothing between the producer and a reader may
    write the producer's inputs or its result (linalg outputs, calls'
    memref operands, ops of unknown effect count as writes).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MixFuseElementwiseKernelsPass
    : Pass<"mix-fuse-elementwise-kernels", "::mlir::func::FuncOp"> {
  let summary = "Fuse neighbouring elementwise ops on buffers into one kernel";
  let description = [{
    Two `linalg.generic`s on buffers whose loops are all parallel, over the
    same static iteration space, with pure payloads, next to each other
    (only views, pure ops, allocations and frees of other buffers between
    them), become one op with the outputs of both, run where the second
    was: the first's payload, then the second's, for each element. A
    buffer that either writes and both touch must be accessed by both as
    the same view through the same permutation map (so each iteration
    touches the same element in both and no other iteration touches it),
    and must not be written by both; the second op's reads of the first's
    outputs become uses of the first's results. On the GPU this is one
    launch instead of two and one pass over memory (AdamW's updates of m,
    v and the parameter: three launches a tensor to one).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // MIX_TARGET_CUDA_PASSES_TD
