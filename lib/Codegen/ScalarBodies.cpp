//===- ScalarBodies.cpp - What an elementwise body computes ---------------===//

#include "mix/Codegen/ScalarBodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

std::optional<double> mlir::mix::evaluateScalarBody(Block &body,
                                                    ArrayRef<double> args,
                                                    Value result) {
  if (args.size() > body.getNumArguments())
    return std::nullopt;
  llvm::DenseMap<Value, double> values;
  for (auto [arg, x] : llvm::zip(body.getArguments(), args))
    values[arg] = x;
  auto get = [&](Value v) -> std::optional<double> {
    auto it = values.find(v);
    if (it != values.end())
      return it->second;
    // A float constant from outside the body.
    if (auto c = v.getDefiningOp<arith::ConstantOp>())
      if (auto f = dyn_cast<FloatAttr>(c.getValue()))
        return f.getValueAsDouble();
    return std::nullopt;
  };
  if (result && llvm::is_contained(body.getArguments(), result))
    return get(result);
  for (Operation &op : body) {
    if (auto yield = dyn_cast<linalg::YieldOp>(op)) {
      if (yield.getNumOperands() != 1)
        return std::nullopt;
      return get(yield.getOperand(0));
    }
    SmallVector<double, 2> in;
    for (Value v : op.getOperands()) {
      std::optional<double> x = get(v);
      if (!x)
        return std::nullopt;
      in.push_back(*x);
    }
    std::optional<double> out =
        llvm::TypeSwitch<Operation *, std::optional<double>>(&op)
            .Case([&](arith::ConstantOp c) -> std::optional<double> {
              if (auto f = dyn_cast<FloatAttr>(c.getValue()))
                return f.getValueAsDouble();
              return std::nullopt;
            })
            .Case([&](arith::AddFOp) { return in[0] + in[1]; })
            .Case([&](arith::SubFOp) { return in[0] - in[1]; })
            .Case([&](arith::MulFOp) { return in[0] * in[1]; })
            .Case([&](arith::DivFOp) { return in[0] / in[1]; })
            .Case([&](arith::NegFOp) { return -in[0]; })
            .Case([&](math::TanhOp) { return std::tanh(in[0]); })
            .Case([&](math::ExpOp) { return std::exp(in[0]); })
            .Case([&](arith::ExtFOp) { return in[0]; })
            .Default([](Operation *) { return std::nullopt; });
    if (!out || op.getNumResults() != 1)
      return std::nullopt;
    values[op.getResult(0)] = *out;
    if (op.getResult(0) == result)
      return *out;
  }
  return std::nullopt;
}

/// Pre-activations the recognizers evaluate at: both signs, near zero, the
/// bend (|u| ~ 1-2) and the tails, where tanh saturates.
static constexpr double kPreActivations[] = {0.0,  0.3, -0.7, 1.6,
                                             -2.2, 4.5, -6.0, 11.0};

double mlir::mix::gelu(double u) {
  return 0.5 * u *
         (1 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
}

/// The f32 value \p body computes, before the rounding to bf16 that the
/// yield's operand is when \p rounded; null when the body's arguments
/// (\p inputs of them, then the output) and result are not typed as that
/// allows: f32, or with \p rounded a bf16 output and bf16 inputs that are
/// only widened (`arith.extf`).
static Value getComputedValue(Block &body, unsigned inputs, bool rounded) {
  if (body.getNumArguments() != inputs + 1 ||
      !body.getArgument(inputs).use_empty())
    return {};
  Type wide = Float32Type::get(body.getParent()->getContext());
  Type narrow = BFloat16Type::get(wide.getContext());
  for (BlockArgument arg : body.getArguments().take_front(inputs))
    if (arg.getType() != wide &&
        !(rounded && arg.getType() == narrow &&
          llvm::all_of(arg.getUsers(),
                       [](Operation *op) { return isa<arith::ExtFOp>(op); })))
      return {};
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return {};
  Value result = yield.getOperand(0);
  if (!rounded)
    return result.getType() == wide &&
                   body.getArgument(inputs).getType() == wide
               ? result
               : Value();
  auto trunc = result.getDefiningOp<arith::TruncFOp>();
  if (!trunc || trunc->getBlock() != &body || trunc.getType() != narrow ||
      trunc.getIn().getType() != wide ||
      body.getArgument(inputs).getType() != narrow)
    return {};
  return trunc.getIn();
}

bool mlir::mix::computesGelu(Block &body, bool rounded) {
  Value result = getComputedValue(body, 1, rounded);
  if (!result)
    return false;
  return llvm::all_of(kPreActivations, [&](double u) {
    std::optional<double> got = evaluateScalarBody(body, {u}, result);
    return got && std::fabs(*got - gelu(u)) <= 1e-6 * (1 + std::fabs(u));
  });
}

double mlir::mix::geluGradient(double dy, double u) {
  const double c = std::sqrt(2.0 / M_PI);
  double t = std::tanh(c * (u + 0.044715 * u * u * u));
  return dy * (0.5 * (1 + t) +
               0.5 * u * (1 - t * t) * c * (1 + 3 * 0.044715 * u * u));
}

bool mlir::mix::computesGeluGradient(Block &body, unsigned &gradInput,
                                     bool rounded) {
  Value result = getComputedValue(body, 2, rounded);
  if (!result)
    return false;
  // Incoming gradients of both signs and scales.
  const double dys[] = {1.0, -0.37, 2.5, 0.013};
  for (unsigned candidate : {0u, 1u}) {
    bool all = true;
    for (double dy : dys) {
      for (double u : kPreActivations) {
        double args[2];
        args[candidate] = dy;
        args[1 - candidate] = u;
        std::optional<double> got = evaluateScalarBody(body, args, result);
        double want = geluGradient(dy, u);
        // Float operations in the body: a few ulps of its terms.
        if (!got || std::fabs(*got - want) >
                        1e-6 * (std::fabs(dy) + 1e-30) * (1 + std::fabs(u)))
          all = false;
      }
      if (!all)
        break;
    }
    if (all) {
      gradInput = candidate;
      return true;
    }
  }
  return false;
}
