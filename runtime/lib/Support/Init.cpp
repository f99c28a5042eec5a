//===- Init.cpp - Deterministic parameter initialisation ------------------===//
//
// splitmix64 streams keyed by FNV-1a of the tensor name, Box-Muller normals
// and uniforms in double precision rounded to float32.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Init.h"

#include <algorithm>
#include <cmath>

using namespace mixrt;

uint64_t SplitMix64::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::nextUniform() {
  return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t mixrt::fnv1a64(std::string_view bytes, uint64_t hash) {
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001B3ull;
  }
  return hash;
}

uint64_t mixrt::getStreamKey(uint64_t seed, std::string_view name) {
  uint64_t mixedSeed = SplitMix64(seed).next();
  return SplitMix64(mixedSeed ^ fnv1a64(name)).next();
}

std::vector<float> mixrt::initParam(const ParamInfo &param, uint64_t seed) {
  size_t count = static_cast<size_t>(getNumElements(param.shape));
  std::vector<float> values(count, 0.0f);
  SplitMix64 stream(getStreamKey(seed, param.name));
  switch (param.init) {
  case InitKind::Normal:
    for (float &value : values) {
      double u1 = stream.nextUniform();
      double u2 = stream.nextUniform();
      double normal =
          std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
      value = static_cast<float>(normal * param.std);
    }
    break;
  case InitKind::Uniform:
    for (float &value : values)
      value =
          static_cast<float>(param.bound * (2.0 * stream.nextUniform() - 1.0));
    break;
  case InitKind::Zeros:
    break;
  case InitKind::Ones:
    std::fill(values.begin(), values.end(), 1.0f);
    break;
  case InitKind::Identity:
    if (param.shape.size() != 2 || param.shape[0] != param.shape[1])
      fail("parameter ", quote(param.name),
           ": identity needs a square matrix, the shape is ",
           formatShape(param.shape));
    for (int64_t i = 0; i < param.shape[0]; ++i)
      values[i * param.shape[0] + i] = 1.0f;
    break;
  }
  return values;
}

TensorFile mixrt::initParams(const Manifest &manifest) {
  TensorFile file;
  for (const ParamInfo &param : manifest.params)
    file.add(param.name,
             Tensor::create(param.shape, initParam(param, manifest.seed)));
  return file;
}
