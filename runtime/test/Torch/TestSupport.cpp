//===- TestSupport.cpp - What the libtorch comparisons share --------------===//
//
// Relative errors against float64 references, libtorch's thread count per
// configuration, and one compiled gradient on a random batch.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "mixrt/Safetensors.h"

using mixrt::Manifest;
using mixrt::ParamInfo;
using torch::Tensor;

namespace mixtest {

double relError(const float *got, const Tensor &ref) {
  Tensor r = ref.to(torch::kFloat64).contiguous().flatten();
  Tensor g =
      torch::from_blob(const_cast<float *>(got), {r.numel()}, torch::kFloat32)
          .to(torch::kFloat64);
  double n = r.norm().item<double>();
  return (g - r).norm().item<double>() / (n > 0 ? n : 1.0);
}

void ModelTest::SetUp() {
  if (GetParam().threads > 0)
    at::set_num_threads(int(GetParam().threads));
}

void ModelTest::TearDown() {
  if (GetParam().threads > 0)
    at::set_num_threads(1);
}

Config threadedSize(Config c) {
  c.v = 256;
  c.d = 32;
  c.h = 4;
  c.f = 128;
  c.batch = 8;
  c.seq = 16;
  c.threads = 2;
  return c;
}

Float32Params toFloat32(const Params &params, const Manifest &manifest) {
  Float32Params out;
  for (const ParamInfo &info : manifest.params) {
    out.tensors.push_back(
        params.at(info.name).to(torch::kFloat32).contiguous());
    out.ptrs.push_back(out.tensors.back().data_ptr<float>());
  }
  return out;
}

Batch randomBatch(const Config &c) {
  Batch b;
  b.tok = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  b.tgt = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  return b;
}

CompiledGrad runCompiledGrad(const mixrt::CompiledModel &model,
                             const Manifest &manifest,
                             const std::vector<const float *> &params,
                             const Batch &batch) {
  const Tensor &tok = batch.tok, &tgt = batch.tgt;
  std::vector<int32_t> t32(tok.data_ptr<int64_t>(),
                           tok.data_ptr<int64_t>() + tok.numel());
  std::vector<int32_t> g32(tgt.data_ptr<int64_t>(),
                           tgt.data_ptr<int64_t>() + tgt.numel());
  CompiledGrad out;
  std::vector<float *> gptrs;
  for (const ParamInfo &info : manifest.params)
    out.grads.emplace_back(mixrt::getNumElements(info.shape));
  for (auto &g : out.grads)
    gptrs.push_back(g.data());
  out.loss = model.grad(params, t32.data(), g32.data(), gptrs);
  return out;
}

} // namespace mixtest
