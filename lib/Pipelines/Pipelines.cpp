//===- Pipelines.cpp - mixc's pass pipelines ------------------------------===//
//
// Every step of the compile is a pass run by a PassManager, so the IR is
// verified between passes and MLIR's debugging options (--mlir-print-ir-*,
// --mlir-pass-pipeline-crash-reproducer, --mlir-timing) apply throughout.
// Upstream passes are added in their textual form, the names mlir-opt users
// know them by, with the options they take there.
//
//===----------------------------------------------------------------------===//

#include "mix/Pipelines/Pipelines.h"

#include "mix/Codegen/Passes.h"
#include "mix/Conversion/Passes.h"
#include "mix/Target/CPU/Passes.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::mix;

/// Registers the upstream passes the pipelines name, once.
static void registerUpstreamPasses() {
  static bool done = [] {
    registerTransformsPasses();
    registerLinalgPasses();
    bufferization::registerBufferizationPasses();
    bufferization::registerBufferizationPipelines();
    registerConversionPasses();
    memref::registerMemRefPasses();
    registerGPUPasses();
    return true;
  }();
  (void)done;
}

/// Adds the upstream passes of the textual pipeline \p text to \p pm.
static void addUpstreamPasses(OpPassManager &pm, llvm::StringRef text) {
  registerUpstreamPasses();
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(text, pm, os)))
    llvm::report_fatal_error(
        llvm::Twine("internal error: bad pass pipeline '") + text +
        "': " + error);
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

// Passes that see one function at a time run nested on each function, so
// the pass manager runs them on the functions in parallel (diagnostics still
// come in the functions' order). Passes that add or read symbols (autodiff,
// AdamW, the runtime's declarations) run on the module.

void mlir::mix::buildMixProvePipeline(OpPassManager &pm,
                                      llvm::StringRef mixingOrder,
                                      bool considerStacked) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createMixProveDynamicConvPass());
  func.addPass(createMixMoEToDynamicConvPass());
  func.addPass(createCanonicalizerPass());
  MixSelectMixingOrderPassOptions order;
  order.order = mixingOrder.str();
  order.considerStacked = considerStacked;
  func.addPass(createMixSelectMixingOrderPass(order));
}

void mlir::mix::buildMixDecomposePipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  OpPassManager &func = pm.nest<func::FuncOp>();
  if (options.fuseOps || options.fuseAttention)
    func.addPass(createMixFuseAttentionPass());
  if (options.fuseOps) {
    func.addPass(createMixFuseCrossEntropyPass());
    func.addPass(createMixFuseLayerNormPass());
  }
  func.addPass(createMixDecomposePass());
  func.addPass(createCanonicalizerPass());
}

void mlir::mix::buildMixDifferentiatePipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  pm.addPass(createMixAutodiffPass());
  MixAppendAdamWPassOptions adamw;
  adamw.fused = options.fuseOps;
  pm.addPass(createMixAppendAdamWPass(adamw));
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
  func.addPass(createMixSimplifySoftmaxGradPass());
  func.addPass(createCSEPass());
  func.addPass(createMixCausalProductsPass());
}

void mlir::mix::buildMixLowerToLinalgPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createMixDropParameterAttrsPass());
  // Declares the collectives' runtime functions in the module.
  ConvertMixToLinalgPassOptions lowering;
  lowering.positionsOnDevice = options.positionsOnDevice;
  pm.addPass(createConvertMixToLinalgPass(lowering));
  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createCanonicalizerPass());
  func.addPass(createCSEPass());
  if (options.bf16Matmuls)
    func.addPass(createMixBF16MatmulsPass());
}

void mlir::mix::buildMixTrainingPipeline(
    OpPassManager &pm, const TrainingPipelineOptions &options) {
  buildMixProvePipeline(pm, "auto", options.stackMixtures);
  buildMixDecomposePipeline(pm, options);
  buildMixDifferentiatePipeline(pm, options);
  buildMixLowerToLinalgPipeline(pm, options);
}

//===----------------------------------------------------------------------===//
// Code generation
//===----------------------------------------------------------------------===//

