//===- RecordEntryOutputs.cpp - Which arguments will be the results -------===//
//
// buffer-results-to-out-params appends one argument per result and leaves
// no trace of which arguments those are; the mark this pass sets before
// bufferization says how many (the last) are.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXRECORDENTRYOUTPUTSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

namespace {
struct MixRecordEntryOutputsPass
    : mlir::mix::impl::MixRecordEntryOutputsPassBase<
          MixRecordEntryOutputsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isDeclaration() || fn.getNumResults() == 0)
      return;
    fn->setAttr(kEntryOutputsAttr,
                IntegerAttr::get(IntegerType::get(fn.getContext(), 64),
                                 fn.getNumResults()));
  }
};
} // namespace
