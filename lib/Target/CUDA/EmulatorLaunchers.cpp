//===- EmulatorLaunchers.cpp - The emulator's entry into each kernel ------===//
//
// The emulator runs a kernel a thread at a time through one function per
// kernel with a fixed signature, `mixemu_launch_<kernel>(params, thread)`,
// which unpacks cuLaunchKernel's parameter array into the arguments of the
// kernel's host function (mix-emulate-kernels made it), as the device's
// launch would, and passes the thread's ids and its block's shared memory
// from the emulator's MixEmuThread (runtime/emulator/include/mixemu/
// Emulator.h). Beside it, the constants the emulator reads before a launch:
// the kernel's parameter count, static shared memory and flags.
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
/// After them, the block's shared memory and the size of its dynamic part.
constexpr int64_t kNumTrailing = kNumIds + 2;
/// MIXEMU_KERNEL_SYNCHRONIZES: the kernel's threads run as fibers.
constexpr int64_t kSynchronizes = 1;

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
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto malformed = [&] {
      return kernel.emitError(
          "an emulated kernel ends with twelve i64 ids, the shared memory's "
          "pointer and the i64 size of its dynamic part");
    };
    if (params.size() < kNumTrailing)
      return malformed();
    int64_t numArgs = params.size() - kNumTrailing;
    if (!llvm::all_of(params.slice(numArgs, kNumIds),
                      [&](Type t) { return t == i64; }) ||
        params[numArgs + kNumIds] != ptr || params.back() != i64)
      return malformed();
    Location loc = kernel.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());

    auto exportConstant = [&](StringRef prefix, int64_t value) {
      LLVM::GlobalOp::create(
          b, loc, i64, /*isConstant=*/true, LLVM::Linkage::External,
          (prefix + name.getValue()).str(), b.getI64IntegerAttr(value));
    };
    exportConstant("mixemu_nparams_", numArgs);
    int64_t sharedBytes = 0;
    if (auto bytes =
            kernel->getAttrOfType<IntegerAttr>(kEmulatedSharedBytesAttr))
      sharedBytes = bytes.getInt();
    exportConstant("mixemu_shared_bytes_", sharedBytes);
    bool synchronizes = kernel->hasAttr(kEmulatedUsesBarrierAttr) ||
                        kernel->hasAttr(kEmulatedUsesShuffleAttr);
    exportConstant("mixemu_flags_", synchronizes ? kSynchronizes : 0);

    auto launcher = LLVM::LLVMFuncOp::create(
        b, loc, ("mixemu_launch_" + name.getValue()).str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr}));
    Block *entry = launcher.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    Value paramArray = entry->getArgument(0), thread = entry->getArgument(1);
    // MixEmuThread: {int64_t ids[12]; void *shared; int64_t dynamic bytes}.
    auto threadType = LLVM::LLVMStructType::getLiteral(
        ctx, {LLVM::LLVMArrayType::get(i64, kNumIds), ptr, i64});
    auto member = [&](ArrayRef<LLVM::GEPArg> indices, Type type) -> Value {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, threadType, thread, indices);
      return LLVM::LoadOp::create(b, loc, type, slot);
    };
    SmallVector<Value> args;
    for (int64_t i = 0; i < numArgs; ++i) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, paramArray,
                                       ArrayRef<LLVM::GEPArg>{i});
      Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
      args.push_back(LLVM::LoadOp::create(b, loc, params[i], address));
    }
    for (int32_t i = 0; i < kNumIds; ++i)
      args.push_back(member({0, 0, i}, i64));
    args.push_back(member({0, 1}, ptr));
    args.push_back(member({0, 2}, i64));
    LLVM::CallOp::create(b, loc, kernel, args);
    LLVM::ReturnOp::create(b, loc, ValueRange{});
    return success();
  }
};
} // namespace
