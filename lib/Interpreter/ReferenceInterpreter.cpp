//===- ReferenceInterpreter.cpp - Evaluation of mix IR on doubles ---------===//
//
// The interpreter proper: bindings, the memo, on-demand evaluation of a
// value's producers (with an explicit worklist, so long chains of ops do
// not recurse), mixture regions evaluated once per expert in a scope of
// their own, and the dispatch to the kernels of Elementwise.cpp,
// Shapes.cpp and Mixing.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::interp;

//===----------------------------------------------------------------------===//
// RefTensor and the helpers every kernel shares
//===----------------------------------------------------------------------===//

int64_t RefTensor::numel() const { return product(shape); }

RefTensor RefTensor::zeros(ArrayRef<int64_t> shape) {
  RefTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data.assign(t.numel(), 0.0);
  return t;
}

std::string interp::shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "(";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + ")";
}

ArrayRef<int64_t> interp::typeShape(Value v) {
  if (auto type = dyn_cast<RankedTensorType>(v.getType()))
    return type.getShape();
  return {};
}

int64_t interp::product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

SmallVector<int64_t> interp::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

FailureOr<RefTensor> interp::sliceLeading(const RefTensor &stacked, int64_t k,
                                          std::string &error) {
  if (stacked.shape.empty() || k < 0 || k >= stacked.shape[0]) {
    error = "cannot take slice " + std::to_string(k) +
            " of a tensor of shape " + shapeStr(stacked.shape);
    return failure();
  }
  RefTensor t;
  t.shape.assign(stacked.shape.begin() + 1, stacked.shape.end());
  int64_t size = t.numel();
  t.data.assign(stacked.data.begin() + k * size,
                stacked.data.begin() + (k + 1) * size);
  return t;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

/// A mixture region being evaluated for one expert: its block arguments
/// and the values computed inside it, dropped when the expert is done.
struct ReferenceInterpreter::Scope {
  Region *region;
  llvm::DenseMap<Value, std::unique_ptr<RefTensor>> values;
};

ReferenceInterpreter::ReferenceInterpreter() = default;
ReferenceInterpreter::~ReferenceInterpreter() = default;

/// `op`'s name and location, as messages start.
static std::string describe(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return s;
}

LogicalResult ReferenceInterpreter::fail(const Twine &message) {
  error = message.str();
  return failure();
}

void ReferenceInterpreter::bind(Value v, RefTensor t) {
  memo.clear();
  bound[v] = std::make_unique<RefTensor>(std::move(t));
}

void ReferenceInterpreter::clear() {
  bound.clear();
  memo.clear();
  scopes.clear();
  error.clear();
}

const RefTensor *ReferenceInterpreter::lookup(Value v) const {
  // A value inside a region being evaluated lives in that region's scope
  // only (unless bound): the memo may hold one computed for other inputs.
  Region *where = v.getParentRegion();
  const Scope *scope = nullptr;
  for (const std::unique_ptr<Scope> &s : llvm::reverse(scopes))
    if (where && s->region->isAncestor(where)) {
      scope = s.get();
      break;
    }
  if (scope) {
    auto it = scope->values.find(v);
    if (it != scope->values.end())
      return it->second.get();
  }
  if (auto it = bound.find(v); it != bound.end())
    return it->second.get();
  if (!scope)
    if (auto it = memo.find(v); it != memo.end())
      return it->second.get();
  return nullptr;
}

const RefTensor *ReferenceInterpreter::store(Value v, RefTensor t) {
  Region *where = v.getParentRegion();
  auto owned = std::make_unique<RefTensor>(std::move(t));
  const RefTensor *ptr = owned.get();
  for (std::unique_ptr<Scope> &s : llvm::reverse(scopes))
    if (where && s->region->isAncestor(where)) {
      s->values[v] = std::move(owned);
      return ptr;
    }
  memo[v] = std::move(owned);
  return ptr;
}

LogicalResult ReferenceInterpreter::checkShape(Value v, const RefTensor &t,
                                               const Twine &what) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return fail(what + " is not a statically shaped tensor");
  if (static_cast<int64_t>(t.data.size()) != t.numel())
    return fail(what + " has " + Twine(t.data.size()) +
                " elements for its shape " + shapeStr(t.shape));
  if (ArrayRef<int64_t>(t.shape) != type.getShape())
    return fail(what + " has shape " + shapeStr(t.shape) +
                ", but its type is " + shapeStr(type.getShape()));
  // Like the dialect's verifiers, the kernels divide by every dimension.
  if (t.numel() == 0)
    return fail(what + " is empty (shape " + shapeStr(t.shape) +
                "); the interpreter needs non-empty tensors");
  return success();
}

/// Whether the interpreter knows how to compute `op`.
static bool isSupported(Operation *op) {
  return isa<MixtureOp>(op) || isElementwiseOp(op) || isShapeOp(op) ||
         isMixingOp(op);
}