std::vector<std::string> mlir::mix::getPackageEntryPoints() {
  return {"forward", "grad", "adamw", "logits"};
}

void mlir::mix::buildBufferizePipeline(
    OpPassManager &pm, const BufferizePipelineOptions &options) {
  OpPassManager &onTensors = pm.nest<func::FuncOp>();
  onTensors.addPass(createMixFoldReshapesIntoSlicesPass());
  onTensors.addPass(createMixFoldSumsIntoAccumulatorsPass());
  onTensors.addPass(createMixHeadProductsPass());
  MixFuseElementwisePassOptions fuse;
  fuse.sharedReadsOnce = options.sharedReadsOnce;
  onTensors.addPass(createMixFuseElementwisePass(fuse));
  MixRematerializePassOptions remat;
  remat.elementwise = options.recomputeElementwise;
  onTensors.addPass(createMixRematerializePass(remat));
  onTensors.addPass(createMixUpdateArgumentsInPlacePass());
  onTensors.addPass(createMixRecordEntryOutputsPass());
  // Compute what is materialized in a destination (mix-update-arguments-
  // in-place) in that destination where the reads allow, bufferize with
  // identity layouts at function boundaries, turn results into
  // out-parameters and free what is allocated. The deallocation helper
  // takes dynamically sized lists; inlined, its sizes become static, as the
  // bare-pointer calling convention needs.
  addUpstreamPasses(pm, "eliminate-empty-tensors,"
                        "one-shot-bufferize{bufferize-function-boundaries "
                        "function-boundary-type-conversion=identity-layout-map "
                        "allow-return-allocs-from-loops},"
                        "buffer-results-to-out-params{modify-public-functions "
                        "hoist-static-allocs},"
                        "buffer-deallocation-pipeline,"
                        "convert-bufferization-to-memref,"
                        "inline,"
                        "canonicalize");
  OpPassManager &onBuffers = pm.nest<func::FuncOp>();
  MixTransposedOperandsPassOptions transposed;
  transposed.generics = options.transposedGenericOperands;
  onBuffers.addPass(createMixTransposedOperandsPass(transposed));
  // After the transposes: bufferization may reuse a result's buffer for
  // earlier temporaries (transposed copies among them), which
  // mix-transposed-operands only turns into views while they are
  // allocations of their own.
  onBuffers.addPass(createMixWriteResultsInPlacePass());
  onBuffers.addPass(createMixAllocateAtFirstUsePass());
  onBuffers.addPass(createMixFreeAfterLastUsePass());
  onBuffers.addPass(createMixReportPeakMemoryPass());
  pm.addPass(createMixRecordEntrySignaturesPass());
}

void mlir::mix::buildCPULowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createMixAttentionCallsPass());
  MixMatmulsToLibraryCallsPassOptions matmuls;
  matmuls.overwriteZeros = true;
  matmuls.fuseBias = true;
  matmuls.triangular = true;
  pm.addPass(createMixMatmulsToLibraryCallsPass(matmuls));
  // Parallel dimensions become scf.parallel: the outermost of a large
  // enough nest is split over threads.
  addUpstreamPasses(pm, "convert-linalg-to-parallel-loops");
  MixOutlineLoopNestsPassOptions outline;
  outline.threadRanges = true;
  pm.addPass(createMixOutlineLoopNestsPass(outline));
  pm.addPass(createMixApproximateMathPass());
  addUpstreamPasses(pm, "expand-strided-metadata,"
                        "lower-affine,"
                        "convert-scf-to-cf,"
                        "convert-math-to-llvm,"
                        "convert-math-to-libm");
  pm.addPass(createMixExpandArithPass());
  addUpstreamPasses(pm, "convert-arith-to-llvm,"
                        "convert-index-to-llvm,"
                        "finalize-memref-to-llvm,"
                        "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
                        "convert-cf-to-llvm,"
                        "reconcile-unrealized-casts,"
                        "canonicalize");
  pm.addPass(createMixParallelizeOutlinedCallsPass());
}

