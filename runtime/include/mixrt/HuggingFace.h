//===- HuggingFace.h - Weights in Hugging Face's GPT-2 layout ---*- C++ -*-===//
//
// A dense package's parameters as Hugging Face's transformers stores a
// GPT2LMHeadModel: model.safetensors with transformers' names, the linear
// layers in its Conv1D layout (weights stored [in, out], where mixc keeps
// [out, in]), the output projection tied to the token embedding (not
// stored), and config.json with GPT2Config's keys. docs/training.md
// ("Weights to Hugging Face") gives the mapping.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_HUGGINGFACE_H
#define MIXRT_HUGGINGFACE_H

#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <string>
#include <vector>

namespace mixrt {

/// The name transformers gives the package parameter \p name of a dense
/// model, and whether its layout is transposed (a Conv1D weight); throws
/// Error for a name dense GPT-2 has not.
std::string getHuggingFaceName(const std::string &name, bool &transposed);

/// Writes DIR/model.safetensors and DIR/config.json (atomically; DIR is
/// made if missing) for the parameters \p params of \p manifest's package,
/// in its order (checkParams's). Throws Error, naming the package, for a
/// package other than dense GPT-2, which transformers has no class for.
void exportHuggingFaceGPT2(const Manifest &manifest,
                           const std::vector<const Tensor *> &params,
                           const std::string &dir);

/// The parameters of \p manifest's dense package, in its order and with
/// its names and layouts, from the Hugging Face GPT-2 checkpoint in
/// \p dir (config.json and model.safetensors, tensor names with or
/// without "transformer."). Throws Error naming the first key of
/// config.json or the first tensor whose value or shape does not match the
/// package, and any tensor GPT-2 has not (the tied lm_head.weight, which
/// must equal wte, and the attention's mask buffers are accepted).
TensorFile importHuggingFaceGPT2(const Manifest &manifest,
                                 const std::string &dir);

} // namespace mixrt

#endif // MIXRT_HUGGINGFACE_H