/// What a block argument is, for messages.
static std::string describeArgument(BlockArgument arg) {
  std::string s = "block argument #" + std::to_string(arg.getArgNumber());
  if (Operation *parent = arg.getOwner()->getParentOp())
    s += " of " + describe(parent);
  return s;
}

FailureOr<const RefTensor *> ReferenceInterpreter::get(Value v) {
  if (const RefTensor *t = lookup(v))
    return t;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return fail(describeArgument(arg) + " is not bound");

  // Depth-first over the producers, with an explicit stack. `active` spans
  // nested calls (a mixture's region evaluates values above it), so a value
  // that needs itself is an error, not an endless loop.
  SmallVector<Operation *> stack, pushed;
  auto push = [&](Operation *op) -> LogicalResult {
    if (!active.insert(op).second)
      return fail(describe(op) + " depends on its own result");
    stack.push_back(op);
    pushed.push_back(op);
    return success();
  };
  auto finish = [&](LogicalResult result) -> LogicalResult {
    for (Operation *op : pushed)
      active.erase(op);
    return result;
  };
  if (failed(push(v.getDefiningOp())))
    return finish(failure());

  while (!stack.empty()) {
    Operation *op = stack.back();
    if (!isSupported(op))
      return finish(fail(describe(op) +
                         " is not supported by the reference interpreter"));
    bool waiting = false;
    for (Value operand : op->getOperands()) {
      if (lookup(operand))
        continue;
      if (auto arg = dyn_cast<BlockArgument>(operand))
        return finish(fail(describeArgument(arg) + " is not bound (used by " +
                           describe(op) + ")"));
      if (failed(push(operand.getDefiningOp())))
        return finish(failure());
      waiting = true;
      break;
    }
    if (waiting)
      continue;
    FailureOr<RefTensor> result = compute(op);
    if (failed(result))
      return finish(failure());
    store(op->getResult(0), std::move(*result));
    stack.pop_back();
    active.erase(op);
  }
  (void)finish(success());
  const RefTensor *t = lookup(v);
  if (!t)
    return fail("internal error: no value computed");
  return t;
}

FailureOr<RefTensor> ReferenceInterpreter::compute(Operation *op) {
  if (op->getNumResults() != 1)
    return fail(describe(op) + " has " + Twine(op->getNumResults()) +
                " results; the reference interpreter needs one");
  Value result = op->getResult(0);
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape())
    return fail(describe(op) + " does not produce a statically shaped "
                               "tensor");

  SmallVector<const RefTensor *> operands;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    const RefTensor *t = lookup(operand);
    if (!t)
      return fail("internal error: operand not computed");
    if (failed(checkShape(operand, *t,
                          "operand #" + Twine(i) + " of " + describe(op))))
      return failure();
    operands.push_back(t);
  }

  FailureOr<RefTensor> value = failure();
  if (auto mixture = dyn_cast<MixtureOp>(op)) {
    value = computeMixture(mixture);
    if (failed(value))
      return failure();
  } else {
    std::string kernelError;
    KernelArgs args{op, operands, kernelError};
    if (isElementwiseOp(op))
      value = computeElementwise(op, args);
    else if (isShapeOp(op))
      value = computeShapeOp(op, args);
    else
      value = computeMixingOp(op, args);
    if (failed(value))
      return fail(describe(op) + ": " + kernelError);
  }
  if (failed(checkShape(result, *value, "the result of " + describe(op))))
    return failure();
  return value;
}

FailureOr<RefTensor> ReferenceInterpreter::computeMixture(MixtureOp op) {
  // Copies: evaluating the experts may store new values.
  RefTensor x = *lookup(op.getInput());
  RefTensor gate = *lookup(op.getGate());
  if (gate.shape.empty())
    return fail(describe(op) + ": the gate has rank 0");
  SmallVector<RefTensor> experts;
  for (int64_t k = 0, n = gate.shape.back(); k < n; ++k) {
    FailureOr<RefTensor> e = expert(op, k, x);
    if (failed(e))
      return failure();
    experts.push_back(std::move(*e));
  }
  std::string mixError;
  FailureOr<RefTensor> mixed = mixExperts(gate, experts, mixError);
  if (failed(mixed))
    return fail(describe(op) + ": " + mixError);
  return mixed;
}

