//===- RewriteNumericsTest.cpp - Both forms of each rewrite, on data ------===//
//
// Runs the prove and rewrite passes on mixtures of random shapes, evaluates
// the IR before and after in double precision with a small reference
// interpreter, and checks that every rewrite kept the value.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::mix;

namespace {

/// A dense tensor of doubles, row-major.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t numel() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                           std::multiplies<int64_t>());
  }
};

std::vector<int64_t> shapeOf(Value v) {
  auto s = cast<RankedTensorType>(v.getType()).getShape();
  return {s.begin(), s.end()};
}

/// A reference interpreter of the mix ops these tests use, written from
/// docs/models.md and the op descriptions, not from the passes.
class Interpreter {
public:
  /// Evaluates the single result of `func` on random arguments (the same
  /// arguments for every function evaluated with the same seed).
  Tensor run(func::FuncOp func) {
    env.clear();
    std::mt19937 argRng(1234);
    std::normal_distribution<double> normal(0, 1);
    for (BlockArgument arg : func.getArguments()) {
      Tensor t{shapeOf(arg), {}};
      t.data.resize(t.numel());
      for (double &v : t.data)
        v = normal(argRng);
      env[arg] = t;
    }
    return evalBlock(func.getBody().front());
  }

private:
  Tensor evalBlock(Block &block) {
    for (Operation &op : block) {
      if (auto ret = dyn_cast<func::ReturnOp>(op))
        return env.at(ret.getOperand(0));
      if (auto y = dyn_cast<YieldOp>(op))
        return env.at(y.getValue());
      env[op.getResult(0)] = eval(&op);
    }
    ADD_FAILURE() << "block without terminator";
    return {};
  }

