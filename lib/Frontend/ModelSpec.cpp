//===- ModelSpec.cpp - The model spec file (docs/models.md §1) ----------------------===//
//
// A strict parser of model specs: unknown keys, wrong types and impossible
// sizes are errors that name the file, the line and the key.
//
//===----------------------------------------------------------------------===//

#include "mix/Frontend/ModelSpec.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mix;
using llvm::json::Object;
using llvm::json::Value;

llvm::StringRef mlir::mix::archName(Arch arch) {
  switch (arch) {
  case Arch::Dense:
    return "dense";
  case Arch::CMoLLM:
    return "cmollm";
  case Arch::ParaScale:
    return "parascale";
  case Arch::AltUp:
    return "altup";
  }
  llvm_unreachable("unknown arch");
}

llvm::StringRef mlir::mix::gatingName(Gating gating) {
  switch (gating) {
  case Gating::Simple:
    return "simple";
  case Gating::ContextAware:
    return "context_aware";
  case Gating::MultiHead:
    return "multi_head";
  case Gating::Adaptive:
    return "adaptive";
  }
  llvm_unreachable("unknown gating");
}

namespace {
/// Sizes beyond this are refused before anything is allocated.
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxParamBytes = int64_t{64} << 30;
// The compiler unrolls the layers, and the streams or blocks within one,
// into straight-line IR: a model with more would take hours to compile.
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxStreams = 256;

class SpecParser {
public:
  SpecParser(llvm::StringRef text, llvm::StringRef file)
      : text(text), file(file) {}

  llvm::Expected<ModelSpec> parse();

private:
  /// The 1-based line of `"key"` inside `section` ("" for the top level),
  /// or of the section itself; 1 if not found.
  unsigned lineOf(llvm::StringRef section, llvm::StringRef key) const {
    size_t from = 0;
    if (!section.empty()) {
      size_t at = text.find(("\"" + section + "\"").str());
      if (at != llvm::StringRef::npos)
        from = at;
    }
    size_t at = key.empty() ? from : text.find(("\"" + key + "\"").str(), from);
    if (at == llvm::StringRef::npos)
      at = from;
    return 1 + text.take_front(at).count('\n');
  }

  llvm::Error fail(llvm::StringRef section, llvm::StringRef key,
                   const llvm::Twine &msg) const {
    std::string where =
        section.empty() ? key.str() : (section + "." + key).str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::formatv("{0}:{1}: '{2}': {3}", file,
                                                 lineOf(section, key), where,
                                                 msg.str())
                                       .str());
  }

  llvm::Error checkKeys(const Object &obj, llvm::StringRef section,
                        llvm::ArrayRef<llvm::StringRef> allowed) const {
    for (const auto &kv : obj) {
      llvm::StringRef key = kv.first;
      if (!llvm::is_contained(allowed, key)) {
        std::string list;
        for (llvm::StringRef a : allowed)
          list += (list.empty() ? "" : ", ") + a.str();
        return fail(section, key,
                    "unknown key (expected one of: " + list + ")");
      }
    }
    return llvm::Error::success();
  }

  /// A number of streams or blocks, which the compiler unrolls.
  llvm::Error checkStreams(llvm::StringRef section, llvm::StringRef key,
                           int64_t value) const {
    if (value <= kMaxStreams)
      return llvm::Error::success();
    return fail(section, key,
                llvm::formatv("{0} is more than the {1} this compiler accepts "
                              "(it unrolls them)",
                              value, kMaxStreams));
  }