void mlir::mix::buildPackEntryPointsPipeline(
    OpPassManager &pm, llvm::ArrayRef<std::string> entryPoints, bool optnone) {
  MixPackEntryPointsPassOptions pack;
  pack.entryPoints = llvm::to_vector(entryPoints);
  pack.optnone = optnone;
  pm.addPass(createMixPackEntryPointsPass(pack));
}

void mlir::mix::buildCPUCodegenPipeline(
    OpPassManager &pm, const CPUCodegenPipelineOptions &options) {
  buildBufferizePipeline(pm);
  buildCPULowerToLLVMPipeline(pm);
  buildPackEntryPointsPipeline(pm, options.entryPoints, /*optnone=*/true);
}

void mlir::mix::buildCUDAKernelsPipeline(
    OpPassManager &pm, const CUDACodegenPipelineOptions &options) {
  // Products write a result that a copy transposed in its destination
  // (the strides are the library call's). Products into zeros overwrite
  // them (beta 0), a linear layer's bias rides on its product (cuBLASLt's
  // BIAS epilogue) and its gradient on the weight gradient's (BGRADB), the
  // GELU's backward step on the product before it (DGELU): no fill,
  // broadcast, column-sum or GELU-gradient launches, and no read of C.
  pm.addNestedPass<func::FuncOp>(createMixTransposedResultsPass());
  // --precision bf16: fused kernels write the operands they make rounded.
  pm.addNestedPass<func::FuncOp>(createMixRoundIntoProducersPass());
  MixMatmulsToLibraryCallsPassOptions matmuls;
  matmuls.prefix = MIXRT_CUDA_MATMUL_PREFIX;
  matmuls.overwriteZeros = true;
  matmuls.fuseBias = true;
  matmuls.fuseBiasGrad = true;
  matmuls.fuseGelu = true;
  pm.addPass(createMixMatmulsToLibraryCallsPass(matmuls));
  pm.addPass(createMixMemoryToDevicePass());
  MixFlashAttentionKernelsPassOptions attention;
  attention.rounding = options.attentionRounding;
  pm.addNestedPass<func::FuncOp>(createMixFlashAttentionKernelsPass(attention));
  pm.addNestedPass<func::FuncOp>(createMixCrossEntropyKernelsPass());
  pm.addNestedPass<func::FuncOp>(createMixLayerNormKernelsPass());
  pm.addNestedPass<func::FuncOp>(createMixMultiTensorKernelsPass());
  pm.addNestedPass<func::FuncOp>(createMixInlineScalarProducersPass());
  pm.addNestedPass<func::FuncOp>(createMixFuseElementwiseKernelsPass());
  pm.addPass(createMixBlockReductionsPass());
  pm.addPass(createMixLaunchSerialOpsPass());
  addUpstreamPasses(pm, "convert-linalg-to-parallel-loops");
  pm.addPass(createMixParallelLoopsToGPUPass());
  // Kernels too small to fill the device ride with independent neighbours.
  pm.addNestedPass<func::FuncOp>(createMixMergeIndependentKernelsPass());
  // Constants that canonicalization hoisted out of the launches go back
  // in, so that the kernels do not take them as parameters (4 KiB at most).
  addUpstreamPasses(pm, "func.func(lower-affine,canonicalize,cse,"
                        "gpu-launch-sink-index-computations),"
                        "gpu-kernel-outlining");
  pm.addPass(createMixMergeGPUModulesPass());
  pm.addPass(createMixKernelMemRefOffsetsPass());
  // Where each of grad's outputs is final: a data-parallel run averages it
  // from there while the backward pass goes on.
  pm.addPass(createMixGradientReadyPointsPass());
  // What the profile reports: the bytes each kernel moves, as estimated
  // from the kernels the device (or the emulator) runs.
  pm.addPass(createMixRecordKernelTrafficPass());
  if (options.emulate) {
    // The same kernels, as host functions the emulator runs a thread at a
    // time, with every memory access checked.
    addUpstreamPasses(pm, "gpu.module(generate-runtime-verification{"
                          "verbose-level=0})");
    pm.addPass(createMixEmulateKernelsPass());
    return;
  }
  // The kernels take each memref as one pointer, as the host passes it
  // (gpu-to-llvm{use-bare-pointers-for-host} in the host pipeline): with
  // the default descriptors a kernel would read parameters past the end of
  // the array cuLaunchKernel is given.
  addUpstreamPasses(
      pm, "nvvm-attach-target{module=" + std::string(kKernelModuleName) +
              " chip=" + options.chip + " features=" + options.features +
              " O=3},"
              "gpu.module(lower-affine,expand-strided-metadata,"
              "convert-scf-to-cf,"
              "convert-nvgpu-to-nvvm,convert-vector-to-llvm,"
              "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},"
              "canonicalize,cse,"
              "reconcile-unrealized-casts)");
}

