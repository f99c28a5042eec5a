//===- BF16Matmuls.cpp - Matrix products on bfloat16 operands -------------===//
//
// The mixed-precision step (mixc --precision bf16): every f32 linalg.matmul
// and linalg.batch_matmul on tensors takes its operands rounded to bfloat16
// (round to nearest even) and still accumulates into its f32 init, which is
// what linalg's semantics of a bf16 x bf16 -> f32 product say: each operand
// element is extended back to f32, multiplied and summed in f32. Parameters,
// their gradients and the optimizer state stay f32 (the master weights), as
// do the normalizations, softmax, loss and every other op.
//
// An operand reached through transposes and reshapes is rounded before
// them, so that those move half the bytes and every use of a value (a
// weight in the forward and the backward product) shares one rounding.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXBF16MATMULSPASS
#include "mix/Target/CPU/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Rounds f32 tensors to bf16, once per value.
class Rounder {
public:
  /// \p v, of f32 elements, as bf16: the ops that make \p v from its root
  /// (transposes, collapses and expansions of one tensor) are replayed on
  /// the root rounded to bf16.
  Value round(Value v) {
    if (Value done = rounded.lookup(v))
      return done;
    Operation *def = v.getDefiningOp();
    Value result;
    if (auto t = dyn_cast_or_null<linalg::TransposeOp>(def)) {
      Value input = round(t.getInput());
      OpBuilder b(t);
      auto type = cast<RankedTensorType>(t.getResult()[0].getType());
      Value init = tensor::EmptyOp::create(b, t.getLoc(), type.getShape(),
                                           b.getBF16Type());
      result = linalg::TransposeOp::create(b, t.getLoc(), input, init,
                                           t.getPermutation())
                   .getResult()[0];
    } else if (auto c = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
      Value src = round(c.getSrc());
      OpBuilder b(c);
      result = tensor::CollapseShapeOp::create(b, c.getLoc(),
                                               withBF16(c.getResultType()), src,
                                               c.getReassociationIndices());
    } else if (auto e = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
      Value src = round(e.getSrc());
      OpBuilder b(e);
      result = tensor::ExpandShapeOp::create(b, e.getLoc(),
                                             withBF16(e.getResultType()), src,
                                             e.getReassociationIndices());
    } else {
      result = truncate(v);
    }
    rounded[v] = result;
    return result;
  }

private:
  static RankedTensorType withBF16(RankedTensorType type) {
    return type.clone(BFloat16Type::get(type.getContext()));
  }

  /// An elementwise `arith.truncf` of \p v, right after its definition.
  static Value truncate(Value v) {
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    Location loc = v.getLoc();
    auto type = cast<RankedTensorType>(v.getType());
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), b.getBF16Type());
    SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{withBF16(type)}, ValueRange{v},
               ValueRange{init}, maps, iterators,
               [](OpBuilder &nb, Location nl, ValueRange args) {
                 Value t =
                     arith::TruncFOp::create(nb, nl, nb.getBF16Type(), args[0]);
                 linalg::YieldOp::create(nb, nl, t);
               })
        .getResult(0);
  }

  DenseMap<Value, Value> rounded;
};

/// Whether \p op is a product of f32 tensors into an f32 tensor.
bool isF32Product(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return false;
  return llvm::all_of(op->getOperands(), [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getElementType().isF32();
  });
}
} // namespace

void mlir::mix::roundMatmulOperandsToBF16(FunctionOpInterface function) {
  SmallVector<linalg::LinalgOp> products;
  function.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) &&
        isF32Product(op))
      products.push_back(op);
  });
  Rounder rounder;
  for (linalg::LinalgOp op : products) {
    SmallVector<Value> inputs;
    for (OpOperand *input : op.getDpsInputOperands())
      inputs.push_back(rounder.round(input->get()));
    // A new op: a named op's body is typed by its operands' elements.
    OpBuilder b(op);
    ValueRange inits = op.getDpsInits();
    Operation *product;
    if (isa<linalg::MatmulOp>(op.getOperation()))
      product = linalg::MatmulOp::create(b, op.getLoc(), inputs, inits);
    else
      product = linalg::BatchMatmulOp::create(b, op.getLoc(), inputs, inits);
    op->replaceAllUsesWith(product->getResults());
    op->erase();
  }
}

namespace {
struct MixBF16MatmulsPass
    : mlir::mix::impl::MixBF16MatmulsPassBase<MixBF16MatmulsPass> {
  void runOnOperation() override { roundMatmulOperandsToBF16(getOperation()); }
};
} // namespace
