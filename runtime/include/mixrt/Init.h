//===- Init.h - Deterministic parameter initialisation ----------*- C++ -*-===//
//
// The initialisation of docs/package.md: every tensor draws from its own
// splitmix64 stream keyed by the seed and the tensor's name, so the same
// seed gives the same bits on every machine, rank count and tensor order.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_INIT_H
#define MIXRT_INIT_H

#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace mixrt {

/// The splitmix64 generator (Steele, Lea and Flood 2014; Vigna's
/// splitmix64.c): each call adds 0x9E3779B97F4A7C15 to the state and
/// returns the mixed state.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state(state) {}
  uint64_t next();
  /// A uniform double ((u >> 11) + 0.5) * 2^-53 of the next output u: never
  /// 0; the largest output rounds to exactly 1.
  double nextUniform();

private:
  uint64_t state;
};

/// The FNV-1a 64-bit offset basis: the hash of no bytes.
constexpr uint64_t kFnv1a64Basis = 0xCBF29CE484222325ull;

/// The FNV-1a 64-bit hash of \p bytes, continuing from \p hash: hashing a
/// string piecewise, feeding each call's result to the next, gives the hash
/// of the whole.
uint64_t fnv1a64(std::string_view bytes, uint64_t hash = kFnv1a64Basis);

/// The key of a tensor's stream: splitmix64 over the seed, then over the
/// name's hash, i.e. SplitMix64(SplitMix64(seed).next() ^ fnv1a64(name))
/// .next().
uint64_t getStreamKey(uint64_t seed, std::string_view name);

/// The initial values of \p param (row-major), drawn from the stream
/// SplitMix64(getStreamKey(seed, param.name)): normal by Box-Muller on two
/// consecutive uniforms per element, sqrt(-2 ln u1) cos(2 pi u2) * std;
/// uniform as bound * (2u - 1); both computed in double and rounded to
/// float.
std::vector<float> initParam(const ParamInfo &param, uint64_t seed);

/// Every parameter of \p manifest, float32, initialised with its seed.
TensorFile initParams(const Manifest &manifest);

} // namespace mixrt

#endif // MIXRT_INIT_H
