//===- CompiledModel.cpp - Calling a package's compiled code --------------===//
//
// Loading a package's library (checked before and after dlopen: Library.cpp)
// and calling its entry points with the packed argument arrays of
// PackageABI.h, on the CPU or through a cuda package's device (Device.cpp),
// with sharded streams (StreamShards.cpp).
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"

#include "Device.h"
#include "Library.h"

#include "mixrt/Error.h"
#include "mixrt/PackageABI.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>

using namespace mixrt;

/// The packed arguments every entry point starts with: the parameters, the
/// tokens and the targets, then the three loss terms.
static std::vector<void *> packInputs(const std::vector<const float *> &params,
                                      const int32_t *tokens,
                                      const int32_t *targets, LossValues *out) {
  std::vector<void *> args;
  for (const float *p : params)
    args.push_back(const_cast<float *>(p));
  args.push_back(const_cast<int32_t *>(tokens));
  args.push_back(const_cast<int32_t *>(targets));
  if (out) {
    args.push_back(&out->loss);
    args.push_back(&out->ce);
    args.push_back(&out->aux);
  }
  return args;
}

CompiledModel::CompiledModel(const Manifest &manifest) : manifest(manifest) {
  detail::keepFreedMemory();
  if (!manifest.library)
    fail(manifest.packagePath,
         " has no compiled code (library missing from manifest)");
  if (manifest.target != "cpu" && manifest.target != "cuda")
    fail(manifest.packagePath, " is compiled for target '", manifest.target,
         "'; this runtime runs cpu and cuda packages");
  bool cuda = manifest.target == "cuda";
  if (cuda)
    for (const char *name : {"forward", "grad", "adamw", "logits"})
      if (!manifest.entryArgs.count(name))
        fail(manifest.manifestPath, ": entries.", name,
             ".arg_bytes is missing (a cuda package records its entry "
             "points' argument sizes; recompile it with mixc)");
  std::string path = manifest.packagePath + "/" + *manifest.library;
  detail::checkLibraryFile(path, manifest);
  handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    fail(path, ": cannot load the compiled code: ", why ? why : "unknown error",
         cuda ? " (a cuda package needs the NVIDIA driver's libcuda.so.1 and "
                "the CUDA toolkit's libcublasLt: run it on a machine with an "
                "NVIDIA GPU, or compile with --target cpu)"
              : "");
  }
  std::string notForThisManifest =
      detail::checkEmbeddedManifest(handle, manifest);
  if (!notForThisManifest.empty()) {
    ::dlclose(handle);
    handle = nullptr;
    fail(path, " ", notForThisManifest,
         "; compile the package again with mixc");
  }
  if (cuda) {
    const char *missing = nullptr;
    device = Device::bind(handle, missing);
    if (!device) {
      ::dlclose(handle);
      handle = nullptr;
      fail(path, ": the cuda package's code has no '", missing, "'");
    }
  }
  forwardEntry = lookup(MIX_FORWARD_SYMBOL);
  gradEntry = lookup(MIX_GRAD_SYMBOL);
  adamwEntry = lookup(MIX_ADAMW_SYMBOL);
  logitsEntry = lookup(MIX_LOGITS_SYMBOL);
  if (manifest.decode) {
    if (cuda && !manifest.entryArgs.count("decode"))
      fail(manifest.manifestPath,
           ": entries.decode.arg_bytes is missing (recompile the package "
           "with mixc)");
    decodeEntry = lookup(MIX_DECODE_SYMBOL);
    if (manifest.decode->prefillChunk > 1) {
      if (cuda && !manifest.entryArgs.count("prefill"))
        fail(manifest.manifestPath,
             ": entries.prefill.arg_bytes is missing (recompile the package "
             "with mixc)");
      prefillEntry = lookup(MIX_PREFILL_SYMBOL);
    }
  }
}

void CompiledModel::prefill(const std::vector<const float *> &params,
                            const int32_t *tokens, int32_t position,
                            const std::vector<float *> &state,
                            float *logits) const {
  if (!prefillEntry)
    fail(manifest.packagePath, " has no prefill step (compiled with "
                               "--prefill-chunk 0 or 1)");
  step(prefillEntry, "prefill", 5, manifest.decode->prefillChunk, params,
       tokens, position, state, logits);
}

