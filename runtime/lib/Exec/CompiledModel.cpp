//===- CompiledModel.cpp - Calling a package's compiled code --------------===//
//
// dlopen of the package library, entry point lookup, and the packed
// argument arrays of the forward and gradient functions.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"

#include "mixrt/Error.h"

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
  if (!manifest.library)
    fail(manifest.packagePath,
         " has no compiled code (library missing from manifest)");
  if (manifest.target != "cpu")
    fail(manifest.packagePath, " is compiled for target '", manifest.target,
         "'; this runtime runs cpu packages");
  std::string path = manifest.packagePath + "/" + *manifest.library;
  handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    fail(path,
         ": cannot load the compiled code: ", why ? why : "unknown error");
  }
  forwardEntry = lookup("mix_forward");
  gradEntry = lookup("mix_grad");
  adamwEntry = lookup("mix_adamw");
  logitsEntry = lookup("mix_logits");
}

void CompiledModel::logits(const std::vector<const float *> &params,
                           const int32_t *tokens, float *out) const {
  // The entry takes targets too (the same signature as forward); unused.
  std::vector<void *> args = packInputs(params, tokens, tokens, nullptr);
  args.push_back(out);
  logitsEntry(args.data());
}

void CompiledModel::adamw(void **args) const { adamwEntry(args); }

CompiledModel::~CompiledModel() {
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
  args.push_back(&out.ce);
  args.push_back(&out.aux);
  forwardEntry(args.data());
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
  gradEntry(args.data());
  return out;
}
