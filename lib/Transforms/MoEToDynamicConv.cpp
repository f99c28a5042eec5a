//===- MoEToDynamicConv.cpp - Apply Theorem 4.1 where it was proved -------===//
//
// Rewrites exactly the mixtures whose mix.proof says `proved` into dynamic
// convolutions, after an independent Z3 check of each rewrite.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/ExpertAnalysis.h"
#include "mix/Transforms/Passes.h"
#include "mix/Verification/SMTCheck.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXMOETODYNAMICCONVPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
/// The stacked kernels and biases of a mixture, if the experts have them.
struct StackedExperts {
  Value kernels, bias, sharedBias;
};

/// Stacked experts of a region whose expert is a single
/// `mix.linear %x, %w_k[, %b]`: the kernels are the stacked weight; the bias
/// is the stacked per-expert bias, or a shared one defined above.
FailureOr<StackedExperts> stackedFromRegion(MixtureOp op, std::string &why) {
  Block &block = op.getBody().front();
  auto lin =
      cast<YieldOp>(block.getTerminator()).getValue().getDefiningOp<LinearOp>();
  auto weightOf = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &block || arg.getArgNumber() == 0)
      return {};
    return op.getExpertWeights()[arg.getArgNumber() - 1];
  };
  if (!lin || lin.getInput() != block.getArgument(0) ||
      !weightOf(lin.getWeight())) {
    why = "the rewrite extracts kernels only from an expert that is one "
          "mix.linear of the input by a per-expert weight";
    return failure();
  }
  StackedExperts s{weightOf(lin.getWeight()), {}, {}};
  if (Value b = lin.getBias()) {
    if (Value stacked = weightOf(b))
      s.bias = stacked;
    else if (b.getParentBlock() != &block)
      s.sharedBias = b;
    else {
      why = "the expert's bias is computed inside the expert";
      return failure();
    }
  }
  return s;
}

struct MoEToDynamicConvPass
    : mix::impl::MixMoEToDynamicConvPassBase<MoEToDynamicConvPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MixtureOp> proved;
    getOperation()->walk([&](MixtureOp op) {
      if (isProved(op))
        proved.push_back(op);
    });
    for (MixtureOp op : proved)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }

  LogicalResult rewrite(MixtureOp op) {
    StackedExperts experts{op.getKernels(), op.getBias(), op.getSharedBias()};
    if (op.hasExpertRegion()) {
      std::string why;
      FailureOr<StackedExperts> s = stackedFromRegion(op, why);
      if (failed(s)) {
        op.emitRemark() << "proved, but not rewritten: " << why;
        return success();
      }
      experts = *s;
    }
    OpBuilder builder(op);
    auto conv = DynamicConvOp::create(
        builder, op.getLoc(), op.getResult().getType(), op.getInput(),
        op.getGate(), experts.kernels, experts.bias, experts.sharedBias,
        /*order=*/nullptr);
    if (smtCheck) {
      SMTCheckResult check = checkEquivalence(op.getResult(), conv.getResult());
      if (check.status == SMTCheckResult::Status::Counterexample) {
        conv.erase();
        return op.emitError()
               << "Z3 refutes the rewrite to a dynamic convolution: "
               << check.message;
      }
      // The prover's proof stands; say that Z3 could not confirm it.
      if (check.status == SMTCheckResult::Status::Unknown)
        op.emitWarning() << "Z3 could not confirm the rewrite to a dynamic "
                            "convolution ("
                         << check.message << "); applying the proved rewrite";
    }
    op.getResult().replaceAllUsesWith(conv.getResult());
    op.erase();
    return success();
  }
};
} // namespace
