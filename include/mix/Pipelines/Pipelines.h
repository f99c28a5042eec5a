//===- Pipelines.h - mixc's pass pipelines ----------------------*- C++ -*-===//
//
// The compiler as pass pipelines: from the model in the mix dialect to the
// training graph on linalg tensors (buildMixTrainingPipeline), and from
// there to the LLVM dialect of a CPU package (buildCPUCodegenPipeline) or to
// sm_90 kernels and the host code that launches them
// (buildCUDACodegenPipeline). Each is the concatenation of the phases below,
// which mixc runs one at a time so that --emit can stop after any of them.
// registerMixPipelines makes the three whole pipelines mix-opt options.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_PIPELINES_PIPELINES_H
#define MIX_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace mlir {
namespace mix {

//===----------------------------------------------------------------------===//
// The training pipeline: model -> training graph on linalg tensors
//===----------------------------------------------------------------------===//

struct TrainingPipelineOptions {
  /// Round the operands of the matrix products to bf16, accumulating in f32
  /// (mixc --precision bf16 on the CPU; on the GPU the tensor cores round).
  bool bf16Matmuls = false;
  /// Keep attention, the cross-entropy and the LayerNorm whole
  /// (mix-fuse-attention, mix-fuse-cross-entropy, mix-fuse-layer-norm) and
  /// build AdamW from the multi-tensor ops
  /// (mix-append-adamw{fused=1}) for a target that has kernels for them
  /// (the CUDA target).
  bool fuseOps = false;
  /// Keep attention whole (mix-fuse-attention) without the rest of
  /// fuseOps: the CPU target's fused attention (mix-attention-calls).
  bool fuseAttention = false;
  /// Read a decode step's position only inside loop nests
  /// (convert-mix-to-linalg{positions-on-device}): for a target whose
  /// arguments live in device memory (the CUDA target).
  bool positionsOnDevice = false;
  /// Let the cost model lower a mixture as one product over the stacked
  /// kernels (mix-select-mixing-order{consider-stacked}): the CUDA target.
  bool stackMixtures = false;
};

/// Proves and applies the mixture rewrites, then chooses mixing orders:
/// by the cost model (\p mixingOrder "auto"; stack_then_mix among its
/// choices with \p considerStacked, the CUDA target), or the one named
/// (mix-select-mixing-order{order}).
void buildMixProvePipeline(OpPassManager &pm,
                           llvm::StringRef mixingOrder = "auto",
                           bool considerStacked = false);
/// Lowers model-level mix ops to primitive mix ops (attention, the
/// cross-entropy and the LayerNorm, with `options.fuseOps`, to their fused
/// ops).
void buildMixDecomposePipeline(OpPassManager &pm,
                               const TrainingPipelineOptions &options);
/// Differentiates @forward into @grad and appends @adamw (of multi-tensor
/// ops with `options.fuseOps`).
void buildMixDifferentiatePipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &options);
/// Drops the parameters' names and lowers the primitive mix ops to linalg
/// on tensors.
void buildMixLowerToLinalgPipeline(OpPassManager &pm,
                                   const TrainingPipelineOptions &options);
/// The four above, in order.
void buildMixTrainingPipeline(OpPassManager &pm,
                              const TrainingPipelineOptions &options);

//===----------------------------------------------------------------------===//
// Code generation: linalg on tensors -> the LLVM dialect
//===----------------------------------------------------------------------===//

/// The entry points every package has, which the runtime calls.
std::vector<std::string> getPackageEntryPoints();

/// The front both targets share: folds sums into the products'
/// accumulators, fuses elementwise ops, bufferizes with results as
/// out-parameters, frees each buffer after its last use, and records each
/// function's memref signature (mix-record-entry-signatures).
struct BufferizePipelineOptions {
  /// Without it (the cuda target), mix-rematerialize computes only zero
  /// fills again and keeps elementwise results.
  bool recomputeElementwise = true;
  /// mix-transposed-operands also folds transposes into the generic ops
  /// that read them (the cuda target).
  bool transposedGenericOperands = false;
  /// mix-fuse-elementwise counts a value that producer and consumer both
  /// read whole once (the cuda target).
  bool sharedReadsOnce = false;

