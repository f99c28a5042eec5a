//===- SelectMixingOrder.cpp - Choose how a dynamic convolution mixes -----===//
//
// A FLOP-and-byte cost model of a training step's forward and backward
// passes over static shapes that picks, for each dynamic convolution,
// apply-then-mix (the gate-scaled input against each stream's kernel),
// stack-then-mix (all kernels in one product, the outputs mixed) or
// mix-then-apply (mix the kernels per gate row first).
//
//===----------------------------------------------------------------------===//
#include "mix/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXSELECTMIXINGORDERPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
/// A lowering's products' FLOPs and the bytes all of it moves. Time, in
/// bytes: the products' FLOPs at the machine's balance plus the bytes (an
/// elementwise kernel's arithmetic hides under its bytes; a product's
/// operands are counted in the bytes).
struct Cost {
  double flops = 0, bytes = 0;
  double time(double balance) const { return flops / balance + bytes; }
};

struct Shapes {
  double tokens, gateRows, streams, heads, in, out;
  bool bias;
  /// Mix-then-apply is lowered for one gate head shared by each sequence
  /// of a (B, S, d) input; other gates apply first.
  bool canMixFirst;
};

Shapes shapesOf(DynamicConvOp op) {
  auto x = cast<RankedTensorType>(op.getInput().getType());
  auto g = cast<RankedTensorType>(op.getGate().getType());
  auto k = cast<RankedTensorType>(op.getKernels().getType());
  Shapes s;
  s.in = k.getDimSize(2);
  s.out = k.getDimSize(1);
  s.streams = k.getDimSize(0);
  s.heads = op.getNumGateHeads();
  s.tokens = x.getNumElements() / s.in;
  s.gateRows = g.getNumElements() / (s.heads * s.streams);
  s.bias = op.getBias() != nullptr;
  s.canMixFirst = s.heads == 1 && x.getRank() == 3 && g.getRank() == 3 &&
                  g.getDimSize(0) == x.getDimSize(0) && g.getDimSize(1) == 1;
  return s;
}

// Each order's cost is its forward pass plus its backward pass (the
// gradients of x, the gate and the kernels: two products for each forward
// one), bytes in 4-byte words. The compiler compiles training steps; an
// inference entry point pays the forward part of the same choice.
constexpr double kWord = 4;

/// U = sum_k (g_k x) K_k^T: the gate-scaled input S (T, N, d; H of them
/// with H gate heads) written and read, one product per stream, each after
/// the first reading and writing U again; the per-stream biases one more
/// product into U. Backward: dS_k = dU K_k (N products, written), dK_k =
/// dU^T S_k (N products reading S), dS reduced to dx and the gate's
/// gradient.
Cost applyThenMix(const Shapes &s) {
  double scaled = s.tokens * s.streams * s.in * s.heads;
  double u = s.tokens * s.out, gate = s.gateRows * s.heads * s.streams;
  double kernels = s.streams * s.out * s.in, x = s.tokens * s.in;
  Cost c;
  c.flops = 3 * 2 * s.tokens * s.streams * s.in * s.out;
  c.bytes = kWord * (x + gate + kernels + 2 * scaled + (2 * s.streams - 1) * u);
  c.bytes += kWord * (3 * scaled + 2 * s.streams * u + 2 * kernels + x + gate);
  if (s.bias) {
    c.flops += 3 * 2 * s.tokens * s.streams * s.out;
    c.bytes += kWord * 4 * u;
  }
  return c;
}

/// P = x [K_1; ...; K_N]^T (+ biases, the product's epilogue), written and
/// read by the mixing u = sum_k g_k P_k. Backward: dP = g dU and the gate's
/// gradient from a pass over dU and P, then dx = dP Kf and dKf = dP^T x
/// (its bias gradient the epilogue), each reading dP.
Cost stackThenMix(const Shapes &s) {
  double p = s.tokens * s.streams * s.out, u = s.tokens * s.out;
  double gate = s.gateRows * s.heads * s.streams;
  double kernels = s.streams * s.out * s.in, x = s.tokens * s.in;
  Cost c;
  c.flops = 3 * 2 * s.tokens * s.streams * s.in * s.out;
  c.bytes = kWord * (x + gate + kernels + 2 * p + u);
  c.bytes += kWord * (u + gate + 4 * p + 2 * kernels + 2 * x);
  return c;
}

/// Ktilde = sum_k g_k K_k once per distinct gate row (G of them), written
/// and read back, then applied to the tokens that share it. Backward:
/// dKtilde = dU^T x per gate row (written), dx = dU Ktilde, and dKtilde
/// read twice more for the kernels' and the gate's gradients.
Cost mixThenApply(const Shapes &s) {
  double mixed = s.gateRows * s.out * s.in, kernels = s.streams * s.out * s.in;
  double u = s.tokens * s.out, x = s.tokens * s.in;
  double gate = s.gateRows * s.heads * s.streams;
  Cost c;
  c.flops = 3 * 2 * s.gateRows * s.streams * s.out * s.in +
            3 * 2 * s.tokens * s.in * s.out;
  c.bytes = kWord * (kernels + 2 * mixed + x + u + gate);
  c.bytes += kWord * (4 * mixed + 2 * u + 2 * x + 2 * kernels + gate);
  if (s.bias)
    c.flops += 3 * 2 * s.gateRows * s.streams * s.out;
  return c;
}

struct SelectMixingOrderPass
    : mix::impl::MixSelectMixingOrderPassBase<SelectMixingOrderPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<MixingOrder> forced;
    if (order != "auto") {
      forced = symbolizeMixingOrder(order);
      if (!forced) {
        getOperation()->emitError()
            << "unknown mixing order '" << order
            << "' (expected auto, apply_then_mix, stack_then_mix or "
               "mix_then_apply)";
        return signalPassFailure();
      }
    }
    getOperation()->walk([&](DynamicConvOp op) {
      Shapes s = shapesOf(op);
      Cost atm = applyThenMix(s), stm = stackThenMix(s), mta = mixThenApply(s);
      // The first of the cheapest, in this order: apply-then-mix is what a
      // convolution without an order attribute gets.
      MixingOrder chosen = MixingOrder::apply_then_mix;
      double best = atm.time(flopsPerByte);
      if (considerStacked && stm.time(flopsPerByte) < best) {
        chosen = MixingOrder::stack_then_mix;
        best = stm.time(flopsPerByte);
      }
      if (s.canMixFirst && mta.time(flopsPerByte) < best)
        chosen = MixingOrder::mix_then_apply;
      const char *why = "";
      if (forced) {
        chosen = *forced == MixingOrder::mix_then_apply && !s.canMixFirst
                     ? MixingOrder::apply_then_mix
                     : *forced;
        why = chosen == *forced ? " (as asked)"
                                : " (mix_then_apply was asked: it needs one "
                                  "gate head shared by each sequence)";
      }
      op.setOrder(chosen);
      op.emitRemark() << llvm::formatv(
          "mixing order {0}{13}, forward and backward: apply-then-mix {1:e2} "
          "FLOP, {2:e2} B; stack-then-mix {3:e2} FLOP, {4:e2} B; "
          "mix-then-apply {5:e2} FLOP, {6:e2} B (T={7:f0}, gate rows={8:f0}, "
          "N={9:f0}, H={10:f0}, d={11:f0}, f={12:f0})",
          stringifyMixingOrder(chosen), atm.flops, atm.bytes, stm.flops,
          stm.bytes, mta.flops, mta.bytes, s.tokens, s.gateRows, s.streams,
          s.heads, s.in, s.out, why);
    });
  }
};
} // namespace
