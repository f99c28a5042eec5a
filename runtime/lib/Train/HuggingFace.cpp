//===- HuggingFace.cpp - Weights in Hugging Face's GPT-2 layout -----------===//

#include "mixrt/HuggingFace.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Json.h"

#include <filesystem>
#include <regex>

using namespace mixrt;

std::string mixrt::getHuggingFaceName(const std::string &name,
                                      bool &transposed) {
  // The embeddings and the final LayerNorm keep their names; a layer's
  // LayerNorms and linear layers too (transformers took GPT-2's names),
  // under "transformer.". The linear layers' weights are Conv1D's [in,
  // out].
  static const std::regex kept(
      R"((wte|wpe)\.weight|ln_f\.(weight|bias)|h\.[0-9]+\.(ln_[12]\.(weight|bias)|(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.bias))");
  static const std::regex conv1d(
      R"(h\.[0-9]+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight)");
  transposed = std::regex_match(name, conv1d);
  if (!transposed && !std::regex_match(name, kept))
    fail("parameter ", quote(name),
         " is not one of dense GPT-2's (Hugging Face's GPT2LMHeadModel has "
         "no place for it)");
  return "transformer." + name;
}

/// The [rows, cols] matrix \p t as [cols, rows].
static Tensor transposeMatrix(const Tensor &t) {
  int64_t rows = t.shape[0], cols = t.shape[1];
  std::vector<float> out(size_t(rows * cols));
  const float *in = t.getData<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[size_t(c * rows + r)] = in[r * cols + c];
  return Tensor::create<float>({cols, rows}, out);
}

/// GPT2Config's keys for the package's spec (transformers' defaults for
/// the dropouts and the rest are spelled out, so that the file says what
/// the model is on its own).
static std::string configJson(const Manifest &manifest) {
  const json::Value &spec = manifest.spec;
  auto integer = [&](const char *key) {
    const json::Value *v = spec.find(key);
    if (!v || !v->isInteger())
      fail(manifest.manifestPath, ": spec.", key,
           " is missing (recompile the package with mixc)");
    return v->getInteger();
  };
  const json::Value *eps = spec.find("layer_norm_eps");
  json::Value::Object config = {
      {"architectures", json::Value::Array{json::Value("GPT2LMHeadModel")}},
      {"model_type", "gpt2"},
      {"vocab_size", integer("vocab_size")},
      {"n_positions", integer("n_positions")},
      {"n_ctx", integer("n_positions")},
      {"n_embd", integer("d_model")},
      {"n_layer", integer("n_layer")},
      {"n_head", integer("n_head")},
      {"n_inner", integer("d_ff")},
      {"activation_function", "gelu_new"},
      {"layer_norm_epsilon", eps && eps->isNumber() ? eps->getNumber() : 1e-5},
      {"initializer_range", manifest.initStd},
      {"resid_pdrop", 0.0},
      {"embd_pdrop", 0.0},
      {"attn_pdrop", 0.0},
      {"scale_attn_weights", true},
      {"tie_word_embeddings", true},
      {"use_cache", true},
      {"torch_dtype", "float32"},
  };
  // GPT-2's BPE vocabulary ends with <|endoftext|>.
  if (manifest.vocabSize == 50257) {
    config.push_back({"bos_token_id", int64_t(50256)});
    config.push_back({"eos_token_id", int64_t(50256)});
  }
  return json::write(json::Value(std::move(config))) + "\n";
}

void mixrt::exportHuggingFaceGPT2(const Manifest &manifest,
                                  const std::vector<const Tensor *> &params,
                                  const std::string &dir) {
  const json::Value *arch = manifest.spec.find("arch");
  std::string name = arch && arch->isString() ? arch->getString() : "?";
  if (name != "dense")
    fail(manifest.packagePath, ": the model is ", name,
         ", and Hugging Face's transformers has a class for dense GPT-2 only "
         "(GPT2LMHeadModel); --format hf exports dense packages");
  if (manifest.streamShards != 1)
    fail(manifest.packagePath, ": a stream-sharded package holds a part of "
                               "each rank's parameters; export the unsharded "
                               "package's");
  TensorFile out;
  out.metadata.push_back({"format", "pt"});
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    bool transposed = false;
    std::string hfName =
        getHuggingFaceName(manifest.params[i].name, transposed);
    out.add(hfName, transposed ? transposeMatrix(*params[i]) : *params[i]);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    fail(dir, ": cannot create the directory: ",
         ec ? ec.message() : "a file of that name exists");
  writeSafetensors(dir + "/model.safetensors", out);
  AtomicFileWriter config(dir + "/config.json");
  config.write(configJson(manifest));
  config.commit();
}

