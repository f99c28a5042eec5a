//===- HeadProducts.cpp - Attention products on the heads' layout ---------===//
//
// On tensors. The attention's batched products lower to linalg.batch_matmul
// over one batch dimension of B*h matrices, each operand a collapse of a
// `linalg.transpose` that moves the heads out of the (B, S, h, dh) layout
// the projections make, each result expanded and transposed back (and the
// probabilities' P^T made the same way). Every such transpose is a copy
// of a whole activation, four to eight a layer in the training step.
//
// A product with two batch dimensions reads and writes those layouts in
// place: the batch_matmul becomes a `linalg.contract` over (b0, b1, m, n, k)
// whose indexing maps absorb the transposes,
//
//   %t = linalg.transpose ins(%x : tensor<BxSxhxdh>) permutation = [0, 2, 1, 3]
//   %a = tensor.collapse_shape %t [[0, 1], [2], [3]]
//   %c = linalg.batch_matmul ins(%a, %b) outs(%zeros)
//   // becomes
//   %c = linalg.contract
//          indexing_maps = [(b0, b1, m, n, k) -> (b0, m, b1, k), ...]
//          ins(%x, ...) outs(%zeros4)
//
// and mix-matmuls-to-library-calls hands oneDNN the strided views. The
// transposes, no longer used, go.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXHEADPRODUCTSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// The loop dimensions of the contraction.
enum Dim : unsigned { B0, B1, M, N, K, kNumDims };

/// Whether \p groups is [[0, 1], [2], [3]]: the batch dimensions of a rank-4
/// tensor merged into one.
bool mergesBatch(ArrayRef<ReassociationIndices> groups) {
  return groups.size() == 3 && groups[0] == ReassociationIndices{0, 1} &&
         groups[1] == ReassociationIndices{2} &&
         groups[2] == ReassociationIndices{3};
}

/// An operand of the new contraction: a rank-4 tensor and, for each of its
/// dimensions, the loop dimension that indexes it.
struct Operand {
  Value value;
  SmallVector<unsigned, 4> dims;
  Operation *folded = nullptr; // the transpose read through, if any
};

class HeadProduct {
public:
  explicit HeadProduct(linalg::BatchMatmulOp op) : op(op) {}

  /// Rewrites the product if a transpose folds into it.
  bool run();

private:
  /// The (b0, b1) split of the batch that a rank-4 operand or the result
  /// shows; false if two disagree or none does.
  bool findBatchSplit();
  /// \p v, a rank-3 operand with loop dimensions \p canonical, as rank 4.
  Operand expandInput(OpBuilder &b, Value v, ArrayRef<unsigned> canonical);

  linalg::BatchMatmulOp op;
  int64_t b0 = 0, b1 = 0;
};
} // namespace

bool HeadProduct::findBatchSplit() {
  auto consider = [&](ArrayRef<int64_t> shape) {
    if (b0 == 0) {
      b0 = shape[0];
      b1 = shape[1];
      return true;
    }
    return b0 == shape[0] && b1 == shape[1];
  };
  for (Value v : op.getDpsInputs())
    if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>())
      if (mergesBatch(c.getReassociationIndices()) &&
          !consider(c.getSrcType().getShape()))
        return false;
  Value result = op.getResult(0);
  if (result.hasOneUse())
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(*result.user_begin()))
      if (mergesBatch(e.getReassociationIndices()) &&
          !consider(e.getResultType().getShape()))
        return false;
  return b0 > 0 && b1 > 0;
}

Operand HeadProduct::expandInput(OpBuilder &b, Value v,
                                 ArrayRef<unsigned> canonical) {
  Operand operand;
  operand.dims.assign(canonical.begin(), canonical.end());
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse && mergesBatch(collapse.getReassociationIndices()) &&
      collapse.getSrcType().getDimSize(0) == b0) {
    Value src = collapse.getSrc();
    auto transpose = src.getDefiningOp<linalg::TransposeOp>();
    if (transpose && transpose.hasPureTensorSemantics()) {
      // Result dimension i of the transpose is its input's dimension
      // perm[i]: the input's dimension perm[i] is indexed by canonical[i].
      ArrayRef<int64_t> perm = transpose.getPermutation();
      for (unsigned i = 0; i < 4; ++i)
        operand.dims[perm[i]] = canonical[i];
      operand.value = transpose.getInput();
      operand.folded = transpose;
      return operand;
    }
    operand.value = src;
    return operand;
  }
  auto type = cast<RankedTensorType>(v.getType());
  operand.value = tensor::ExpandShapeOp::create(
      b, op.getLoc(),
      type.clone({b0, b1, type.getDimSize(1), type.getDimSize(2)}), v,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  return operand;
}

