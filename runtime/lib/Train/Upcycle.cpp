//===- Upcycle.cpp - A mixture started from a dense model -----------------===//

#include "mixrt/Upcycle.h"

#include "mixrt/Error.h"
#include "mixrt/Init.h"

#include <set>

using namespace mixrt;

bool mixrt::isDenseForMixture(const Manifest &manifest,
                              const TensorFile &params) {
  const json::Value *arch = manifest.spec.find("arch");
  return arch && arch->isString() && arch->getString() == "cmollm" &&
         params.find("h.0.mlp.c_fc.weight") && !params.find("h.0.mlp.kernels");
}

/// "h.3." of "h.3.mlp.kernels", or "" for a name outside the layers.
static std::string layerPrefix(const std::string &name) {
  if (name.rfind("h.", 0) != 0)
    return "";
  size_t dot = name.find('.', 2);
  return dot == std::string::npos ? "" : name.substr(0, dot + 1);
}

/// \p source's \p count copies, one after another.
static Tensor tile(const Tensor &source, int64_t count,
                   std::vector<int64_t> shape) {
  std::vector<float> values;
  const float *d = source.getData<float>();
  values.reserve(size_t(count * source.getNumElements()));
  for (int64_t k = 0; k < count; ++k)
    values.insert(values.end(), d, d + source.getNumElements());
  return Tensor::create<float>(std::move(shape), values);
}

TensorFile mixrt::upcycleDense(const Manifest &manifest,
                               const TensorFile &dense,
                               const std::string &path) {
  TensorFile init = initParams(manifest);
  TensorFile out;
  std::set<std::string> used;
  // The dense tensor \p name, which must have \p shape.
  auto take = [&](const std::string &name,
                  const std::vector<int64_t> &shape) -> const Tensor & {
    const Tensor *t = dense.find(name);
    if (!t)
      fail(path, ": missing parameter ", quote(name), " (F32 of shape ",
           formatShape(shape), "), which the upcycled ", manifest.packagePath,
           " needs");
    if (t->dtype != DType::F32)
      fail(path, ": parameter ", quote(name), " has dtype ",
           getDTypeName(t->dtype), ", expected F32");
    if (t->shape != shape)
      fail(path, ": parameter ", quote(name), " has shape ",
           formatShape(t->shape), ", expected ", formatShape(shape),
           " for the upcycled ", manifest.packagePath);
    used.insert(name);
    return *t;
  };
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamInfo &p = manifest.params[i];
    const std::string layer = layerPrefix(p.name);
    if (p.name == layer + "mlp.kernels") {
      // (N, f, d): every stream kernel is c_fc's weight.
      const Tensor &fc =
          take(layer + "mlp.c_fc.weight", {p.shape[1], p.shape[2]});
      out.add(p.name, tile(fc, p.shape[0], p.shape));
    } else if (p.name == layer + "mlp.kernel_bias") {
      const Tensor &fc = take(layer + "mlp.c_fc.bias", {p.shape[1]});
      out.add(p.name, tile(fc, p.shape[0], p.shape));
    } else if (dense.find(p.name)) {
      out.add(p.name, take(p.name, p.shape));
    } else {
      // Only the mixture has it (the gate, its context modulations): the
      // package's initialization.
      out.add(p.name, init.getTensors()[i].tensor);
    }
  }
  for (const NamedTensor &t : dense.getTensors())
    if (!used.count(t.name))
      fail(path, ": parameter ", quote(t.name), " has no place in ",
           manifest.packagePath,
           " (expected the parameters of a dense "
           "GPT-2 of the package's sizes)");
  return out;
}
