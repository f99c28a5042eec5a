//===- MatmulsToLibrary.cpp - Matrix products as oneDNN matmul calls ------===//
//
// After bufferization, linalg.matmul, linalg.batch_matmul and the
// linalg.contract products with two batch dimensions (mix-head-products) on
// f32 or bf16 memrefs become calls of small functions in the package's
// support code, which run a oneDNN matmul primitive made once per call site
// (falling back to sgemm or loops for layouts oneDNN cannot take).
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mix/Dialect/Mix/IR/MixDialect.h"

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
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The C signature of the support functions: the call site's number, then
/// for each of A, B and C, the
/// base pointer (a rank-0 memref, one pointer under the bare-pointer calling
/// convention), the offset, the sizes and the strides. A and B hold
/// \p inputType (f32 or bf16), C f32. With \p bias, an f32 vector follows
/// as base pointer, offset, length and stride; with \p triangle, the
/// `mix.triangle` kind and diagonal.
static func::FuncOp declare(ModuleOp module, StringRef name, int64_t rank,
                            Type inputType, bool bias, bool triangle) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  SmallVector<Type> inputs{b.getI64Type()};
  for (Type element : {inputType, inputType, Type(b.getF32Type())}) {
    inputs.push_back(MemRefType::get({}, element));
    inputs.append(1 + 2 * rank, b.getIndexType());
  }
  if (bias) {
    inputs.push_back(MemRefType::get({}, b.getF32Type()));
    inputs.append(3, b.getIndexType());
  }
  if (triangle)
    inputs.append(2, b.getI64Type());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

/// The operation that last wrote \p op's accumulator, if it is the
/// product's previous access of it (a gradient's fill may come several
/// kernels before its product) and writes nothing but the accumulator.
static Operation *findInitializer(linalg::LinalgOp op) {
  return findPreviousWriter(op, op.getDpsInits()[0]);
}

/// \p op's accumulator's zero `linalg.fill`, if it is the product's
/// previous access of it; null otherwise.
static linalg::FillOp findZeroFill(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(findInitializer(op));
  if (!fill)
    return nullptr;
  auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : nullptr;
  return value && value.getValue().isZero() ? fill : nullptr;
}

/// The row vector a 2-d product's accumulator was filled with, if it is
/// the product's previous access of it: a `linalg.generic` that copies an
/// f32 vector (1-d, or 1 x n) into every row of the accumulator, what the
/// bias of a linear layer lowers to. Null otherwise.
static linalg::GenericOp findBiasBroadcast(linalg::LinalgOp op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(findInitializer(op));
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return nullptr;
  OpOperand *input = generic.getDpsInputOperand(0);
  auto type = dyn_cast<MemRefType>(input->get().getType());
  if (!type || !type.getElementType().isF32() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return nullptr;
  MLIRContext *ctx = op.getContext();
  AffineExpr column = getAffineDimExpr(1, ctx);
  AffineMap map = generic.getMatchingIndexingMap(input);
  bool rowVector =
      (type.getRank() == 1 && map == AffineMap::get(2, 0, {column}, ctx)) ||
      (type.getRank() == 2 && type.getDimSize(0) == 1 &&
       map ==
           AffineMap::get(2, 0, {getAffineConstantExpr(0, ctx), column}, ctx));
  return rowVector ? generic : nullptr;
}

/// The views of a `linalg.contract` over (b0, b1, m, n, k) on rank-4
/// memrefs, in the order A (b0, b1, m, k), B (b0, b1, k, n), C (b0, b1, m,
/// n), each a `memref.transpose` of its operand where that is permuted;
/// empty if \p op is not such a product.
static SmallVector<Value> getBatch2Views(linalg::ContractOp op) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3)
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0].getNumDims() != 5)
    return {};
  // Each loop dimension's role, from the operands that use it: batch
  // (A, B, C), m (A, C), n (B, C), k (A, B).
  SmallVector<unsigned> uses(5, 0);
  for (unsigned i = 0; i < 3; ++i) {
    if (!maps[i].isProjectedPermutation() || maps[i].getNumResults() != 4)
      return {};
    for (AffineExpr e : maps[i].getResults())
      uses[cast<AffineDimExpr>(e).getPosition()] |= 1u << i;
  }
  SmallVector<unsigned> batch;
  unsigned m = 5, n = 5, k = 5;
  for (unsigned d = 0; d < 5; ++d) {
    if (uses[d] == 0b111)
      batch.push_back(d);
    else if (uses[d] == 0b101)
      m = d;
    else if (uses[d] == 0b110)
      n = d;
    else if (uses[d] == 0b011)
      k = d;
  }
  if (batch.size() != 2 || m == 5 || n == 5 || k == 5)
    return {};
  const SmallVector<unsigned> order[3] = {{batch[0], batch[1], m, k},
                                          {batch[0], batch[1], k, n},
                                          {batch[0], batch[1], m, n}};
  OpBuilder b(op);
  SmallVector<Value> views;
  for (unsigned i = 0; i < 3; ++i) {
    // View dimension j is the operand's dimension that loop order[i][j]
    // indexes.
    SmallVector<unsigned> perm;
    for (unsigned d : order[i])
      perm.push_back(
          *maps[i].getResultPosition(getAffineDimExpr(d, b.getContext())));
    Value v = op->getOperand(i);
    if (!llvm::equal(perm, llvm::seq<unsigned>(0, 4)))
      v = memref::TransposeOp::create(
          b, op.getLoc(), v,
          AffineMapAttr::get(
              AffineMap::getPermutationMap(perm, b.getContext())));
    views.push_back(v);
  }
  return views;
}

