//===- MixVJPs.cpp - The vector-Jacobian product of each primitive op -----===//
//
// DifferentiableOpInterface: given the adjoint `dy` of an op's result, each
// op hands the adjoint of each of its operands to `accumulate`. mix-autodiff
// walks a function backwards and asks each op for its rule; the lit test
// test/Transforms/mix-autodiff-*.mlir has a case a rule.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Dialect/Mix/IR/PrimitiveBuilder.h"

using namespace mlir;
using namespace mlir::mix;

using Accumulate = llvm::function_ref<void(Value, Value)>;

static ArrayRef<int64_t> shape(Value v) { return PrimitiveBuilder::shape(v); }

/// The adjoint \p d of a broadcasting elementwise op's result, summed back to
/// \p operand's shape, for \p operand.
static void toOperand(PrimitiveBuilder &b, Accumulate accumulate,
                      Value operand, Value d) {
  accumulate(operand, b.sumTo(d, shape(operand)));
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

void AddOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  toOperand(b, accumulate, getLhs(), dy);
  toOperand(b, accumulate, getRhs(), dy);
}

void SubOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  toOperand(b, accumulate, getLhs(), dy);
  toOperand(b, accumulate, getRhs(), b.neg(dy));
}

void MulOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  toOperand(b, accumulate, getLhs(), b.mul(dy, getRhs()));
  toOperand(b, accumulate, getRhs(), b.mul(dy, getLhs()));
}

void DivOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  // d(a/b) = da/b - db a/b^2 = da/b - db y/b.
  Value q = b.div(dy, getRhs());
  toOperand(b, accumulate, getLhs(), q);
  toOperand(b, accumulate, getRhs(), b.neg(b.mul(q, getResult())));
}

void MaxOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  // Ties go to the right-hand side.
  Value left = b.step(b.sub(getLhs(), getRhs()));
  toOperand(b, accumulate, getLhs(), b.mul(dy, left));
  toOperand(b, accumulate, getRhs(), b.sub(dy, b.mul(dy, left)));
}

void ExpOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getInput(), b.mul(dy, getResult()));
}

void LogOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getInput(), b.div(dy, getInput()));
}

void NegOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getInput(), b.neg(dy));
}

void RsqrtOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  // d(u^-1/2) = -1/2 u^-3/2 = -1/2 y^3.
  Value y = getResult();
  accumulate(getInput(), b.mul(b.scale(dy, -0.5), b.mul(b.mul(y, y), y)));
}

void SqrtOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getInput(), b.div(b.scale(dy, 0.5), getResult()));
}

void TanhOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  Value y = getResult();
  Value one = b.scalar(b.rank(y), 1.0);
  accumulate(getInput(), b.mul(dy, b.sub(one, b.mul(y, y))));
}

// No gradient flows through a step function, a stop_gradient or the causal
// mask (a constant of the shapes).
void StepOp::buildVJP(PrimitiveBuilder &, Value, Accumulate) {}
void StopGradientOp::buildVJP(PrimitiveBuilder &, Value, Accumulate) {}
void CausalMaskOp::buildVJP(PrimitiveBuilder &, Value, Accumulate) {}

//===----------------------------------------------------------------------===//
// Reductions, broadcasts and products
//===----------------------------------------------------------------------===//

void ReduceSumOp::buildVJP(PrimitiveBuilder &b, Value dy,
                           Accumulate accumulate) {
  accumulate(getInput(), b.broadcastTo(dy, shape(getInput())));
}

void BroadcastOp::buildVJP(PrimitiveBuilder &b, Value dy,
                           Accumulate accumulate) {
  toOperand(b, accumulate, getInput(), dy);
}

void MatmulOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  Value lhs = getLhs(), rhs = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  // C = A B with A = ta ? lhs^T : lhs and B = tb ? rhs^T : rhs.
  // dA = dC B^T and dB = A^T dC, transposed back where needed.
  Value da =
      ta ? b.matmul(rhs, dy, tb, true) : b.matmul(dy, rhs, false, !tb);
  Value db =
      tb ? b.matmul(dy, lhs, true, ta) : b.matmul(lhs, dy, !ta, false);
  accumulate(lhs, da);
  accumulate(rhs, db);
}

void CumsumOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getInput(), b.cumsum(dy, getDim(), !getReverse()));
}

//===----------------------------------------------------------------------===//
// Layout: transposes, reshapes, slices, pads, concatenations
//===----------------------------------------------------------------------===//

void TransposeOp::buildVJP(PrimitiveBuilder &b, Value dy,
                           Accumulate accumulate) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  accumulate(getInput(), b.transpose(dy, inverse));
}

void ReshapeOp::buildVJP(PrimitiveBuilder &b, Value dy,
                         Accumulate accumulate) {
  accumulate(getInput(), b.reshape(dy, shape(getInput())));
}

void SliceOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  int64_t dim = getDim();
  accumulate(getInput(),
             b.pad(dy, dim, getOffset(), shape(getInput())[dim]));
}

void PadOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  int64_t dim = getDim();
  accumulate(getInput(),
             b.slice(dy, dim, getOffset(), shape(getInput())[dim]));
}

void ConcatOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  int64_t dim = getDim(), n = shape(getLhs())[dim];
  accumulate(getLhs(), b.slice(dy, dim, 0, n));
  accumulate(getRhs(), b.slice(dy, dim, n, shape(getRhs())[dim]));
}

//===----------------------------------------------------------------------===//
// Indexing: each op's adjoint is its partner
//===----------------------------------------------------------------------===//

void GatherOp::buildVJP(PrimitiveBuilder &b, Value dy, Accumulate accumulate) {
  accumulate(getTable(),
             ScatterAddOp::create(b.builder(), b.getLoc(),
                                  getTable().getType(), dy, getIds()));
}

void ScatterAddOp::buildVJP(PrimitiveBuilder &b, Value dy,
                            Accumulate accumulate) {
  accumulate(getUpdates(),
             GatherOp::create(b.builder(), b.getLoc(), getUpdates().getType(),
                              dy, getIds()));
}

void TakeAlongOp::buildVJP(PrimitiveBuilder &b, Value dy,
                           Accumulate accumulate) {
  accumulate(getInput(),
             PutAlongOp::create(b.builder(), b.getLoc(), getInput().getType(),
                                dy, getIds()));
}

void PutAlongOp::buildVJP(PrimitiveBuilder &b, Value dy,
                          Accumulate accumulate) {
  accumulate(getInput(),
             TakeAlongOp::create(b.builder(), b.getLoc(), getInput().getType(),
                                 dy, getIds()));
}

//===----------------------------------------------------------------------===//
// The collectives of stream parallelism (Megatron's g and f): each one's
// adjoint is the other.
//===----------------------------------------------------------------------===//

void AllReduceOp::buildVJP(PrimitiveBuilder &, Value dy,
                           Accumulate accumulate) {
  accumulate(getInput(), dy);
}

void GradAllReduceOp::buildVJP(PrimitiveBuilder &b, Value dy,
                               Accumulate accumulate) {
  accumulate(getInput(),
             AllReduceOp::create(b.builder(), b.getLoc(), dy.getType(), dy));
}

void RankSliceOp::buildVJP(PrimitiveBuilder &b, Value dy,
                           Accumulate accumulate) {
  accumulate(getInput(),
             RankPadOp::create(b.builder(), b.getLoc(), getInput().getType(),
                               dy, getDim(), getShards()));
}

void RankPadOp::buildVJP(PrimitiveBuilder &b, Value dy,
                         Accumulate accumulate) {
  accumulate(getInput(),
             RankSliceOp::create(b.builder(), b.getLoc(), getInput().getType(),
                                 dy, getDim(), getShards()));
}