bool HeadProduct::run() {
  if (!op.hasPureTensorSemantics() || !findBatchSplit())
    return false;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Operand lhs = expandInput(b, op.getDpsInputs()[0], {B0, B1, M, K});
  Operand rhs = expandInput(b, op.getDpsInputs()[1], {B0, B1, K, N});

  // The result: written straight into the layout a transpose of it makes,
  // when the product overwrites a fill (which then fills that layout).
  Value result = op.getResult(0);
  Value init = op.getDpsInits()[0];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  tensor::ExpandShapeOp expand;
  linalg::TransposeOp transpose;
  if (result.hasOneUse())
    expand = dyn_cast<tensor::ExpandShapeOp>(*result.user_begin());
  if (expand && (!mergesBatch(expand.getReassociationIndices()) ||
                 expand.getResultType().getDimSize(0) != b0))
    expand = {};
  if (expand && fill && expand.getResult().hasOneUse())
    transpose = dyn_cast<linalg::TransposeOp>(*expand->user_begin());
  if (transpose && !transpose.hasPureTensorSemantics())
    transpose = {};
  if (!lhs.folded && !rhs.folded && !transpose) {
    // Nothing to gain: undo the expansions.
    for (Operand *o : {&lhs, &rhs})
      if (o->value.use_empty())
        o->value.getDefiningOp()->erase();
    return false;
  }

  // The contraction replaces the transpose where there is one: its init,
  // and the expanded inputs made at the product, are defined there.
  Operation *anchor = transpose ? transpose.getOperation() : op.getOperation();
  b.setInsertionPoint(anchor);
  const unsigned canonical[] = {B0, B1, M, N};
  SmallVector<unsigned, 4> resultDims(std::begin(canonical),
                                      std::end(canonical));
  Value newInit;
  if (transpose) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    for (unsigned i = 0; i < 4; ++i)
      resultDims[i] = canonical[perm[i]];
    newInit = linalg::FillOp::create(b, loc, fill.getInputs()[0],
                                     transpose.getInit())
                  .getResult(0);
  } else {
    // A fill is made again on the expanded destination, so that the
    // library call still sees the fill of the buffer it writes.
    auto type = cast<RankedTensorType>(init.getType());
    newInit = tensor::ExpandShapeOp::create(
        b, loc, type.clone({b0, b1, type.getDimSize(1), type.getDimSize(2)}),
        fill ? fill.getOutputs()[0] : init,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    if (fill)
      newInit = linalg::FillOp::create(b, loc, fill.getInputs()[0], newInit)
                    .getResult(0);
  }
  MLIRContext *ctx = op.getContext();
  auto map = [&](ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(d, ctx));
    return AffineMap::get(kNumDims, 0, exprs, ctx);
  };
  ArrayAttr maps = b.getAffineMapArrayAttr(
      {map(lhs.dims), map(rhs.dims), map(resultDims)});
  auto contract = linalg::ContractOp::create(
      b, loc, TypeRange{newInit.getType()}, ValueRange{lhs.value, rhs.value},
      ValueRange{newInit}, maps);
  for (NamedAttribute attr : op->getDiscardableAttrs())
    contract->setAttr(attr.getName(), attr.getValue());

  if (transpose) {
    transpose.getResult()[0].replaceAllUsesWith(contract.getResult(0));
    transpose->erase();
    expand->erase();
  } else if (expand) {
    expand.getResult().replaceAllUsesWith(contract.getResult(0));
    expand->erase();
  } else {
    b.setInsertionPointAfter(contract);
    Value collapsed = tensor::CollapseShapeOp::create(
        b, loc, result.getType(), contract.getResult(0),
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    result.replaceAllUsesWith(collapsed);
  }
  op->erase();
  if (fill && fill->use_empty())
    fill->erase();
  return true;
}

void mlir::mix::foldHeadTransposesIntoProducts(FunctionOpInterface function) {
  SmallVector<linalg::BatchMatmulOp> products;
  function.walk([&](linalg::BatchMatmulOp op) { products.push_back(op); });
  bool changed = false;
  for (linalg::BatchMatmulOp op : products)
    changed |= HeadProduct(op).run();
  if (!changed)
    return;
  // A transposed operand is read by several products (Q by the scores and
  // by dK): only once all are rewritten do its transpose and collapse go.
  // Users follow their operands, so one sweep from the end suffices.
  SmallVector<Operation *> views;
  function.walk([&](Operation *op) {
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::EmptyOp,
            linalg::TransposeOp, linalg::FillOp>(op) &&
        op->getNumResults() == 1)
      views.push_back(op);
  });
  for (Operation *op : llvm::reverse(views))
    if (op->use_empty())
      op->erase();
}

namespace {
struct MixHeadProductsPass
    : mlir::mix::impl::MixHeadProductsPassBase<MixHeadProductsPass> {
  void runOnOperation() override {
    foldHeadTransposesIntoProducts(getOperation());
  }
};
} // namespace
