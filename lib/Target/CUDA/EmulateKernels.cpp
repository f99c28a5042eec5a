//===- EmulateKernels.cpp - The kernels as host functions -----------------===//
//
// mixc --target cuda --emulate: the kernels the CUDA pipeline outlined, after
// every pass of the project, become host functions that the emulator calls
// once a thread; the host code is left exactly as for the device.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXEMULATEKERNELSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// The position of a dimension's id among the emulated kernel's trailing
/// arguments: thread id, block id, block size, grid size, each x, y, z.
unsigned idArgument(unsigned group, gpu::Dimension dim) {
  return group * 3 + static_cast<unsigned>(dim);
}
constexpr unsigned kNumIdArguments = 12;

/// A private declaration of `name : type` in \p module, made once.
func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

/// A NUL-terminated string constant in \p module, made once per text.
LLVM::GlobalOp stringGlobal(ModuleOp module, StringRef text, unsigned &count) {
  std::string name = "__mixemu_message_" + std::to_string(count++);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string value = text.str();
  value.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       value.size());
  return LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                b.getStringAttr(value));
}

/// A runtime check's message on one line, without its banner:
/// "out-of-bounds access; Location: loc(...)".
std::string describe(StringRef message) {
  message.consume_front("ERROR: Runtime op verification failed\n");
  std::string out;
  for (StringRef line : llvm::split(message.trim(), '\n')) {
    line.consume_front("^ ");
    if (!out.empty())
      out += "; ";
    out += line.trim().str();
  }
  return out;
}

struct MixEmulateKernelsPass
    : mlir::mix::impl::MixEmulateKernelsPassBase<MixEmulateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    if (!kernels)
      return;
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::GPUFuncOp> funcs(kernels.getOps<gpu::GPUFuncOp>());
    for (gpu::GPUFuncOp kernel : funcs)
      if (failed(emulate(module, kernel)))
        return signalPassFailure();
    // The host code loads and launches the kernels as on the device; the
    // emulator recognises its marker where a cubin would be.
    OpBuilder b(kernels);
    auto target = NVVM::NVVMTargetAttr::get(ctx);
    auto object =
        gpu::ObjectAttr::get(ctx, target, gpu::CompilationTarget::Binary,
                             b.getStringAttr(kEmulatorMarker),
                             /*properties=*/nullptr,
                             /*kernels=*/nullptr);
    gpu::BinaryOp::create(b, kernels.getLoc(), kKernelModuleName,
                          /*offloadingHandler=*/nullptr,
                          b.getArrayAttr({object}));
    kernels.erase();
  }

  LogicalResult emulate(ModuleOp module, gpu::GPUFuncOp kernel) {
    MLIRContext *ctx = &getContext();
    StringRef name = kernel.getName();
    if (!kernel.getWorkgroupAttributions().empty() ||
        !kernel.getPrivateAttributions().empty())
      return kernel.emitError()
             << "kernel " << name
             << " uses workgroup or private memory, which the CUDA emulator "
                "does not run yet";
    // The kernel's arguments, then the twelve ids.
    SmallVector<Type> inputs(kernel.getArgumentTypes());
    inputs.append(kNumIdArguments, IndexType::get(ctx));
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto host = func::FuncOp::create(b, kernel.getLoc(),
                                     (kEmulatedKernelPrefix + name).str(),
                                     FunctionType::get(ctx, inputs, {}));
    host->setAttr(kEmulatedKernelAttr, b.getStringAttr(name));
    if (auto known = kernel.getKnownBlockSizeAttr())
      host->setAttr("mix.known_block_size", known);
    if (auto known = kernel.getKnownGridSizeAttr())
      host->setAttr("mix.known_grid_size", known);
    host.getBody().takeBody(kernel.getBody());
    Block &entry = host.getBody().front();
    SmallVector<Value> ids;
    for (unsigned i = 0; i < kNumIdArguments; ++i)
      ids.push_back(entry.addArgument(IndexType::get(ctx), kernel.getLoc()));

    func::FuncOp barrier =
        declare(module, "mixemu_barrier", FunctionType::get(ctx, {}, {}));
    func::FuncOp fail =
        declare(module, "mixemu_fail",
                FunctionType::get(ctx, {LLVM::LLVMPointerType::get(ctx)}, {}));
    bool usesBarrier = false;
    // Rewrite each op of the body once.
    SmallVector<Operation *> ops;
    host.walk([&](Operation *op) {
      if (op != host.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder ob(op);
      auto replaceId = [&](Value result, unsigned group, gpu::Dimension dim) {
        result.replaceAllUsesWith(ids[idArgument(group, dim)]);
        op->erase();
      };
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
        replaceId(id, 0, id.getDimension());
      } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
        replaceId(id, 1, id.getDimension());
      } else if (auto id = dyn_cast<gpu::BlockDimOp>(op)) {
        replaceId(id, 2, id.getDimension());
      } else if (auto id = dyn_cast<gpu::GridDimOp>(op)) {
        replaceId(id, 3, id.getDimension());
      } else if (isa<gpu::ReturnOp>(op)) {
        func::ReturnOp::create(ob, op->getLoc());
        op->erase();
      } else if (isa<gpu::BarrierOp>(op)) {
        func::CallOp::create(ob, op->getLoc(), barrier, ValueRange{});
        op->erase();
        usesBarrier = true;
      } else if (auto check = dyn_cast<cf::AssertOp>(op)) {
        // A failed check calls the emulator, which names the kernel and
        // ends the launch: cf.assert's own lowering would abort mix-run.
        LLVM::GlobalOp text = stringGlobal(
            module, "kernel " + name.str() + ": " + describe(check.getMsg()),
            messages);
        // An scf.if, not a branch: the check may sit inside scf regions,
        // which hold one block.
        Value one = arith::ConstantIntOp::create(ob, check.getLoc(), 1, 1);
        Value failedCheck =
            arith::XOrIOp::create(ob, check.getLoc(), check.getArg(), one);
        auto ifFailed = scf::IfOp::create(ob, check.getLoc(), failedCheck,
                                          /*withElseRegion=*/false);
        ob.setInsertionPointToStart(ifFailed.thenBlock());
        Value address =
            LLVM::AddressOfOp::create(ob, check.getLoc(), text).getResult();
        func::CallOp::create(ob, check.getLoc(), fail, address);
        check->erase();
      } else if (op->getDialect() &&
                 op->getDialect()->getNamespace() == "gpu") {
        return op->emitError() << "kernel " << name << ": `" << op->getName()
                               << "` is not run by the CUDA emulator yet";
      }
    }
    if (usesBarrier)
      host->setAttr("mix.uses_barrier", UnitAttr::get(ctx));
    kernel.erase();
    return success();
  }

  unsigned messages = 0;
};
} // namespace