  /// A positive integer; `required` keys must be present.
  llvm::Error getSize(const Object &obj, llvm::StringRef section,
                      llvm::StringRef key, int64_t &out, bool required,
                      int64_t min = 1) const {
    const Value *v = obj.get(key);
    if (!v) {
      if (required)
        return fail(section, key, "missing required key");
      return llvm::Error::success();
    }
    // The upper bound first, on the number: llvm::json's getAsInteger
    // converts a double that rounds to 2^63 (9223372036854775808.5) to
    // int64, which is undefined behaviour.
    std::optional<double> number = v->getAsNumber();
    if (number && *number > double(kMaxDim))
      return fail(section, key,
                  llvm::formatv("{0} is too large (at most {1})",
                                llvm::format("%.17g", *number), kMaxDim));
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || v->kind() == Value::Boolean)
      return fail(section, key, "expected an integer");
    if (*i < min)
      return fail(section, key,
                  llvm::formatv("must be at least {0}, got {1}", min, *i));
    out = *i;
    return llvm::Error::success();
  }

  llvm::Error getNumber(const Object &obj, llvm::StringRef section,
                        llvm::StringRef key, double &out, double min,
                        double max, bool minExclusive) const {
    const Value *v = obj.get(key);
    if (!v)
      return llvm::Error::success();
    std::optional<double> d = v->getAsNumber();
    if (!d)
      return fail(section, key, "expected a number");
    // %g, not formatv's fixed two decimals, which shows 1e-9 as 0.00.
    auto show = [](double x) {
      return llvm::formatv("{0}", llvm::format("%g", x));
    };
    if (!std::isfinite(*d) || *d < min || (minExclusive && *d == min) ||
        *d > max)
      return fail(section, key,
                  llvm::formatv("{0} is out of range {1}{2}, {3}]", show(*d),
                                minExclusive ? "(" : "[", show(min),
                                show(max)));
    out = *d;
    return llvm::Error::success();
  }

  llvm::Error getString(const Object &obj, llvm::StringRef section,
                        llvm::StringRef key, std::string &out) const {
    const Value *v = obj.get(key);
    if (!v)
      return llvm::Error::success();
    std::optional<llvm::StringRef> s = v->getAsString();
    if (!s)
      return fail(section, key, "expected a string");
    out = s->str();
    return llvm::Error::success();
  }

  llvm::Expected<const Object *> section(const Object &top,
                                         llvm::StringRef name) const {
    const Value *v = top.get(name);
    if (!v)
      return nullptr;
    const Object *obj = v->getAsObject();
    if (!obj)
      return fail("", name, "expected an object");
    return obj;
  }

  /// llvm::json::parse recurses once a nesting level, without a limit; a
  /// spec nests two levels, so deeper text is refused before it can
  /// exhaust the stack. Brackets inside strings do not count.
  llvm::Error checkNesting() const {
    constexpr unsigned kMaxNesting = 64;
    unsigned depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (inString) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          inString = false;
      } else if (c == '"') {
        inString = true;
      } else if (c == '{' || c == '[') {
        if (++depth > kMaxNesting)
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              llvm::formatv("{0}:{1}: invalid JSON: nesting deeper than {2} "
                            "levels",
                            file, 1 + text.take_front(i).count('\n'),
                            kMaxNesting)
                  .str());
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      }
    }
    return llvm::Error::success();
  }

  /// llvm::json::parse keeps the last of repeated keys; a spec must not
  /// repeat one. Scans the (valid) JSON text for a key given twice in one
  /// object.
  llvm::Error checkDuplicateKeys() const {
    struct Scope {
      bool isObject;
      std::string name;
      llvm::StringSet<> keys;
    };
    llvm::SmallVector<Scope> scopes;
    std::string lastKey;
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '{' || c == '[') {
        scopes.push_back({c == '{', c == '{' ? lastKey : "", {}});
      } else if ((c == '}' || c == ']') && !scopes.empty()) {
        scopes.pop_back();
      } else if (c == '"') {
        size_t end = i + 1;
        while (end < text.size() && text[end] != '"')
          end += text[end] == '\\' ? 2 : 1;
        llvm::StringRef str = text.slice(i + 1, end);
        size_t next = text.find_first_not_of(" \t\r\n", end + 1);
        bool isKey = !scopes.empty() && scopes.back().isObject &&
                     next != llvm::StringRef::npos && text[next] == ':';
        if (isKey) {
          lastKey = str.str();
          if (!scopes.back().keys.insert(str).second) {
            std::string where = scopes.back().name.empty()
                                    ? str.str()
                                    : scopes.back().name + "." + str.str();
            return llvm::createStringError(
                llvm::inconvertibleErrorCode(),
                llvm::formatv("{0}:{1}: '{2}': duplicate key (each key may "
                              "appear once)",
                              file, 1 + text.take_front(i).count('\n'), where)
                    .str());
          }
        }
        i = end;
      }
    }
    return llvm::Error::success();
  }

  llvm::StringRef text, file;
};
} // namespace

