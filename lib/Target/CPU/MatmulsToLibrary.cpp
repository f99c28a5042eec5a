//===- MatmulsToLibrary.cpp - Matrix products as oneDNN matmul calls ------===//
//
// After bufferization, linalg.matmul and linalg.batch_matmul on f32 memrefs
// become calls of small functions in the package's support code, which run
// a oneDNN matmul primitive made once per call site (falling back to sgemm
// or loops for layouts oneDNN cannot take).
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMATMULSTOLIBRARYCALLSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

/// The C signature of the support functions: the call site's number, then
/// for each of A, B and C, the
/// base pointer (a rank-0 memref, one pointer under the bare-pointer calling
/// convention), the offset, the sizes and the strides.
static func::FuncOp declare(ModuleOp module, StringRef name, int64_t rank) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type base = MemRefType::get({}, b.getF32Type());
  SmallVector<Type> operand{base};
  operand.append(1 + 2 * rank, b.getIndexType());
  SmallVector<Type> inputs{b.getI64Type()};
  for (int i = 0; i < 3; ++i)
    inputs.append(operand);
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

template <typename OpTy>
static void replace(ModuleOp module, OpTy op, StringRef callee, int64_t rank,
                    int64_t &site) {
  if (!op.hasPureBufferSemantics())
    return;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getElementType().isF32() || type.getRank() != rank)
      return;
  }
  func::FuncOp fn = declare(module, callee, rank);
  OpBuilder b(op);
  SmallVector<Value> args{arith::ConstantIntOp::create(b, op.getLoc(), site++,
                                                       /*width=*/64)};
  for (Value v : op->getOperands()) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, op.getLoc(), v);
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
    llvm::append_range(args, meta.getSizes());
    llvm::append_range(args, meta.getStrides());
  }
  func::CallOp::create(b, op.getLoc(), fn, args);
  op.erase();
}

void mlir::mix::convertMatmulsToLibraryCalls(ModuleOp module,
                                             StringRef prefix) {
  SmallVector<linalg::MatmulOp> matmuls;
  SmallVector<linalg::BatchMatmulOp> batched;
  module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  module.walk([&](linalg::BatchMatmulOp op) { batched.push_back(op); });
  int64_t site = 0;
  for (linalg::MatmulOp op : matmuls)
    replace(module, op, (prefix + "matmul").str(), 2, site);
  for (linalg::BatchMatmulOp op : batched)
    replace(module, op, (prefix + "batch_matmul").str(), 3, site);
}

namespace {
struct MixMatmulsToLibraryCallsPass
    : mlir::mix::impl::MixMatmulsToLibraryCallsPassBase<
          MixMatmulsToLibraryCallsPass> {
  void runOnOperation() override {
    convertMatmulsToLibraryCalls(getOperation());
  }
};
} // namespace