void mlir::mix::buildCUDAAssemblePipeline(
    OpPassManager &pm, const CUDACodegenPipelineOptions &options) {
  addUpstreamPasses(
      pm, "gpu-module-to-binary{format=isa toolkit=" + options.toolkit + "}");
  MixAssembleKernelsPassOptions assemble;
  assemble.toolkit = options.toolkit;
  assemble.chip = options.chip;
  pm.addPass(createMixAssembleKernelsPass(assemble));
}

void mlir::mix::buildCUDAHostToLLVMPipeline(OpPassManager &pm) {
  // The math functions occur only in the kernels of an emulated package.
  addUpstreamPasses(pm, "func.func(expand-strided-metadata,lower-affine),"
                        "convert-scf-to-cf,"
                        "convert-math-to-llvm,"
                        "convert-math-to-libm,"
                        "convert-arith-to-llvm,"
                        "convert-index-to-llvm,"
                        "finalize-memref-to-llvm,"
                        "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
                        "gpu-to-llvm{use-bare-pointers-for-host},"
                        "convert-cf-to-llvm,"
                        "reconcile-unrealized-casts,"
                        "canonicalize");
}

void mlir::mix::buildCUDAEmulatorLaunchersPipeline(OpPassManager &pm) {
  pm.addPass(createMixEmulatorLaunchersPass());
}

void mlir::mix::buildCUDACodegenPipeline(
    OpPassManager &pm, const CUDACodegenPipelineOptions &options) {
  if (options.bufferize)
    buildBufferizePipeline(pm, BufferizePipelineOptions::forCUDA());
  else
    pm.addPass(createMixRecordEntrySignaturesPass());
  buildCUDAKernelsPipeline(pm, options);
  if (options.assemble && !options.emulate)
    buildCUDAAssemblePipeline(pm, options);
  buildCUDAHostToLLVMPipeline(pm);
  if (options.emulate)
    buildCUDAEmulatorLaunchersPipeline(pm);
  // The host glue of the CUDA target is optimised as it always was.
  buildPackEntryPointsPipeline(pm, options.entryPoints, /*optnone=*/false);
}

//===----------------------------------------------------------------------===//
// Registration and running
//===----------------------------------------------------------------------===//

namespace {
struct TrainingCLOptions : PassPipelineOptions<TrainingCLOptions> {
  Option<bool> bf16Matmuls{
      *this, "bf16-matmuls",
      llvm::cl::desc("Round the matrix products' operands to bf16 "
                     "(mixc --precision bf16 on the CPU)"),
      llvm::cl::init(false)};
  Option<bool> fuseOps{
      *this, "fuse-ops",
      llvm::cl::desc("Keep attention, the cross-entropy and the LayerNorm "
                     "whole as fused ops and build AdamW from multi-tensor "
                     "ops (mixc --target cuda)"),
      llvm::cl::init(false)};
  Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("Keep attention whole as mix.flash_attention (mixc "
                     "--attention fused, the default on every target)"),
      llvm::cl::init(false)};
  Option<bool> stackMixtures{
      *this, "stack-mixtures",
      llvm::cl::desc("Let the cost model lower a mixture as one product over "
                     "the stacked kernels (mixc --target cuda)"),
      llvm::cl::init(false)};
  Option<bool> positionsOnDevice{
      *this, "positions-on-device",
      llvm::cl::desc("Read a decode step's position only inside loop nests "
                     "(mixc --target cuda)"),
      llvm::cl::init(false)};
};