/// Replaces the product \p op, on the views \p operands (A, B, C), by a
/// call of \p callee's form for its layout.
static bool replace(ModuleOp module, linalg::LinalgOp op, ValueRange operands,
                    StringRef callee, int64_t rank, int64_t &site,
                    bool overwriteZeros, bool fuseBias, bool triangular) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<MemRefType> types;
  for (Value v : operands) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getRank() != rank)
      return false;
    types.push_back(type);
  }
  // f32 x f32 -> f32, or bf16 x bf16 -> f32 (mix-bf16-matmuls).
  Type input = types[0].getElementType();
  if (!types[2].getElementType().isF32() ||
      types[1].getElementType() != input || !(input.isF32() || input.isBF16()))
    return false;
  // A product into a zero-filled accumulator writes C = A B instead: no
  // pass to fill it, and no read of the zeros.
  auto triangle = triangular
                      ? op->getAttrOfType<DenseI64ArrayAttr>(kTriangleAttr)
                      : DenseI64ArrayAttr();
  if (triangle && triangle.size() != 2)
    triangle = {};
  Operation *initializer = nullptr;
  StringRef form;
  if (overwriteZeros && (initializer = findZeroFill(op)))
    form = "_set";
  else if (fuseBias && !triangle && rank == 2 &&
           (initializer = findBiasBroadcast(op)))
    form = "_bias";
  std::string name = (callee + (triangle ? "_tri" : "") + form +
                      (input.isBF16() ? "_bf16" : ""))
                         .str();
  func::FuncOp fn =
      declare(module, name, rank, input, form == "_bias", bool(triangle));
  OpBuilder b(op);
  SmallVector<Value> args{arith::ConstantIntOp::create(b, op.getLoc(), site++,
                                                       /*width=*/64)};
  SmallVector<Value> views(operands);
  if (form == "_bias")
    views.push_back(initializer->getOperand(0));
  for (Value v : views) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, op.getLoc(), v);
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
    // The bias: its length and stride only.
    if (v == views.back() && form == "_bias") {
      args.push_back(meta.getSizes().back());
      args.push_back(meta.getStrides().back());
      continue;
    }
    llvm::append_range(args, meta.getSizes());
    llvm::append_range(args, meta.getStrides());
  }
  if (triangle)
    for (int64_t v : triangle.asArrayRef())
      args.push_back(arith::ConstantIntOp::create(b, op.getLoc(), v, 64));
  func::CallOp::create(b, op.getLoc(), fn, args);
  op.erase();
  if (initializer)
    initializer->erase();
  return true;
}

void mlir::mix::convertMatmulsToLibraryCalls(ModuleOp module, StringRef prefix,
                                             bool overwriteZeros, bool fuseBias,
                                             bool triangular) {
  SmallVector<linalg::MatmulOp> matmuls;
  SmallVector<linalg::BatchMatmulOp> batched;
  SmallVector<linalg::ContractOp> contracts;
  module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  module.walk([&](linalg::BatchMatmulOp op) { batched.push_back(op); });
  module.walk([&](linalg::ContractOp op) { contracts.push_back(op); });
  int64_t site = 0;
  for (linalg::MatmulOp op : matmuls)
    replace(module, op, op->getOperands(), (prefix + "matmul").str(), 2, site,
            overwriteZeros, fuseBias, triangular);
  for (linalg::BatchMatmulOp op : batched)
    replace(module, op, op->getOperands(), (prefix + "batch_matmul").str(), 3,
            site, overwriteZeros, fuseBias, triangular);
  // Two batch dimensions (mix-head-products).
  for (linalg::ContractOp op : contracts) {
    SmallVector<Value> views = getBatch2Views(op);
    if (views.empty())
      continue;
    if (replace(module, op, views, (prefix + "batch2_matmul").str(), 4, site,
                overwriteZeros, fuseBias, triangular))
      continue;
    // The views made for a product that stays are dead.
    for (Value v : views)
      if (v.use_empty() && v.getDefiningOp<memref::TransposeOp>())
        v.getDefiningOp()->erase();
  }
}

namespace {
struct MixMatmulsToLibraryCallsPass
    : mlir::mix::impl::MixMatmulsToLibraryCallsPassBase<
          MixMatmulsToLibraryCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    convertMatmulsToLibraryCalls(getOperation(), prefix, overwriteZeros,
                                 fuseBias, triangular);
  }
};
} // namespace
