//===- AppendAdamW.cpp - The AdamW update as a compiled function ----------===//
//
// Appends @adamw: global gradient-norm clipping and PyTorch's AdamW
// (decoupled weight decay on tensors of rank >= 2), docs/models.md §7, over the
// parameters of @forward, in primitive mix ops, or, for a target with
// multi-tensor kernels, in mix.multi_tensor_sum_squares and
// mix.multi_tensor_adamw.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixFusedOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXAPPENDADAMWPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct AppendAdamWPass : mix::impl::MixAppendAdamWPassBase<AppendAdamWPass> {
  using Base::Base;

  void runOnOperation() override {
    auto module = cast<ModuleOp>(getOperation());
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("no @forward whose parameters AdamW would update");
      return signalPassFailure();
    }
    SmallVector<RankedTensorType> params;
    for (auto [i, t] : llvm::enumerate(forward.getArgumentTypes())) {
      auto type = dyn_cast<RankedTensorType>(t);
      if (!type) {
        forward.emitError() << "argument #" << i
                            << " of @forward is not a ranked tensor: " << t;
        return signalPassFailure();
      }
      if (type.getElementType().isF32())
        params.push_back(type);
    }
    int64_t n = params.size();
    if (n == 0) {
      forward.emitError("@forward has no f32 parameter for AdamW to update");
      return signalPassFailure();
    }

    // (params, grads, m, v, hyper = [lr, 1 - beta1^t, 1 - beta2^t])
    //   -> (params', m', v', grad_norm), the first three written over
    //      params, m and v once bufferized (kUpdatesAttr)
    MLIRContext *ctx = module.getContext();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = forward.getLoc();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    SmallVector<Type> inputs, outputs;
    for (int copy = 0; copy < 4; ++copy)
      inputs.append(params.begin(), params.end());
    inputs.push_back(RankedTensorType::get({3}, b.getF32Type()));
    for (int copy = 0; copy < 3; ++copy)
      outputs.append(params.begin(), params.end());
    outputs.push_back(scalar);
    auto fn = func::FuncOp::create(b, loc, "adamw",
                                   FunctionType::get(ctx, inputs, outputs));
    fn->setAttr(
        kAdamWHyperparametersAttr,
        b.getDictionaryAttr({
            b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
            b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
            b.getNamedAttr("epsilon", b.getF64FloatAttr(epsilon)),
            b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay)),
            b.getNamedAttr("max_grad_norm", b.getF64FloatAttr(maxGradNorm)),
        }));
    Block *body = fn.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockBegin(body);
    PrimitiveBuilder pb(fb, loc);
    auto arg = [&](int group, int64_t i) {
      return body->getArgument(group * n + i);
    };
    Value hyper = body->getArgument(4 * n);
    auto hyperAt = [&](int64_t i) { return pb.slice(hyper, 0, i, 1); };
    // The primitive update's hyperparameters (the fused one reads hyper).
    Value lr, bc1, bc2;
    if (!fused) {
      lr = hyperAt(0);
      bc1 = hyperAt(1);
      bc2 = hyperAt(2);
    }
    // As a (1, ..., 1) tensor broadcasting against rank r.
    auto asRank = [&](Value v, int64_t r) {
      return pb.reshape(v, SmallVector<int64_t>(r, 1));
    };

    // Global norm of all gradients; clip coefficient min(1, max/(norm+1e-6)).
    // A parameter sharded over the stream ranks (kStreamShardsAttr) holds
    // only this rank's part: the squares of those gradients are summed over
    // the ranks, those of the replicated ones (equal on every rank) not.
    Value sumSq, shardedSumSq;
    if (fused) {
      SmallVector<Value> replicated, sharded;
      for (int64_t i = 0; i < n; ++i)
        (forward.getArgAttr(i, kStreamShardsAttr) ? sharded : replicated)
            .push_back(arg(1, i));
      if (!replicated.empty())
        sumSq = MultiTensorSumSquaresOp::create(fb, loc, scalar, replicated);
      if (!sharded.empty())
        shardedSumSq =
            MultiTensorSumSquaresOp::create(fb, loc, scalar, sharded);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Value g = arg(1, i);
        Value s = pb.sumAll(pb.mul(g, g));
        Value &into =
            forward.getArgAttr(i, kStreamShardsAttr) ? shardedSumSq : sumSq;
        into = into ? pb.add(into, s) : s;
      }
    }
    if (shardedSumSq) {
      shardedSumSq =
          AllReduceOp::create(fb, loc, shardedSumSq.getType(), shardedSumSq);
      sumSq = sumSq ? pb.add(sumSq, shardedSumSq) : shardedSumSq;
    }
    Value norm = pb.unary<SqrtOp>(sumSq);
    Value ratio =
        pb.div(pb.splat({}, maxGradNorm), pb.add(norm, pb.splat({}, 1e-6)));
    // min(1, ratio) = -max(-1, -ratio)
    Value clip = pb.neg(pb.max(pb.splat({}, -1.0), pb.neg(ratio)));

    SmallVector<Value> results;
    if (fused) {
      SmallVector<bool> decay;
      SmallVector<Type> types;
      for (int copy = 0; copy < 3; ++copy)
        types.append(params.begin(), params.end());
      for (RankedTensorType t : params)
        decay.push_back(t.getRank() >= 2);
      auto group = [&](int g) { return body->getArguments().slice(g * n, n); };
      auto update = MultiTensorAdamWOp::create(
          fb, loc, types, group(0), group(1), group(2), group(3), hyper, clip,
          fb.getF64FloatAttr(beta1), fb.getF64FloatAttr(beta2),
          fb.getF64FloatAttr(epsilon), fb.getF64FloatAttr(weightDecay),
          fb.getDenseBoolArrayAttr(decay));
      results.append(update.getUpdated().begin(), update.getUpdated().end());
    } else {
      SmallVector<Value> newParams, newM, newV;
      for (int64_t i = 0; i < n; ++i) {
        int64_t r = params[i].getRank();
        Value p = arg(0, i), g = pb.mul(arg(1, i), asRank(clip, r));
        Value m = arg(2, i), v = arg(3, i);
        Value lrR = asRank(lr, r);
        if (r >= 2)
          p = pb.sub(p, pb.mul(p, pb.scale(lrR, weightDecay)));
        Value m2 = pb.add(pb.scale(m, beta1), pb.scale(g, 1.0 - beta1));
        Value v2 =
            pb.add(pb.scale(v, beta2), pb.scale(pb.mul(g, g), 1.0 - beta2));
        Value mhat = pb.div(m2, asRank(bc1, r));
        Value vhat = pb.div(v2, asRank(bc2, r));
        Value denom = pb.add(pb.unary<SqrtOp>(vhat), pb.scalar(r, epsilon));
        newParams.push_back(pb.sub(p, pb.mul(lrR, pb.div(mhat, denom))));
        newM.push_back(m2);
        newV.push_back(v2);
      }
      results.append(newParams);
      results.append(newM.begin(), newM.end());
      results.append(newV.begin(), newV.end());
    }
    results.push_back(norm);
    func::ReturnOp::create(fb, loc, results);
    // The new parameters and moments replace the old ones in their buffers
    // (mix-update-arguments-in-place, at bufferization).
    for (int64_t i = 0; i < n; ++i) {
      fn.setResultAttr(i, kUpdatesAttr, fb.getI64IntegerAttr(i));
      fn.setResultAttr(n + i, kUpdatesAttr, fb.getI64IntegerAttr(2 * n + i));
      fn.setResultAttr(2 * n + i, kUpdatesAttr,
                       fb.getI64IntegerAttr(3 * n + i));
    }
  }
};
} // namespace
