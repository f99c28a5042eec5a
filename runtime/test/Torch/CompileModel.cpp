//===- CompileModel.cpp - Compile a test configuration with mixc ----------===//

#include "CompileModel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace mixtest {

mixrt::Manifest compileModel(const Config &c) {
  // Keyed on what decides the package (the spec and every option), not on
  // the name alone, so that two configurations that share a name but differ
  // in, say, --target never share a package.
  std::string options = " --batch " + std::to_string(c.batch) + " --seq " +
                        std::to_string(c.seq) +
                        (c.bf16 ? " --precision bf16" : "") +
                        (c.mixcFlags.empty() ? "" : " " + c.mixcFlags);
  std::string key = c.json() + options;
  static std::map<std::string, std::string> compiled;
  if (auto it = compiled.find(key); it != compiled.end())
    return mixrt::readManifest(it->second);
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("mix-torch-" + c.name + "-" + std::to_string(compiled.size()) + "-" +
       std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.json") << c.json();
  const char *mixc = std::getenv("MIXC");
  std::string cmd = std::string(mixc ? mixc : "mixc") + " " +
                    (dir / "m.json").string() + options + " -o " +
                    (dir / "m.mixpkg").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  compiled[key] = (dir / "m.mixpkg").string();
  return mixrt::readManifest(compiled[key]);
}

Params randomParams(const mixrt::Manifest &manifest, uint64_t seed) {
  torch::manual_seed(seed);
  Params out;
  auto endsWith = [](const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const mixrt::ParamInfo &info : manifest.params) {
    torch::Tensor t = torch::randn(info.shape, torch::kFloat64) * 0.2;
    const std::string &n = info.name;
    bool isLayerNorm = n.find("ln_") != std::string::npos ||
                       n.find("gate_ln") != std::string::npos;
    if ((isLayerNorm && endsWith(n, ".weight")) || endsWith(n, "altup.correct"))
      t = t + 1;
    if (endsWith(n, "altup.predict"))
      t = t + torch::eye(info.shape[0], torch::kFloat64);
    // Round through float32 so both sides see the same values.
    out[n] = t.to(torch::kFloat32).to(torch::kFloat64);
  }
  return out;
}

} // namespace mixtest
