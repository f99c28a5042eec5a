//===- SelectMixingOrder.cpp - Choose how a dynamic convolution mixes -----===//
//
// A FLOP-and-byte cost model over static shapes that picks apply-then-mix
// (one stacked GEMM) or mix-then-apply (mix the kernels per gate row first).
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXSELECTMIXINGORDERPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct Cost {
  double flops = 0, bytes = 0;
  double time(double balance) const { return std::max(flops / balance, bytes); }
};

struct Shapes {
  double tokens, gateRows, streams, heads, in, out;
  bool bias;
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
  return s;
}

/// One GEMM of [g_1 x | ... | g_N x] (T, N d) against the kernels stacked
/// along their input dimension (N d, f); with H gate heads, H GEMMs over
/// column blocks of f/H, each with its own scaled input.
Cost applyThenMix(const Shapes &s) {
  const double word = 4;
  Cost c;
  c.flops = 2 * s.tokens * s.streams * s.in * s.out +
            s.tokens * s.streams * s.in * s.heads;
  c.bytes = word * (s.tokens * s.in + s.gateRows * s.heads * s.streams +
                    s.streams * s.out * s.in + s.tokens * s.out);
  // The scaled input is written and read back once per head.
  c.bytes += 2 * word * s.tokens * s.streams * s.in * s.heads;
  if (s.bias)
    c.flops += 2 * s.tokens * s.streams * s.out;
  return c;
}

/// Ktilde = sum_k g_k K_k once per distinct gate row (G of them), written
/// and read back, then applied to the tokens that share it.
Cost mixThenApply(const Shapes &s) {
  const double word = 4;
  Cost c;
  c.flops =
      2 * s.gateRows * s.streams * s.out * s.in + 2 * s.tokens * s.in * s.out;
  c.bytes = word * (s.streams * s.out * s.in + 2 * s.gateRows * s.out * s.in +
                    s.tokens * s.in + s.tokens * s.out +
                    s.gateRows * s.heads * s.streams);
  if (s.bias)
    c.flops += 2 * s.gateRows * s.streams * s.out;
  return c;
}

struct SelectMixingOrderPass
    : mix::impl::MixSelectMixingOrderPassBase<SelectMixingOrderPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](DynamicConvOp op) {
      Shapes s = shapesOf(op);
      Cost atm = applyThenMix(s), mta = mixThenApply(s);
      MixingOrder order = mta.time(flopsPerByte) < atm.time(flopsPerByte)
                              ? MixingOrder::mix_then_apply
                              : MixingOrder::apply_then_mix;
      op.setOrder(order);
      op.emitRemark() << llvm::formatv(
          "mixing order {0}: apply-then-mix {1:e2} FLOP, {2:e2} B; "
          "mix-then-apply {3:e2} FLOP, {4:e2} B (T={5:f0}, gate rows={6:f0}, "
          "N={7:f0}, "
          "H={8:f0}, d={9:f0}, f={10:f0})",
          stringifyMixingOrder(order), atm.flops, atm.bytes, mta.flops,
          mta.bytes, s.tokens, s.gateRows, s.streams, s.heads, s.in, s.out);
    });
  }
};
} // namespace
