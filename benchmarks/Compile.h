//===- Compile.h - Compiling the benchmark models with mixc -----*- C++ -*-===//
//
// A package a model, kept while its spec, shapes and mixc are unchanged,
// with the mixing order mixc chose for a cMoLLM model.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_COMPILE_H
#define MIXBENCH_COMPILE_H

#include "BenchModel.h"
#include "Options.h"

#include <filesystem>
#include <string>

namespace mixbench {

struct Package {
  std::filesystem::path dir, pkg;
  std::string order; // the cMoLLM mixing order mixc chose
  std::string error;
};

/// Compiles \p c into WORK/SIZE/NAME/m.mixpkg unless an up-to-date package
/// of the same spec and shapes is there.
Package compile(const Options &o, const ModelConfig &c, bool bf16 = false);

} // namespace mixbench

#endif // MIXBENCH_COMPILE_H
