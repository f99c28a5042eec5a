//===- Checkpoint.cpp - The training state's checkpoint file --------------===//
//
// Checkpoints are safetensors files: each parameter with its two AdamW
// moments, and the step and sampler state in the metadata, checksummed.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "mixrt/CommandLine.h"
#include "mixrt/Error.h"
#include "mixrt/Inputs.h"
#include "mixrt/Safetensors.h"

#include <charconv>
#include <iostream>

using namespace mixrt;

namespace {
/// The checkpoint format: 2 carries a checksum (kChecksumKey) and must
/// match it; 1, written before checksums, loads unverified with a warning.
constexpr const char *kCheckpointFormat = "mixrt-checkpoint-2";
constexpr const char *kUnverifiedCheckpointFormat = "mixrt-checkpoint-1";
} // namespace

void mixrt::saveCheckpoint(const std::string &path, const Manifest &manifest,
                           const TrainState &state) {
  TensorFile file;
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamInfo &p = manifest.params[i];
    file.add("param." + p.name,
             Tensor::create<float>(p.shape, state.params[i]));
    file.add("adam_m." + p.name, Tensor::create<float>(p.shape, state.m[i]));
    file.add("adam_v." + p.name, Tensor::create<float>(p.shape, state.v[i]));
  }
  file.metadata = {{"format", kCheckpointFormat},
                   {"step", std::to_string(state.step)},
                   {"sampler", std::to_string(state.sampler)}};
  writeSafetensors(path, file, /*addChecksum=*/true);
}

TrainState mixrt::loadCheckpoint(const std::string &path,
                                 const Manifest &manifest) {
  // readSafetensors verifies the checksum of a file that has one.
  TensorFile file = readSafetensors(path);
  TrainState state;
  std::string format, step, sampler;
  bool checksummed = false;
  for (auto &[k, val] : file.metadata) {
    if (k == "format")
      format = val;
    if (k == "step")
      step = val;
    if (k == "sampler")
      sampler = val;
    if (k == kChecksumKey)
      checksummed = true;
  }
  if ((format != kCheckpointFormat && format != kUnverifiedCheckpointFormat) ||
      step.empty() || sampler.empty())
    fail(path, ": not a mix-run checkpoint (missing format, step or sampler "
               "metadata)");
  if (format == kCheckpointFormat && !checksummed)
    fail(path, ": checkpoint format ", kCheckpointFormat, " without a ",
         quote(kChecksumKey),
         " in its __metadata__ (expected the checksum every such checkpoint "
         "carries)");
  if (!checksummed)
    std::cerr << "mix-run: warning: " << path << " has no checksum (format "
              << format
              << ", written before checkpoints carried one); loading it "
                 "unverified\n";
  state.step = parseInteger(step, path + ": metadata 'step'");
  if (state.step < 0)
    fail(path, ": metadata 'step' is ", state.step,
         ", expected a non-negative integer");
  auto [end, ec] = std::from_chars(
      sampler.data(), sampler.data() + sampler.size(), state.sampler);
  if (ec != std::errc() || end != sampler.data() + sampler.size())
    fail(path, ": metadata 'sampler' is ", quote(sampler),
         ", expected an unsigned 64-bit integer");
  for (const ParamInfo &p : manifest.params)
    for (auto [prefix, into] :
         {std::pair<const char *, std::vector<std::vector<float>> *>{
              "param.", &state.params},
          {"adam_m.", &state.m},
          {"adam_v.", &state.v}}) {
      const Tensor *t = file.find(prefix + p.name);
      if (!t)
        fail(path, ": checkpoint has no tensor ", quote(prefix + p.name));
      if (t->dtype != DType::F32 || t->shape != p.shape)
        fail(path, ": tensor ", quote(prefix + p.name), " is ",
             getDTypeName(t->dtype), " of shape ", formatShape(t->shape),
             ", expected F32 of shape ", formatShape(p.shape));
      const float *d = t->getData<float>();
      checkFinite(d, t->getNumElements(), path, prefix + p.name);
      into->emplace_back(d, d + t->getNumElements());
    }
  return state;
}