FailureOr<RefTensor> ReferenceInterpreter::expert(MixtureOp op, int64_t k,
                                                  const RefTensor &x) {
  int64_t n = op.getNumStreams();
  if (k < 0 || k >= n)
    return fail(describe(op) + " has " + Twine(n) + " experts, not expert " +
                Twine(k));
  if (failed(checkShape(op.getInput(), x, "the input of " + describe(op))))
    return failure();
  std::string sliceError;
  auto sliceOf = [&](Value stacked) -> FailureOr<RefTensor> {
    FailureOr<const RefTensor *> all = get(stacked);
    if (failed(all))
      return failure();
    FailureOr<RefTensor> slice = sliceLeading(**all, k, sliceError);
    if (failed(slice))
      return fail(describe(op) + ": " + sliceError);
    return slice;
  };

  if (!op.hasExpertRegion()) {
    if (!op.getKernels())
      return fail(describe(op) + " has neither kernels nor an expert region");
    FailureOr<RefTensor> kernel = sliceOf(op.getKernels());
    if (failed(kernel))
      return failure();
    RefTensor bias;
    if (op.getBias()) {
      FailureOr<RefTensor> b = sliceOf(op.getBias());
      if (failed(b))
        return failure();
      bias = std::move(*b);
    } else if (op.getSharedBias()) {
      FailureOr<const RefTensor *> b = get(op.getSharedBias());
      if (failed(b))
        return failure();
      bias = **b;
    }
    bool hasBias = op.getBias() || op.getSharedBias();
    std::string linearError;
    FailureOr<RefTensor> y =
        linear(x, *kernel, hasBias ? &bias : nullptr, linearError);
    if (failed(y))
      return fail(describe(op) + ": expert " + Twine(k) + ": " + linearError);
    return y;
  }

  Region &body = op.getBody();
  if (!body.hasOneBlock())
    return fail(describe(op) + ": the expert region must have one block");
  Block &block = body.front();
  auto weights = op.getExpertWeights();
  if (block.getNumArguments() != weights.size() + 1)
    return fail(describe(op) + ": the expert region takes " +
                Twine(block.getNumArguments()) + " arguments, not " +
                Twine(weights.size() + 1));
  if (block.empty() || !isa<YieldOp>(block.back()))
    return fail(describe(op) + ": the expert region does not end in "
                               "mix.yield");

  auto scope = std::make_unique<Scope>();
  scope->region = &body;
  scope->values[block.getArgument(0)] = std::make_unique<RefTensor>(x);
  for (auto [i, w] : llvm::enumerate(weights)) {
    FailureOr<RefTensor> slice = sliceOf(w);
    if (failed(slice))
      return failure();
    scope->values[block.getArgument(i + 1)] =
        std::make_unique<RefTensor>(std::move(*slice));
  }
  scopes.push_back(std::move(scope));
  Value yielded = cast<YieldOp>(block.back()).getValue();
  FailureOr<const RefTensor *> y = get(yielded);
  FailureOr<RefTensor> result = failure();
  if (succeeded(y))
    result = **y;
  scopes.pop_back();
  return result;
}

FailureOr<RefTensor> ReferenceInterpreter::evaluate(Value v) {
  error.clear();
  FailureOr<const RefTensor *> t = get(v);
  if (failed(t))
    return failure();
  std::string what = "the value";
  if (Operation *def = v.getDefiningOp())
    what = "the result of " + describe(def);
  else
    what = describeArgument(cast<BlockArgument>(v));
  if (failed(checkShape(v, **t, what)))
    return failure();
  return **t;
}

FailureOr<RefTensor> ReferenceInterpreter::evaluateExpert(MixtureOp op,
                                                          int64_t k,
                                                          const RefTensor &x) {
  error.clear();
  return expert(op, k, x);
}

FailureOr<SmallVector<RefTensor>>
ReferenceInterpreter::run(func::FuncOp func, ArrayRef<RefTensor> args) {
  clear();
  std::string name = "@" + func.getSymName().str();
  if (func.isExternal())
    return fail(name + " has no body");
  if (!func.getBody().hasOneBlock())
    return fail(name + " has more than one block");
  Block &block = func.getBody().front();
  if (args.size() != block.getNumArguments())
    return fail(name + " takes " + Twine(block.getNumArguments()) +
                " arguments, but " + Twine(args.size()) + " were given");
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    if (failed(
            checkShape(arg, args[i], "argument #" + Twine(i) + " of " + name)))
      return failure();
    bound[arg] = std::make_unique<RefTensor>(args[i]);
  }
  if (block.empty() || !isa<func::ReturnOp>(block.back()))
    return fail(name + " does not end in func.return");

  SmallVector<RefTensor> results;
  for (Value v : block.back().getOperands()) {
    FailureOr<const RefTensor *> t = get(v);
    if (failed(t))
      return failure();
    results.push_back(**t);
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Random tensors and comparison
//===----------------------------------------------------------------------===//

RefTensor mlir::mix::randomTensor(ArrayRef<int64_t> shape, std::mt19937 &rng,
                                  RandomFill fill) {
  RefTensor t = RefTensor::zeros(shape);
  if (fill == RandomFill::Normal) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (double &v : t.data)
      v = normal(rng);
  } else {
    std::uniform_int_distribution<int> small(-2, 2);
    for (double &v : t.data)
      v = small(rng);
  }
  return t;
}

double mlir::mix::maxAbsDifference(const RefTensor &a, const RefTensor &b) {
  if (a.shape != b.shape || a.data.size() != b.data.size())
    return std::numeric_limits<double>::infinity();
  double most = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    if (a.data[i] == b.data[i])
      continue;
    double d = std::abs(a.data[i] - b.data[i]);
    if (std::isnan(d))
      return std::numeric_limits<double>::quiet_NaN();
    most = std::max(most, d);
  }
  return most;
}
