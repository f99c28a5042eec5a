//===- AttentionCalls.cpp - Fused attention as calls of the CPU kernels ---===//
//
// mix.flash_attention_buffers and mix.flash_attention_grad_buffers become
// calls of the package's support code (runtime/support/CPUAttention.c),
// which computes attention a tile of scores at a time.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Declarations.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::mix {
#define GEN_PASS_DEF_MIXATTENTIONCALLSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

using namespace mlir;
using namespace mlir::mix;

namespace {
/// Builds one call: buffers as (base, offset) pairs, then index sizes.
class CallBuilder {
public:
  CallBuilder(Operation *op) : b(op), loc(op->getLoc()) {}

  /// Appends \p buffer, through a contiguous copy if it is not contiguous
  /// (copied in if \p read, back after the call if \p written).
  void addBuffer(Value buffer, bool read, bool written) {
    if (auto it = passedBuffers.find(buffer); it != passedBuffers.end()) {
      args.append({it->second.first, it->second.second});
      return;
    }
    auto type = cast<MemRefType>(buffer.getType());
    Value passed = buffer;
    if (!memref::isStaticShapeAndContiguousRowMajor(type)) {
      auto contiguous = MemRefType::get(type.getShape(), type.getElementType());
      passed = memref::AllocOp::create(b, loc, contiguous);
      if (read)
        memref::CopyOp::create(b, loc, buffer, passed);
      if (written)
        copiesBack.emplace_back(passed, buffer);
      temporaries.push_back(passed);
    }
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, passed);
    passedBuffers[buffer] = {meta.getBaseBuffer(), meta.getOffset()};
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
  }

  void addSize(int64_t size) {
    Value &constant = sizes[size];
    if (!constant)
      constant = arith::ConstantIndexOp::create(b, loc, size);
    args.push_back(constant);
  }

  /// Calls \p name (declared on first use) and erases \p op; fails when
  /// the module's \p name is something else.
  LogicalResult finish(Operation *op, StringRef name) {
    auto module = op->getParentOfType<ModuleOp>();
    func::FuncOp fn = lookupOrDeclareFunction(
        module, name, b.getFunctionType(ValueRange(args).getTypes(), {}));
    if (!fn)
      return failure();
    func::CallOp::create(b, loc, fn, args);
    for (auto [from, to] : copiesBack)
      memref::CopyOp::create(b, loc, from, to);
    for (Value temporary : temporaries)
      memref::DeallocOp::create(b, loc, temporary);
    op->erase();
    return success();
  }

private:
  OpBuilder b;
  Location loc;
  SmallVector<Value> args;
  SmallVector<std::pair<Value, Value>> copiesBack;
  SmallVector<Value> temporaries;
  /// What each buffer and size became, for their repeats.
  DenseMap<Value, std::pair<Value, Value>> passedBuffers;
  DenseMap<int64_t, Value> sizes;
};

/// The sizes every call ends with: batch, sequence, heads, head width,
/// prefix streams and prefix length.
void addSizes(CallBuilder &call, Operation *op, Value qkv, Value prefixK,
              int64_t heads) {
  std::optional<ArrayRef<int64_t>> prefix;
  if (prefixK)
    prefix = cast<MemRefType>(prefixK.getType()).getShape();
  FailureOr<AttentionShape> s = getAttentionShape(
      op, cast<MemRefType>(qkv.getType()).getShape(), prefix, heads);
  // The verifier has checked the shapes.
  assert(succeeded(s) && "verified attention");
  for (int64_t size :
       {s->batch, s->seq, s->heads, s->headDim, s->streams, s->prefix})
    call.addSize(size);
}

struct AttentionCallsPass
    : mix::impl::MixAttentionCallsPassBase<AttentionCallsPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FlashAttentionBuffersOp op) {
      CallBuilder call(op);
      Value qkv = op.getQkv();
      call.addBuffer(qkv, /*read=*/true, /*written=*/false);
      for (Value prefix : {op.getPrefixK(), op.getPrefixV()})
        call.addBuffer(prefix ? prefix : qkv, true, false);
      call.addBuffer(op.getResult(), false, true);
      call.addBuffer(op.getLse(), false, true);
      addSizes(call, op, qkv, op.getPrefixK(), op.getHeads());
      failed |= mlir::failed(call.finish(op, "mixrt_flash_attention"));
    });
    getOperation()->walk([&](FlashAttentionGradBuffersOp op) {
      CallBuilder call(op);
      Value qkv = op.getQkv();
      call.addBuffer(qkv, true, false);
      for (Value prefix : {op.getPrefixK(), op.getPrefixV()})
        call.addBuffer(prefix ? prefix : qkv, true, false);
      for (Value read : {op.getOut(), op.getLse(), op.getDout()})
        call.addBuffer(read, true, false);
      call.addBuffer(op.getDqkv(), false, true);
      // Without prefixes their gradients' places are dqkv's, unwritten.
      for (Value prefix : {op.getDprefixK(), op.getDprefixV()})
        call.addBuffer(prefix ? prefix : op.getDqkv(), false, bool(prefix));
      addSizes(call, op, qkv, op.getPrefixK(), op.getHeads());
      failed |= mlir::failed(call.finish(op, "mixrt_flash_attention_grad"));
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