void CompiledModel::decode(const std::vector<const float *> &params,
                           const int32_t *tokens, int32_t position,
                           const std::vector<float *> &state,
                           float *logits) const {
  if (!decodeEntry)
    fail(manifest.packagePath, " has no decode step (compiled with "
                               "--decode-batch 0)");
  step(decodeEntry, "decode", 4, 1, params, tokens, position, state, logits);
}

void CompiledModel::step(Entry entry, const char *name, int index, int64_t len,
                         const std::vector<const float *> &params,
                         const int32_t *tokens, int32_t position,
                         const std::vector<float *> &state,
                         float *logits) const {
  const Manifest::Decode &d = *manifest.decode;
  if (state.size() != d.state.size())
    fail("internal error: the ", name, " step takes ", d.state.size(),
         " state buffers, got ", state.size());
  if (position < 0 || position + len > d.positions)
    fail("internal error: ", name, " positions [", position, ", ",
         position + len, ") outside [0, ", d.positions, ")");
  std::vector<void *> args;
  for (const float *p : params)
    args.push_back(const_cast<float *>(p));
  args.push_back(const_cast<int32_t *>(tokens));
  args.push_back(&position);
  args.insert(args.end(), state.begin(), state.end());
  args.push_back(logits);
  call(entry, name, index, args.data(), args.size());
}

void CompiledModel::logits(const std::vector<const float *> &params,
                           const int32_t *tokens, float *out) const {
  // The entry takes targets too (the same signature as forward); unused.
  std::vector<void *> args = packInputs(params, tokens, tokens, nullptr);
  args.push_back(out);
  call(logitsEntry, "logits", 3, args.data(), args.size());
}

/// adamw's packed arguments: params, grads, m, v, hyper, then the gradient
/// norm; params, m and v are written over (entries.adamw.updated_inputs).
static std::vector<void *> packAdamw(const std::vector<float *> &params,
                                     const std::vector<const float *> &grads,
                                     const std::vector<float *> &m,
                                     const std::vector<float *> &v,
                                     const float hyper[3], float *norm) {
  size_t n = params.size();
  if (grads.size() != n || m.size() != n || v.size() != n)
    fail("internal error: adamw takes ", n,
         " parameters, gradients and "
         "moments; got ",
         n, ", ", grads.size(), ", ", m.size(), " and ", v.size());
  std::vector<void *> args(params.begin(), params.end());
  for (const float *g : grads)
    args.push_back(const_cast<float *>(g));
  args.insert(args.end(), m.begin(), m.end());
  args.insert(args.end(), v.begin(), v.end());
  args.push_back(const_cast<float *>(hyper));
  args.push_back(norm);
  return args;
}

float CompiledModel::adamw(const std::vector<float *> &params,
                           const std::vector<const float *> &grads,
                           const std::vector<float *> &m,
                           const std::vector<float *> &v,
                           const float hyper[3]) const {
  if (params.size() != manifest.params.size())
    fail("internal error: adamw takes ", manifest.params.size(),
         " parameters; got ", params.size());
  float norm = 0;
  std::vector<void *> args = packAdamw(params, grads, m, v, hyper, &norm);
  call(adamwEntry, "adamw", 2, args.data(), args.size());
  return norm;
}

