//===- RewriteNumericsTest.cpp - Both forms of each rewrite, on data ------===//
//
// Runs the prove and rewrite passes on mixtures of random shapes, evaluates
// the IR before and after in double precision with the reference
// interpreter (lib/Interpreter), and checks that every rewrite kept the
// value.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Interpreter/ReferenceInterpreter.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::mix;

namespace {

/// Evaluates the single result of `func` with the reference interpreter on
/// random arguments (the same arguments for every function of the same
/// signature).
RefTensor runOnRandomArguments(func::FuncOp func) {
  std::mt19937 rng(1234);
  SmallVector<RefTensor> args;
  for (BlockArgument arg : func.getArguments())
    args.push_back(
        randomTensor(cast<RankedTensorType>(arg.getType()).getShape(), rng));
  ReferenceInterpreter interp;
  FailureOr<SmallVector<RefTensor>> results = interp.run(func, args);
  EXPECT_TRUE(succeeded(results)) << interp.getError();
  if (failed(results))
    return {};
  EXPECT_EQ(results->size(), 1u);
  return results->empty() ? RefTensor() : std::move(results->front());
}

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

  static double maxRelError(const RefTensor &a, const RefTensor &b) {
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
    RefTensor before = runOnRandomArguments(func);
    EXPECT_EQ(proveAndRewrite(*module), expectedConvs) << source;
    RefTensor after = runOnRandomArguments(func);
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
  // Proved and rewritten with every kind of bias; a shared one leaves the
  // mixture gate-summed, (sum_k g_k) c, since the rows need not sum to one.
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "bias"), 1);
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "none"), 1);
  check(stackedMixture(2, 3, 5, 7, 3, 1, "sigmoid", "shared_bias"), 1);
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
  RefTensor ta = runOnRandomArguments(*a->getOps<func::FuncOp>().begin());
  RefTensor tb = runOnRandomArguments(*b->getOps<func::FuncOp>().begin());
  EXPECT_GT(maxRelError(ta, tb), 1e-2);
}

} // namespace
