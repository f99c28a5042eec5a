//===- SerializeKernels.cpp - @mix_kernels' PTX to an sm_90 cubin ---------===//
//
// gpu-module-to-binary turns the NVVM module into PTX (libdevice linked in
// for the math functions); mix-assemble-kernels has the toolkit's ptxas
// assemble it for the chip, so a package carries kernels the driver loads
// without a JIT, and a PTX that ptxas rejects fails the compile, not the
// first run.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXASSEMBLEKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

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

/// Runs ptxas on \p ptx; the cubin's bytes, or an error with its output.
static FailureOr<std::string> assemble(Operation *where, llvm::StringRef ptx,
                                       llvm::StringRef toolkit,
                                       llvm::StringRef chip) {
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
  llvm::SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  std::string arch = ("-arch=" + chip).str();
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

namespace {
struct MixAssembleKernelsPass
    : mlir::mix::impl::MixAssembleKernelsPassBase<MixAssembleKernelsPass> {
  using MixAssembleKernelsPassBase::MixAssembleKernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
    if (!binary)
      return;
    if (binary.getObjects().size() != 1) {
      binary.emitError("expected one object in gpu.binary @")
          << kKernelModuleName;
      return signalPassFailure();
    }
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly) {
      binary.emitError("expected PTX in gpu.binary @")
          << kKernelModuleName << " (gpu-module-to-binary{format=isa})";
      return signalPassFailure();
    }
    StringAttr ptx = object.getObject();
    FailureOr<std::string> cubin = assemble(binary, ptx, toolkit, chip);
    if (failed(cubin))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    auto replaced = gpu::ObjectAttr::get(
        ctx, object.getTarget(), gpu::CompilationTarget::Binary,
        StringAttr::get(ctx, *cubin), object.getProperties(),
        object.getKernels());
    binary.setObjectsAttr(ArrayAttr::get(ctx, {replaced}));
    binary->setAttr(kPTXAttr, ptx);
  }
};
} // namespace

LogicalResult mlir::mix::getKernelImages(ModuleOp module, std::string &ptx,
                                         std::string &cubin) {
  ptx.clear();
  cubin.clear();
  auto binary = module.lookupSymbol<gpu::BinaryOp>(kKernelModuleName);
  if (!binary) {
    // A model with no kernel at all (never, in practice) needs no binary.
    if (!module.lookupSymbol(kKernelModuleName))
      return success();
    return module.emitError("the kernels of @")
           << kKernelModuleName << " were not compiled to a gpu.binary";
  }
  auto ptxAttr = binary->getAttrOfType<StringAttr>(kPTXAttr);
  auto object = binary.getObjects().size() == 1
                    ? dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0])
                    : gpu::ObjectAttr();
  if (!ptxAttr || !object ||
      object.getFormat() != gpu::CompilationTarget::Binary)
    return binary.emitError("expected a cubin and its PTX (mix-assemble-"
                            "kernels) in gpu.binary @")
           << kKernelModuleName;
  ptx = ptxAttr.getValue().str();
  cubin = object.getObject().getValue().str();
  return success();
}
