//===- TestSupport.h - What the libtorch comparisons share ------*- C++ -*-===//
//
// The fixture that sizes libtorch's threads for a configuration, the float32
// parameters and random batch a compiled step takes, its gradients, and the
// comparison of one AdamW step with torch::optim::AdamW.
//
//===----------------------------------------------------------------------===//

#ifndef MIXTEST_TESTSUPPORT_H
#define MIXTEST_TESTSUPPORT_H

#include "Reference.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace mixtest {

/// ||got - ref|| / ||ref|| in float64 (/ 1 where ref is zero); \p got holds
/// ref.numel() floats.
double relError(const float *got, const torch::Tensor &ref);

/// A test over model configurations. The compiled code's threaded loop
/// nests run on the OpenMP team that libtorch sizes (one thread on this
/// machine unless told): the configurations that test them get
/// Config::threads threads.
class ModelTest : public ::testing::TestWithParam<Config> {
protected:
  void SetUp() override;
  void TearDown() override;
};

/// \p c large enough that the compiled loop nests run split over the
/// OpenMP threads (mix_parallel_for: at least kMinParallelWork iterations,
/// e.g. the (B,S,f) and (B,S,V) elementwise nests), on two threads.
Config threadedSize(Config c);

/// \p c compiled with mixc --attention decomposed (attention as products
/// and a softmax over the whole score matrix), named "<name>_decomposed".
Config decomposedAttention(Config c);

/// \p params as float32 tensors in the manifest's order, and pointers to
/// their data (the compiled entry points' parameters).
struct Float32Params {
  std::vector<torch::Tensor> tensors;
  std::vector<const float *> ptrs;
};
Float32Params toFloat32(const Params &params, const mixrt::Manifest &manifest);

/// Random int64 tokens and targets of shape (batch, seq) below \p c.v,
/// drawn in that order.
struct Batch {
  torch::Tensor tok, tgt;
};
Batch randomBatch(const Config &c);

/// The compiled @grad's loss terms and gradients (in the manifest's order).
struct CompiledGrad {
  mixrt::LossValues loss;
  std::vector<std::vector<float>> grads;
};
CompiledGrad runCompiledGrad(const mixrt::CompiledModel &model,
                             const mixrt::Manifest &manifest,
                             const std::vector<const float *> &params,
                             const Batch &batch);

/// Runs one AdamW step (with clipping) of \p model on random parameters and
/// gradients and expects the gradient norm, the update and the moments of
/// torch::optim::AdamW after torch::nn::utils::clip_grad_norm_, with decay on
/// tensors of rank >= 2 only, and the gradients left unwritten.
void expectAdamWStepMatchesTorch(const mixrt::CompiledModel &model,
                                 const mixrt::Manifest &manifest);

} // namespace mixtest

#endif // MIXTEST_TESTSUPPORT_H
