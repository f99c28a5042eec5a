//===- SupportCode.cpp - The C support code of CUDA packages --------------===//
//
// The CUDA package's support code (runtime/support/CUDASupport.c: the mgpu*
// functions the lowered host code calls, the device memory plan, cuBLASLt
// products, mixrt_device_* and mixrt_nccl_*), embedded at build time with
// the package ABI header it includes, and the flags it is compiled and
// linked with against the CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"

using namespace mlir;
using namespace mlir::mix;

namespace {
#include "CUDASupportSource.inc"

struct EmbeddedFile {
  const char *path;
  const char *text;
};
#include "CUDAEmulatorFiles.inc"
} // namespace

SupportCode mlir::mix::getCUDASupportCode(const CUDAOptions &options) {
  std::string include = "-I" + options.toolkitPath + "/include";
  std::string lib = "-L" + options.toolkitPath + "/lib64";
  std::string stubs = "-L" + options.toolkitPath + "/lib64/stubs";
  std::string rpath = "-Wl,-rpath," + options.toolkitPath + "/lib64";
  std::string compute =
      options.matmul == MatmulPrecision::BF16
          ? "-DMIXRT_MATMUL_COMPUTE=CUBLAS_COMPUTE_32F_FAST_16BF"
          : "-DMIXRT_MATMUL_COMPUTE=CUBLAS_COMPUTE_32F_FAST_TF32";
  SupportCode code;
  code.source = kCUDASupportSource;
  code.compileFlags = {include, compute};
  code.linkFlags = {lib, stubs, rpath, "-lcublasLt", "-lcuda"};
  code.nonCapturingCalls = {"mgpuLaunchKernel"};
  return code;
}

SupportCode mlir::mix::getCUDAEmulatorSupportCode(const CUDAOptions &options) {
  SupportCode code;
  code.source = kCUDASupportSource;
  code.compileFlags = {
      options.matmul == MatmulPrecision::BF16
          ? "-DMIXRT_MATMUL_COMPUTE=CUBLAS_COMPUTE_32F_FAST_16BF"
          : "-DMIXRT_MATMUL_COMPUTE=CUBLAS_COMPUTE_32F_FAST_TF32"};
  // The emulator's headers (its cuda.h and cublasLt.h among them) on the
  // include path, its C files compiled beside the support code.
  for (unsigned i = 0; i < kEmulatorFiles_count; ++i) {
    llvm::StringRef path = kEmulatorFiles[i].path;
    if (path.ends_with(".c"))
      code.sources.emplace_back(path.str(), kEmulatorFiles[i].text);
    else
      code.headers.emplace_back(
          path.starts_with("include/") ? path.drop_front(8).str() : path.str(),
          kEmulatorFiles[i].text);
  }
  code.linkFlags = {"-ldl", "-lpthread"};
  code.nonCapturingCalls = {"mgpuLaunchKernel"};
  return code;
}