/// Checks that config.json (\p config, read from \p path) describes the
/// package's model: the first key that disagrees is named.
static void checkConfig(const Manifest &manifest, const json::Value &config,
                        const std::string &path) {
  if (!config.isObject())
    fail(path, ": expected a JSON object");
  const json::Value &spec = manifest.spec;
  auto expect = [&](const char *key, const char *specKey, bool optional) {
    const json::Value *want = spec.find(specKey);
    const json::Value *got = config.find(key);
    if (!got && optional)
      return;
    if (!got || !got->isInteger())
      fail(path, ": ", key, " is missing or not an integer (the package's ",
           specKey, " is ", want ? json::write(*want) : "?", ")");
    if (!want || got->getInteger() != want->getInteger())
      fail(path, ": ", key, " is ", got->getInteger(), ", but the package's ",
           specKey, " is ", want ? json::write(*want) : "?", " (",
           manifest.packagePath, ")");
  };
  expect("vocab_size", "vocab_size", false);
  expect("n_positions", "n_positions", false);
  expect("n_embd", "d_model", false);
  expect("n_layer", "n_layer", false);
  expect("n_head", "n_head", false);
  // n_inner: null or absent means 4 n_embd.
  const json::Value *inner = config.find("n_inner");
  int64_t dff = spec.find("d_ff") ? spec.find("d_ff")->getInteger() : -1;
  int64_t want = inner && inner->isInteger()
                     ? inner->getInteger()
                     : 4 * config.find("n_embd")->getInteger();
  if (want != dff)
    fail(path, ": n_inner is ", want, ", but the package's d_ff is ", dff);
  const json::Value *act = config.find("activation_function");
  std::string activation =
      act && act->isString() ? act->getString() : std::string("gelu_new");
  if (activation != "gelu_new")
    fail(path, ": activation_function is ", quote(activation),
         ", but the package's GELU is gelu_new (the tanh form)");
  const json::Value *tied = config.find("tie_word_embeddings");
  if (tied && !(tied->isBool() && tied->getBool()))
    fail(path, ": tie_word_embeddings is not true, but the package's head "
               "is the token embedding");
  const json::Value *eps = config.find("layer_norm_epsilon");
  const json::Value *specEps = spec.find("layer_norm_eps");
  if (eps && eps->isNumber() && specEps && specEps->isNumber() &&
      eps->getNumber() != specEps->getNumber())
    fail(path, ": layer_norm_epsilon is ", eps->getNumber(),
         ", but the package's layer_norm_eps is ", specEps->getNumber());
}

/// \p t as float32 values (F32 as it is, F64 rounded); an Error names
/// \p path and \p name for another dtype.
static std::vector<float> floatValues(const Tensor &t, const std::string &path,
                                      const std::string &name) {
  int64_t n = t.getNumElements();
  if (t.dtype == DType::F32)
    return std::vector<float>(t.getData<float>(), t.getData<float>() + n);
  if (t.dtype == DType::F64) {
    const double *d = t.getData<double>();
    return std::vector<float>(d, d + n);
  }
  fail(path, ": tensor ", quote(name), " is ", getDTypeName(t.dtype),
       ", expected F32 or F64");
}

TensorFile mixrt::importHuggingFaceGPT2(const Manifest &manifest,
                                        const std::string &dir) {
  const json::Value *arch = manifest.spec.find("arch");
  std::string name = arch && arch->isString() ? arch->getString() : "?";
  if (name != "dense")
    fail(manifest.packagePath, ": the model is ", name,
         ", and a Hugging Face GPT-2 checkpoint holds dense GPT-2; "
         "--format hf imports into dense packages (start a mixture from "
         "dense weights with mix-run train --init)");
  std::string configPath = dir + "/config.json";
  json::Value config;
  try {
    config = json::parse(readFile(configPath));
  } catch (const json::ParseError &e) {
    fail(configPath, ": ", e.what());
  }
  checkConfig(manifest, config, configPath);
  std::string weightsPath = dir + "/model.safetensors";
  TensorFile hf = readSafetensors(weightsPath);

  TensorFile out;
  std::vector<bool> used(hf.getTensors().size(), false);
  auto indexOf = [&](const std::string &n) -> int64_t {
    const auto &all = hf.getTensors();
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].name == n)
        return int64_t(i);
    return -1;
  };
  for (const ParamInfo &p : manifest.params) {
    bool transposed = false;
    std::string full = getHuggingFaceName(p.name, transposed);
    // Checkpoints saved from GPT2Model, or old ones, lack the prefix.
    int64_t i = indexOf(full);
    if (i < 0)
      i = indexOf(full.substr(std::string("transformer.").size()));
    if (i < 0)
      fail(weightsPath, ": missing tensor ", quote(full), " (the package's ",
           quote(p.name), ", of shape ",
           formatShape(transposed ? std::vector<int64_t>{p.shape[1], p.shape[0]}
                                  : p.shape),
           " here)");
    used[size_t(i)] = true;
    const NamedTensor &t = hf.getTensors()[size_t(i)];
    std::vector<int64_t> want =
        transposed ? std::vector<int64_t>{p.shape[1], p.shape[0]} : p.shape;
    if (t.tensor.shape != want)
      fail(weightsPath, ": tensor ", quote(t.name), " has shape ",
           formatShape(t.tensor.shape), ", expected ", formatShape(want),
           " for the package's ", quote(p.name));
    Tensor value = Tensor::create<float>(
        t.tensor.shape, floatValues(t.tensor, weightsPath, t.name));
    out.add(p.name, transposed ? transposeMatrix(value) : value);
  }
  // What else a GPT-2 checkpoint may hold: the tied head (the same values
  // as wte) and, in older ones, the attention's causal mask buffers.
  static const std::regex buffers(
      R"((transformer\.)?h\.[0-9]+\.attn\.(bias|masked_bias))");
  const Tensor *wte = out.find("wte.weight");
  for (size_t i = 0; i < used.size(); ++i) {
    if (used[i])
      continue;
    const NamedTensor &t = hf.getTensors()[i];
    if (std::regex_match(t.name, buffers))
      continue;
    if (t.name == "lm_head.weight" && wte && t.tensor.shape == wte->shape &&
        floatValues(t.tensor, weightsPath, t.name) ==
            std::vector<float>(wte->getData<float>(),
                               wte->getData<float>() + wte->getNumElements()))
      continue;
    fail(weightsPath, ": tensor ", quote(t.name),
         t.name == "lm_head.weight"
             ? " differs from the token embedding, but the package's head is "
               "tied to it"
             : " is not a parameter of dense GPT-2");
  }
  return out;
}