struct CPUCodegenCLOptions : PassPipelineOptions<CPUCodegenCLOptions> {
  ListOption<std::string> entryPoints{
      *this, "entry-points",
      llvm::cl::desc("Functions that must become packed entry points")};
};

struct CUDACodegenCLOptions : PassPipelineOptions<CUDACodegenCLOptions> {
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("The CUDA toolkit (bin/ptxas)"),
                              llvm::cl::init("/usr/local/cuda")};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("The GPU"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<bool> assemble{
      *this, "assemble",
      llvm::cl::desc("Serialize the kernels to PTX and assemble them with "
                     "ptxas (needs the toolkit)"),
      llvm::cl::init(true)};
  Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("The kernels as host functions for the CUDA emulator "
                     "(no NVVM, no toolkit)"),
      llvm::cl::init(false)};
  Option<bool> bufferize{
      *this, "bufferize",
      llvm::cl::desc("Bufferize first (the input is linalg on tensors); "
                     "without, the input is on buffers, its kernels in the "
                     "gpu dialect"),
      llvm::cl::init(true)};
  Option<std::string> attentionRounding{
      *this, "attention-rounding",
      llvm::cl::desc("The flash attention kernels' tensor-core operands: "
                     "tf32 or bf16"),
      llvm::cl::init("tf32")};
  ListOption<std::string> entryPoints{
      *this, "entry-points",
      llvm::cl::desc("Functions that must become packed entry points")};
};
} // namespace

void mlir::mix::registerMixPipelines() {
  PassPipelineRegistration<TrainingCLOptions>(
      "mix-training-pipeline",
      "The model in the mix dialect to its training graph (@forward, @grad, "
      "@adamw, @logits) on linalg tensors",
      [](OpPassManager &pm, const TrainingCLOptions &cl) {
        TrainingPipelineOptions options;
        options.bf16Matmuls = cl.bf16Matmuls;
        options.fuseOps = cl.fuseOps;
        options.stackMixtures = cl.stackMixtures;
        options.fuseAttention = cl.fuseAttention;
        options.positionsOnDevice = cl.positionsOnDevice;
        buildMixTrainingPipeline(pm, options);
      });
  PassPipelineRegistration<CPUCodegenCLOptions>(
      "mix-cpu-codegen-pipeline",
      "Linalg on tensors to the LLVM dialect of a CPU package, entry points "
      "packed",
      [](OpPassManager &pm, const CPUCodegenCLOptions &cl) {
        CPUCodegenPipelineOptions options;
        options.entryPoints.assign(cl.entryPoints.begin(),
                                   cl.entryPoints.end());
        buildCPUCodegenPipeline(pm, options);
      });
  PassPipelineRegistration<CUDACodegenCLOptions>(
      "mix-cuda-codegen-pipeline",
      "Linalg on tensors to sm_90 kernels and host code in the LLVM dialect, "
      "entry points packed",
      [](OpPassManager &pm, const CUDACodegenCLOptions &cl) {
        CUDACodegenPipelineOptions options;
        options.toolkit = cl.toolkit;
        options.chip = cl.chip;
        options.features = cl.features;
        options.assemble = cl.assemble;
        options.emulate = cl.emulate;
        options.bufferize = cl.bufferize;
        options.attentionRounding = cl.attentionRounding;
        options.entryPoints.assign(cl.entryPoints.begin(),
                                   cl.entryPoints.end());
        buildCUDACodegenPipeline(pm, options);
      });
}

LogicalResult
mlir::mix::runPipeline(ModuleOp module,
                       llvm::function_ref<void(OpPassManager &)> build,
                       TimingScope &timing) {
  PassManager pm(module.getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  pm.enableTiming(timing);
  build(pm);
  return pm.run(module);
}