llvm::Expected<ModelSpec> SpecParser::parse() {
  if (llvm::Error e = checkNesting())
    return std::move(e);
  llvm::Expected<Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}: invalid JSON: {1}", file,
                      llvm::toString(parsed.takeError()))
            .str());
  const Object *top = parsed->getAsObject();
  if (!top)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        (file + ": a model spec must be one JSON object").str());

  if (llvm::Error e = checkDuplicateKeys())
    return std::move(e);

  ModelSpec spec;
  if (llvm::Error e = checkKeys(*top, "",
                                {"arch", "vocab_size", "n_positions", "n_layer",
                                 "d_model", "n_head", "d_ff", "layer_norm_eps",
                                 "cmollm", "parascale", "altup", "init"}))
    return std::move(e);

  std::string arch;
  if (llvm::Error e = getString(*top, "", "arch", arch))
    return std::move(e);
  if (arch.empty() && !top->get("arch"))
    return fail("", "arch", "missing required key");
  std::optional<Arch> a = llvm::StringSwitch<std::optional<Arch>>(arch)
                              .Case("dense", Arch::Dense)
                              .Case("cmollm", Arch::CMoLLM)
                              .Case("parascale", Arch::ParaScale)
                              .Case("altup", Arch::AltUp)
                              .Default(std::nullopt);
  if (!a)
    return fail("", "arch",
                "unknown arch '" + arch +
                    "' (expected dense, cmollm, parascale or altup)");
  spec.arch = *a;

  for (auto [key, field] :
       {std::pair<llvm::StringRef, int64_t *>{"vocab_size", &spec.vocabSize},
        {"n_positions", &spec.nPositions},
        {"n_layer", &spec.nLayer},
        {"d_model", &spec.dModel},
        {"n_head", &spec.nHead},
        {"d_ff", &spec.dFF}})
    if (llvm::Error e = getSize(*top, "", key, *field, /*required=*/true))
      return std::move(e);
  if (spec.nLayer > kMaxLayers)
    return fail("", "n_layer",
                llvm::formatv("{0} layers are more than the {1} this compiler "
                              "accepts (it unrolls every layer)",
                              spec.nLayer, kMaxLayers));
  if (llvm::Error e = getNumber(*top, "", "layer_norm_eps", spec.layerNormEps,
                                0, 1, /*minExclusive=*/true))
    return std::move(e);
  if (spec.dModel % spec.nHead != 0)
    return fail("", "n_head",
                llvm::formatv("d_model {0} is not divisible by n_head {1}",
                              spec.dModel, spec.nHead));

  llvm::Expected<const Object *> init = section(*top, "init");
  if (!init)
    return init.takeError();
  if (*init) {
    if (llvm::Error e = checkKeys(**init, "init", {"seed", "std"}))
      return std::move(e);
    if (llvm::Error e = getSize(**init, "init", "seed", spec.init.seed,
                                /*required=*/false, /*min=*/0))
      return std::move(e);
    if (llvm::Error e = getNumber(**init, "init", "std", spec.init.std, 0, 1e3,
                                  /*minExclusive=*/true))
      return std::move(e);
  }

  // Only the section of the chosen arch is read.
  if (spec.arch == Arch::CMoLLM) {
    llvm::Expected<const Object *> cm = section(*top, "cmollm");
    if (!cm)
      return cm.takeError();
    bool gateHeadsGiven = *cm && (*cm)->get("gate_heads");
    if (*cm) {
      if (llvm::Error e =
              checkKeys(**cm, "cmollm",
                        {"streams", "gating", "gate_heads", "balance_alpha"}))
        return std::move(e);
      if (llvm::Error e =
              getSize(**cm, "cmollm", "streams", spec.cmollm.streams, false))
        return std::move(e);
      if (llvm::Error e = getSize(**cm, "cmollm", "gate_heads",
                                  spec.cmollm.gateHeads, false))
        return std::move(e);
      if (llvm::Error e = getNumber(**cm, "cmollm", "balance_alpha",
                                    spec.cmollm.balanceAlpha, 0, 1e6, false))
        return std::move(e);
      std::string gating = "simple";
      if (llvm::Error e = getString(**cm, "cmollm", "gating", gating))
        return std::move(e);
      std::optional<Gating> g =
          llvm::StringSwitch<std::optional<Gating>>(gating)
              .Case("simple", Gating::Simple)
              .Case("context_aware", Gating::ContextAware)
              .Case("multi_head", Gating::MultiHead)
              .Case("adaptive", Gating::Adaptive)
              .Default(std::nullopt);
      if (!g)
        return fail("cmollm", "gating",
                    "unknown gating '" + gating +
                        "' (expected simple, context_aware, multi_head or "
                        "adaptive)");
      spec.cmollm.gating = *g;
    }
    if (llvm::Error e = checkStreams("cmollm", "streams", spec.cmollm.streams))
      return std::move(e);
    // Only multi_head gating reads gate_heads; a value given for another
    // gating is still checked, as a spec that says it means it.
    int64_t h = spec.cmollm.gateHeads;
    if ((spec.cmollm.gating == Gating::MultiHead || gateHeadsGiven) &&
        (spec.dModel % h != 0 || spec.dFF % h != 0))
      return fail("cmollm", "gate_heads",
                  llvm::formatv("gate_heads {0} must divide both d_model {1} "
                                "and d_ff {2}",
                                h, spec.dModel, spec.dFF));
    if ((spec.cmollm.gating == Gating::ContextAware ||
         spec.cmollm.gating == Gating::Adaptive) &&
        spec.dModel < 4)
      return fail("cmollm", "gating",
                  llvm::formatv("{0} gating needs d_model >= 4 (its pooled "
                                "MLP has d_model/4 units), got {1}",
                                gatingName(spec.cmollm.gating), spec.dModel));
  }
  if (spec.arch == Arch::ParaScale) {
    llvm::Expected<const Object *> ps = section(*top, "parascale");
    if (!ps)
      return ps.takeError();
    if (*ps) {
      if (llvm::Error e = checkKeys(**ps, "parascale",
                                    {"streams", "prefix_tokens", "smoothing"}))
        return std::move(e);
      if (llvm::Error e = getSize(**ps, "parascale", "streams",
                                  spec.parascale.streams, false))
        return std::move(e);
      if (llvm::Error e = getSize(**ps, "parascale", "prefix_tokens",
                                  spec.parascale.prefixTokens, false))
        return std::move(e);
      if (llvm::Error e = getNumber(**ps, "parascale", "smoothing",
                                    spec.parascale.smoothing, 0, 1, false))
        return std::move(e);
    }
    if (llvm::Error e =
            checkStreams("parascale", "streams", spec.parascale.streams))
      return std::move(e);
  }
  if (spec.arch == Arch::AltUp) {
    llvm::Expected<const Object *> au = section(*top, "altup");
    if (!au)
      return au.takeError();
    if (*au) {
      if (llvm::Error e = checkKeys(**au, "altup", {"blocks", "schedule"}))
        return std::move(e);
      if (llvm::Error e =
              getSize(**au, "altup", "blocks", spec.altup.blocks, false))
        return std::move(e);
      std::string schedule = "alternating";
      if (llvm::Error e = getString(**au, "altup", "schedule", schedule))
        return std::move(e);
      if (schedule != "alternating" && schedule != "same")
        return fail("altup", "schedule",
                    "unknown schedule '" + schedule +
                        "' (expected alternating or same)");
      spec.altup.alternating = schedule == "alternating";
    }
    if (llvm::Error e = checkStreams("altup", "blocks", spec.altup.blocks))
      return std::move(e);
  }

  // Refuse models whose parameters could not be held in memory, before
  // anyone allocates them. Sizes are multiplied in double, which cannot
  // overflow; and as every layer has the same parameters, the tables of one
  // and two layers give the total without a table of n_layer layers.
  auto tableBytes = [](const ModelSpec &s) {
    double bytes = 0;
    for (const ParamInfo &p : paramTable(s)) {
      double elements = 1;
      for (int64_t dim : p.shape)
        elements *= static_cast<double>(dim);
      bytes += 4.0 * elements;
    }
    return bytes;
  };
  auto totalBytes = [&](const ModelSpec &s) {
    ModelSpec one = s, two = s;
    one.nLayer = 1;
    two.nLayer = 2;
    double first = tableBytes(one);
    return first +
           static_cast<double>(s.nLayer - 1) * (tableBytes(two) - first);
  };
  double bytes = totalBytes(spec);
  if (bytes <= static_cast<double>(kMaxParamBytes))
    return spec;
  // Name the size that makes the parameters too large: the one that, set
  // back to its value in the example spec of models.md §1, shrinks them most.
  struct Candidate {
    llvm::StringRef section, key;
    int64_t *field;
    int64_t typical;
  };
  ModelSpec probe = spec;
  int64_t typicalWidth = spec.nHead * std::max<int64_t>(1, 256 / spec.nHead);
  llvm::SmallVector<Candidate> candidates = {
      {"", "vocab_size", &probe.vocabSize, 256},
      {"", "n_positions", &probe.nPositions, 256},
      {"", "n_layer", &probe.nLayer, 4},
      {"", "d_model", &probe.dModel, typicalWidth},
      {"", "d_ff", &probe.dFF, 1024}};
  if (spec.arch == Arch::CMoLLM)
    candidates.push_back({"cmollm", "streams", &probe.cmollm.streams, 4});
  if (spec.arch == Arch::ParaScale) {
    candidates.push_back({"parascale", "streams", &probe.parascale.streams, 4});
    candidates.push_back(
        {"parascale", "prefix_tokens", &probe.parascale.prefixTokens, 48});
  }
  if (spec.arch == Arch::AltUp)
    candidates.push_back({"altup", "blocks", &probe.altup.blocks, 2});
  const Candidate *worst = &candidates.front();
  double smallest = bytes;
  for (const Candidate &c : candidates) {
    int64_t saved = *c.field;
    *c.field = std::min(saved, c.typical);
    double shrunk = totalBytes(probe);
    *c.field = saved;
    if (shrunk < smallest) {
      smallest = shrunk;
      worst = &c;
    }
  }
  return fail(worst->section, worst->key,
              llvm::formatv("the parameters would take {0:f1} GiB, more "
                            "than the {1} GiB this compiler accepts",
                            bytes / (1 << 30), kMaxParamBytes >> 30));
}

