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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMATMULSTOLIBRARYCALLSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

/// The C signature of the support functions: the call site's number, then
/// for each of A, B and C, the
/// base pointer (a rank-0 memref, one pointer under the bare-pointer calling
/// convention), the offset, the sizes and the strides. A and B hold
/// \p inputType (f32 or bf16), C f32.
static func::FuncOp declare(ModuleOp module, StringRef name, int64_t rank,
                            Type inputType) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<Type> inputs{b.getI64Type()};
  for (Type element : {inputType, inputType, Type(b.getF32Type())}) {
    inputs.push_back(MemRefType::get({}, element));
    inputs.append(1 + 2 * rank, b.getIndexType());
  }
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

/// The zero `linalg.fill` of \p op's accumulator that the product is the
/// next access of (only views and operations without memory effects in
/// between); null if there is none.
static linalg::FillOp findZeroFill(linalg::LinalgOp op) {
  Value init = op.getDpsInits()[0];
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs()[0] != init)
        return nullptr;
      auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : nullptr;
      return value && value.getValue().isZero() ? fill : nullptr;
    }
    if (isa<ViewLikeOpInterface>(prev) || isMemoryEffectFree(prev))
      continue;
    return nullptr;
  }
  return nullptr;
}

template <typename OpTy>
static void replace(ModuleOp module, OpTy op, StringRef callee, int64_t rank,
                    int64_t &site, bool overwriteZeros) {
  if (!op.hasPureBufferSemantics())
    return;
  SmallVector<MemRefType> types;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getRank() != rank)
      return;
    types.push_back(type);
  }
  // f32 x f32 -> f32, or bf16 x bf16 -> f32 (mix-bf16-matmuls).
  Type input = types[0].getElementType();
  if (!types[2].getElementType().isF32() ||
      types[1].getElementType() != input || !(input.isF32() || input.isBF16()))
    return;
  // A product into a zero-filled accumulator writes C = A B instead: no
  // pass to fill it, and no read of the zeros.
  linalg::FillOp fill = overwriteZeros ? findZeroFill(op) : nullptr;
  std::string name =
      callee.str() + (fill ? "_set" : "") + (input.isBF16() ? "_bf16" : "");
  func::FuncOp fn = declare(module, name, rank, input);
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
  if (fill)
    fill.erase();
}

void mlir::mix::convertMatmulsToLibraryCalls(ModuleOp module, StringRef prefix,
                                             bool overwriteZeros) {
  SmallVector<linalg::MatmulOp> matmuls;
  SmallVector<linalg::BatchMatmulOp> batched;
  module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  module.walk([&](linalg::BatchMatmulOp op) { batched.push_back(op); });
  int64_t site = 0;
  for (linalg::MatmulOp op : matmuls)
    replace(module, op, (prefix + "matmul").str(), 2, site, overwriteZeros);
  for (linalg::BatchMatmulOp op : batched)
    replace(module, op, (prefix + "batch_matmul").str(), 3, site,
            overwriteZeros);
}

namespace {
struct MixMatmulsToLibraryCallsPass
    : mlir::mix::impl::MixMatmulsToLibraryCallsPassBase<
          MixMatmulsToLibraryCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    convertMatmulsToLibraryCalls(getOperation(), "mixrt_", overwriteZeros);
  }
};
} // namespace
