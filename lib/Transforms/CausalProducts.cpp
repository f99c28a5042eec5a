//===- CausalProducts.cpp - Mark the products a causal mask makes triangular =//
//
// A causal attention computes its (S, p + S) scores, masks the entries
// above the diagonal p to -inf and takes their softmax, so that
//
//   * the probabilities P, and the scores' adjoint (G - rowsum(G P)) P,
//     are zero above the diagonal: a product that reads them as its left
//     operand (P V, dS K, and transposed: P^T dO, dS^T Q) need not multiply
//     by those zeros;
//   * the entries above the diagonal of the scores Q K^T and of P's adjoint
//     dO V^T are never read to any effect (they are masked to -inf, or
//     multiplied by P's zeros): a product need not compute them.
//
// This pass finds both facts by a forward and a backward dataflow over the
// primitive ops and records them on the products as `mix.triangle =
// array<i64: kind, p>`; the CPU support code then skips the blocks above
// the diagonal (about 40% of the attention's products at S = 256).
//
//===----------------------------------------------------------------------===//

#include "mix/Transforms/Passes.h"

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir {
namespace mix {
#define GEN_PASS_DEF_MIXCAUSALPRODUCTSPASS
#include "mix/Transforms/Passes.h.inc"
} // namespace mix
} // namespace mlir

using namespace mlir;
using namespace mlir::mix;

namespace {
using Band = std::optional<int64_t>;

/// The last two dimensions of \p v's type, or none below rank 2.
std::optional<std::pair<int64_t, int64_t>> matrixDims(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 2)
    return std::nullopt;
  return std::make_pair(type.getDimSize(type.getRank() - 2),
                        type.getDimSize(type.getRank() - 1));
}

bool sameMatrix(Value a, Value b) {
  auto x = matrixDims(a), y = matrixDims(b);
  return x && y && *x == *y;
}

/// The weaker (larger) of two bands; a band holds for p if it holds for
/// any smaller p.
Band weaker(Band a, Band b) {
  if (!a || !b)
    return std::nullopt;
  return std::max(*a, *b);
}

struct Analysis {
  /// v[..., i, j] = -inf for j > i + p (finite operands elsewhere assumed).
  DenseMap<Value, int64_t> negInfAbove;
  /// v[..., i, j] = 0 for j > i + p.
  DenseMap<Value, int64_t> zeroAbove;
  /// No result depends on v[..., i, j] for j > i + p, as long as those
  /// entries are finite.
  DenseMap<Value, int64_t> lowerOnly;

  Band get(const DenseMap<Value, int64_t> &facts, Value v) const {
    auto it = facts.find(v);
    return it == facts.end() ? Band() : Band(it->second);
  }

  /// Forward: where -inf and zeros above the diagonal come from and go.
  void forward(Operation *op) {
    if (op->getNumResults() != 1 || !matrixDims(op->getResult(0)))
      return;
    Value r = op->getResult(0);
    auto set = [&](DenseMap<Value, int64_t> &facts, Band b) {
      if (b)
        facts[r] = *b;
    };
    auto operandBand = [&](const DenseMap<Value, int64_t> &facts,
                           unsigned i) -> Band {
      Value v = op->getOperand(i);
      // A broadcast operand's rows or columns would not line up.
      return sameMatrix(v, r) ? get(facts, v) : Band();
    };
    // The fact of either operand (the stronger where both have it).
    auto eitherOperand = [&](const DenseMap<Value, int64_t> &facts) -> Band {
      Band a = operandBand(facts, 0), b = operandBand(facts, 1);
      return a && b ? std::min(*a, *b) : a ? a : b;
    };
    if (auto mask = dyn_cast<CausalMaskOp>(op)) {
      // A mask at a run-time position has no band known here.
      if (!mask.getPosition())
        set(negInfAbove, mask.getPrefix());
      return;
    }
    // Views that keep the last two dimensions keep both facts.
    if (isa<ReshapeOp, BroadcastOp, StopGradientOp>(op)) {
      set(negInfAbove, operandBand(negInfAbove, 0));
      set(zeroAbove, operandBand(zeroAbove, 0));
      return;
    }
    if (auto t = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> perm = t.getPermutation();
      size_t n = perm.size();
      if (perm[n - 2] == int64_t(n - 2) && perm[n - 1] == int64_t(n - 1)) {
        set(negInfAbove, operandBand(negInfAbove, 0));
        set(zeroAbove, operandBand(zeroAbove, 0));
      }
      return;
    }
    // -inf + finite, -inf - finite.
    if (isa<AddOp>(op)) {
      set(negInfAbove, eitherOperand(negInfAbove));
      return;
    }
    if (isa<SubOp>(op)) {
      set(negInfAbove, operandBand(negInfAbove, 0));
      return;
    }
    if (isa<ExpOp>(op)) {
      set(zeroAbove, operandBand(negInfAbove, 0));
      return;
    }
    // 0 * finite, 0 / nonzero, -0.
    if (isa<MulOp>(op)) {
      set(zeroAbove, eitherOperand(zeroAbove));
      return;
    }
    if (isa<DivOp, NegOp>(op))
      set(zeroAbove, operandBand(zeroAbove, 0));
  }

