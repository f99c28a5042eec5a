//===- mix-opt.cpp - The mix dialect's optimizer driver -------------------===//
//
// mlir-opt for the mix dialect: parses mix IR, runs the mix passes, mixc's
// pipelines (--mix-training-pipeline, --mix-cpu-codegen-pipeline,
// --mix-cuda-codegen-pipeline), the upstream canonicalizer and
// bufferization passes, and prints the result. Used by the lit tests.
//
// Unlike mlir-opt it checks the input's nesting before the parser recurses
// into it, does not open a FIFO that would wait for a writer, and writes -o
// (through a temporary file) only once the whole run has succeeded: a
// failed run leaves an existing output file as it was.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Passes.h"
#include "mix/Conversion/Passes.h"
#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Frontend/InputFiles.h"
#include "mix/Pipelines/Pipelines.h"
#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"
#include "mix/Transforms/Passes.h"
#include "mix/Version.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

/// Writes `text` to `path` through a temporary file renamed over it, so
/// that a failed write leaves an existing file as it was.
static llvm::Error writeAtomically(llvm::StringRef path, llvm::StringRef text) {
  llvm::SmallString<256> temp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp%%%%%%", fd, temp))
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    ec = os.error();
    os.clear_error();
  }
  if (!ec)
    ec = llvm::sys::fs::rename(temp, path);
  if (ec) {
    llvm::sys::fs::remove(temp);
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  }
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  // Checks of every memory access (the CUDA emulator's kernels use them).
  mlir::registerGenerateRuntimeVerificationPass();
  mlir::bufferization::registerBufferizationPasses();
  mlir::mix::registerMixPasses();
  mlir::mix::registerMixConversionPasses();
  mlir::mix::registerMixCodegenPasses();
  mlir::mix::registerMixCPUPasses();
  mlir::mix::registerMixCUDAPasses();
  // --mix-training-pipeline, --mix-cpu-codegen-pipeline and
  // --mix-cuda-codegen-pipeline: what mixc runs, phase by phase.
  mlir::mix::registerMixPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::mix::MixDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect>();
  // Bufferization, the lowerings to LLVM and NVVM, and the external models
  // their interfaces need.
  mlir::mix::registerCUDACodegenDialects(registry);
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << ::mix::versionLine("mix-opt") << "\n";
  });
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "mix optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // --show-dialects, --list-passes and the like: mlir-opt's own driver.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  auto fail = [](llvm::Error e) {
    llvm::errs() << "mix-opt: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  };
  if (llvm::Error e = mlir::mix::checkReadableInput(inputFile))
    return fail(std::move(e));
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << "mix-opt: error: " << message << "\n";
    return 1;
  }
  if (!mlir::isBytecode(*input))
    if (llvm::Error e = mlir::mix::checkNesting(input->getBuffer(), inputFile))
      return fail(std::move(e));

  // Standard output gets the result as the passes make it, as in mlir-opt
  // (the chunks of --split-input-file that succeeded, too).
  if (outputFile == "-")
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(llvm::outs(), std::move(input), registry, config));
  std::string result;
  llvm::raw_string_ostream os(result);
  if (mlir::failed(mlir::MlirOptMain(os, std::move(input), registry, config)))
    return 1;
  if (llvm::Error e = writeAtomically(outputFile, result))
    return fail(std::move(e));
  return 0;
}
