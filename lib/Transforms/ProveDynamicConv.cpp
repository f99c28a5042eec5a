//===- ProveDynamicConv.cpp - Prove mixtures equal dynamic convolutions ---===//
//
// Decides Theorem 4.1 for every mix.mixture, records the verdict on the op,
// and reports it as a remark.
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/ExpertAnalysis.h"
#include "mix/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXPROVEDYNAMICCONVPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct ProveDynamicConvPass
    : mix::impl::MixProveDynamicConvPassBase<ProveDynamicConvPass> {
  void runOnOperation() override {
    getOperation()->walk([](MixtureOp op) {
      ExpertVerdict verdict = analyzeMixture(op);
      recordVerdict(op, verdict);
      if (verdict.proved) {
        op.emitRemark() << "proved: the mixture equals a dynamic convolution "
                           "(Theorem 4.1), because "
                        << llvm::join(verdict.facts, "; ");
        return;
      }
      InFlightDiagnostic diag = op.emitRemark()
                                << "refused: " << verdict.reason;
      if (!verdict.counterexample.empty())
        diag << "; counterexample: " << verdict.counterexample;
      else if (!verdict.searchNote.empty())
        diag << "; " << verdict.searchNote;
      if (verdict.culprit && verdict.culprit != op.getOperation())
        diag.attachNote(verdict.culprit->getLoc()) << "the failing op";
    });
  }
};
} // namespace
