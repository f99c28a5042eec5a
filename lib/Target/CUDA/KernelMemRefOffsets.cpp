//===- KernelMemRefOffsets.cpp - Dynamic views as buffer and offset -------===//
//
// The kernels and the host agree on the bare-pointer convention: a memref
// argument is its aligned pointer. A view with a dynamic offset or strides
// cannot travel so; it is split into its base buffer and the dynamic parts
// of its layout, and rebuilt in the kernel.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXKERNELMEMREFOFFSETSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Whether \p type cannot be passed as a bare pointer: its offset or a
/// stride is dynamic (every shape here is static).
bool needsSplit(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)))
    return false;
  return ShapedType::isDynamic(offset) ||
         llvm::any_of(strides, ShapedType::isDynamic);
}

/// The number of index values that carry \p type's dynamic layout: the
/// offset, then each dynamic stride.
unsigned numLayoutValues(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  return 1 + llvm::count_if(strides, ShapedType::isDynamic);
}

struct MixKernelMemRefOffsetsPass
    : mlir::mix::impl::MixKernelMemRefOffsetsPassBase<
          MixKernelMemRefOffsetsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    if (!kernels)
      return;
    // Which arguments of which kernel are split.
    llvm::DenseMap<StringAttr, SmallVector<unsigned>> split;
    for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
      SmallVector<unsigned> args;
      for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
        if (needsSplit(type))
          args.push_back(i);
      if (args.empty())
        continue;
      rewriteKernel(kernel, args);
      split[kernel.getNameAttr()] = std::move(args);
    }
    if (split.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName().getValue() != kKernelModuleName)
        return;
      auto it = split.find(launch.getKernelName());
      if (it != split.end())
        rewriteLaunch(launch, it->second);
    });
  }

  void rewriteKernel(gpu::GPUFuncOp kernel, ArrayRef<unsigned> args) {
    MLIRContext *ctx = &getContext();
    Block &entry = kernel.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = kernel.getLoc();
    // From the last, so that earlier positions stay valid.
    for (unsigned i : llvm::reverse(args)) {
      BlockArgument old = entry.getArgument(i);
      auto type = cast<MemRefType>(old.getType());
      auto bufferType =
          MemRefType::get({}, type.getElementType(),
                          MemRefLayoutAttrInterface(), type.getMemorySpace());
      unsigned n = numLayoutValues(type);
      BlockArgument buffer = entry.insertArgument(i, bufferType, loc);
      SmallVector<Value> layout;
      for (unsigned j = 0; j < n; ++j)
        layout.push_back(
            entry.insertArgument(i + 1 + j, IndexType::get(ctx), loc));
      SmallVector<int64_t> strides;
      int64_t offset;
      (void)type.getStridesAndOffset(strides, offset);
      SmallVector<OpFoldResult> strideValues, sizeValues;
      unsigned next = 1;
      for (int64_t s : strides)
        strideValues.push_back(ShapedType::isDynamic(s)
                                   ? OpFoldResult(layout[next++])
                                   : OpFoldResult(b.getIndexAttr(s)));
      for (int64_t s : type.getShape())
        sizeValues.push_back(b.getIndexAttr(s));
      Value view = memref::ReinterpretCastOp::create(b, loc, type, buffer,
                                                     OpFoldResult(layout[0]),
                                                     sizeValues, strideValues);
      old.replaceAllUsesWith(view);
      entry.eraseArgument(i + 1 + n);
    }
    kernel.setFunctionType(
        FunctionType::get(ctx, entry.getArgumentTypes(), {}));
  }

  void rewriteLaunch(gpu::LaunchFuncOp launch, ArrayRef<unsigned> args) {
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    SmallVector<Value> operands;
    unsigned next = 0;
    for (auto [i, value] : llvm::enumerate(launch.getKernelOperands())) {
      if (next < args.size() && args[next] == i) {
        ++next;
        auto meta = memref::ExtractStridedMetadataOp::create(b, loc, value);
        operands.push_back(meta.getBaseBuffer());
        operands.push_back(meta.getOffset());
        auto type = cast<MemRefType>(value.getType());
        SmallVector<int64_t> strides;
        int64_t offset;
        (void)type.getStridesAndOffset(strides, offset);
        for (auto [d, s] : llvm::enumerate(strides))
          if (ShapedType::isDynamic(s))
            operands.push_back(meta.getStrides()[d]);
        continue;
      }
      operands.push_back(value);
    }
    launch.getKernelOperandsMutable().assign(operands);
  }
};
} // namespace