  Tensor eval(Operation *op) {
    if (auto lin = dyn_cast<LinearOp>(op)) {
      const Tensor &x = env.at(lin.getInput()), &w = env.at(lin.getWeight());
      const Tensor *b = lin.getBias() ? &env.at(lin.getBias()) : nullptr;
      return linear(x, w, b);
    }
    if (auto relu = dyn_cast<ReluOp>(op)) {
      Tensor t = env.at(relu.getInput());
      for (double &v : t.data)
        v = std::max(v, 0.0);
      return t;
    }
    if (auto mul = dyn_cast<MulOp>(op)) {
      Tensor a = env.at(mul.getLhs());
      const Tensor &b = env.at(mul.getRhs());
      EXPECT_EQ(a.shape, b.shape) << "broadcasting not needed here";
      for (size_t i = 0; i < a.data.size(); ++i)
        a.data[i] *= b.data[i];
      return a;
    }
    if (auto gate = dyn_cast<GateOp>(op))
      return evalGate(gate);
    if (auto m = dyn_cast<MixtureOp>(op))
      return evalMixture(m);
    if (auto conv = dyn_cast<DynamicConvOp>(op))
      return evalDynamicConv(conv);
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      Tensor t = env.at(collapse.getSrc());
      t.shape = shapeOf(collapse.getResult());
      return t;
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto attr = cast<DenseElementsAttr>(cst.getValue());
      Tensor t{shapeOf(cst.getResult()), {}};
      for (APFloat v : attr.getValues<APFloat>())
        t.data.push_back(v.convertToDouble());
      return t;
    }
    ADD_FAILURE() << "the interpreter does not know "
                  << op->getName().getStringRef().str();
    return {};
  }

  static Tensor linear(const Tensor &x, const Tensor &w, const Tensor *b) {
    int64_t in = w.shape[1], out = w.shape[0], tokens = x.numel() / in;
    Tensor r{x.shape, std::vector<double>(tokens * out)};
    r.shape.back() = out;
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t o = 0; o < out; ++o) {
        double acc = b ? b->data[o] : 0;
        for (int64_t i = 0; i < in; ++i)
          acc += x.data[t * in + i] * w.data[o * in + i];
        r.data[t * out + o] = acc;
      }
    return r;
  }

  /// softmax or sigmoid of `m @ W^T + b`, per head chunk for multi_head.
  Tensor evalGate(GateOp gate) {
    const Tensor &m = env.at(gate.getInput()), &w = env.at(gate.getWeight()),
                 &b = env.at(gate.getBias());
    bool heads = gate.getKind() == GatingKind::multi_head;
    int64_t h = heads ? w.shape[0] : 1, n = heads ? w.shape[1] : w.shape[0];
    int64_t d = m.shape.back(), chunk = d / h, tokens = m.numel() / d;
    Tensor r{shapeOf(gate.getResult()), std::vector<double>(tokens * h * n)};
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < h; ++j) {
        std::vector<double> logits(n);
        for (int64_t k = 0; k < n; ++k) {
          double acc = b.data[j * n + k];
          for (int64_t i = 0; i < chunk; ++i)
            acc +=
                m.data[t * d + j * chunk + i] * w.data[(j * n + k) * chunk + i];
          logits[k] = acc;
        }
        double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
        for (double &l : logits)
          sum += std::exp(l - mx);
        for (int64_t k = 0; k < n; ++k)
          r.data[(t * h + j) * n + k] =
              gate.getNormalization() == GateNormalization::softmax
                  ? std::exp(logits[k] - mx) / sum
                  : 1 / (1 + std::exp(-logits[k]));
      }
    return r;
  }

  /// g[token, head(o), k], with size-1 leading gate dimensions broadcast.
  static double gateAt(const Tensor &g, const std::vector<int64_t> &tokenIdx,
                       int64_t head, bool hasHeads, int64_t k) {
    int64_t flat = 0;
    size_t lead = tokenIdx.size();
    for (size_t i = 0; i < lead; ++i)
      flat = flat * g.shape[i] + (g.shape[i] == 1 ? 0 : tokenIdx[i]);
    if (hasHeads)
      flat = flat * g.shape[lead] + head;
    return g.data[flat * g.shape.back() + k];
  }

  static std::vector<int64_t> unravel(int64_t flat,
                                      const std::vector<int64_t> &shape) {
    std::vector<int64_t> idx(shape.size());
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      idx[i] = flat % shape[i];
      flat /= shape[i];
    }
    return idx;
  }

  /// sum_k g_k E_k(x): each expert evaluated on its own, then mixed.
  Tensor evalMixture(MixtureOp op) {
    const Tensor &x = env.at(op.getInput()), &g = env.at(op.getGate());
    int64_t n = g.shape.back();
    std::vector<Tensor> experts;
    for (int64_t k = 0; k < n; ++k) {
      if (op.hasExpertRegion()) {
        Block &block = op.getBody().front();
        env[block.getArgument(0)] = x;
        for (auto [i, w] : llvm::enumerate(op.getExpertWeights()))
          env[block.getArgument(i + 1)] = slice(env.at(w), k);
        experts.push_back(evalBlock(block));
        continue;
      }
      Tensor kk = slice(env.at(op.getKernels()), k);
      Tensor bias;
      if (op.getBias())
        bias = slice(env.at(op.getBias()), k);
      else if (op.getSharedBias())
        bias = env.at(op.getSharedBias());
      experts.push_back(linear(x, kk, bias.data.empty() ? nullptr : &bias));
    }
    Tensor r = experts[0];
    std::fill(r.data.begin(), r.data.end(), 0.0);
    int64_t f = r.shape.back();
    bool hasHeads = g.shape.size() > x.shape.size();
    int64_t h = hasHeads ? g.shape[g.shape.size() - 2] : 1;
    std::vector<int64_t> tokenShape(r.shape.begin(), r.shape.end() - 1);
    for (int64_t i = 0; i < r.numel(); ++i) {
      std::vector<int64_t> tokenIdx = unravel(i / f, tokenShape);
      int64_t head = (i % f) / (f / h);
      for (int64_t k = 0; k < n; ++k)
        r.data[i] +=
            gateAt(g, tokenIdx, head, hasHeads, k) * experts[k].data[i];
    }
    return r;
  }

  /// x (sum_k g_k K_k)^T + sum_k g_k b_k (+ c): the kernel mixed first.
  Tensor evalDynamicConv(DynamicConvOp op) {
    const Tensor &x = env.at(op.getInput()), &g = env.at(op.getGate()),
                 &kk = env.at(op.getKernels());
    int64_t n = kk.shape[0], f = kk.shape[1], d = kk.shape[2];
    int64_t tokens = x.numel() / d;
    bool hasHeads = g.shape.size() > x.shape.size();
    int64_t h = hasHeads ? g.shape[g.shape.size() - 2] : 1;
    std::vector<int64_t> tokenShape(x.shape.begin(), x.shape.end() - 1);
    Tensor r{shapeOf(op.getResult()), std::vector<double>(tokens * f)};
    for (int64_t t = 0; t < tokens; ++t) {
      std::vector<int64_t> tokenIdx = unravel(t, tokenShape);
      for (int64_t o = 0; o < f; ++o) {
        int64_t head = o / (f / h);
        double acc = 0;
        for (int64_t i = 0; i < d; ++i) {
          double kt = 0;
          for (int64_t k = 0; k < n; ++k)
            kt += gateAt(g, tokenIdx, head, hasHeads, k) *
                  kk.data[(k * f + o) * d + i];
          acc += x.data[t * d + i] * kt;
        }
        if (op.getBias())
          for (int64_t k = 0; k < n; ++k)
            acc += gateAt(g, tokenIdx, head, hasHeads, k) *
                   env.at(op.getBias()).data[k * f + o];
        if (op.getSharedBias())
          acc += env.at(op.getSharedBias()).data[o];
        r.data[t * f + o] = acc;
      }
    }
    return r;
  }

  static Tensor slice(const Tensor &stacked, int64_t k) {
    Tensor t{{stacked.shape.begin() + 1, stacked.shape.end()}, {}};
    int64_t size = t.numel();
    t.data.assign(stacked.data.begin() + k * size,
                  stacked.data.begin() + (k + 1) * size);
    return t;
  }

  llvm::DenseMap<Value, Tensor> env;
};

