//===- BufferizeCollectives.cpp - mix.all_reduce in bufferization ---------===//
//
// `mix.all_reduce` is one of the mix ops left after the lowering to linalg
// (with the fused ops, BufferizeFusedOps.cpp): a sum over the ranks that the runtime performs in place. It bufferizes to a
// fresh buffer holding a copy of its input, then a call of the support
// code's `mix_comm_all_reduce` on that buffer, so the input's own buffer is
// never written and bufferization needs no analysis of the call.
//
//===----------------------------------------------------------------------===//

#include "AllocatingBufferization.h"

#include "mix/Codegen/Codegen.h"

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mixrt/PackageABI.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::mix;

namespace {
struct AllReduceBufferization
    : AllocatingBufferization<AllReduceBufferization, AllReduceOp> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto reduce = cast<AllReduceOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> input =
        getBuffer(rewriter, reduce.getInput(), options, state);
    if (failed(input))
      return failure();
    auto type = cast<RankedTensorType>(reduce.getType());
    Value sum = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
    memref::CopyOp::create(rewriter, loc, *input, sum);
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc, sum);
    Value count =
        arith::ConstantIndexOp::create(rewriter, loc, type.getNumElements());
    func::CallOp::create(
        rewriter, loc, MIX_COMM_ALL_REDUCE_SYMBOL, TypeRange{},
        ValueRange{meta.getBaseBuffer(), meta.getOffset(), count});
    replaceOpWithBufferizedValues(rewriter, op, sum);
    return success();
  }
};
} // namespace

void mlir::mix::registerCollectiveBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, MixDialect *) {
    AllReduceOp::attachInterface<AllReduceBufferization>(*ctx);
  });
}
