//===- Inputs.cpp - Checking parameter and batch files --------------------===//
//
// Validates the files `mix-run grad` (and later train and eval) reads
// against a package manifest, before any compiled code sees them.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Inputs.h"

#include <cmath>
#include <unordered_set>

using namespace mixrt;

void mixrt::checkFinite(const float *data, int64_t count,
                        const std::string &path, const std::string &name) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(data[i]))
      fail(path, ": tensor ", quote(name), " holds ", data[i], " at element ",
           i, ", expected finite values");
}

TensorFile mixrt::readParamsOrCheckpoint(const std::string &path) {
  TensorFile file = readSafetensors(path);
  TensorFile params;
  for (const NamedTensor &t : file.getTensors())
    if (t.name.rfind("param.", 0) == 0)
      params.add(t.name.substr(6), t.tensor);
  return params.getTensors().empty() ? file : params;
}

std::vector<const Tensor *> mixrt::checkParams(const Manifest &manifest,
                                               const TensorFile &params,
                                               const std::string &path) {
  std::vector<const Tensor *> result;
  std::unordered_set<std::string> expected;
  for (const ParamInfo &param : manifest.params) {
    expected.insert(param.name);
    const Tensor *tensor = params.find(param.name);
    if (!tensor)
      fail(path, ": missing parameter ", quote(param.name), " (F32 of shape ",
           formatShape(param.shape), ")");
    if (tensor->dtype != DType::F32)
      fail(path, ": parameter ", quote(param.name), " has dtype ",
           getDTypeName(tensor->dtype), ", expected F32");
    if (tensor->shape != param.shape)
      fail(path, ": parameter ", quote(param.name), " has shape ",
           formatShape(tensor->shape), ", expected ", formatShape(param.shape));
    checkFinite(tensor->getData<float>(), tensor->getNumElements(), path,
                param.name);
    result.push_back(tensor);
  }
  for (const NamedTensor &named : params.getTensors())
    if (!expected.count(named.name))
      fail(path, ": unexpected tensor ", quote(named.name),
           ": not a parameter of ", manifest.packagePath);
  return result;
}

/// Reads ids of type T, checking each is in [0, vocabSize).
template <typename T>
static std::vector<int64_t> readIds(const Tensor &tensor, const char *name,
                                    const Manifest &manifest,
                                    const std::string &path) {
  const T *data = tensor.getData<T>();
  int64_t count = tensor.getNumElements();
  std::vector<int64_t> ids(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t id = static_cast<int64_t>(data[i]);
    if (id < 0 || id >= manifest.vocabSize)
      fail(path, ": tensor ", quote(name), ": id ", id, " at [",
           i / manifest.seq, ", ", i % manifest.seq, "] is outside [0, ",
           manifest.vocabSize, ") (the package's vocab_size)");
    ids[i] = id;
  }
  return ids;
}

static std::vector<int64_t> checkIds(const Manifest &manifest,
                                     const TensorFile &file,
                                     const std::string &path, const char *name,
                                     int ranks) {
  std::vector<int64_t> shape{ranks * manifest.batch, manifest.seq};
  const Tensor *tensor = file.find(name);
  if (!tensor)
    fail(path, ": missing tensor ", quote(name), " (I32 or I64 of shape ",
         formatShape(shape), ")");
  if (tensor->dtype != DType::I32 && tensor->dtype != DType::I64)
    fail(path, ": tensor ", quote(name), " has dtype ",
         getDTypeName(tensor->dtype), ", expected I32 or I64");
  if (tensor->shape != shape)
    fail(path, ": tensor ", quote(name), " has shape ",
         formatShape(tensor->shape), ", expected ", formatShape(shape),
         ranks == 1 ? std::string(" (the package's batch and seq)")
                    : concat(" (the package's batch ", manifest.batch,
                             " on each of ", ranks, " ranks, and its seq)"));
  if (tensor->dtype == DType::I32)
    return readIds<int32_t>(*tensor, name, manifest, path);
  return readIds<int64_t>(*tensor, name, manifest, path);
}

TokenBatch mixrt::checkBatch(const Manifest &manifest, const TensorFile &file,
                             const std::string &path, int ranks) {
  TokenBatch batch;
  batch.batch = ranks * manifest.batch;
  batch.seq = manifest.seq;
  batch.tokens = checkIds(manifest, file, path, "tokens", ranks);
  batch.targets = checkIds(manifest, file, path, "targets", ranks);
  for (const NamedTensor &named : file.getTensors())
    if (named.name != "tokens" && named.name != "targets")
      fail(path, ": unexpected tensor ", quote(named.name),
           " (a batch holds only tokens and targets)");
  return batch;
}