class RewriteNumerics : public ::testing::Test {
protected:
  RewriteNumerics() {
    registry.insert<MixDialect, arith::ArithDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(const std::string &source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  /// Proves and rewrites `module` in place; returns how many dynamic
  /// convolutions it has afterwards.
  int proveAndRewrite(ModuleOp module) {
    PassManager pm(&context);
    pm.addPass(createMixProveDynamicConvPass());
    pm.addPass(createMixMoEToDynamicConvPass());
    // Remarks of the passes are not what this test checks.
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark);
    });
    EXPECT_TRUE(succeeded(pm.run(module)));
    int convs = 0;
    module.walk([&](DynamicConvOp) { ++convs; });
    return convs;
  }

  static double maxRelError(const Tensor &a, const Tensor &b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.data.size(); ++i) {
      num = std::max(num, std::abs(a.data[i] - b.data[i]));
      den = std::max(den, std::abs(b.data[i]));
    }
    return num / std::max(den, 1e-300);
  }

  /// Evaluates `source` before and after the rewrite; expects
  /// `expectedConvs` dynamic convolutions afterwards and equal values.
  void check(const std::string &source, int expectedConvs) {
    OwningOpRef<ModuleOp> module = parse(source);
    ASSERT_TRUE(module) << source;
    auto func = *module->getOps<func::FuncOp>().begin();
    Interpreter interp;
    Tensor before = interp.run(func);
    EXPECT_EQ(proveAndRewrite(*module), expectedConvs) << source;
    Tensor after = interp.run(func);
    ASSERT_EQ(before.shape, after.shape);
    // Both forms are exact in real arithmetic; in double the sums are only
    // reassociated, so they agree to a few ulps times the reduction length.
    EXPECT_LT(maxRelError(after, before), 1e-12) << source;
  }

  DialectRegistry registry;
  MLIRContext context;
};

std::string tensorType(std::vector<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// A stacked mixture behind a gate of the given kind and normalisation.
std::string stackedMixture(int64_t b, int64_t s, int64_t d, int64_t f,
                           int64_t n, int64_t heads, const char *norm,
                           const char *biasKind) {
  std::string x = tensorType({b, s, d}), k = tensorType({n, f, d});
  bool multi = heads > 1;
  std::string w =
      multi ? tensorType({heads, n, d / heads}) : tensorType({n, d});
  std::string wb = multi ? tensorType({heads, n}) : tensorType({n});
  std::string g = multi ? tensorType({b, s, heads, n}) : tensorType({b, s, n});
  std::string out = tensorType({b, s, f});
  std::string biasType =
      std::string(biasKind) == "bias" ? tensorType({n, f}) : tensorType({f});
  bool hasBias = std::string(biasKind) != "none";
  std::string args = "%x: " + x + ", %w: " + w + ", %wb: " + wb + ", %k: " + k;
  if (hasBias)
    args += ", %c: " + biasType;
  std::string src = "func.func @f(" + args + ") -> " + out + " {\n";
  src += llvm::formatv("  %g = mix.gate {0} {1} %x, %w, %wb : ({2}, {3}, "
                       "{4}) -> {5}\n",
                       multi ? "multi_head" : "simple", norm, x, w, wb, g);
  std::string operands = "(" + x + ", " + g + ", " + k;
  src += "  %u = mix.mixture %x, %g kernels %k";
  if (hasBias) {
    src += std::string(" ") + biasKind + " %c";
    operands += ", " + biasType;
  }
  src += " : " + operands + ") -> " + out + "\n";
  src += "  return %u : " + out + "\n}\n";
  return src;
}

TEST_F(RewriteNumerics, StackedShapes) {
  // Odd sizes, one token, one stream, per-head gates.
  struct Case {
    int64_t b, s, d, f, n, heads;
  } cases[] = {{2, 3, 5, 7, 3, 1},
               {1, 1, 4, 6, 1, 1},
               {2, 4, 6, 9, 8, 1},
               {1, 5, 8, 12, 4, 2},
               {3, 2, 12, 6, 2, 3}};
  for (const Case &c : cases)
    for (const char *bias : {"none", "bias", "shared_bias"})
      check(stackedMixture(c.b, c.s, c.d, c.f, c.n, c.heads, "softmax", bias),
            1);
}

TEST_F(RewriteNumerics, SigmoidGate) {
  // Proved and rewritten without a shared bias; refused with one.
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "bias"), 1);
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "none"), 1);
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "shared_bias"), 0);
}

