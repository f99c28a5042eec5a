//===- Upcycle.h - A mixture started from a dense model ---------*- C++ -*-===//
//
// Upcycling, which practitioners use to start a mixture of experts from a
// trained dense model: a cMoLLM package's parameters from a dense GPT-2's
// of the same sizes. Every parameter the two share is copied; each of the
// N stream kernels (and its bias) starts as the dense c_fc; the gate and
// whatever else only the mixture has keep the package's initialization.
// With equal kernels the mixture sum_k g_k K_k is c_fc for any gate that
// sums to 1, so the first step computes the dense model's cross-entropy;
// the gate's random initialization differs from position to position, so
// the kernels' gradients g_k dU m^T differ and the streams diverge from
// the first update (docs/training.md, "Upcycling").
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_UPCYCLE_H
#define MIXRT_UPCYCLE_H

#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <string>

namespace mixrt {

/// Whether \p params (for \p manifest's package) are a dense model's to
/// upcycle: the package is cMoLLM and \p params hold a c_fc layer where
/// the package has stream kernels.
bool isDenseForMixture(const Manifest &manifest, const TensorFile &params);

/// \p manifest's cMoLLM parameters from the dense parameters \p dense
/// (read from \p path), in the package's order; an Error names \p path and
/// the first dense tensor that is missing, of another shape, or has no
/// place in the mixture.
TensorFile upcycleDense(const Manifest &manifest, const TensorFile &dense,
                        const std::string &path);

} // namespace mixrt

#endif // MIXRT_UPCYCLE_H
