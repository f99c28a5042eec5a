//===- mix-opt.cpp - The mix dialect's optimizer driver -------------------===//
//
// mlir-opt for the mix dialect: parses mix IR, runs the mix passes, the
// upstream canonicalizer and bufferization passes (to check what the mix
// passes hand bufferization), and prints the result. Used by the lit tests.
//
// Unlike mlir-opt it checks the input's nesting before the parser recurses
// into it, and writes -o only once the whole run has succeeded: a failed
// run leaves an existing output file as it was.
//
//===----------------------------------------------------------------------===//

#include "mix/Conversion/Passes.h"
#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"
#include "mix/Target/CUDA/Passes.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

/// MLIR's parser recurses once a nested region, list or type: input nested
/// thousands of levels deep overflows the stack. Brackets in string
/// literals and comments do not count.
static std::optional<std::string> checkNesting(llvm::StringRef text,
                                               llvm::StringRef name) {
  constexpr int kMaxDepth = 1000;
  int depth = 0, line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    } else if (c == '{' || c == '(' || c == '[') {
      if (++depth > kMaxDepth)
        return (name + ":" + llvm::Twine(line) +
                ": nested more than " + llvm::Twine(kMaxDepth) +
                " levels deep (regions, parentheses and brackets)")
            .str();
    } else if (c == '}' || c == ')' || c == ']') {
      --depth;
    }
  }
  return std::nullopt;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::bufferization::registerBufferizationPasses();
  mlir::mix::registerMixPasses();
  mlir::mix::registerMixConversionPasses();
  mlir::mix::registerMixCPUPasses();
  mlir::mix::registerMixCUDAPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::mix::MixDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect>();
  // Bufferization and the external models its interfaces need.
  mlir::mix::registerCPUCodegenDialects(registry);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "mix optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // --show-dialects, --list-passes and the like: mlir-opt's own driver.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string message;
  // Not opened unless it is a file: opening a FIFO would wait for a writer.
  llvm::sys::fs::file_status status;
  if (inputFile != "-" && !llvm::sys::fs::status(inputFile, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::errs() << "mix-opt: error: cannot read '" << inputFile
                        << "': not a regular file\n",
           1;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &message);
  if (!input) {
    llvm::errs() << "mix-opt: error: " << message << "\n";
    return 1;
  }
  if (std::optional<std::string> deep =
          checkNesting(input->getBuffer(), inputFile))
    return llvm::errs() << "mix-opt: error: " << *deep << "\n", 1;

  std::string result;
  llvm::raw_string_ostream os(result);
  if (mlir::failed(
          mlir::MlirOptMain(os, std::move(input), registry, config)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &message);
  if (!output) {
    llvm::errs() << "mix-opt: error: " << message << "\n";
    return 1;
  }
  output->os() << result;
  output->os().close();
  if (std::error_code ec = output->os().error()) {
    output->os().clear_error();
    llvm::errs() << "mix-opt: error: cannot write '" << outputFile
                 << "': " << ec.message() << "\n";
    return 1;
  }
  output->keep();
  return 0;
}
