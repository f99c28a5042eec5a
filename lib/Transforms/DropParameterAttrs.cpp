//===- DropParameterAttrs.cpp - Arguments by position only ----------------===//
//
// The parameters' names and shard counts live in the package's manifest;
// once the training graph is built, the code needs only positions.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXDROPPARAMETERATTRSPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
struct MixDropParameterAttrsPass
    : mlir::mix::impl::MixDropParameterAttrsPassBase<
          MixDropParameterAttrsPass> {
  void runOnOperation() override {
    FunctionOpInterface fn = getOperation();
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      fn.removeArgAttr(i, kParamNameAttr);
      fn.removeArgAttr(i, kStreamShardsAttr);
    }
  }
};
} // namespace
