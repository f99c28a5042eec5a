//===- MergeGPUModules.cpp - One gpu.module for every kernel --------------===//
//
// gpu-kernel-outlining makes one gpu.module a kernel; the package wants one
// PTX file and one cubin, so the kernels move into @mix_kernels and the
// launches follow them.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMERGEGPUMODULESPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

LogicalResult mlir::mix::mergeGPUModules(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
  if (sources.empty())
    return success();
  // A module already named @mix_kernels (the pass ran before) is the one
  // the others join.
  auto merged = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!merged && module.lookupSymbol(kKernelModuleName))
    return module.emitError() << "a symbol named @" << kKernelModuleName
                              << " exists already and is no gpu.module";
  if (!merged) {
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    merged = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
  }
  llvm::erase(sources, merged);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(module.getContext()));
  SymbolTable table(merged);
  // Where each (module, kernel) pair went.
  llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> moved;
  for (gpu::GPUModuleOp source : sources) {
    for (Operation &op :
         llvm::make_early_inc_range(source.getBody()->getOperations())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!symbol)
        continue;
      StringAttr oldName = symbol.getNameAttr();
      op.moveBefore(merged.getBody(), merged.getBody()->end());
      // insert renames the symbol if the name is taken.
      StringAttr newName = table.insert(&op);
      if (isa<gpu::GPUFuncOp>(op))
        moved[{source.getNameAttr(), oldName}] = newName;
    }
    source.erase();
  }
  WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
    SymbolRefAttr kernel = launch.getKernel();
    auto it =
        moved.find({kernel.getRootReference(), kernel.getLeafReference()});
    if (it == moved.end()) {
      launch.emitError("launches a kernel that no gpu.module defines");
      return WalkResult::interrupt();
    }
    launch.setKernelAttr(SymbolRefAttr::get(
        merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct MixMergeGPUModulesPass
    : mlir::mix::impl::MixMergeGPUModulesPassBase<MixMergeGPUModulesPass> {
  void runOnOperation() override {
    if (failed(mergeGPUModules(getOperation())))
      signalPassFailure();
  }
};
} // namespace
