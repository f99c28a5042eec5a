//===- GradientReadyPoints.cpp - Where each gradient is final -------------===//
//
// A data-parallel step averages grad's outputs over the ranks. Waiting for
// the whole backward pass before the first all-reduce leaves the links
// idle while the device computes, then the device idle while the links
// carry every gradient. As DDP does, the average goes bucket by bucket
// while the backward pass runs instead; what it needs from the compiler is
// where each output is final: after the last operation that touches it,
// the host code tells the support code (mix_gradient_ready), which queues
// the all-reduce of a full bucket on a stream of its own.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Declarations.h"
#include "mix/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mixrt/PackageABI.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXGRADIENTREADYPOINTSPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

/// The declaration of the support code's mix_gradient_ready, made if the
/// module has none; null (with a diagnostic) if the symbol is something
/// else.
static func::FuncOp getReadyFunction(ModuleOp module, MLIRContext *ctx) {
  auto type =
      FunctionType::get(ctx, {MemRefType::get({}, Float32Type::get(ctx))}, {});
  return lookupOrDeclareFunction(module, MIX_GRADIENT_READY_SYMBOL, type,
                                 DeclarationPlace::End);
}

namespace {
struct MixGradientReadyPointsPass
    : mlir::mix::impl::MixGradientReadyPointsPassBase<
          MixGradientReadyPointsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(entry);
    if (!fn || fn.isDeclaration())
      return;
    auto outputs = fn->getAttrOfType<IntegerAttr>(kEntryOutputsAttr);
    if (!outputs)
      return;
    unsigned numArgs = fn.getNumArguments();
    if (outputs.getInt() < 0 || outputs.getInt() > numArgs) {
      fn.emitError() << kEntryOutputsAttr << " = " << outputs.getInt()
                     << " on a function of " << numArgs << " arguments";
      return signalPassFailure();
    }
    if (!fn.getBody().hasOneBlock()) {
      fn.emitError("the entry point has more than one block; its outputs' "
                   "last uses are not ordered");
      return signalPassFailure();
    }
    func::FuncOp ready = getReadyFunction(module, &getContext());
    if (!ready)
      return signalPassFailure();

    Block &body = fn.getBody().front();
    for (unsigned i = numArgs - outputs.getInt(); i < numArgs; ++i) {
      BlockArgument output = fn.getArgument(i);
      auto type = dyn_cast<MemRefType>(output.getType());
      if (!type || !type.getElementType().isF32())
        continue;
      // The last operation (outside the terminator) that may touch the
      // output; before the first operation if there is none.
      Operation *last = nullptr;
      for (Operation &op : body.without_terminator())
        if (!leavesBufferAlone(&op, output))
          last = &op;
      OpBuilder b(&getContext());
      if (last)
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(&body);
      Location loc = last ? last->getLoc() : fn.getLoc();
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, output);
      func::CallOp::create(b, loc, ready, ValueRange{meta.getBaseBuffer()});
    }
  }
};
} // namespace
