//===- HuggingFaceConfig.cpp - A GPT-2 config.json as a model spec --------===//
//
// mixc accepts Hugging Face's GPT2Config (config.json, as transformers and
// `mix-run export --format hf` write it) where it accepts a model spec: the
// GPT-2 keys become the spec's, a section "mixc" holds what GPT-2 has not
// (the architecture and its section, the initialization seed), and every
// other key transformers writes is accepted or ignored with a note saying
// why. Keys that change what the model computes in a way mixc does not
// follow (another activation, an untied head, scaled attention turned off)
// are errors naming them.
//
//===----------------------------------------------------------------------===//

#include "mix/Frontend/InputFiles.h"
#include "mix/Frontend/ModelSpec.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir::mix;
using llvm::json::Object;
using llvm::json::Value;

bool mlir::mix::isHuggingFaceConfig(llvm::StringRef text) {
  // Too deep for the JSON parser's recursion: the spec parser says so.
  if (llvm::Error e = checkNesting(text, "", /*maxDepth=*/64)) {
    llvm::consumeError(std::move(e));
    return false;
  }
  llvm::Expected<Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  const Object *top = parsed->getAsObject();
  return top && !top->get("arch") &&
         (top->get("model_type") || top->get("n_embd"));
}

/// The keys transformers writes that say nothing mixc computes differently,
/// or that it ignores (with why).
static const char *ignoredWhy(llvm::StringRef key) {
  if (key == "resid_pdrop" || key == "embd_pdrop" || key == "attn_pdrop" ||
      key == "summary_first_dropout")
    return "mixc's models have no dropout";
  if (key.starts_with("summary_") || key == "task_specific_params")
    return "for heads other than the language model's";
  if (key == "bos_token_id" || key == "eos_token_id" || key == "pad_token_id" ||
      key == "use_cache" || key == "torch_dtype" ||
      key == "transformers_version" || key == "n_ctx" ||
      key == "reorder_and_upcast_attn" || key == "architectures" ||
      key == "model_type" || key == "_name_or_path" ||
      key == "tokenizer_class" || key == "prefix" || key == "dtype")
    return "it does not change what the model computes";
  return nullptr;
}

llvm::Expected<std::string>
mlir::mix::translateHuggingFaceConfig(llvm::StringRef text,
                                      llvm::StringRef file,
                                      std::vector<std::string> &notes) {
  auto fail = [&](const llvm::Twine &message) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   (file + ": " + message).str());
  };
  llvm::Expected<Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return parsed.takeError();
  const Object &top = *parsed->getAsObject();
  if (const Value *type = top.get("model_type"))
    if (type->getAsString() != std::optional<llvm::StringRef>("gpt2"))
      return fail("model_type is not \"gpt2\": mixc reads GPT-2's config "
                  "(GPT2Config) only");
  if (const Value *archs = top.get("architectures")) {
    const llvm::json::Array *list = archs->getAsArray();
    bool ok = list != nullptr;
    for (const Value &a : list ? *list : llvm::json::Array())
      ok = ok &&
           (a.getAsString() ==
                std::optional<llvm::StringRef>("GPT2LMHeadModel") ||
            a.getAsString() == std::optional<llvm::StringRef>("GPT2Model"));
    if (!ok)
      return fail("architectures is not [\"GPT2LMHeadModel\"]: mixc "
                  "compiles GPT-2's language model");
  }

  Object spec;
  // GPT-2's sizes, under the spec's names.
  static const std::pair<const char *, const char *> kSizes[] = {
      {"vocab_size", "vocab_size"},
      {"n_positions", "n_positions"},
      {"n_embd", "d_model"},
      {"n_layer", "n_layer"},
      {"n_head", "n_head"}};
  for (auto [hf, ours] : kSizes) {
    const Value *v = top.get(hf);
    if (!v)
      return fail(llvm::formatv("missing required key \"{0}\"", hf).str());
    spec[ours] = *v;
  }
  // n_inner: null or absent means 4 n_embd, as transformers has it.
  const Value *inner = top.get("n_inner");
  if (inner && inner->kind() != Value::Null) {
    spec["d_ff"] = *inner;
  } else if (std::optional<int64_t> d = top.get("n_embd")->getAsInteger()) {
    spec["d_ff"] = 4 * *d;
  } else {
    return fail("n_embd is not an integer");
  }
  if (const Value *eps = top.get("layer_norm_epsilon"))
    spec["layer_norm_eps"] = *eps;
  Object init;
  if (const Value *range = top.get("initializer_range"))
    init["std"] = *range;

  // What GPT-2 computes that mixc must agree with.
  if (const Value *act = top.get("activation_function")) {
    std::optional<llvm::StringRef> name = act->getAsString();
    if (!name || (*name != "gelu_new" && *name != "gelu_pytorch_tanh"))
      return fail("activation_function is not \"gelu_new\": mixc's GELU is "
                  "the tanh approximation (gelu_new, gelu_pytorch_tanh)");
  }
  auto requireBool = [&](const char *key, bool want,
                         const char *why) -> llvm::Error {
    const Value *v = top.get(key);
    if (v && v->getAsBoolean() != std::optional<bool>(want))
      return fail(llvm::formatv("{0} is not {1}: {2}", key,
                                want ? "true" : "false", why)
                      .str());
    return llvm::Error::success();
  };
  if (llvm::Error e = requireBool("tie_word_embeddings", true,
                                  "mixc's head is the token embedding"))
    return std::move(e);
  if (llvm::Error e = requireBool("scale_attn_weights", true,
                                  "mixc scales attention by 1/sqrt(head dim)"))
    return std::move(e);
  if (llvm::Error e =
          requireBool("scale_attn_by_inverse_layer_idx", false,
                      "mixc does not scale attention by the layer's index"))
    return std::move(e);

  // The added section: the architecture and its options, the seed.
  spec["arch"] = "dense";
  if (const Value *section = top.get("mixc")) {
    const Object *mixc = section->getAsObject();
    if (!mixc)
      return fail("\"mixc\" must be an object: the model's architecture "
                  "(\"arch\"), its section and \"init\"");
    for (const auto &[key, value] : *mixc) {
      if (key == "arch" || key == "cmollm" || key == "parascale" ||
          key == "altup") {
        spec[key] = value;
      } else if (key == "init") {
        const Object *o = value.getAsObject();
        if (!o)
          return fail("mixc.init must be an object");
        for (const auto &[k, v] : *o)
          init[k] = v;
      } else {
        return fail(llvm::formatv("mixc.{0}: unknown key (expected arch, "
                                  "cmollm, parascale, altup or init)",
                                  key.str())
                        .str());
      }
    }
  }
  if (!init.empty())
    spec["init"] = Value(std::move(init));

  static const llvm::StringSet<> kRead = {"vocab_size",
                                          "n_positions",
                                          "n_embd",
                                          "n_layer",
                                          "n_head",
                                          "n_inner",
                                          "layer_norm_epsilon",
                                          "initializer_range",
                                          "activation_function",
                                          "tie_word_embeddings",
                                          "scale_attn_weights",
                                          "scale_attn_by_inverse_layer_idx",
                                          "mixc"};
  std::vector<std::string> keys;
  for (const auto &[key, value] : top)
    keys.push_back(key.str());
  llvm::sort(keys);
  for (const std::string &key : keys) {
    if (kRead.contains(key))
      continue;
    const char *why = ignoredWhy(key);
    notes.push_back(llvm::formatv("{0}: \"{1}\" ignored: {2}", file, key,
                                  why ? why : "not a key mixc knows")
                        .str());
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", Value(std::move(spec)));
  return out;
}
