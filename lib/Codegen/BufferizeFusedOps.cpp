//===- BufferizeFusedOps.cpp - The fused ops in one-shot bufferization ----===//
//
// The fused ops (`mix.flash_attention`, `mix.fused_cross_entropy` and
// their gradients) survive the lowering to linalg for a target that
// computes them as kernels. Each bufferizes to
// a fresh buffer for every result and the op's form on buffers, which
// reads the operands' buffers and writes every element of the results':
// nothing aliases, so bufferization needs no analysis of the kernels.
//
//===----------------------------------------------------------------------===//

#include "AllocatingBufferization.h"

#include "mix/Codegen/Codegen.h"

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixFusedOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mix;

namespace {
/// The buffer of each tensor in \p values (null stays null).
FailureOr<SmallVector<Value>> getBuffers(RewriterBase &rewriter,
                                         ValueRange values,
                                         const BufferizationOptions &options,
                                         BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value v : values) {
    if (!v) {
      buffers.push_back(Value());
      continue;
    }
    FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// A fresh buffer for each result of \p op.
SmallVector<Value> allocResults(RewriterBase &rewriter, Operation *op) {
  SmallVector<Value> buffers;
  for (Type t : op->getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    buffers.push_back(memref::AllocOp::create(
        rewriter, op->getLoc(),
        MemRefType::get(type.getShape(), type.getElementType())));
  }
  return buffers;
}

struct FlashAttentionBufferization
    : AllocatingBufferization<FlashAttentionBufferization, FlashAttentionOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<FlashAttentionOp>(op);
    FailureOr<SmallVector<Value>> in = getBuffers(
        rewriter, {attn.getQkv(), attn.getPrefixK(), attn.getPrefixV()},
        options, state);
    if (failed(in))
      return failure();
    SmallVector<Value> out = allocResults(rewriter, op);
    FlashAttentionBuffersOp::create(rewriter, op->getLoc(), (*in)[0], (*in)[1],
                                    (*in)[2], out[0], out[1], attn.getHeads());
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

struct FlashAttentionGradBufferization
    : AllocatingBufferization<FlashAttentionGradBufferization,
                              FlashAttentionGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<FlashAttentionGradOp>(op);
    FailureOr<SmallVector<Value>> in =
        getBuffers(rewriter,
                   {grad.getQkv(), grad.getPrefixK(), grad.getPrefixV(),
                    grad.getOut(), grad.getLse(), grad.getDout()},
                   options, state);
    if (failed(in))
      return failure();
    SmallVector<Value> out = allocResults(rewriter, op);
    Value dprefixK = out.size() > 1 ? out[1] : Value();
    Value dprefixV = out.size() > 2 ? out[2] : Value();
    FlashAttentionGradBuffersOp::create(
        rewriter, op->getLoc(), (*in)[0], (*in)[1], (*in)[2], (*in)[3],
        (*in)[4], (*in)[5], out[0], dprefixK, dprefixV, grad.getHeads());
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};
struct FusedCrossEntropyBufferization
    : AllocatingBufferization<FusedCrossEntropyBufferization,
                              FusedCrossEntropyOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto ce = cast<FusedCrossEntropyOp>(op);
    FailureOr<SmallVector<Value>> in =
        getBuffers(rewriter, {ce.getLogits(), ce.getTargets()}, options, state);
    if (failed(in))
      return failure();
    SmallVector<Value> out = allocResults(rewriter, op);
    FusedCrossEntropyBuffersOp::create(rewriter, op->getLoc(), (*in)[0],
                                       (*in)[1], out[0], out[1]);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

struct FusedCrossEntropyGradBufferization
    : AllocatingBufferization<FusedCrossEntropyGradBufferization,
                              FusedCrossEntropyGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<FusedCrossEntropyGradOp>(op);
    FailureOr<SmallVector<Value>> in = getBuffers(
        rewriter,
        {grad.getLogits(), grad.getTargets(), grad.getLse(), grad.getDresult()},
        options, state);
    if (failed(in))
      return failure();
    SmallVector<Value> out = allocResults(rewriter, op);
    FusedCrossEntropyGradBuffersOp::create(
        rewriter, op->getLoc(), (*in)[0], (*in)[1], (*in)[2], (*in)[3], out[0],
        grad.getScaleAttr());
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};
} // namespace

void mlir::mix::registerFusedOpBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MixDialect *) {
    FlashAttentionOp::attachInterface<FlashAttentionBufferization>(*ctx);
    FlashAttentionGradOp::attachInterface<FlashAttentionGradBufferization>(
        *ctx);
    FusedCrossEntropyOp::attachInterface<FusedCrossEntropyBufferization>(*ctx);
    FusedCrossEntropyGradOp::attachInterface<
        FusedCrossEntropyGradBufferization>(*ctx);
  });
}