  /// The cuda target's choices.
  static BufferizePipelineOptions forCUDA() { return {false, true, true}; }
};
void buildBufferizePipeline(OpPassManager &pm,
                            const BufferizePipelineOptions &options = {});

struct CPUCodegenPipelineOptions {
  /// Functions that must become packed entry points (all that have a
  /// recorded signature are packed).
  std::vector<std::string> entryPoints;
};

/// From buffers to the LLVM dialect: matrix products as library calls, loop
/// nests outlined and threaded, math approximated.
void buildCPULowerToLLVMPipeline(OpPassManager &pm);
/// Packs the entry points into the runtime's one C signature; with
/// \p optnone (the CPU target), their glue is left unoptimised.
void buildPackEntryPointsPipeline(OpPassManager &pm,
                                  llvm::ArrayRef<std::string> entryPoints,
                                  bool optnone);
/// Bufferize, lower to LLVM, pack the entry points.
void buildCPUCodegenPipeline(OpPassManager &pm,
                             const CPUCodegenPipelineOptions &options);

struct CUDACodegenPipelineOptions {
  /// The CUDA toolkit (bin/ptxas, nvvm/libdevice).
  std::string toolkit = "/usr/local/cuda";
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// Serialize the kernels to PTX and assemble them with ptxas; without,
  /// the kernels stay in the NVVM dialect.
  bool assemble = true;
  /// For the CUDA emulator: the kernels become host functions (with every
  /// memory access checked) instead of NVVM; nothing is assembled.
  bool emulate = false;
  /// Bufferize first (the input is linalg on tensors). Without, the input
  /// is on buffers already, with kernels written in the gpu dialect (tests
  /// of kernels whose threads work together: bufferization's deallocation
  /// refuses gpu.barrier, which declares no memory effects).
  bool bufferize = true;
  /// How the flash attention kernels round their tensor-core operands:
  /// "tf32" or "bf16" (the package's matrix products' precision).
  std::string attentionRounding = "tf32";
  std::vector<std::string> entryPoints;
};

/// From buffers to kernels in the NVVM dialect (gpu.module @mix_kernels)
/// and host functions on the GPU dialect.
void buildCUDAKernelsPipeline(OpPassManager &pm,
                              const CUDACodegenPipelineOptions &options);
/// The kernels to PTX and an sm_90 cubin (mix-assemble-kernels).
void buildCUDAAssemblePipeline(OpPassManager &pm,
                               const CUDACodegenPipelineOptions &options);
/// The host side to the LLVM dialect.
void buildCUDAHostToLLVMPipeline(OpPassManager &pm);
/// --emulate, after the host code: each emulated kernel's entry point for
/// the emulator (mix-emulator-launchers).
void buildCUDAEmulatorLaunchersPipeline(OpPassManager &pm);
/// Bufferize, kernels, assemble (if asked, and not emulated), host code to
/// LLVM (with the emulator's entry points if emulated), pack.
void buildCUDACodegenPipeline(OpPassManager &pm,
                              const CUDACodegenPipelineOptions &options);

/// Registers --mix-training-pipeline, --mix-cpu-codegen-pipeline and
/// --mix-cuda-codegen-pipeline.
void registerMixPipelines();

/// Runs the passes \p build adds on \p module in a PassManager of its own,
/// with MLIR's command-line debugging options applied (IR printing, crash
/// reproducers, statistics) and its pass timings nested under \p timing.
/// This is how mixc runs each phase.
LogicalResult runPipeline(ModuleOp module,
                          llvm::function_ref<void(OpPassManager &)> build,
                          TimingScope &timing);

} // namespace mix
} // namespace mlir

#endif // MIX_PIPELINES_PIPELINES_H
