//===- CompileModel.h - Compile a test configuration with mixc --*- C++ -*-===//

#ifndef MIXRT_TEST_TORCH_COMPILEMODEL_H
#define MIXRT_TEST_TORCH_COMPILEMODEL_H

#include "Reference.h"

#include "mixrt/Manifest.h"

namespace mixtest {

/// Compiles `c` with mixc (the MIXC environment variable names the binary)
/// with its mixc options (--batch, --seq, --precision bf16 and
/// Config::mixcFlags) into a package under the temporary directory, once per
/// spec and options in a process, and returns its manifest.
mixrt::Manifest compileModel(const Config &c);

/// Parameters drawn from N(0, 0.2^2) in float64, with LayerNorm weights and
/// AltUp's predict and correct near their identity initialisation so that
/// every path of the model carries signal.
Params randomParams(const mixrt::Manifest &manifest, uint64_t seed);

} // namespace mixtest

#endif // MIXRT_TEST_TORCH_COMPILEMODEL_H
