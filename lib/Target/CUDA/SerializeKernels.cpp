//===- SerializeKernels.cpp - @mix_kernels to PTX and an sm_90 cubin ------===//
//
// gpu-module-to-binary turns the NVVM module into PTX (libdevice linked in
// for the math functions); the toolkit's ptxas assembles it for the chip,
// so a package carries kernels the driver loads without a JIT, and a PTX
// that ptxas rejects fails the compile, not the first run.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mix;

/// Runs ptxas on \p ptx; the cubin's bytes, or an error with its output.
static FailureOr<std::string> assemble(Operation *where, llvm::StringRef ptx,
                                       const CUDAOptions &options) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  if (llvm::sys::fs::createTemporaryFile("mix_kernels", "ptx", ptxPath) ||
      llvm::sys::fs::createTemporaryFile("mix_kernels", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("mix_kernels", "log", logPath))
    return where->emitError("cannot create temporary files for ptxas");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(ptxPath);
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec)
      return where->emitError("cannot write ")
             << ptxPath << ": " << ec.message();
    os << ptx;
    os.close();
    if (std::error_code err = os.error()) {
      os.clear_error();
      return where->emitError("cannot write ")
             << ptxPath << ": " << err.message();
    }
  }
  llvm::SmallString<256> ptxas(options.toolkitPath);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  std::string arch = "-arch=" + options.chip;
  llvm::SmallVector<llvm::StringRef> args{ptxas,   arch, "-O3",
                                          ptxPath, "-o", cubinPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath.str(),
                                                logPath.str()};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &message);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return where->emitError("ptxas rejected the kernels (")
           << (message.empty() ? "exit status " + std::to_string(rc) : message)
           << "): " << (log ? (*log)->getBuffer().trim() : "no output");
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!cubin)
    return where->emitError("ptxas wrote no cubin");
  return (*cubin)->getBuffer().str();
}

LogicalResult mlir::mix::serializeKernels(ModuleOp module,
                                          const CUDAOptions &options,
                                          std::string &ptx, std::string &cubin,
                                          TimingScope &timing) {
  if (!module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName)) {
    // A model with no kernel at all (never, in practice) needs no binary.
    ptx.clear();
    cubin.clear();
    return success();
  }
  std::string pipeline =
      "gpu-module-to-binary{format=isa toolkit=" + options.toolkitPath + "}";
  if (failed(runPipeline(module, pipeline, timing)))
    return failure();
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
  if (!binary || binary.getObjects().size() != 1)
    return module.emitError("internal error: expected one object in "
                            "gpu.binary @")
           << kKernelModuleName;
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  ptx = object.getObject().getValue().str();
  TimingScope ptxasTimer = timing.nest("ptxas");
  FailureOr<std::string> assembled = assemble(binary, ptx, options);
  if (failed(assembled))
    return failure();
  cubin = std::move(*assembled);
  MLIRContext *ctx = module.getContext();
  auto replaced = gpu::ObjectAttr::get(
      ctx, object.getTarget(), gpu::CompilationTarget::Binary,
      StringAttr::get(ctx, cubin), object.getProperties(), object.getKernels());
  binary.setObjectsAttr(ArrayAttr::get(ctx, {replaced}));
  return success();
}
