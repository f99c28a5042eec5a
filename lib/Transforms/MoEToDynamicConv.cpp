//===- MoEToDynamicConv.cpp - Apply Theorem 4.1 where it was proved -------===//
//
// Rewrites exactly the mixtures whose mix.proof says `proved` into dynamic
// convolutions, after an independent Z3 check of each rewrite. A rewrite
// Z3 does not confirm is not made: the mixture stays, with a remark.
//
//===----------------------------------------------------------------------===//

#include "ExtractKernels.h"

#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"
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
/// Stacked experts of a region whose expert is a single
/// `mix.linear %x, %w_k[, %b]`: the kernels are the stacked weight; the bias
/// is the stacked per-expert bias, or a shared one defined above. Null for
/// any other region.
std::optional<ExtractedExperts> stackedFromRegion(MixtureOp op) {
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
      !weightOf(lin.getWeight()))
    return std::nullopt;
  ExtractedExperts s{weightOf(lin.getWeight()), {}, {}};
  if (Value b = lin.getBias()) {
    if (Value stacked = weightOf(b))
      s.bias = stacked;
    else if (b.getParentBlock() != &block)
      s.sharedBias = b;
    else
      return std::nullopt;
  }
  return s;
}

/// Records the ops a builder creates, so that a rewrite that is not made
/// leaves nothing behind.
struct CreatedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  void eraseAll() {
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    ops.clear();
  }
  SmallVector<Operation *> ops;
};

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
      rewrite(op);
  }

  void rewrite(MixtureOp op) {
    CreatedOps created;
    OpBuilder builder(op);
    builder.setListener(&created);
    ExtractedExperts experts{op.getKernels(), op.getBias(), op.getSharedBias()};
    if (op.hasExpertRegion()) {
      std::optional<ExtractedExperts> stacked = stackedFromRegion(op);
      if (stacked) {
        experts = *stacked;
      } else {
        std::string why;
        FailureOr<ExtractedExperts> extracted =
            extractKernels(builder, op, why);
        if (failed(extracted)) {
          created.eraseAll();
          op.emitRemark() << "proved, but not rewritten: the kernels could "
                             "not be extracted: "
                          << why;
          return;
        }
        experts = *extracted;
      }
    }
    // A bias shared by all experts passes through a gate whose rows sum to
    // one unchanged; behind any other gate it comes out as (sum_k g_k) c,
    // which is the convolution's mixed bias with c for every expert.
    if (experts.sharedBias && !gateRowsSumToOne(op.getGate())) {
      PrimitiveBuilder pb(builder, op.getLoc());
      int64_t n = PrimitiveBuilder::shape(op.getGate()).back();
      int64_t f = PrimitiveBuilder::shape(experts.sharedBias).back();
      Value c = pb.broadcastTo(pb.reshape(experts.sharedBias, {1, f}), {n, f});
      experts.bias = experts.bias ? pb.add(experts.bias, c) : c;
      experts.sharedBias = Value();
    }
    auto conv = DynamicConvOp::create(
        builder, op.getLoc(), op.getResult().getType(), op.getInput(),
        op.getGate(), experts.kernels, experts.bias, experts.sharedBias,
        /*order=*/nullptr);
    if (smtCheck) {
      SMTCheckResult check = checkEquivalence(op.getResult(), conv.getResult());
      if (check.status != SMTCheckResult::Status::Equivalent) {
        created.eraseAll();
        if (check.status == SMTCheckResult::Status::Counterexample)
          op.emitRemark() << "proved, but not rewritten: Z3 refutes the "
                             "rewrite to a dynamic convolution ("
                          << check.message << "); the mixture is left alone";
        else
          op.emitRemark() << "proved, but not rewritten: Z3 could not "
                             "confirm the rewrite to a dynamic convolution ("
                          << check.message << "); the mixture is left alone";
        return;
      }
    }
    op.getResult().replaceAllUsesWith(conv.getResult());
    op.erase();
  }
};
} // namespace
