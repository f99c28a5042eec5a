//===- mix-opt.cpp - The mix dialect's optimizer driver -------------------===//
//
// mlir-opt for the mix dialect: parses mix IR, runs the mix passes, the
// upstream canonicalizer and bufferization passes (to check what the mix
// passes hand bufferization), and prints the result. Used by the lit tests.
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
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
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
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mix optimizer driver\n", registry));
}