  /// Backward: \p v is lowerOnly(p) if each of its uses is
  ///   * an addition of a -inf-above mask (the sum is -inf there anyway),
  ///   * a multiplication by a zero-above tensor (the product is 0), or
  ///   * an addition, subtraction, multiplication or negation whose result
  ///     is lowerOnly itself (finite entries stay finite),
  /// with the same matrix dimensions.
  Band demanded(Value v) const {
    if (!matrixDims(v) || v.use_empty())
      return std::nullopt;
    Band band;
    bool first = true;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user->getNumResults() != 1 || user->getNumOperands() > 2 ||
          !sameMatrix(v, user->getResult(0)) ||
          !(isa<AddOp, SubOp, MulOp, NegOp>(user)))
        return std::nullopt;
      Band b;
      Value other = user->getNumOperands() == 2
                        ? user->getOperand(1 - use.getOperandNumber())
                        : Value();
      if (other && isa<AddOp>(user) && sameMatrix(other, v))
        b = get(negInfAbove, other);
      if (!b && other && isa<MulOp>(user) && sameMatrix(other, v))
        b = get(zeroAbove, other);
      if (!b)
        b = get(lowerOnly, user->getResult(0));
      if (!b)
        return std::nullopt;
      band = first ? b : weaker(band, b);
      first = false;
    }
    return band;
  }
};

/// The `mix.triangle` kinds (the support code reads the same numbers).
enum TriangleKind : int64_t {
  /// A[i, k] = 0 for k > i + p.
  LhsLower = 0,
  /// A[i, k] = 0 for k < i - p.
  LhsUpper = 1,
  /// C[i, j] for j > i + p is not needed (any finite value will do).
  ResultLower = 2,
};

struct CausalProductsPass
    : mix::impl::MixCausalProductsPassBase<CausalProductsPass> {
  void runOnOperation() override {
    getOperation()->walk([&](func::FuncOp f) {
      if (f.isDeclaration())
        return;
      Analysis a;
      SmallVector<Operation *> ops;
      f.walk([&](Operation *op) { ops.push_back(op); });
      for (Operation *op : ops)
        a.forward(op);
      for (Operation *op : llvm::reverse(ops))
        if (op->getNumResults() == 1)
          if (Band b = a.demanded(op->getResult(0)))
            a.lowerOnly[op->getResult(0)] = *b;
      for (Operation *op : ops) {
        auto mm = dyn_cast<MatmulOp>(op);
        if (!mm)
          continue;
        std::optional<std::pair<int64_t, int64_t>> mark;
        if (Band z = a.get(a.zeroAbove, mm.getLhs()))
          mark = {mm.getTransposeLhs() ? LhsUpper : LhsLower, *z};
        else if (Band d = a.get(a.lowerOnly, mm.getResult()))
          mark = {ResultLower, *d};
        if (mark)
          mm->setAttr(kTriangleAttr,
                      DenseI64ArrayAttr::get(&getContext(),
                                             {mark->first, mark->second}));
      }
    });
  }
};
} // namespace
