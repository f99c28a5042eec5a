//===- MatmulsToLibrary.cpp - Matrix products as oneDNN sgemm calls -------===//
//
// After bufferization, linalg.matmul and linalg.batch_matmul on f32 memrefs
// become calls of small functions in the package's support code, which call
// oneDNN's sgemm (with the transposes a strided view allows) and fall back
// to loops for layouts sgemm cannot take.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mix;

/// `memref<?x...xf32, strided<[?, ...], offset: ?>>` of rank `rank`.
static MemRefType dynamicStrided(MLIRContext *ctx, int64_t rank) {
  SmallVector<int64_t> shape(rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides);
  return MemRefType::get(shape, Float32Type::get(ctx), layout);
}

static func::FuncOp declare(ModuleOp module, StringRef name, int64_t rank) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type t = dynamicStrided(module.getContext(), rank);
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType({t, t, t}, {}));
  f.setPrivate();
  return f;
}

template <typename OpTy>
static void replace(ModuleOp module, OpTy op, StringRef callee, int64_t rank) {
  if (!op.hasPureBufferSemantics())
    return;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getElementType().isF32() || type.getRank() != rank)
      return;
  }
  func::FuncOp fn = declare(module, callee, rank);
  OpBuilder b(op);
  Type t = dynamicStrided(module.getContext(), rank);
  SmallVector<Value> args;
  for (Value v : op->getOperands())
    args.push_back(memref::CastOp::create(b, op.getLoc(), t, v));
  func::CallOp::create(b, op.getLoc(), fn, args);
  op.erase();
}

void mlir::mix::convertMatmulsToLibraryCalls(ModuleOp module) {
  SmallVector<linalg::MatmulOp> matmuls;
  SmallVector<linalg::BatchMatmulOp> batched;
  module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  module.walk([&](linalg::BatchMatmulOp op) { batched.push_back(op); });
  for (linalg::MatmulOp op : matmuls)
    replace(module, op, "mixrt_matmul", 2);
  for (linalg::BatchMatmulOp op : batched)
    replace(module, op, "mixrt_batch_matmul", 3);
}
