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
