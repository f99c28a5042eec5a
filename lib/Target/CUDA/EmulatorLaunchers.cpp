//===- EmulatorLaunchers.cpp - The emulator's entry into each kernel ------===//
//
// The emulator runs a kernel a thread at a time through one function per
// kernel with a fixed signature, `mixemu_launch_<kernel>(params, ids)`,
// which unpacks cuLaunchKernel's parameter array into the arguments of the
// kernel's host function (mix-emulate-kernels made it), as the device's
// launch would.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXEMULATORLAUNCHERSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// The thread, block, block-size and grid-size ids, x, y, z.
constexpr int64_t kNumIds = 12;

struct MixEmulatorLaunchersPass
    : mlir::mix::impl::MixEmulatorLaunchersPassBase<MixEmulatorLaunchersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(kEmulatedKernelAttr))
        kernels.push_back(f);
    for (LLVM::LLVMFuncOp kernel : kernels)
      if (failed(emitLauncher(module, kernel)))
        return signalPassFailure();
  }

  LogicalResult emitLauncher(ModuleOp module, LLVM::LLVMFuncOp kernel) {
    MLIRContext *ctx = &getContext();
    auto name = kernel->getAttrOfType<StringAttr>(kEmulatedKernelAttr);
    if (!name)
      return kernel.emitError() << kEmulatedKernelAttr << " is not a string";
    ArrayRef<Type> params = kernel.getFunctionType().getParams();
    if (params.size() < kNumIds)
      return kernel.emitError("an emulated kernel ends with twelve ids");
    int64_t numArgs = params.size() - kNumIds;
    Location loc = kernel.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());

    LLVM::GlobalOp::create(b, loc, i64, /*isConstant=*/true,
                           LLVM::Linkage::External,
                           ("mixemu_nparams_" + name.getValue()).str(),
                           b.getI64IntegerAttr(numArgs));

    auto launcher = LLVM::LLVMFuncOp::create(
        b, loc, ("mixemu_launch_" + name.getValue()).str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr}));
    Block *entry = launcher.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value paramArray = entry->getArgument(0), ids = entry->getArgument(1);
    SmallVector<Value> args;
    for (int64_t i = 0; i < numArgs; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, paramArray,
                                       ArrayRef<LLVM::GEPArg>{i});
      Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
      args.push_back(LLVM::LoadOp::create(b, loc, params[i], address));
    }
    for (int64_t i = 0; i < kNumIds; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, i64, ids, ArrayRef<LLVM::GEPArg>{i});
      Value id = LLVM::LoadOp::create(b, loc, i64, slot);
      Type want = params[numArgs + i];
      if (want != i64)
        return kernel.emitError("an emulated kernel's ids are i64");
      args.push_back(id);
    }
    LLVM::CallOp::create(b, loc, kernel, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return success();
  }
};
} // namespace