std::pair<LossValues, float> CompiledModel::trainStep(
    const std::vector<float *> &params, const int32_t *tokens,
    const int32_t *targets, const std::vector<float *> &grads,
    const std::vector<float *> &m, const std::vector<float *> &v,
    const float hyper[3], const std::function<void()> &whileRunning) const {
  std::vector<const float *> constParams(params.begin(), params.end()),
      constGrads(grads.begin(), grads.end());
  if (!device) {
    LossValues loss = grad(constParams, tokens, targets, grads);
    float norm = adamw(params, constGrads, m, v, hyper);
    if (whileRunning)
      whileRunning();
    return {loss, norm};
  }
  if (grads.size() != params.size() || params.size() != manifest.params.size())
    fail("internal error: a training step of ", manifest.params.size(),
         " parameters got ", params.size(), " and ", grads.size(),
         " gradients");
  LossValues loss;
  float norm = 0;
  std::vector<void *> gradArgs =
      packInputs(constParams, tokens, targets, &loss);
  gradArgs.insert(gradArgs.end(), grads.begin(), grads.end());
  std::vector<void *> adamwArgs =
      packAdamw(params, constGrads, m, v, hyper, &norm);
  std::vector<void *> localGrad =
      argsForCall("grad", gradArgs.data(), gradArgs.size());
  std::vector<void *> localAdamw =
      argsForCall("adamw", adamwArgs.data(), adamwArgs.size());
  std::vector<Device::Call> calls{
      {gradEntry, "grad", 1, localGrad.data(), {}, {}},
      {adamwEntry, "adamw", 2, localAdamw.data(), {}, {}}};
  device->runStep(manifest, calls, ncclRanks, whileRunning);
  return {loss, norm};
}

bool CompiledModel::stageBatch(const int32_t *tokens,
                               const int32_t *targets) const {
  if (!device || manifest.streamShards > 1)
    return false;
  // grad's arguments: the parameters, then the tokens and the targets.
  size_t first = manifest.params.size();
  return device->stageInput(manifest, "grad", first, tokens) &&
         device->stageInput(manifest, "grad", first + 1, targets);
}

std::array<float, 3> CompiledModel::adamwHyperparameters(int64_t step,
                                                         double lr) const {
  if (!manifest.adamw)
    fail(manifest.manifestPath,
         ": the manifest has no adamw hyperparameters (recompile the package "
         "with mixc)");
  const Manifest::AdamW &h = *manifest.adamw;
  return {float(lr), float(1 - std::pow(h.beta1, double(step))),
          float(1 - std::pow(h.beta2, double(step)))};
}

std::vector<void *> CompiledModel::argsForCall(const char *name, void **args,
                                               size_t numArgs) const {
  if (manifest.streamShards <= 1)
    return std::vector<void *>(args, args + numArgs);
  if (streamRank < 0)
    fail(manifest.packagePath, " shards its streams over ",
         manifest.streamShards,
         " ranks; internal error: the model was not connected to them");
  return localArgs(name, args, numArgs);
}

void CompiledModel::call(Entry entry, const char *name, int index, void **args,
                         size_t numArgs) const {
  std::vector<void *> local;
  if (manifest.streamShards > 1) {
    local = argsForCall(name, args, numArgs);
    args = local.data();
  }
  if (!device) {
    entry(args);
    return;
  }
  device->call(manifest, entry, name, index, args, numArgs, ncclRanks);
}

void CompiledModel::reportDeviceStep(const std::string &title) const {
  if (device)
    device->reportStep(title);
}

CompiledModel::~CompiledModel() {
  // The device buffers are freed by the library's code.
  device.reset();
  if (handle)
    ::dlclose(handle);
}

CompiledModel::Entry CompiledModel::lookup(const char *symbol) const {
  void *fn = ::dlsym(handle, symbol);
  if (!fn) {
    ::dlclose(handle);
    fail(manifest.packagePath, "/", *manifest.library,
         ": the compiled code has no entry point '", symbol, "'");
  }
  return reinterpret_cast<Entry>(fn);
}

LossValues CompiledModel::forward(const std::vector<const float *> &params,
                                  const int32_t *tokens,
                                  const int32_t *targets) const {
  LossValues out;
  std::vector<void *> args = packInputs(params, tokens, targets, &out);
  call(forwardEntry, "forward", 0, args.data(), args.size());
  return out;
}

LossValues CompiledModel::grad(const std::vector<const float *> &params,
                               const int32_t *tokens, const int32_t *targets,
                               const std::vector<float *> &grads) const {
  if (grads.size() != params.size())
    fail("internal error: ", grads.size(), " gradient buffers for ",
         params.size(), " parameters");
  LossValues out;
  std::vector<void *> args = packInputs(params, tokens, targets, &out);
  for (float *g : grads)
    args.push_back(g);
  call(gradEntry, "grad", 1, args.data(), args.size());
  return out;
}
