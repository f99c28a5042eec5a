//===- UpdateArgumentsInPlace.cpp - Results written over their arguments --===//
//
// AdamW's new parameters and moments replace the old ones. Returned as
// results, each is a buffer of its own that the caller swaps in, so the
// training loop held seven parameter-sized copies of the model (params,
// grads, m, v, and params', m', v') where an optimizer that updates in
// place holds four. A result marked `mix.updates = i` is instead
// materialized in argument i's buffer and no longer returned.
//
// Correctness is bufferization's: `bufferization.materialize_in_destination`
// into a tensor argument either bufferizes in place (after empty-tensor
// elimination the computation writes the argument's buffer directly, which
// one-shot analysis allows only where no later read needs the old value)
// or copies into it, and fails to bufferize when the argument's old value
// is read after it would be overwritten. The other arguments of such a
// function are marked read-only, so that nothing else writes over the
// caller's data.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXUPDATEARGUMENTSINPLACEPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// Rewrites \p fn's results marked mix.updates; fails (with a diagnostic)
/// on a mark that does not name a tensor argument of the result's type,
/// or names one twice.
static LogicalResult updateInPlace(func::FuncOp fn) {
  SmallVector<std::pair<unsigned, unsigned>> updates; // (result, argument)
  llvm::SmallDenseSet<unsigned> updated;
  for (unsigned r = 0, e = fn.getNumResults(); r < e; ++r) {
    Attribute attr = fn.getResultAttr(r, kUpdatesAttr);
    if (!attr)
      continue;
    auto index = dyn_cast<IntegerAttr>(attr);
    if (!index || index.getInt() < 0 ||
        index.getInt() >= int64_t(fn.getNumArguments()))
      return fn.emitError()
             << "result #" << r << ": " << kUpdatesAttr
             << " must be the index of an argument, got " << attr;
    auto arg = unsigned(index.getInt());
    if (!isa<RankedTensorType>(fn.getArgumentTypes()[arg]) ||
        fn.getArgumentTypes()[arg] != fn.getResultTypes()[r])
      return fn.emitError() << "result #" << r << " updates argument #" << arg
                            << ", which is not a tensor of the result's type";
    if (!updated.insert(arg).second)
      return fn.emitError()
             << "argument #" << arg << " is updated by two results";
    updates.emplace_back(r, arg);
  }
  if (updates.empty())
    return success();
  if (fn.isDeclaration() || !fn.getBody().hasOneBlock())
    return fn.emitError() << "results marked " << kUpdatesAttr
                          << " need a body of one block";

  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  OpBuilder b(ret);
  for (auto [r, arg] : updates)
    bufferization::MaterializeInDestinationOp::create(
        b, ret.getLoc(), ret.getOperand(r), fn.getArgument(arg));

  StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
  for (unsigned a = 0, e = fn.getNumArguments(); a < e; ++a)
    if (isa<TensorType>(fn.getArgumentTypes()[a]))
      fn.setArgAttr(a, writable, b.getBoolAttr(updated.contains(a)));

  BitVector dropped(fn.getNumResults());
  for (auto [r, arg] : updates)
    dropped.set(r);
  ret->eraseOperands(dropped);
  return fn.eraseResults(dropped);
}

LogicalResult mlir::mix::updateArgumentsInPlace(FunctionOpInterface function) {
  auto fn = dyn_cast<func::FuncOp>(function.getOperation());
  if (!fn)
    return success();
  return updateInPlace(fn);
}

namespace {
struct MixUpdateArgumentsInPlacePass
    : mlir::mix::impl::MixUpdateArgumentsInPlacePassBase<
          MixUpdateArgumentsInPlacePass> {
  void runOnOperation() override {
    if (failed(updateArgumentsInPlace(getOperation())))
      signalPassFailure();
  }
};
} // namespace
