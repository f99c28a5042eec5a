//===- BufferizeFusedOps.cpp - The fused ops in one-shot bufferization ----===//
//
// The fused ops (`mix.flash_attention`, `mix.fused_cross_entropy`,
// `mix.fused_layer_norm` and their gradients,
// `mix.multi_tensor_sum_squares`) survive the lowering
// to linalg for a target that computes them as kernels. Each bufferizes
// to a fresh buffer for every result and the op's form on buffers, which
// reads the operands' buffers and writes every element of the results':
// nothing aliases, so bufferization needs no analysis of the kernels.
// `mix.multi_tensor_adamw` is the exception: it updates the parameters
// and moments in place, each result equivalent to its operand, and
// one-shot analysis copies an operand first where its old value is still
// needed.
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

/// Replaces \p op by the op on buffers that \p build makes from the
/// buffers of \p inputs (a null input stays null) and a fresh buffer for
/// each of \p op's results, which become those buffers.
LogicalResult bufferizeIntoFresh(
    RewriterBase &rewriter, Operation *op, ValueRange inputs,
    const BufferizationOptions &options, BufferizationState &state,
    llvm::function_ref<void(ArrayRef<Value>, ArrayRef<Value>)> build) {
  FailureOr<SmallVector<Value>> in =
      getBuffers(rewriter, inputs, options, state);
  if (failed(in))
    return failure();
  SmallVector<Value> out;
  for (Type t : op->getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    out.push_back(memref::AllocOp::create(
        rewriter, op->getLoc(),
        MemRefType::get(type.getShape(), type.getElementType())));
  }
  build(*in, out);
  replaceOpWithBufferizedValues(rewriter, op, out);
  return success();
}

struct FlashAttentionBufferization
    : AllocatingBufferization<FlashAttentionBufferization, FlashAttentionOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto attn = cast<FlashAttentionOp>(op);
    return bufferizeIntoFresh(
        rewriter, op,
        SmallVector<Value>{attn.getQkv(), attn.getPrefixK(), attn.getPrefixV()},
        options, state, [&](ArrayRef<Value> in, ArrayRef<Value> out) {
          FlashAttentionBuffersOp::create(rewriter, op->getLoc(), in[0], in[1],
                                          in[2], out[0], out[1],
                                          attn.getHeads());
        });
  }
};

struct FlashAttentionGradBufferization
    : AllocatingBufferization<FlashAttentionGradBufferization,
                              FlashAttentionGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<FlashAttentionGradOp>(op);
    return bufferizeIntoFresh(
        rewriter, op,
        SmallVector<Value>{grad.getQkv(), grad.getPrefixK(), grad.getPrefixV(),
                           grad.getOut(), grad.getLse(), grad.getDout()},
        options, state, [&](ArrayRef<Value> in, ArrayRef<Value> out) {
          Value dprefixK = out.size() > 1 ? out[1] : Value();
          Value dprefixV = out.size() > 2 ? out[2] : Value();
          FlashAttentionGradBuffersOp::create(
              rewriter, op->getLoc(), in[0], in[1], in[2], in[3], in[4], in[5],
              out[0], dprefixK, dprefixV, grad.getHeads());
        });
  }
};

struct FusedCrossEntropyBufferization
    : AllocatingBufferization<FusedCrossEntropyBufferization,
                              FusedCrossEntropyOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto ce = cast<FusedCrossEntropyOp>(op);
    return bufferizeIntoFresh(
        rewriter, op, SmallVector<Value>{ce.getLogits(), ce.getTargets()},
        options, state, [&](ArrayRef<Value> in, ArrayRef<Value> out) {
          FusedCrossEntropyBuffersOp::create(rewriter, op->getLoc(), in[0],
                                             in[1], out[0], out[1]);
        });
  }
};

struct FusedCrossEntropyGradBufferization
    : AllocatingBufferization<FusedCrossEntropyGradBufferization,
                              FusedCrossEntropyGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<FusedCrossEntropyGradOp>(op);
    return bufferizeIntoFresh(
        rewriter, op,
        SmallVector<Value>{grad.getLogits(), grad.getTargets(), grad.getLse(),
                           grad.getDresult()},
        options, state, [&](ArrayRef<Value> in, ArrayRef<Value> out) {
          FusedCrossEntropyGradBuffersOp::create(rewriter, op->getLoc(), in[0],
                                                 in[1], in[2], in[3], out[0],
                                                 grad.getScaleAttr());
        });
  }
};

