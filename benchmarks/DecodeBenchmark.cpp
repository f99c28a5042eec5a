//===- DecodeBenchmark.cpp - Sampling: the decode step against libtorch ---===//
//
// Each row feeds the same fixed sequence of tokens one position at a time
// (teacher-forced, so that every side does the same work and their logits
// can be compared position by position) from position 0, batch 1:
//
//   decode step  the package's mix_decode (mixrt::CompiledModel::decode),
//                the state zeroed first, as mix-run generate calls it;
//   libtorch     the model in libtorch eager (no autograd), keys and values
//                written into preallocated caches and attention over the
//                positions so far, at its faster of one and two intra-op
//                threads (and OpenBLAS threads alike);
//   whole forward  the package's @logits over the context padded to the
//                package's sequence, one call a token: what generate did
//                before the decode step (timed on a few tokens).
//
// The decode step's logits must agree with libtorch's at every position to
// 1e-3 of their scale (float32 on both sides), or the row is marked.
//
//===----------------------------------------------------------------------===//

#include "DecodeBenchmark.h"

#include "BenchInputs.h"
#include "BenchModel.h"
#include "BenchSupport.h"
#include "Children.h"
#include "Compile.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"

#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

using namespace mixbench;
using torch::Tensor;
namespace F = torch::nn::functional;

namespace {

/// Timed passes over the positions a side; its median is reported.
constexpr int kPasses = 3;

/// Dense GPT-2 or cMoLLM (simple gating, the MoE form) decoding one
/// position at a time with key-value caches.
class TorchDecoder {
public:
  TorchDecoder(const ModelConfig &c, std::map<std::string, Tensor> params)
      : c(c), p(std::move(params)) {
    for (int64_t l = 0; l < c.l; ++l) {
      kCache.push_back(torch::zeros({1, c.h, c.s, c.d / c.h}));
      vCache.push_back(torch::zeros({1, c.h, c.s, c.d / c.h}));
    }
  }

  /// The logits (V) after \p token at \p pos.
  Tensor step(int64_t token, int64_t pos) {
    int64_t h = c.h, dh = c.d / c.h;
    Tensor x =
        (p.at("wte.weight")[token] + p.at("wpe.weight")[pos]).view({1, 1, c.d});
    for (int64_t l = 0; l < c.l; ++l) {
      std::string pre = "h." + std::to_string(l) + ".";
      Tensor qkv = lin(ln(x, pre + "ln_1"), pre + "attn.c_attn")
                       .view({1, 3, h, 1, dh}); // (1, 3d) as q, k, v heads
      kCache[l].narrow(2, pos, 1).copy_(qkv.select(1, 1));
      vCache[l].narrow(2, pos, 1).copy_(qkv.select(1, 2));
      Tensor k = kCache[l].narrow(2, 0, pos + 1);
      Tensor v = vCache[l].narrow(2, 0, pos + 1);
      Tensor att = torch::matmul(qkv.select(1, 0), k.transpose(2, 3))
                       .mul_(1.0 / std::sqrt(double(dh)))
                       .softmax(-1);
      Tensor o = torch::matmul(att, v).reshape({1, 1, c.d});
      x = x + lin(o, pre + "attn.c_proj");
      x = x + ffn(ln(x, pre + "ln_2"), pre);
    }
    return F::linear(ln(x, "ln_f"), p.at("wte.weight")).view({c.v});
  }

private:
  Tensor ln(const Tensor &x, const std::string &name) const {
    return F::layer_norm(x, F::LayerNormFuncOptions({c.d})
                                .weight(p.at(name + ".weight"))
                                .bias(p.at(name + ".bias"))
                                .eps(1e-5));
  }
  Tensor lin(const Tensor &x, const std::string &name) const {
    return F::linear(x, p.at(name + ".weight"), p.at(name + ".bias"));
  }
  Tensor ffn(const Tensor &m, const std::string &pre) const {
    if (c.arch != "cmollm")
      return lin(torch::gelu(lin(m, pre + "mlp.c_fc"), "tanh"),
                 pre + "mlp.c_proj");
    int64_t n = c.streams;
    Tensor m2 = m.view({1, c.d});
    Tensor outs = F::linear(m2, p.at(pre + "mlp.kernels").view({n * c.f, c.d}),
                            p.at(pre + "mlp.kernel_bias").view({n * c.f}))
                      .view({n, c.f});
    Tensor g = lin(m2, pre + "mlp.gate").softmax(-1).view({1, n});
    Tensor u = torch::matmul(g, outs);
    return lin(torch::gelu(u, "tanh"), pre + "mlp.c_proj").view({1, 1, c.d});
  }

