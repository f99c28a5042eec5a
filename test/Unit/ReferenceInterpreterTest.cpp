//===- ReferenceInterpreterTest.cpp - The interpreter against hand values -===//
//
// Runs tiny functions of each op family through the reference interpreter
// and compares the results with values worked out by hand (small integer
// inputs, closed forms), never with the interpreter's own output.
//
//===----------------------------------------------------------------------===//

#include "mix/Interpreter/ReferenceInterpreter.h"
#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::mix;

namespace {

/// A tensor of the given shape and row-major elements.
RefTensor T(ArrayRef<int64_t> shape, std::vector<double> data) {
  RefTensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.data = std::move(data);
  return t;
}

double sigmoid(double u) { return 1 / (1 + std::exp(-u)); }

class ReferenceInterpreterTest : public ::testing::Test {
protected:
  ReferenceInterpreterTest() {
    DialectRegistry registry;
    registry.insert<MixDialect, arith::ArithDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source`, which must hold one function, into `module`.
  func::FuncOp parse(const std::string &source) {
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  /// Runs the one function of `source` on `args`; an empty list when it
  /// does not parse or fails (with a test failure saying why).
  SmallVector<RefTensor> run(const std::string &source,
                             ArrayRef<RefTensor> args) {
    func::FuncOp func = parse(source);
    EXPECT_TRUE(func) << source;
    if (!func)
      return {};
    FailureOr<SmallVector<RefTensor>> results = interp.run(func, args);
    EXPECT_TRUE(succeeded(results)) << interp.getError();
    if (failed(results))
      return {};
    return *results;
  }

  /// Runs `source` on `args` and checks its only result against `want`.
  void expectResult(const std::string &source, ArrayRef<RefTensor> args,
                    const RefTensor &want, double tolerance = 1e-12) {
    SmallVector<RefTensor> results = run(source, args);
    ASSERT_EQ(results.size(), 1u) << source;
    expectNear(results[0], want, tolerance);
  }

  static void expectNear(const RefTensor &have, const RefTensor &want,
                         double tolerance = 1e-12) {
    ASSERT_EQ(have.shape, want.shape);
    ASSERT_EQ(have.data.size(), want.data.size());
    for (size_t i = 0; i < want.data.size(); ++i)
      EXPECT_NEAR(have.data[i], want.data[i], tolerance) << "element " << i;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  ReferenceInterpreter interp;
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, BroadcastingAdd) {
  // (2,1) + (1,3): each operand repeated along its size-1 dimension.
  expectResult(R"mlir(
func.func @f(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %y = mix.add %a, %b : tensor<2x1xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
)mlir",
               {T({2, 1}, {1, 2}), T({1, 3}, {10, 20, 30})},
               T({2, 3}, {11, 21, 31, 12, 22, 32}));
}

TEST_F(ReferenceInterpreterTest, BinaryOps) {
  SmallVector<RefTensor> r = run(R"mlir(
func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = mix.sub %a, %b : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  %m = mix.mul %a, %b : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  %d = mix.div %a, %b : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  %x = mix.max %a, %b : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x2xf32>
  return %s, %m, %d, %x : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
)mlir",
                                 {T({2, 2}, {1, 6, -3, 8}), T({2, 1}, {2, 4})});
  ASSERT_EQ(r.size(), 4u);
  expectNear(r[0], T({2, 2}, {-1, 4, -7, 4}));
  expectNear(r[1], T({2, 2}, {2, 12, -12, 32}));
  expectNear(r[2], T({2, 2}, {0.5, 3, -0.75, 2}));
  expectNear(r[3], T({2, 2}, {2, 6, 4, 8}));
}

TEST_F(ReferenceInterpreterTest, UnaryOpsAndActivations) {
  const char *source = R"mlir(
func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %n = mix.neg %x : tensor<3xf32>
  %r = mix.relu %x : tensor<3xf32>
  %s = mix.step %x : tensor<3xf32>
  %g = mix.gelu %x : tensor<3xf32>
  %i = mix.silu %x : tensor<3xf32>
  %q = mix.stop_gradient %x : tensor<3xf32>
  return %n, %r, %s, %g, %i, %q : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir";
  SmallVector<RefTensor> r = run(source, {T({3}, {-1, 0, 2})});
  ASSERT_EQ(r.size(), 6u);
  expectNear(r[0], T({3}, {1, 0, -2}));
  expectNear(r[1], T({3}, {0, 0, 2}));
  expectNear(r[2], T({3}, {0, 0, 1}));
  // GELU(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))).
  double c = std::sqrt(2 / M_PI);
  expectNear(r[3], T({3}, {-0.5 * (1 + std::tanh(c * (-1 - 0.044715))), 0,
                           (1 + std::tanh(c * (2 + 0.044715 * 8)))}));
  expectNear(r[4], T({3}, {-sigmoid(-1), 0, 2 * sigmoid(2)}));
  expectNear(r[5], T({3}, {-1, 0, 2}));

  const char *positive = R"mlir(
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %e = mix.exp %x : tensor<2xf32>
  %l = mix.log %x : tensor<2xf32>
  %s = mix.sqrt %x : tensor<2xf32>
  %r = mix.rsqrt %x : tensor<2xf32>
  %t = mix.tanh %x : tensor<2xf32>
  %g = mix.sigmoid %x : tensor<2xf32>
  return %e, %l, %s, %r, %t, %g : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
)mlir";
  r = run(positive, {T({2}, {1, 4})});
  ASSERT_EQ(r.size(), 6u);
  expectNear(r[0], T({2}, {M_E, std::pow(M_E, 4)}), 1e-10);
  expectNear(r[1], T({2}, {0, 2 * M_LN2}));
  expectNear(r[2], T({2}, {1, 2}));
  expectNear(r[3], T({2}, {1, 0.5}));
  expectNear(r[4], T({2}, {(M_E * M_E - 1) / (M_E * M_E + 1),
                           (std::pow(M_E, 8) - 1) / (std::pow(M_E, 8) + 1)}));
  expectNear(r[5], T({2}, {M_E / (M_E + 1), 1 / (1 + std::pow(M_E, -4))}));
}

TEST_F(ReferenceInterpreterTest, Constants) {
  // A dense and a splat constant, added with broadcasting.
  expectResult(R"mlir(
func.func @f() -> tensor<2x2xf32> {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf32>
  %b = arith.constant dense<-1.0> : tensor<2x2xf32>
  %y = mix.add %a, %b : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
)mlir",
               {}, T({2, 2}, {0, 1, 2, 3.5}));
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, LinearWithBias) {
  // y[t, o] = sum_i x[t, i] W[o, i] + b[o].
  expectResult(R"mlir(
func.func @f(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %y = mix.linear %x, %w, %b : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
)mlir",
               {T({2, 3}, {1, 2, 3, 4, 5, 6}), T({2, 3}, {1, 0, -1, 2, 1, 0}),
                T({2}, {10, 20})},
               T({2, 2}, {8, 24, 8, 33}));
}

TEST_F(ReferenceInterpreterTest, MatmulTransposes) {
  // x W^T with transpose_rhs.
  expectResult(R"mlir(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %y = mix.matmul %a, %b transpose_rhs : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
)mlir",
               {T({2, 3}, {1, 2, 3, 4, 5, 6}), T({2, 3}, {1, 0, -1, 2, 1, 0})},
               T({2, 2}, {-2, 4, -2, 13}));
  // Batched, transpose_lhs: batch 0 is [[1,3],[2,4]] [1,1]^T = [4,6];
  // batch 1 is [[0,1],[1,0]] [2,3]^T = [3,2].
  expectResult(
      R"mlir(
func.func @f(%a: tensor<2x2x2xf32>, %b: tensor<2x2x1xf32>) -> tensor<2x2x1xf32> {
  %y = mix.matmul %a, %b transpose_lhs : (tensor<2x2x2xf32>, tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  return %y : tensor<2x2x1xf32>
}
)mlir",
      {T({2, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0}), T({2, 2, 1}, {1, 1, 2, 3})},
      T({2, 2, 1}, {4, 6, 3, 2}));
}

TEST_F(ReferenceInterpreterTest, LayerNorm) {
  // Row [1, 3]: mean 2, biased variance 1, so (x - 2) / sqrt(1 + eps);
  // row [5, 5]: variance 0, so just the bias.
  double s = std::sqrt(1 + 1e-5);
  expectResult(R"mlir(
func.func @f(%x: tensor<2x2xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %y = mix.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
)mlir",
               {T({2, 2}, {1, 3, 5, 5}), T({2}, {2, 3}), T({2}, {1, 0})},
               T({2, 2}, {1 - 2 / s, 3 / s, 1, 0}));
}

//===----------------------------------------------------------------------===//
// Shapes and reductions
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, ReshapeCollapseExpand) {
  SmallVector<RefTensor> r = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>, tensor<1x6x1xf32>) {
  %r = mix.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %e = tensor.expand_shape %c [[0, 1, 2]] output_shape [1, 6, 1] : tensor<6xf32> into tensor<1x6x1xf32>
  return %r, %c, %e : tensor<3x2xf32>, tensor<6xf32>, tensor<1x6x1xf32>
}
)mlir",
                                 {T({2, 3}, {0, 1, 2, 3, 4, 5})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], T({3, 2}, {0, 1, 2, 3, 4, 5}));
  expectNear(r[1], T({6}, {0, 1, 2, 3, 4, 5}));
  expectNear(r[2], T({1, 6, 1}, {0, 1, 2, 3, 4, 5}));
}

TEST_F(ReferenceInterpreterTest, Transpose) {
  // x[i, j, k] = 100 i + 10 j + k; result dimension r is input dimension
  // perm[r], so with [1, 2, 0] result[j, k, i] = x[i, j, k].
  RefTensor x = RefTensor::zeros({2, 3, 4});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        x.data[(i * 3 + j) * 4 + k] = 100 * i + 10 * j + k;
  RefTensor want = RefTensor::zeros({3, 4, 2});
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i)
        want.data[(j * 4 + k) * 2 + i] = 100 * i + 10 * j + k;
  expectResult(R"mlir(
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %t = mix.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  return %t : tensor<3x4x2xf32>
}
)mlir",
               {x}, want);
}

TEST_F(ReferenceInterpreterTest, SliceConcatBroadcast) {
  SmallVector<RefTensor> r = run(
      R"mlir(
func.func @f(%x: tensor<2x5xf32>, %a: tensor<2x1xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>) {
  %s = mix.slice %x dim 1 offset 2 : tensor<2x5xf32> -> tensor<2x2xf32>
  %c = mix.concat %a, %s dim 1 : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %b = mix.broadcast %a : tensor<2x1xf32> -> tensor<2x4xf32>
  return %s, %c, %b : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>
}
)mlir",
      {T({2, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}), T({2, 1}, {-1, -2})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], T({2, 2}, {2, 3, 12, 13}));
  expectNear(r[1], T({2, 3}, {-1, 2, 3, -2, 12, 13}));
  expectNear(r[2], T({2, 4}, {-1, -1, -1, -1, -2, -2, -2, -2}));
}

TEST_F(ReferenceInterpreterTest, Reductions) {
  // The reduced dimensions stay, of size 1.
  SmallVector<RefTensor> r = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<1x1xf32>, tensor<1x3xf32>) {
  %s = mix.reduce_sum %x dims [1] : tensor<2x3xf32> -> tensor<2x1xf32>
  %a = mix.reduce_sum %x dims [0, 1] : tensor<2x3xf32> -> tensor<1x1xf32>
  %m = mix.reduce_max %x dims [0] : tensor<2x3xf32> -> tensor<1x3xf32>
  return %s, %a, %m : tensor<2x1xf32>, tensor<1x1xf32>, tensor<1x3xf32>
}
)mlir",
                                 {T({2, 3}, {1, 2, 3, 4, -5, 6})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], T({2, 1}, {6, 5}));
  expectNear(r[1], T({1, 1}, {11}));
  expectNear(r[2], T({1, 3}, {4, 2, 6}));
}

TEST_F(ReferenceInterpreterTest, Cumsum) {
  SmallVector<RefTensor> r = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = mix.cumsum %x dim 1 : tensor<2x3xf32>
  %b = mix.cumsum %x dim 1 reverse : tensor<2x3xf32>
  %c = mix.cumsum %x dim 0 : tensor<2x3xf32>
  return %a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir",
                                 {T({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], T({2, 3}, {1, 3, 6, 4, 9, 15}));
  expectNear(r[1], T({2, 3}, {6, 5, 3, 15, 11, 6}));
  expectNear(r[2], T({2, 3}, {1, 2, 3, 5, 7, 9}));
}

TEST_F(ReferenceInterpreterTest, PrefixMean) {
  // The running mean over the sequence (dimension 1), per batch row.
  expectResult(R"mlir(
func.func @f(%x: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %c = mix.prefix_mean %x : tensor<2x3x2xf32>
  return %c : tensor<2x3x2xf32>
}
)mlir",
               {T({2, 3, 2}, {1, 2, 3, 4, 5, 9, 0, 0, 6, 3, 0, 3})},
               T({2, 3, 2}, {1, 2, 2, 3, 3, 5, 0, 0, 3, 1.5, 2, 2}));
}

//===----------------------------------------------------------------------===//
// Gates
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, SoftmaxGate) {
  // Identity weight, bias 0: logits are the features. Token [1, 0] gives
  // softmax([1, 0]), token [0, 0] an even split.
  double e = M_E;
  expectResult(
      R"mlir(
func.func @f(%m: tensor<2x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %g = mix.gate simple softmax %m, %w, %b : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}
)mlir",
      {T({2, 2}, {1, 0, 0, 0}), T({2, 2}, {1, 0, 0, 1}), T({2}, {0, 0})},
      T({2, 2}, {e / (e + 1), 1 / (e + 1), 0.5, 0.5}));
}

TEST_F(ReferenceInterpreterTest, MultiHeadSigmoidGate) {
  // Head j sees feature j: head 0's logit 1 * 2 + 0, head 1's 3 * -1 + 1.
  expectResult(R"mlir(
func.func @f(%m: tensor<1x2xf32>, %w: tensor<2x1x1xf32>, %b: tensor<2x1xf32>) -> tensor<1x2x1xf32> {
  %g = mix.gate multi_head sigmoid %m, %w, %b : (tensor<1x2xf32>, tensor<2x1x1xf32>, tensor<2x1xf32>) -> tensor<1x2x1xf32>
  return %g : tensor<1x2x1xf32>
}
)mlir",
               {T({1, 2}, {2, -1}), T({2, 1, 1}, {1, 3}), T({2, 1}, {0, 1})},
               T({1, 2, 1}, {sigmoid(2), sigmoid(-2)}));
}

TEST_F(ReferenceInterpreterTest, AdaptiveAndContextAwareGates) {
  // adaptive: the logits [1, 0] scaled by 2.
  double e2 = std::exp(2.0);
  expectResult(R"mlir(
func.func @f(%m: tensor<1x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>, %s: tensor<1x1xf32>) -> tensor<1x2xf32> {
  %g = mix.gate adaptive softmax %m, %w, %b scale %s : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<1x1xf32>) -> tensor<1x2xf32>
  return %g : tensor<1x2xf32>
}
)mlir",
               {T({1, 2}, {1, 0}), T({2, 2}, {1, 0, 0, 1}), T({2}, {0, 0}),
                T({1, 1}, {2})},
               T({1, 2}, {e2 / (e2 + 1), 1 / (e2 + 1)}));
  // context_aware: [1, 3] * [2, 1] = [2, 3], normalised to [-a, a] with
  // a = 0.5 / sqrt(0.25 + eps); the logits are those.
  double a = 0.5 / std::sqrt(0.25 + 1e-5), ea = std::exp(2 * a);
  expectResult(R"mlir(
func.func @f(%m: tensor<1x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>, %mod: tensor<1x2xf32>, %lw: tensor<2xf32>, %lb: tensor<2xf32>) -> tensor<1x2xf32> {
  %g = mix.gate context_aware softmax %m, %w, %b modulation %mod norm(%lw, %lb) {eps = 1.0e-05 : f64} : (tensor<1x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %g : tensor<1x2xf32>
}
)mlir",
               {T({1, 2}, {1, 3}), T({2, 2}, {1, 0, 0, 1}), T({2}, {0, 0}),
                T({1, 2}, {2, 1}), T({2}, {1, 1}), T({2}, {0, 0})},
               T({1, 2}, {1 / (1 + ea), ea / (1 + ea)}));
}

//===----------------------------------------------------------------------===//
// Mixtures and dynamic convolutions
//===----------------------------------------------------------------------===//

/// ReLU experts plus a value from above the region:
/// E_k(x) = relu(x K_k^T) + c.
const char *regionMixture = R"mlir(
func.func @f(%x: tensor<1x2xf32>, %g: tensor<1x2xf32>, %k: tensor<2x2x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %u = mix.mixture %x, %g experts(%k) : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2x2xf32>) -> tensor<1x2xf32> {
  ^bb0(%xi: tensor<1x2xf32>, %kk: tensor<2x2xf32>):
    %y = mix.linear %xi, %kk : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
    %z = mix.relu %y : tensor<1x2xf32>
    %w = mix.add %z, %c : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<1x2xf32>
    mix.yield %w : tensor<1x2xf32>
  }
  return %u : tensor<1x2xf32>
}
)mlir";

/// K_0 = [[1,0],[0,-1]], K_1 = [[1,1],[1,0]].
RefTensor regionKernels() { return T({2, 2, 2}, {1, 0, 0, -1, 1, 1, 1, 0}); }

TEST_F(ReferenceInterpreterTest, RegionMixture) {
  // x = [1, 2]: E_0 = relu([1, -2]) + [10, 20] = [11, 20],
  // E_1 = relu([3, 1]) + [10, 20] = [13, 21];
  // 0.25 E_0 + 0.75 E_1 = [12.5, 20.75].
  expectResult(regionMixture,
               {T({1, 2}, {1, 2}), T({1, 2}, {0.25, 0.75}), regionKernels(),
                T({1, 2}, {10, 20})},
               T({1, 2}, {12.5, 20.75}));
}

TEST_F(ReferenceInterpreterTest, EvaluateExpert) {
  func::FuncOp func = parse(regionMixture);
  ASSERT_TRUE(func);
  auto mixture = *func.getOps<MixtureOp>().begin();
  interp.bind(func.getArgument(1), T({1, 2}, {0.25, 0.75}));
  interp.bind(func.getArgument(2), regionKernels());
  interp.bind(func.getArgument(3), T({1, 2}, {10, 20}));
  FailureOr<RefTensor> e1 =
      interp.evaluateExpert(mixture, 1, T({1, 2}, {1, 2}));
  ASSERT_TRUE(succeeded(e1)) << interp.getError();
  expectNear(*e1, T({1, 2}, {13, 21}));
  // Another input for the same expert: nothing inside the region is
  // remembered from the first call. [2, 0] K_1^T = [2, 2].
  FailureOr<RefTensor> again =
      interp.evaluateExpert(mixture, 1, T({1, 2}, {2, 0}));
  ASSERT_TRUE(succeeded(again)) << interp.getError();
  expectNear(*again, T({1, 2}, {12, 22}));
  FailureOr<RefTensor> e0 =
      interp.evaluateExpert(mixture, 0, T({1, 2}, {2, 0}));
  ASSERT_TRUE(succeeded(e0)) << interp.getError();
  expectNear(*e0, T({1, 2}, {12, 20}));
  // There is no expert 2, and an input of the wrong shape is refused.
  EXPECT_TRUE(failed(interp.evaluateExpert(mixture, 2, T({1, 2}, {0, 0}))));
  EXPECT_NE(interp.getError().find("mix.mixture"), std::string::npos);
  EXPECT_TRUE(failed(interp.evaluateExpert(mixture, 0, T({2}, {0, 0}))));
  EXPECT_NE(interp.getError().find("shape"), std::string::npos)
      << interp.getError();
  // The whole mixture, with x bound too: the weighted sum of the experts.
  interp.bind(func.getArgument(0), T({1, 2}, {1, 2}));
  FailureOr<RefTensor> u = interp.evaluate(mixture.getResult());
  ASSERT_TRUE(succeeded(u)) << interp.getError();
  expectNear(*u, T({1, 2}, {12.5, 20.75}));
}

TEST_F(ReferenceInterpreterTest, StackedMixtureWithSharedBias) {
  // One gate (1,1,N) shared by both positions, not summing to one, so the
  // shared bias is counted once per expert: E_k(x) = x K_k^T + 3 with
  // K_0 = [1, 1], K_1 = [1, -1]. Position [1, 2]: 0.5 * 6 + 2 * 2 = 7;
  // position [0, 1]: 0.5 * 4 + 2 * 2 = 6.
  expectResult(R"mlir(
func.func @f(%x: tensor<1x2x2xf32>, %g: tensor<1x1x2xf32>, %k: tensor<2x1x2xf32>, %c: tensor<1xf32>) -> tensor<1x2x1xf32> {
  %u = mix.mixture %x, %g kernels %k shared_bias %c : (tensor<1x2x2xf32>, tensor<1x1x2xf32>, tensor<2x1x2xf32>, tensor<1xf32>) -> tensor<1x2x1xf32>
  return %u : tensor<1x2x1xf32>
}
)mlir",
               {T({1, 2, 2}, {1, 2, 0, 1}), T({1, 1, 2}, {0.5, 2}),
                T({2, 1, 2}, {1, 1, 1, -1}), T({1}, {3})},
               T({1, 2, 1}, {7, 6}));
}

TEST_F(ReferenceInterpreterTest, StackedMixtureWithPerHeadGate) {
  // Two heads over f = 2: channel 0 follows head 0's gate [1, 0], channel
  // 1 head 1's [0.5, 0.5]. K_0 = I, K_1 = [[2, 2], [1, -1]], b_0 = [10, 20],
  // b_1 = [30, 40]; x = [1, 2]: E_0 = [11, 22], E_1 = [36, 39];
  // channel 0: 11, channel 1: 0.5 * 22 + 0.5 * 39 = 30.5.
  expectResult(R"mlir(
func.func @f(%x: tensor<1x2xf32>, %g: tensor<1x2x2xf32>, %k: tensor<2x2x2xf32>, %b: tensor<2x2xf32>) -> tensor<1x2xf32> {
  %u = mix.mixture %x, %g kernels %k bias %b : (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %u : tensor<1x2xf32>
}
)mlir",
               {T({1, 2}, {1, 2}), T({1, 2, 2}, {1, 0, 0.5, 0.5}),
                T({2, 2, 2}, {1, 0, 0, 1, 2, 2, 1, -1}),
                T({2, 2}, {10, 20, 30, 40})},
               T({1, 2}, {11, 30.5}));
}

TEST_F(ReferenceInterpreterTest, PerHeadDynamicConv) {
  // The per-head gate and kernels above: channel 0's kernel mixes to
  // 1 * [1, 0] + 0 * [2, 2], channel 1's to 0.5 * [0, 1] + 0.5 * [1, -1]
  // = [0.5, 0]. With the bias: [1 + 10, 0.5 + 0.5 * 20 + 0.5 * 40]; with a
  // shared bias [100, 200] instead: [101, 200.5]. Both orders agree.
  SmallVector<RefTensor> r =
      run(R"mlir(
func.func @f(%x: tensor<1x2xf32>, %g: tensor<1x2x2xf32>, %k: tensor<2x2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) {
  %u = mix.dynamic_conv %x, %g kernels %k bias %b order apply_then_mix : (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %v = mix.dynamic_conv %x, %g kernels %k bias %b order mix_then_apply : (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %w = mix.dynamic_conv %x, %g kernels %k shared_bias %c : (tensor<1x2xf32>, tensor<1x2x2xf32>, tensor<2x2x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %u, %v, %w : tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>
}
)mlir",
          {T({1, 2}, {1, 2}), T({1, 2, 2}, {1, 0, 0.5, 0.5}),
           T({2, 2, 2}, {1, 0, 0, 1, 2, 2, 1, -1}), T({2, 2}, {10, 20, 30, 40}),
           T({2}, {100, 200})});
  ASSERT_EQ(r.size(), 3u);
  expectNear(r[0], T({1, 2}, {11, 30.5}));
  expectNear(r[1], T({1, 2}, {11, 30.5}));
  expectNear(r[2], T({1, 2}, {101, 200.5}));
}

//===----------------------------------------------------------------------===//
// Bindings, memo and failures
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, BindOverridesAValue) {
  func::FuncOp func = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %n = mix.neg %x : tensor<2xf32>
  %y = mix.mul %n, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(func);
  Value x = func.getArgument(0);
  auto mul = *func.getOps<MulOp>().begin();
  interp.bind(x, T({2}, {1, 3}));
  FailureOr<RefTensor> y = interp.evaluate(mul.getResult());
  ASSERT_TRUE(succeeded(y)) << interp.getError();
  expectNear(*y, T({2}, {-1, -9}));
  // Overriding the intermediate %n: the memoized product is recomputed.
  interp.bind(mul.getLhs(), T({2}, {2, 2}));
  y = interp.evaluate(mul.getResult());
  ASSERT_TRUE(succeeded(y)) << interp.getError();
  expectNear(*y, T({2}, {2, 6}));
}

TEST_F(ReferenceInterpreterTest, Failures) {
  // An op the interpreter does not know, named in the message.
  func::FuncOp func = parse(R"mlir(
func.func @f(%t: tensor<4x2xf32>, %ids: tensor<3xi32>) -> tensor<3x2xf32> {
  %x = mix.gather %t, %ids : (tensor<4x2xf32>, tensor<3xi32>) -> tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}
)mlir");
  ASSERT_TRUE(func);
  EXPECT_TRUE(failed(
      interp.run(func, {RefTensor::zeros({4, 2}), RefTensor::zeros({3})})));
  EXPECT_NE(interp.getError().find("'mix.gather'"), std::string::npos)
      << interp.getError();

  // An unregistered op.
  context.allowUnregisteredDialects();
  func = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = mix.relu %y : tensor<2xf32>
  return %z : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(func);
  EXPECT_TRUE(failed(interp.run(func, {T({2}, {1, 2})})));
  EXPECT_NE(interp.getError().find("'foo.bar'"), std::string::npos)
      << interp.getError();

  // An unbound block argument, and an argument of the wrong shape.
  func = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %z = mix.relu %x : tensor<2xf32>
  return %z : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(func);
  interp.clear();
  Value z = func.getBody().front().getTerminator()->getOperand(0);
  EXPECT_TRUE(failed(interp.evaluate(z)));
  EXPECT_NE(interp.getError().find("not bound"), std::string::npos)
      << interp.getError();
  EXPECT_TRUE(failed(interp.run(func, {T({3}, {1, 2, 3})})));
  EXPECT_NE(interp.getError().find("shape (3)"), std::string::npos)
      << interp.getError();
  EXPECT_TRUE(failed(interp.run(func, {})));

  // A bound override of the wrong shape is caught where it is used.
  interp.clear();
  interp.bind(func.getArgument(0), T({2, 1}, {1, 2}));
  EXPECT_TRUE(failed(interp.evaluate(z)));
  EXPECT_NE(interp.getError().find("'mix.relu'"), std::string::npos)
      << interp.getError();
}

TEST_F(ReferenceInterpreterTest, RandomTensorsAndDifferences) {
  std::mt19937 rng(7);
  RefTensor small = randomTensor({3, 5}, rng, RandomFill::SmallIntegers);
  ASSERT_EQ(small.data.size(), 15u);
  for (double v : small.data) {
    EXPECT_EQ(v, std::round(v));
    EXPECT_GE(v, -2);
    EXPECT_LE(v, 2);
  }
  RefTensor normal = randomTensor({4}, rng);
  EXPECT_EQ(normal.shape, SmallVector<int64_t>({4}));
  EXPECT_EQ(maxAbsDifference(T({2}, {1, 2}), T({2}, {1.5, 0})), 2);
  EXPECT_TRUE(std::isinf(maxAbsDifference(T({2}, {1, 2}), T({1, 2}, {1, 2}))));
  EXPECT_TRUE(std::isnan(maxAbsDifference(T({1}, {NAN}), T({1}, {0}))));
  EXPECT_EQ(RefTensor::zeros({2, 0}).numel(), 0);
  EXPECT_EQ(RefTensor::zeros({}).numel(), 1);
}

} // namespace
