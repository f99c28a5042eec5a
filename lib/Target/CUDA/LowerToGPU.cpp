//===- LowerToGPU.cpp - Linalg on tensors to kernels and host launches ----===//
//
// The CUDA pipeline: the shared bufferization front, matrix products as
// cuBLASLt calls, buffers on the device, one kernel a loop nest (flat 1-D
// launches), outlined into @mix_kernels and lowered to NVVM for sm_90; the
// host side lowered to the LLVM dialect with calls of the mgpu* runtime.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::mix;

void mlir::mix::registerCUDACodegenDialects(DialectRegistry &registry) {
  registerCPUCodegenDialects(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, ub::UBDialect>();
  // convert-gpu-to-nvvm and gpu-to-llvm lower every dialect through its
  // ConvertToLLVM interface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

llvm::Expected<std::string>
mlir::mix::findCUDAToolkit(llvm::StringRef requested) {
  SmallVector<std::string> candidates;
  if (!requested.empty()) {
    candidates.push_back(requested.str());
  } else {
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *value = std::getenv(var); value && *value)
        candidates.push_back(value);
    candidates.push_back("/usr/local/cuda");
  }
  for (const std::string &dir : candidates) {
    llvm::SmallString<256> ptxas(dir);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(ptxas))
      return dir;
  }
  std::string looked;
  for (const std::string &dir : candidates)
    looked += (looked.empty() ? "" : ", ") + dir;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "no CUDA toolkit with bin/ptxas in " + looked +
          " (expected --cuda-path DIR, $CUDA_HOME or /usr/local/cuda)");
}

/// Registers the GPU passes the pipelines name, once.
static void registerGPUPipelinePasses() {
  static bool done = [] {
    registerGPUPasses();
    registerConversionPasses();
    registerCSEPass();
    return true;
  }();
  (void)done;
}

LogicalResult mlir::mix::lowerToGPUDialect(ModuleOp module,
                                           EntryPointTypes &entryTypes,
                                           const CUDAOptions &options,
                                           TimingScope &timing) {
  registerGPUPipelinePasses();
  if (failed(bufferizeForCodegen(module, entryTypes, timing)))
    return failure();
  {
    TimingScope t = timing.nest("matmuls to cuBLASLt calls");
    convertMatmulsToLibraryCalls(module, "mixrt_cuda_");
  }
  {
    TimingScope t = timing.nest("memory to device");
    if (failed(moveMemoryToDevice(module)))
      return failure();
  }
  {
    TimingScope t = timing.nest("launch serial ops");
    if (failed(launchSerialOps(module)))
      return failure();
  }
  if (failed(runPipeline(module, "convert-linalg-to-parallel-loops", timing)))
    return failure();
  {
    TimingScope t = timing.nest("parallel loops to gpu");
    if (failed(convertParallelLoopsToGPU(module)))
      return failure();
  }
  if (failed(runPipeline(module,
                         "func.func(lower-affine,canonicalize,cse),"
                         "gpu-kernel-outlining",
                         timing)))
    return failure();
  {
    TimingScope t = timing.nest("merge gpu modules");
    if (failed(mergeGPUModules(module)))
      return failure();
  }
  std::string kernels =
      "nvvm-attach-target{module=" + std::string(kKernelModuleName) +
      " chip=" + options.chip + " features=" + options.features +
      " O=3},"
      "gpu.module(lower-affine,expand-strided-metadata,convert-scf-to-cf,"
      "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts)";
  return runPipeline(module, kernels, timing);
}

LogicalResult mlir::mix::lowerHostToLLVMDialect(ModuleOp module,
                                                TimingScope &timing) {
  registerGPUPipelinePasses();
  return runPipeline(module,
                     "func.func(expand-strided-metadata,lower-affine),"
                     "convert-scf-to-cf,"
                     "convert-arith-to-llvm,"
                     "convert-index-to-llvm,"
                     "finalize-memref-to-llvm,"
                     "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
                     "gpu-to-llvm{use-bare-pointers-for-host},"
                     "convert-cf-to-llvm,"
                     "reconcile-unrealized-casts,"
                     "canonicalize",
                     timing);
}