  ModelConfig c;
  std::map<std::string, Tensor> p;
  std::vector<Tensor> kCache, vCache;
};

struct DecodeRow {
  std::string name, note;
  int64_t positions = 0;
  double decodeTokS = 0, torchTokS = 0, fullTokS = 0, deviation = 0;
  // The same positions through the prefill step, a chunk a call.
  double prefillTokS = 0;
  int64_t chunk = 0;
  int torchThreads = 0;
  long stateMiB = 0;
  bool ok = true;
};

/// The fixed token sequence every side is fed.
std::vector<int32_t> fixedTokens(int64_t n, int64_t vocab) {
  std::vector<int32_t> out;
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out.push_back(int32_t(x % uint64_t(vocab)));
  }
  return out;
}

DecodeRow runRow(const Options &o, const ModelConfig &c, int64_t positions,
                 int fullTokens) {
  DecodeRow row;
  row.name = c.name;
  row.positions = positions;
  Package pkg = compile(o, c);
  if (!pkg.error.empty())
    throw std::runtime_error(c.name + ": " + pkg.error);
  mixrt::Manifest man = mixrt::readManifest(pkg.pkg.string());
  if (!man.decode)
    throw std::runtime_error(c.name + ": the package has no decode step");
  mixrt::CompiledModel model(man);
  std::vector<std::vector<float>> values = benchParams(man);
  std::vector<const float *> ptrs;
  for (auto &v : values)
    ptrs.push_back(v.data());
  std::vector<int32_t> tokens = fixedTokens(positions, c.v);

  // The decode step.
  std::vector<std::vector<float>> state;
  std::vector<float *> statePtrs;
  size_t stateFloats = 0;
  for (const auto &s : man.decode->state) {
    state.emplace_back(s.numElements, 0.0f);
    statePtrs.push_back(state.back().data());
    stateFloats += s.numElements;
  }
  row.stateMiB = long(stateFloats * 4 / (1 << 20));
  std::vector<float> logits(size_t(c.v));
  std::vector<std::vector<float>> compiled;
  auto decodeAll = [&](bool keep) {
    for (auto &s : state)
      std::fill(s.begin(), s.end(), 0.0f);
    Clock::time_point t0 = Clock::now();
    for (int64_t pos = 0; pos < positions; ++pos) {
      model.decode(ptrs, &tokens[pos], int32_t(pos), statePtrs, logits.data());
      if (keep)
        compiled.push_back(logits);
    }
    return seconds(t0, Clock::now());
  };
  decodeAll(true); // warm-up, and the logits to compare
  std::vector<double> passes;
  for (int i = 0; i < kPasses; ++i)
    passes.push_back(decodeAll(false));
  row.decodeTokS = double(positions) / median(passes);
  row.chunk = man.decode->prefillChunk;
  if (row.chunk > 1 && positions % row.chunk == 0) {
    std::vector<float> chunkLogits(size_t(row.chunk * c.v));
    auto prefillAll = [&] {
      for (auto &s : state)
        std::fill(s.begin(), s.end(), 0.0f);
      Clock::time_point t0 = Clock::now();
      for (int64_t pos = 0; pos < positions; pos += row.chunk)
        model.prefill(ptrs, &tokens[pos], int32_t(pos), statePtrs,
                      chunkLogits.data());
      return seconds(t0, Clock::now());
    };
    prefillAll();
    std::vector<double> chunks;
    for (int i = 0; i < kPasses; ++i)
      chunks.push_back(prefillAll());
    row.prefillTokS = double(positions) / median(chunks);
  }

  // libtorch eager with a cache, at its faster thread setting.
  torch::NoGradGuard noGrad;
  std::map<std::string, Tensor> params;
  for (size_t i = 0; i < man.params.size(); ++i)
    params[man.params[i].name] =
        torch::from_blob(values[i].data(), man.params[i].shape, torch::kFloat32)
            .clone();
  auto torchAll = [&](bool compare) {
    TorchDecoder dec(c, params);
    Clock::time_point t0 = Clock::now();
    double worst = 0, scale = 0;
    for (int64_t pos = 0; pos < positions; ++pos) {
      Tensor out = dec.step(tokens[pos], pos);
      if (compare) {
        const float *want = out.contiguous().data_ptr<float>();
        for (int64_t i = 0; i < c.v; ++i) {
          worst =
              std::max(worst, double(std::fabs(compiled[pos][i] - want[i])));
          scale = std::max(scale, double(std::fabs(want[i])));
        }
      }
    }
    if (compare)
      row.deviation = worst / std::max(scale, 1e-30);
    return seconds(t0, Clock::now());
  };
  torchAll(true);
  for (int threads : {1, 2}) {
    torch::set_num_threads(threads);
    setBlasThreads(threads);
    std::vector<double> passes;
    for (int i = 0; i < kPasses; ++i)
      passes.push_back(torchAll(false));
    double tokS = double(positions) / median(passes);
    if (tokS > row.torchTokS)
      row.torchTokS = tokS, row.torchThreads = threads;
  }
  row.ok = row.deviation < 1e-3;

  // The whole forward a token, on a few tokens.
  std::vector<int32_t> window(size_t(man.batch * man.seq), 0);
  std::vector<float> all(size_t(man.batch * man.seq * c.v));
  std::vector<double> times;
  for (int i = 0; i < fullTokens + 1; ++i) {
    window[size_t(i)] = tokens[size_t(i)];
    Clock::time_point t0 = Clock::now();
    model.logits(ptrs, window.data(), all.data());
    if (i > 0) // the first call warms up
      times.push_back(seconds(t0, Clock::now()));
  }
  row.fullTokS = 1.0 / median(times);
  std::cerr << "mix-bench: " << c.name << ": decode step "
            << fmt("%.1f", row.decodeTokS) << " tok/s, libtorch "
            << fmt("%.1f", row.torchTokS) << ", whole forward "
            << fmt("%.2f", row.fullTokS) << "; logits deviation "
            << fmt("%.1e", row.deviation) << "\n";
  return row;
}

} // namespace

