//===- Elementwise.cpp - Elementwise kernels of the interpreter -----------===//
//
// The binary ops with size-1 broadcasting (add, sub, mul, div, max), the
// unary primitives (neg, exp, log, sqrt, rsqrt, tanh, step,
// stop_gradient) and the model-level activations (gelu, relu, sigmoid,
// silu), each from the formula in its op description.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>

using namespace mlir;
using namespace mlir::mix;
using namespace mlir::mix::interp;

bool interp::isElementwiseOp(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaxOp, NegOp, ExpOp, LogOp, SqrtOp,
             RsqrtOp, TanhOp, StepOp, StopGradientOp, GeluOp, ReluOp, SigmoidOp,
             SiluOp>(op);
}

/// `fn(lhs, rhs)` elementwise over `resultShape`, each operand of the
/// result's rank and broadcast along its size-1 dimensions.
static FailureOr<RefTensor>
broadcastBinary(const KernelArgs &args, ArrayRef<int64_t> resultShape,
                const std::function<double(double, double)> &fn) {
  SmallVector<SmallVector<int64_t>, 2> strides;
  for (unsigned i = 0; i < 2; ++i) {
    const RefTensor &t = args[i];
    if (t.shape.size() != resultShape.size())
      return args.fail("operand #" + Twine(i) + " has shape " +
                       shapeStr(t.shape) + ", not the rank of the result " +
                       shapeStr(resultShape));
    SmallVector<int64_t> s = stridesOf(t.shape);
    for (auto [d, size] : llvm::enumerate(t.shape)) {
      if (size == 1)
        s[d] = 0;
      else if (size != resultShape[d])
        return args.fail("operand #" + Twine(i) + " of shape " +
                         shapeStr(t.shape) + " does not broadcast to " +
                         shapeStr(resultShape));
    }
    strides.push_back(std::move(s));
  }
  RefTensor r = RefTensor::zeros(resultShape);
  int64_t flat = 0;
  forEachIndex(resultShape, [&](ArrayRef<int64_t> index) {
    int64_t a = 0, b = 0;
    for (auto [d, i] : llvm::enumerate(index)) {
      a += i * strides[0][d];
      b += i * strides[1][d];
    }
    r.data[flat++] = fn(args[0].data[a], args[1].data[b]);
  });
  return r;
}

/// GPT-2's tanh form of GELU (docs/models.md §2).
static double gelu(double u) {
  const double pi = 3.14159265358979323846;
  return 0.5 * u *
         (1 + std::tanh(std::sqrt(2 / pi) * (u + 0.044715 * u * u * u)));
}

static double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

/// The formula of a unary op.
static std::function<double(double)> unaryFormula(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::function<double(double)>>(op)
      .Case([](NegOp) { return [](double u) { return -u; }; })
      .Case([](ExpOp) { return [](double u) { return std::exp(u); }; })
      .Case([](LogOp) { return [](double u) { return std::log(u); }; })
      .Case([](SqrtOp) { return [](double u) { return std::sqrt(u); }; })
      .Case([](RsqrtOp) { return [](double u) { return 1 / std::sqrt(u); }; })
      .Case([](TanhOp) { return [](double u) { return std::tanh(u); }; })
      .Case([](StepOp) { return [](double u) { return u > 0 ? 1.0 : 0.0; }; })
      .Case([](StopGradientOp) { return [](double u) { return u; }; })
      .Case([](GeluOp) { return gelu; })
      .Case([](ReluOp) { return [](double u) { return u > 0 ? u : 0.0; }; })
      .Case([](SigmoidOp) { return sigmoid; })
      .Case([](SiluOp) { return [](double u) { return u * sigmoid(u); }; })
      .Default([](Operation *) { return nullptr; });
}

/// The formula of a binary op.
static std::function<double(double, double)> binaryFormula(Operation *op) {
  using Fn = std::function<double(double, double)>;
  return llvm::TypeSwitch<Operation *, Fn>(op)
      .Case([](AddOp) { return std::plus<double>(); })
      .Case([](SubOp) { return std::minus<double>(); })
      .Case([](MulOp) { return std::multiplies<double>(); })
      .Case([](DivOp) { return std::divides<double>(); })
      .Case([](MaxOp) {
        return [](double a, double b) { return std::max(a, b); };
      })
      .Default([](Operation *) { return nullptr; });
}

FailureOr<RefTensor> interp::computeElementwise(Operation *op,
                                                const KernelArgs &args) {
  if (auto fn = binaryFormula(op))
    return broadcastBinary(args, typeShape(op->getResult(0)), fn);
  auto fn = unaryFormula(op);
  if (!fn)
    return args.fail("not an elementwise op");
  RefTensor r = args[0];
  for (double &v : r.data)
    v = fn(v);
  return r;
}
