//===- MemoryToDevice.cpp - Host buffers become device buffers ------------===//
//
// After bufferization the host functions allocate, copy and read constants
// through memref ops; on the CUDA target every buffer lives on the device,
// so allocations become gpu.alloc / gpu.dealloc, copies become linalg.copy
// (a kernel, later) and constants are copied to a device buffer.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMEMORYTODEVICEPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

// gpu-to-llvm lowers the asynchronous forms of gpu.alloc, gpu.dealloc and
// gpu.memcpy only: each is issued on a stream that `gpu.wait async` makes
// and waited for at once, which the package's runtime (one in-order
// stream, nothing to wait for) makes free.

/// A token to issue one asynchronous op on.
static Value newStream(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange())
      .getAsyncToken();
}

static void waitFor(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

Value mlir::mix::allocOnDevice(OpBuilder &b, Location loc, MemRefType type) {
  Type token = b.getType<gpu::AsyncTokenType>();
  auto alloc =
      gpu::AllocOp::create(b, loc, type, token, ValueRange{newStream(b, loc)},
                           /*dynamicSizes=*/ValueRange(),
                           /*symbolOperands=*/ValueRange());
  waitFor(b, loc, alloc.getAsyncToken());
  return alloc.getMemref();
}

void mlir::mix::deallocOnDevice(OpBuilder &b, Location loc, Value memref) {
  auto dealloc =
      gpu::DeallocOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                             ValueRange{newStream(b, loc)}, memref);
  waitFor(b, loc, dealloc.getAsyncToken());
}

SmallVector<Operation *> mlir::mix::getDeallocation(Operation *op,
                                                    ArrayRef<Value> roots) {
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return llvm::is_contained(roots, getBufferRoot(dealloc.getMemref()))
               ? SmallVector<Operation *>{op}
               : SmallVector<Operation *>{};
  auto dealloc = dyn_cast<gpu::DeallocOp>(op);
  if (!dealloc ||
      !llvm::is_contained(roots, getBufferRoot(dealloc.getMemref())) ||
      dealloc.getAsyncDependencies().size() != 1 || !dealloc.getAsyncToken() ||
      !dealloc.getAsyncToken().hasOneUse())
    return {};
  auto start = dealloc.getAsyncDependencies()[0].getDefiningOp<gpu::WaitOp>();
  auto end = dyn_cast<gpu::WaitOp>(*dealloc.getAsyncToken().getUsers().begin());
  if (!start || !end || !start->hasOneUse() || end.getAsyncToken())
    return {};
  return {start, op, end};
}

SmallVector<Operation *> mlir::mix::getAllocation(Operation *alloc) {
  auto gpuAlloc = dyn_cast<gpu::AllocOp>(alloc);
  if (!gpuAlloc || !gpuAlloc.getAsyncToken() ||
      gpuAlloc.getAsyncDependencies().size() != 1)
    return {alloc};
  SmallVector<Operation *> group;
  for (Operation *user : gpuAlloc.getAsyncToken().getUsers())
    group.push_back(user);
  group.push_back(alloc);
  if (Operation *start = gpuAlloc.getAsyncDependencies()[0].getDefiningOp();
      start && start->hasOneUse())
    group.push_back(start);
  return group;
}

static Operation *copyToDevice(OpBuilder &b, Location loc, Value dst,
                               Value src) {
  auto copy = gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{newStream(b, loc)}, dst, src);
  waitFor(b, loc, copy.getAsyncToken());
  return copy;
}

bool mlir::mix::isHostBookkeeping(MemRefType type) {
  Type element = type.getElementType();
  return element.isInteger(1) || element.isIndex();
}

LogicalResult mlir::mix::moveMemoryToDevice(ModuleOp module) {
  WalkResult result = module.walk([&](func::FuncOp fn) -> WalkResult {
    if (fn.isDeclaration())
      return WalkResult::advance();
    SmallVector<Operation *> ops;
    fn.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              memref::CopyOp, memref::GetGlobalOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      // The deallocation lowering's bookkeeping (ownership flags, pointer
      // lists) is host data the host code reads and writes itself.
      auto isHost = [](Value v) {
        return isHostBookkeeping(cast<MemRefType>(v.getType()));
      };
      if ((isa<memref::AllocOp, memref::AllocaOp>(op) &&
           isHost(op->getResult(0))) ||
          (isa<memref::DeallocOp>(op) && isHost(op->getOperand(0))) ||
          (isa<memref::CopyOp>(op) && isHost(op->getOperand(1))))
        continue;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!alloc.getDynamicSizes().empty() ||
            !alloc.getSymbolOperands().empty())
          return alloc.emitError("dynamic allocations are not supported on "
                                 "the CUDA target (every shape is static)");
        alloc.replaceAllUsesWith(allocOnDevice(b, loc, alloc.getType()));
        alloc.erase();
      } else if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
        if (!alloca.getDynamicSizes().empty())
          return alloca.emitError("dynamic allocations are not supported on "
                                  "the CUDA target");
        Value buffer = allocOnDevice(b, loc, alloca.getType());
        alloca.replaceAllUsesWith(buffer);
        alloca.erase();
        // Stack memory lives until the function returns.
        fn.walk([&](func::ReturnOp ret) {
          OpBuilder at(ret);
          deallocOnDevice(at, ret.getLoc(), buffer);
        });
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        deallocOnDevice(b, loc, dealloc.getMemref());
        dealloc.erase();
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        linalg::CopyOp::create(b, loc, copy.getSource(), copy.getTarget());
        copy.erase();
      } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
        // The host constant stays where it is; the kernels read a device
        // copy, made where the constant is named.
        auto type = global.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity())
          return global.emitError("constants must be static and contiguous "
                                  "on the CUDA target");
        b.setInsertionPointAfter(global);
        Value buffer = allocOnDevice(b, loc, type);
        Operation *copy = copyToDevice(b, loc, buffer, global.getResult());
        global.getResult().replaceAllUsesExcept(buffer, copy);
        fn.walk([&](func::ReturnOp ret) {
          OpBuilder at(ret);
          deallocOnDevice(at, ret.getLoc(), buffer);
        });
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct MixMemoryToDevicePass
    : mlir::mix::impl::MixMemoryToDevicePassBase<MixMemoryToDevicePass> {
  void runOnOperation() override {
    if (failed(moveMemoryToDevice(getOperation())))
      signalPassFailure();
  }
};
} // namespace