std::string mixbench::benchmarkDecode(const Options &o, bool &ok) {
  std::vector<std::pair<ModelConfig, int64_t>> models;
  ModelConfig tiny; // examples/tiny-dense.json
  tiny.name = "tiny-dense";
  tiny.size = "decode";
  tiny.l = 2, tiny.d = 64, tiny.h = 4, tiny.f = 256, tiny.v = 256;
  tiny.s = 128, tiny.b = 1;
  models.push_back({tiny, 128});
  ModelConfig small = tiny; // GPT-2 small: 124M parameters
  small.name = "gpt2-small-dense";
  small.l = 12, small.d = 768, small.h = 12, small.f = 3072, small.v = 50257;
  small.s = 1024;
  models.push_back({small, 128});
  ModelConfig mixture = small;
  mixture.name = "gpt2-small-cmollm-n4-simple";
  mixture.arch = "cmollm";
  mixture.streams = 4;
  models.push_back({mixture, 128});

  std::vector<DecodeRow> rows;
  for (auto &[c, positions] : models)
    if (o.only.empty() || std::regex_search(c.name, std::regex(o.only)))
      rows.push_back(runRow(o, c, positions, c.name == "tiny-dense" ? 20 : 3));

  std::ostringstream md;
  md << "### Sampling: the decode step against libtorch eager with a "
        "key-value cache\n\n"
     << "Batch 1, the first `positions` tokens of a fixed sequence fed one at "
        "a time from position 0, the median of 3 timed passes after a "
        "warm-up pass; libtorch at its faster of 1 and 2 threads. The whole "
        "forward a token is the median of a few @logits calls over the "
        "package's sequence (what `mix-run generate` did before the decode "
        "step); prefill feeds the same positions a chunk a call (how "
        "`generate` reads a prompt).\n\n"
     << "| model | positions | decode step tok/s | libtorch eager + cache "
        "tok/s (threads) | decode / libtorch | whole forward tok/s | decode / "
        "whole forward | prefill tok/s (chunk) | decode state MiB | logits "
        "vs libtorch |\n"
     << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  ok = true;
  for (const DecodeRow &r : rows) {
    ok = ok && r.ok;
    md << "| " << r.name << " | " << r.positions << " | "
       << fmt("%.1f", r.decodeTokS) << " | " << fmt("%.1f", r.torchTokS) << " ("
       << r.torchThreads << ") | " << fmt("%.2f", r.decodeTokS / r.torchTokS)
       << " | " << fmt("%.2f", r.fullTokS) << " | "
       << fmt("%.0f", r.decodeTokS / r.fullTokS) << "x | "
       << (r.chunk > 1 ? fmt("%.1f", r.prefillTokS) + " (" +
                             std::to_string(r.chunk) + ")"
                       : std::string("–"))
       << " | " << r.stateMiB << " | " << fmt("%.1e", r.deviation)
       << (r.ok ? "" : " **MISMATCH**") << " |\n";
  }
  return md.str();
}