TEST_F(RewriteNumerics, RegionExperts) {
  // One linear layer with its own bias: rewritten.
  check(R"mlir(
func.func @f(%x: tensor<3x5xf32>, %w: tensor<4x5xf32>, %wb: tensor<4xf32>,
             %k: tensor<4x7x5xf32>, %b: tensor<4x7xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %u = mix.mixture %x, %g experts(%k, %b) : (tensor<3x5xf32>, tensor<3x4xf32>, tensor<4x7x5xf32>, tensor<4x7xf32>) -> tensor<3x7xf32> {
  ^bb0(%xi: tensor<3x5xf32>, %kk: tensor<7x5xf32>, %bk: tensor<7xf32>):
    %y = mix.linear %xi, %kk, %bk : (tensor<3x5xf32>, tensor<7x5xf32>, tensor<7xf32>) -> tensor<3x7xf32>
    mix.yield %y : tensor<3x7xf32>
  }
  return %u : tensor<3x7xf32>
}
)mlir",
        1);
  // ReLU experts: refused, left alone (and so trivially equal).
  check(R"mlir(
func.func @f(%x: tensor<3x5xf32>, %w: tensor<4x5xf32>, %wb: tensor<4xf32>,
             %k: tensor<4x7x5xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %u = mix.mixture %x, %g experts(%k) : (tensor<3x5xf32>, tensor<3x4xf32>, tensor<4x7x5xf32>) -> tensor<3x7xf32> {
  ^bb0(%xi: tensor<3x5xf32>, %kk: tensor<7x5xf32>):
    %y = mix.linear %xi, %kk : (tensor<3x5xf32>, tensor<7x5xf32>) -> tensor<3x7xf32>
    %z = mix.relu %y : tensor<3x7xf32>
    mix.yield %z : tensor<3x7xf32>
  }
  return %u : tensor<3x7xf32>
}
)mlir",
        0);
}

/// The counterexamples the prover prints are real: evaluating the ReLU
/// mixture and the dynamic convolution with the mixed kernel on random data
/// gives different values, so refusing it was right.
TEST_F(RewriteNumerics, ReluMixtureIsNotItsConvolution) {
  const char *mixture = R"mlir(
func.func @f(%x: tensor<3x5xf32>, %w: tensor<4x5xf32>, %wb: tensor<4xf32>,
             %k: tensor<4x7x5xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %u = mix.mixture %x, %g experts(%k) : (tensor<3x5xf32>, tensor<3x4xf32>, tensor<4x7x5xf32>) -> tensor<3x7xf32> {
  ^bb0(%xi: tensor<3x5xf32>, %kk: tensor<7x5xf32>):
    %y = mix.linear %xi, %kk : (tensor<3x5xf32>, tensor<7x5xf32>) -> tensor<3x7xf32>
    %z = mix.relu %y : tensor<3x7xf32>
    mix.yield %z : tensor<3x7xf32>
  }
  return %u : tensor<3x7xf32>
}
)mlir";
  const char *naive = R"mlir(
func.func @f(%x: tensor<3x5xf32>, %w: tensor<4x5xf32>, %wb: tensor<4xf32>,
             %k: tensor<4x7x5xf32>) -> tensor<3x7xf32> {
  %g = mix.gate simple softmax %x, %w, %wb : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %u = mix.dynamic_conv %x, %g kernels %k : (tensor<3x5xf32>, tensor<3x4xf32>, tensor<4x7x5xf32>) -> tensor<3x7xf32>
  %z = mix.relu %u : tensor<3x7xf32>
  return %z : tensor<3x7xf32>
}
)mlir";
  OwningOpRef<ModuleOp> a = parse(mixture), b = parse(naive);
  ASSERT_TRUE(a && b);
  Interpreter interp;
  Tensor ta = interp.run(*a->getOps<func::FuncOp>().begin());
  Tensor tb = interp.run(*b->getOps<func::FuncOp>().begin());
  EXPECT_GT(maxRelError(ta, tb), 1e-2);
}

} // namespace