llvm::Expected<ModelSpec>
mlir::mix::parseModelSpec(llvm::StringRef text, llvm::StringRef filename,
                          std::vector<std::string> *notes) {
  if (!isHuggingFaceConfig(text))
    return SpecParser(text, filename).parse();
  std::vector<std::string> ignored;
  llvm::Expected<std::string> translated =
      translateHuggingFaceConfig(text, filename, notes ? *notes : ignored);
  if (!translated)
    return translated.takeError();
  // Its checks name the spec's keys (d_model for n_embd, d_ff for n_inner).
  std::string name = (filename + " (as a model spec)").str();
  return SpecParser(*translated, name).parse();
}

llvm::Error mlir::mix::checkShapes(const ModelSpec &spec, int64_t batch,
                                   int64_t seq) {
  auto err = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  if (batch < 1 || batch > kMaxDim)
    return err(
        llvm::formatv("--batch must be in [1, {0}], got {1}", kMaxDim, batch));
  if (seq < 1 || seq > spec.nPositions)
    return err(llvm::formatv("--seq must be in [1, n_positions = {0}], got {1}",
                             spec.nPositions, seq));

  // Refuse steps whose activations could not be held in memory (or whose
  // sizes overflow 64 bits) before building code that would allocate them.
  // These are lower bounds of the largest tensors of one training step.
  double tokens = static_cast<double>(batch) * static_cast<double>(seq);
  double streams = spec.arch == Arch::CMoLLM      ? spec.cmollm.streams
                   : spec.arch == Arch::ParaScale ? spec.parascale.streams
                                                  : 1;
  // ParaScale runs every stream as a sequence of its own through attention.
  double attentionRows = spec.arch == Arch::ParaScale ? streams : 1;
  struct {
    const char *what;
    double elements;
  } activations[] = {
      {"the logits (batch x seq x vocab_size)",
       tokens * static_cast<double>(spec.vocabSize)},
      {"the attention scores (batch x n_head x seq x seq)",
       tokens * attentionRows * static_cast<double>(spec.nHead * seq)},
      {"the feed-forward activations (batch x seq x streams x d_ff)",
       tokens * streams * static_cast<double>(spec.dFF)}};
  for (const auto &activation : activations)
    if (4.0 * activation.elements > static_cast<double>(kMaxParamBytes))
      return err(llvm::formatv(
          "--batch {0} --seq {1}: {2} would take {3:f1} GiB, more than the "
          "{4} GiB this compiler accepts for one tensor",
          batch, seq, activation.what, 4.0 * activation.elements / (1 << 30),
          kMaxParamBytes >> 30));
  return llvm::Error::success();
}

