//===- AttentionKernelTest.cpp - The CPU's fused attention kernels --------===//
//
// mixrt_flash_attention and mixrt_flash_attention_grad (the support code's
// runtime/support/CPUAttention.c, which mix-attention-calls lowers the
// fused attention ops to) called directly, against libtorch's attention in
// float64 with the whole score matrix: softmax(q k^T / sqrt(dh) + mask) v,
// and its gradients by autograd. The shapes cross the kernels' tiles of 64
// queries and keys, with ragged last tiles, head widths that are not
// multiples of the vectors' 16, and prefixes of several tiles.
//
//===----------------------------------------------------------------------===//

#include "../Support/AttentionShape.h"

#include "mixrt/PackageABI.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

using torch::Tensor;

namespace {

using Shape = mixtest::AttentionShape;

/// The attention of \p qkv (B,S,3d) with prefixes (P,heads,T_p,dh) or
/// none, as docs/models.md defines it, in float64 with the score matrix.
Tensor reference(const Tensor &qkv, const Tensor &pk, const Tensor &pv,
                 const Shape &s) {
  int64_t d = s.heads * s.dh;
  auto heads = [&](const Tensor &x) {
    return x.reshape({s.batch, s.seq, s.heads, s.dh}).permute({0, 2, 1, 3});
  };
  Tensor q = heads(qkv.narrow(2, 0, d)), k = heads(qkv.narrow(2, d, d)),
         v = heads(qkv.narrow(2, 2 * d, d));
  Tensor mask = torch::ones({s.seq, s.seq}, torch::kBool).tril().logical_not();
  if (s.prefix) {
    // Batch row b belongs to stream b / (B/P).
    Tensor rows = torch::div(torch::arange(s.batch), s.batch / s.streams,
                             /*rounding_mode=*/"floor");
    k = torch::cat({pk.index_select(0, rows), k}, 2);
    v = torch::cat({pv.index_select(0, rows), v}, 2);
    mask = torch::cat({torch::zeros({s.seq, s.prefix}, torch::kBool), mask}, 1);
  }
  Tensor scores = torch::matmul(q, k.transpose(2, 3)) / std::sqrt(s.dh);
  scores = scores.masked_fill(mask, -INFINITY);
  Tensor out = torch::matmul(torch::softmax(scores, -1), v);
  return out.permute({0, 2, 1, 3}).reshape({s.batch, s.seq, d});
}

/// |got - want| / |want|, or |got| where want is zero (one query's dq and
/// dk: a softmax of one score has no gradient).
double relError(const Tensor &got, const Tensor &want) {
  Tensor g = got.to(torch::kFloat64), w = want.to(torch::kFloat64);
  double norm = w.norm().item<double>();
  return (g - w).norm().item<double>() / (norm > 0 ? norm : 1.0);
}

class AttentionKernel : public ::testing::TestWithParam<Shape> {};

TEST_P(AttentionKernel, ForwardAndGradientsAgainstLibtorch) {
  const Shape s = GetParam();
  torch::manual_seed(7);
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  int64_t d = s.heads * s.dh;
  // Scores of a few units, so that the softmax is far from uniform.
  Tensor qkv =
      (2 * torch::randn({s.batch, s.seq, 3 * d}, f64)).requires_grad_(true);
  Tensor pk, pv;
  if (s.prefix) {
    pk = (2 * torch::randn({s.streams, s.heads, s.prefix, s.dh}, f64))
             .requires_grad_(true);
    pv = torch::randn({s.streams, s.heads, s.prefix, s.dh}, f64)
             .requires_grad_(true);
  }
  Tensor out = reference(qkv, pk, pv, s);
  Tensor dout = torch::randn_like(out);
  out.backward(dout);

  auto f32 = [](const Tensor &t) {
    return t.defined() ? t.detach().to(torch::kFloat32).contiguous()
                       : torch::zeros({1});
  };
  Tensor q32 = f32(qkv), pk32 = f32(pk), pv32 = f32(pv), dout32 = f32(dout);
  Tensor got = torch::empty({s.batch, s.seq, d});
  Tensor lse = torch::empty({s.batch, s.heads, s.seq});
  mixrt_flash_attention(q32.data_ptr<float>(), 0, pk32.data_ptr<float>(), 0,
                        pv32.data_ptr<float>(), 0, got.data_ptr<float>(), 0,
                        lse.data_ptr<float>(), 0, s.batch, s.seq, s.heads, s.dh,
                        s.streams, s.prefix);
  // float32 against float64: a few ulps a product of dh terms.
  EXPECT_LT(relError(got, out.detach()), 1e-5);

  Tensor dqkv = torch::empty_like(q32);
  Tensor dpk = torch::empty_like(pk32), dpv = torch::empty_like(pv32);
  mixrt_flash_attention_grad(q32.data_ptr<float>(), 0, pk32.data_ptr<float>(),
                             0, pv32.data_ptr<float>(), 0,
                             got.data_ptr<float>(), 0, lse.data_ptr<float>(), 0,
                             dout32.data_ptr<float>(), 0,
                             dqkv.data_ptr<float>(), 0, dpk.data_ptr<float>(),
                             0, dpv.data_ptr<float>(), 0, s.batch, s.seq,
                             s.heads, s.dh, s.streams, s.prefix);
  // Each part of dqkv on its own: dq, dk and dv differ in scale.
  for (int64_t part = 0; part < 3; ++part)
    EXPECT_LT(relError(dqkv.narrow(2, part * d, d),
                       qkv.grad().narrow(2, part * d, d)),
              1e-4)
        << "part " << part;
  if (s.prefix) {
    EXPECT_LT(relError(dpk, pk.grad()), 1e-4);
    EXPECT_LT(relError(dpv, pv.grad()), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionKernel,
    ::testing::Values(
        // One tile, and one row.
        Shape{2, 5, 2, 4}, Shape{3, 1, 1, 8},
        // Tiles of 64 with a ragged last one; dh 76 pads to 80.
        Shape{2, 70, 2, 76}, Shape{1, 200, 3, 8},
        // Prefixes: 2 streams of 2 rows each, prefix of a partial tile
        // and of two tiles (a full and a ragged one).
        Shape{4, 40, 2, 16, 2, 3}, Shape{4, 40, 2, 16, 2, 70},
        Shape{2, 130, 1, 24, 1, 65}),
    [](const auto &info) { return mixtest::attentionShapeName(info.param); });

} // namespace
