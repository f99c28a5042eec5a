//===- Counterexamples.cpp - Inputs that separate a refused mixture -------===//
//
// A refusal's counterexample is computed for the mixture in front of it:
// the mixture is evaluated, as written, by the reference interpreter, and a
// counterexample is printed only when the two sides of a property every
// dynamic convolution has really differ at the stated point.
//
//===----------------------------------------------------------------------===//

#include "Counterexamples.h"

#include "mix/Interpreter/ReferenceInterpreter.h"
#include "mix/Transforms/ExpertAnalysis.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <optional>

using namespace mlir;
using namespace mlir::mix;

namespace {
/// How many random points each property is tried at.
constexpr int kPoints = 4;

/// Evaluates one mixture on inputs of the search's choosing.
class MixtureProbe {
public:
  MixtureProbe(MixtureOp op, unsigned seed) : op(op), rng(seed) {
    x = shape(op.getInput());
    g = shape(op.getGate());
    tokens = 1;
    for (int64_t s : ArrayRef<int64_t>(x).drop_back())
      tokens *= s;
  }

  /// The mixture at input \p xv and gate \p gv, with everything else (the
  /// weights, the enclosing function's arguments) drawn once per probe.
  FailureOr<RefTensor> evaluate(const RefTensor &xv, const RefTensor &gv) {
    interp.clear();
    std::mt19937 fixed(weightSeed);
    // The function's arguments, then the mixture's operands that do not
    // depend on x: the same values at every call of this probe.
    if (auto func = op->getParentOfType<FunctionOpInterface>())
      if (!func.isExternal())
        for (BlockArgument arg : func.getArguments())
          if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
            if (t.getElementType().isF32() && arg != op.getInput())
              interp.bind(arg, randomTensor(t.getShape(), fixed,
                                            RandomFill::SmallIntegers));
    interp.bind(op.getInput(), xv);
    interp.bind(op.getGate(), gv);
    FailureOr<RefTensor> r = interp.evaluate(op.getResult());
    if (failed(r))
      error = interp.getError();
    return r;
  }

  RefTensor randomX() {
    return randomTensor(x, rng, RandomFill::SmallIntegers);
  }
  /// Positive gate rows summing to one, like a softmax gate's.
  RefTensor randomGate() {
    RefTensor t = randomTensor(g, rng, RandomFill::SmallIntegers);
    int64_t n = g.back();
    for (int64_t row = 0; row < t.numel() / n; ++row) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += (t.data[row * n + k] = t.data[row * n + k] + 3); // 1..5
      for (int64_t k = 0; k < n; ++k)
        t.data[row * n + k] /= sum;
    }
    return t;
  }

  static SmallVector<int64_t> shape(Value v) {
    return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
  }

  MixtureOp op;
  std::mt19937 rng;
  unsigned weightSeed = 7;
  SmallVector<int64_t> x, g;
  int64_t tokens;
  std::string error;
  ReferenceInterpreter interp;
};

/// A value as the counterexample prints it.
std::string num(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  return buffer;
}

bool differ(double a, double b) {
  return !(std::abs(a - b) <= 1e-9 * (1 + std::abs(a) + std::abs(b)));
}