llvm::json::Value ModelSpec::toJSON() const {
  Object o{{"arch", archName(arch)},
           {"vocab_size", vocabSize},
           {"n_positions", nPositions},
           {"n_layer", nLayer},
           {"d_model", dModel},
           {"n_head", nHead},
           {"d_ff", dFF},
           {"layer_norm_eps", layerNormEps},
           {"init", Object{{"seed", init.seed}, {"std", init.std}}}};
  if (arch == Arch::CMoLLM) {
    o["cmollm"] = Object{{"streams", cmollm.streams},
                         {"gating", gatingName(cmollm.gating)},
                         {"balance_alpha", cmollm.balanceAlpha}};
    // A gate_heads that is written is checked when read back: the default
    // of a gating that does not read it may not divide d_model and d_ff,
    // and is left out then.
    if (dModel % cmollm.gateHeads == 0 && dFF % cmollm.gateHeads == 0)
      (*o.getObject("cmollm"))["gate_heads"] = cmollm.gateHeads;
  }
  if (arch == Arch::ParaScale)
    o["parascale"] = Object{{"streams", parascale.streams},
                            {"prefix_tokens", parascale.prefixTokens},
                            {"smoothing", parascale.smoothing}};
  if (arch == Arch::AltUp)
    o["altup"] =
        Object{{"blocks", altup.blocks},
               {"schedule", altup.alternating ? "alternating" : "same"}};
  return o;
}
