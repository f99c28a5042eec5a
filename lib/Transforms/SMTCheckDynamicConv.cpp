//===- SMTCheckDynamicConv.cpp - Check Theorem 4.1 with Z3 ----------------===//
//
// For every stacked mixture, asks Z3 whether it equals the dynamic
// convolution with the same kernels, independently of the prove pass.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/Passes.h"
#include "mix/Verification/SMTCheck.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXSMTCHECKDYNAMICCONVPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct SMTCheckDynamicConvPass
    : mix::impl::MixSMTCheckDynamicConvPassBase<SMTCheckDynamicConvPass> {
  void runOnOperation() override {
    getOperation()->walk([](MixtureOp op) {
      if (op.hasExpertRegion()) {
        op.emitRemark("smt: skipped, the experts are a region (the rewrite "
                      "pass checks the kernels it extracts)");
        return;
      }
      // The candidate lives only as long as the check.
      OpBuilder builder(op);
      auto conv = DynamicConvOp::create(
          builder, op.getLoc(), op.getResult().getType(), op.getInput(),
          op.getGate(), op.getKernels(), op.getBias(), op.getSharedBias(),
          /*order=*/nullptr);
      SMTCheckResult check = checkEquivalence(op.getResult(), conv.getResult());
      conv.erase();
      switch (check.status) {
      case SMTCheckResult::Status::Equivalent:
        op.emitRemark() << "smt: equivalent to its dynamic convolution ("
                        << check.message << ")";
        break;
      case SMTCheckResult::Status::Counterexample:
        op.emitRemark() << "smt: counterexample " << check.message;
        break;
      case SMTCheckResult::Status::Unknown:
        op.emitRemark() << "smt: unknown: " << check.message;
        break;
      }
    });
  }
};
} // namespace