/// "token (1, 3)" for flat token \p t of an activation shaped \p shape.
std::string tokenName(int64_t t, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> idx(shape.size() - 1);
  for (int64_t d = static_cast<int64_t>(idx.size()) - 1; d >= 0; --d) {
    idx[d] = t % shape[d];
    t /= shape[d];
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "token (";
  llvm::interleaveComma(idx, os);
  os << ")";
  return s;
}

/// A tensor's values when it is small enough to print.
std::string valuesOf(const RefTensor &t) {
  if (t.numel() > 8)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << " = [";
  llvm::interleaveComma(t.data, os, [&](double v) { os << num(v); });
  os << "]";
  return s;
}

/// With the gate fixed, a dynamic convolution is affine in x:
/// M(x) + M(y) = M(x + y) + M(0).
std::optional<std::string> notAffine(MixtureProbe &p) {
  for (int i = 0; i < kPoints; ++i) {
    RefTensor x = p.randomX(), y = p.randomX(), gate = p.randomGate();
    RefTensor sum = x, zero = RefTensor::zeros(p.x);
    for (int64_t j = 0; j < x.numel(); ++j)
      sum.data[j] += y.data[j];
    FailureOr<RefTensor> mx = p.evaluate(x, gate), my = p.evaluate(y, gate),
                         ms = p.evaluate(sum, gate),
                         m0 = p.evaluate(zero, gate);
    if (failed(mx) || failed(my) || failed(ms) || failed(m0))
      return std::nullopt;
    int64_t f = mx->shape.back();
    for (int64_t j = 0; j < mx->numel(); ++j) {
      double lhs = mx->data[j] + my->data[j];
      double rhs = ms->data[j] + m0->data[j];
      if (differ(lhs, rhs))
        return llvm::formatv(
                   "with the gate and the weights held fixed, at {0}, "
                   "feature {1}: M(x) + M(y) = {2}, but M(x + y) + M(0) = "
                   "{3} (x{4}, y{5}: random integers in [-2, 2]); every "
                   "dynamic convolution is affine in x, so the two would "
                   "be equal",
                   tokenName(j / f, mx->shape), j % f, num(lhs), num(rhs),
                   valuesOf(x), valuesOf(y))
            .str();
    }
  }
  return std::nullopt;
}

/// A dynamic convolution's output at a token depends on that token's
/// input alone: changing another token's row of x leaves it unchanged.
std::optional<std::string> notLocal(MixtureProbe &p) {
  if (p.tokens < 2)
    return std::nullopt;
  int64_t d = p.x.back();
  for (int i = 0; i < kPoints; ++i) {
    RefTensor x = p.randomX(), gate = p.randomGate();
    int64_t changed = i % p.tokens;
    RefTensor x2 = x;
    for (int64_t j = 0; j < d; ++j)
      x2.data[changed * d + j] += 1 + j % 3;
    FailureOr<RefTensor> a = p.evaluate(x, gate), b = p.evaluate(x2, gate);
    if (failed(a) || failed(b))
      return std::nullopt;
    int64_t f = a->shape.back();
    for (int64_t t = 0; t < p.tokens; ++t) {
      if (t == changed)
        continue;
      for (int64_t j = 0; j < f; ++j)
        if (differ(a->data[t * f + j], b->data[t * f + j]))
          return llvm::formatv(
                     "with the gate and the weights held fixed, changing "
                     "only {0} of x changes the output at {1}, feature {2}, "
                     "from {3} to {4}; a dynamic convolution's output at "
                     "a token depends on that token's input alone",
                     tokenName(changed, p.x), tokenName(t, a->shape), j,
                     num(a->data[t * f + j]), num(b->data[t * f + j]))
              .str();
    }
  }
  return std::nullopt;
}

/// Two tokens with the same input and the same gate row get the same
/// output from a dynamic convolution, wherever they are.
std::optional<std::string> positionDependent(MixtureProbe &p) {
  if (p.tokens < 2)
    return std::nullopt;
  int64_t d = p.x.back();
  for (int i = 0; i < kPoints; ++i) {
    RefTensor row = p.randomX(), gate = p.randomGate();
    RefTensor x = row;
    for (int64_t t = 0; t < p.tokens; ++t)
      for (int64_t j = 0; j < d; ++j)
        x.data[t * d + j] = row.data[j];
    // Every gate row equal to the first.
    int64_t rowSize = p.g.back();
    if (p.g.size() > p.x.size())
      rowSize *= p.g[p.g.size() - 2];
    for (int64_t r = 1; r < gate.numel() / rowSize; ++r)
      for (int64_t j = 0; j < rowSize; ++j)
        gate.data[r * rowSize + j] = gate.data[j];
    FailureOr<RefTensor> m = p.evaluate(x, gate);
    if (failed(m))
      return std::nullopt;
    int64_t f = m->shape.back();
    for (int64_t t = 1; t < p.tokens; ++t)
      for (int64_t j = 0; j < f; ++j)
        if (differ(m->data[j], m->data[t * f + j]))
          return llvm::formatv(
                     "every token given the same input row and the same "
                     "gate row, the mixture gives {0} at {1}, feature "
                     "{3}, but {2} at {4}; a dynamic convolution gives "
                     "both the same value",
                     num(m->data[j]), tokenName(0, m->shape),
                     num(m->data[t * f + j]), j, tokenName(t, m->shape))
              .str();
  }
  return std::nullopt;
}
} // namespace

Counterexample mlir::mix::findCounterexample(MixtureOp op) {
  MixtureProbe probe(op, /*seed=*/2026);
  for (auto test : {notAffine, notLocal, positionDependent})
    if (std::optional<std::string> found = test(probe))
      return {true, *found};
  if (!probe.error.empty())
    return {false, "no counterexample computed: the reference interpreter "
                   "cannot evaluate this mixture (" +
                       probe.error + ")"};
  return {false, llvm::formatv("no counterexample found: the mixture was "
                               "affine in x, local to each token and the "
                               "same at every position at the {0} random "
                               "points tried for each",
                               kPoints)
                     .str()};
}
