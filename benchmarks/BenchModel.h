//===- BenchModel.h - Benchmark configurations and the libtorch baseline -*- C++ -*-===//
//
// The models of issue 7's benchmark: a configuration (architecture, mixture
// settings, the two sizes), its model spec for mixc, its analytic FLOP count,
// and the baseline: the same model written in libtorch as a user who cared
// about speed would write it (fused layer norm and linear layers, tanh GELU,
// batched attention with an additive causal mask, the MoE form of cMoLLM as
// one product against the stacked kernels then the gate-weighted sum).
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_BENCHMODEL_H
#define MIXBENCH_BENCHMODEL_H

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mixbench {

/// One model of the benchmark at one size.
struct ModelConfig {
  std::string name = "dense";
  std::string arch = "dense";
  // cmollm
  std::string gating = "simple";
  int64_t streams = 1, gateHeads = 4;
  double balanceAlpha = 0.01;
  // parascale
  int64_t pStreams = 1, prefixTokens = 48;
  double smoothing = 0.01;
  // altup
  int64_t blocks = 1;
  std::string schedule = "alternating";
  // size
  std::string size = "small";
  int64_t l = 4, d = 256, h = 4, f = 1024, s = 256, b = 8, v = 256;

  /// The model spec (docs/models.md §1) for mixc.
  std::string json() const;
  /// A one-word encoding ("key=value,...") for a child process, and back.
  std::string encode() const;
  static ModelConfig decode(const std::string &text);

  /// Forward multiply-adds x 2 (FLOPs) of the matrix products per token,
  /// attention scores and values included (docs/performance.md).
  double forwardFlopsPerToken() const;
  /// One training step: 3 x forward (forward, and the two products of the
  /// backward pass per forward product), times B * S tokens.
  double trainFlopsPerStep() const {
    return 3.0 * forwardFlopsPerToken() * double(b * s);
  }
};

/// The two sizes of issue 7 ("small", "wide") applied to \p c.
ModelConfig withSize(ModelConfig c, const std::string &size);

/// Every model of the benchmark at \p size.
std::vector<ModelConfig> benchmarkModels(const std::string &size);

struct Losses {
  torch::Tensor loss, ce, aux;
};

/// The baseline model: parameters by name (float32 leaves requiring
/// gradients) and the loss of docs/models.md.
class TorchModel {
public:
  TorchModel(const ModelConfig &c, std::map<std::string, torch::Tensor> params);
  /// The training loss of docs/models.md §2-5 on int64 tokens and targets (B,S).
  Losses loss(const torch::Tensor &tokens, const torch::Tensor &targets);
  /// Every parameter, in the order given by \p names.
  std::vector<torch::Tensor> parameters(const std::vector<std::string> &names) const;

private:
  torch::Tensor ln(const torch::Tensor &x, const std::string &name) const;
  torch::Tensor lin(const torch::Tensor &x, const std::string &name) const;
  torch::Tensor attention(const torch::Tensor &a, const std::string &pre,
                          int64_t streams) const;
  torch::Tensor ffn(const torch::Tensor &m, const std::string &pre,
                    std::vector<torch::Tensor> &auxes) const;
  torch::Tensor block(const torch::Tensor &x, int64_t layer, int64_t streams,
                      std::vector<torch::Tensor> &auxes) const;

  ModelConfig c;
  std::map<std::string, torch::Tensor> p;
  torch::Tensor causal;  // (S,S): 0 on and below the diagonal, -inf above
  torch::Tensor prefixed; // (S,T_p+S): ParaScale's prefixes are always seen
};

} // namespace mixbench

#endif // MIXBENCH_BENCHMODEL_H