struct FusedLayerNormBufferization
    : AllocatingBufferization<FusedLayerNormBufferization, FusedLayerNormOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto ln = cast<FusedLayerNormOp>(op);
    return bufferizeIntoFresh(
        rewriter, op,
        SmallVector<Value>{ln.getInput(), ln.getWeight(), ln.getBias()},
        options, state, [&](ArrayRef<Value> in, ArrayRef<Value> out) {
          FusedLayerNormBuffersOp::create(rewriter, op->getLoc(), in[0], in[1],
                                          in[2], out[0], out[1], out[2],
                                          ln.getEpsAttr());
        });
  }
};

struct FusedLayerNormGradBufferization
    : AllocatingBufferization<FusedLayerNormGradBufferization,
                              FusedLayerNormGradOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto grad = cast<FusedLayerNormGradOp>(op);
    return bufferizeIntoFresh(rewriter, op, grad->getOperands(), options, state,
                              [&](ArrayRef<Value> in, ArrayRef<Value> out) {
                                FusedLayerNormGradBuffersOp::create(
                                    rewriter, op->getLoc(), in[0], in[1], in[2],
                                    in[3], in[4], out[0], out[1], out[2]);
                              });
  }
};

struct MultiTensorSumSquaresBufferization
    : AllocatingBufferization<MultiTensorSumSquaresBufferization,
                              MultiTensorSumSquaresOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto sum = cast<MultiTensorSumSquaresOp>(op);
    return bufferizeIntoFresh(rewriter, op, sum.getTensors(), options, state,
                              [&](ArrayRef<Value> in, ArrayRef<Value> out) {
                                MultiTensorSumSquaresBuffersOp::create(
                                    rewriter, op->getLoc(), in, out[0]);
                              });
  }
};

/// The result that \p operand of a mix.multi_tensor_adamw is updated
/// into: parameter i into result i, its moments into results n + i and
/// 2n + i; none for the gradients and hyperparameters.
std::optional<unsigned> updatedInto(MultiTensorAdamWOp op, OpOperand &operand) {
  unsigned n = op.getParams().size(), i = operand.getOperandNumber();
  if (i < n)
    return i;
  if (i >= 2 * n && i < 4 * n)
    return i - n;
  return std::nullopt;
}

struct MultiTensorAdamWBufferization
    : BufferizableOpInterface::ExternalModel<MultiTensorAdamWBufferization,
                                             MultiTensorAdamWOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return updatedInto(cast<MultiTensorAdamWOp>(op), operand).has_value();
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    std::optional<unsigned> r =
        updatedInto(cast<MultiTensorAdamWOp>(op), operand);
    if (!r)
      return {};
    return {{op->getResult(*r), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto adamw = cast<MultiTensorAdamWOp>(op);
    FailureOr<SmallVector<Value>> in =
        getBuffers(rewriter, op->getOperands(), options, state);
    if (failed(in))
      return failure();
    ArrayRef<Value> buffers = *in;
    size_t n = adamw.getParams().size();
    ArrayRef<Value> params = buffers.take_front(n), grads = buffers.slice(n, n),
                    m = buffers.slice(2 * n, n), v = buffers.slice(3 * n, n);
    MultiTensorAdamWBuffersOp::create(
        rewriter, op->getLoc(), params, grads, m, v, buffers[4 * n],
        buffers[4 * n + 1], adamw.getBeta1Attr(), adamw.getBeta2Attr(),
        adamw.getEpsilonAttr(), adamw.getWeightDecayAttr(),
        adamw.getDecayAttr());
    SmallVector<Value> results(params);
    results.append(m.begin(), m.end());
    results.append(v.begin(), v.end());
    replaceOpWithBufferizedValues(rewriter, op, results);
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
    FusedLayerNormOp::attachInterface<FusedLayerNormBufferization>(*ctx);
    FusedLayerNormGradOp::attachInterface<FusedLayerNormGradBufferization>(
        *ctx);
    MultiTensorSumSquaresOp::attachInterface<
        MultiTensorSumSquaresBufferization>(*ctx);
    MultiTensorAdamWOp::attachInterface<MultiTensorAdamWBufferization>(*ctx);
  });
}
