//===- Manifest.cpp - The package manifest (manifest.json) ----------------===//
//
// Validates a manifest against docs/package.md. Every error names the
// manifest, the line and the key path, and says what was expected. Keys the
// runtime does not need are ignored, so producers may add entries within a
// format version.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Manifest.h"
#include "mixrt/File.h"
#include "mixrt/Safetensors.h"

#include <cmath>
#include <sys/stat.h>
#include <unordered_set>

using namespace mixrt;

const char *mixrt::getInitKindName(InitKind kind) {
  switch (kind) {
  case InitKind::Normal:
    return "normal";
  case InitKind::Uniform:
    return "uniform";
  case InitKind::Zeros:
    return "zeros";
  case InitKind::Ones:
    return "ones";
  case InitKind::Identity:
    return "identity";
  }
  return "?";
}

namespace {
/// Typed access to manifest keys with errors "path:line: key: problem".
class Reader {
public:
  explicit Reader(const std::string &path) : path(path) {}

  [[noreturn]] void error(const json::Value &at, const std::string &key,
                          const std::string &problem) const {
    std::string where = path;
    if (at.getLine() > 0)
      where += concat(":", at.getLine());
    fail(where, ": ", key, ": ", problem);
  }

  const json::Value &get(const json::Value &object, const std::string &prefix,
                         const char *key) const {
    const json::Value *value = object.find(key);
    if (!value)
      error(object, prefix + key, "missing");
    return *value;
  }

  std::string getString(const json::Value &object, const std::string &prefix,
                        const char *key) const {
    const json::Value &value = get(object, prefix, key);
    if (!value.isString())
      error(value, prefix + key, "expected a string, got " + describe(value));
    return value.getString();
  }

  int64_t getInteger(const json::Value &object, const std::string &prefix,
                     const char *key, int64_t min) const {
    const json::Value &value = get(object, prefix, key);
    if (!value.isInteger() || value.getInteger() < min)
      error(value, prefix + key,
            concat("expected an integer >= ", min, ", got ", show(value)));
    return value.getInteger();
  }

  double getNumber(const json::Value &object, const std::string &prefix,
                   const char *key, bool allowZero) const {
    const json::Value &value = get(object, prefix, key);
    if (!value.isNumber() || value.getNumber() < 0 ||
        (!allowZero && value.getNumber() == 0))
      error(value, prefix + key,
            concat("expected a ", allowZero ? "non-negative" : "positive",
                   " number, got ", show(value)));
    return value.getNumber();
  }

  const json::Value &getObject(const json::Value &object,
                               const std::string &prefix,
                               const char *key) const {
    const json::Value &value = get(object, prefix, key);
    if (!value.isObject())
      error(value, prefix + key, "expected an object, got " + describe(value));
    return value;
  }

  static std::string describe(const json::Value &value) {
    return json::Value::describe(value.getKind());
  }

  /// The value itself for scalars, its kind otherwise.
  static std::string show(const json::Value &value) {
    if (value.isNumber() || value.isString() || value.isBool())
      return json::write(value);
    return describe(value);
  }

private:
  std::string path;
};
} // namespace

/// `shape` of \p object: positive integers whose product fits a size.
static std::vector<int64_t> parseShape(const Reader &reader,
                                       const json::Value &object,
                                       const std::string &prefix) {
  const json::Value &shape = reader.get(object, prefix, "shape");
  if (!shape.isArray())
    reader.error(shape, prefix + "shape",
                 "expected an array of positive integers, got " +
                     Reader::describe(shape));
  std::vector<int64_t> result;
  for (const json::Value &dim : shape.getArray()) {
    if (!dim.isInteger() || dim.getInteger() <= 0)
      reader.error(dim, prefix + "shape",
                   "expected positive integers, got " + Reader::show(dim));
    result.push_back(dim.getInteger());
  }
  try {
    getNumElements(result);
  } catch (const Error &e) {
    reader.error(shape, prefix + "shape", e.what());
  }
  return result;
}

/// entries.decode: the decode step's batch, positions and state buffers.
static Manifest::Decode parseDecode(const Reader &reader,
                                    const json::Value &value,
                                    const Manifest &manifest) {
  const std::string where = "entries.decode.";
  if (!value.isObject())
    reader.error(value, "entries.decode",
                 "expected an object, got " + Reader::describe(value));
  Manifest::Decode decode;
  decode.batch = reader.getInteger(value, where, "batch", 1);
  decode.positions = reader.getInteger(value, where, "positions", 1);
  const json::Value &state = reader.get(value, where, "state");
  if (!state.isArray())
    reader.error(state, where + "state",
                 "expected an array, got " + Reader::describe(state));
  for (size_t i = 0; i < state.getArray().size(); ++i) {
    const json::Value &s = state.getArray()[i];
    std::string at = concat(where, "state[", i, "]");
    if (!s.isObject())
      reader.error(s, at, "expected an object, got " + Reader::describe(s));
    Manifest::Decode::State buffer;
    buffer.name = reader.getString(s, at + ".", "name");
    buffer.shape = parseShape(reader, s, at + ".");
    buffer.numElements = getNumElements(buffer.shape);
    decode.state.push_back(std::move(buffer));
  }
  // The logits of a call: batch x vocab_size floats.
  try {
    getNumElements({decode.batch, manifest.vocabSize, 4});
  } catch (const Error &e) {
    reader.error(*value.find("batch"), where + "batch", e.what());
  }
  return decode;
}

static ParamInfo parseParam(const Reader &reader, const json::Value &value,
                            size_t index) {
  std::string where = concat("params[", index, "]");
  if (!value.isObject())
    reader.error(value, where,
                 "expected an object, got " + Reader::describe(value));
  ParamInfo param;
  param.name = reader.getString(value, where + ".", "name");
  if (param.name.empty())
    reader.error(value, where + ".name", "must not be empty");
  std::string prefix = concat(where, " (", quote(param.name), ").");

  param.shape = parseShape(reader, value, prefix);

  std::string init = reader.getString(value, prefix, "init");
  const json::Value &initValue = *value.find("init");
  if (init == "normal") {
    param.init = InitKind::Normal;
    param.std = reader.getNumber(value, prefix, "std", /*allowZero=*/true);
  } else if (init == "uniform") {
    param.init = InitKind::Uniform;
    param.bound = reader.getNumber(value, prefix, "bound", /*allowZero=*/true);
  } else if (init == "zeros") {
    param.init = InitKind::Zeros;
  } else if (init == "ones") {
    param.init = InitKind::Ones;
  } else if (init == "identity") {
    param.init = InitKind::Identity;
    if (param.shape.size() != 2 || param.shape[0] != param.shape[1])
      reader.error(initValue, prefix + "init",
                   "identity needs a square matrix, the shape is " +
                       formatShape(param.shape));
  } else {
    reader.error(initValue, prefix + "init",
                 "expected one of normal, uniform, zeros, ones, identity, "
                 "got " +
                     quote(init));
  }

  const json::Value &decay = reader.get(value, prefix, "decay");
  if (!decay.isBool())
    reader.error(decay, prefix + "decay",
                 "expected a boolean, got " + Reader::show(decay));
  param.decay = decay.getBool();
  if (value.find("stream_shards"))
    param.streamShards = reader.getInteger(value, prefix, "stream_shards", 1);
  return param;
}

Manifest mixrt::parseManifest(const std::string &text,
                              const std::string &manifestPath) {
  json::Value root;
  try {
    root = json::parse(text);
  } catch (const json::ParseError &e) {
    fail(manifestPath, ":", e.line, ":", e.column,
         ": malformed JSON: ", e.reason);
  }
  Reader reader(manifestPath);
  if (!root.isObject())
    fail(manifestPath, ": expected a JSON object, got ",
         Reader::describe(root));

  Manifest manifest;
  manifest.manifestPath = manifestPath;
  manifest.text = text;
  const json::Value *format = root.find("format");
  if (!format || !format->isString() || format->getString() != "mixpkg")
    reader.error(format ? *format : root, "format",
                 "expected \"mixpkg\": this is not a mixpkg manifest");
  const json::Value &version = reader.get(root, "", "format_version");
  if (!version.isInteger() || version.getInteger() != kManifestFormatVersion)
    reader.error(version, "format_version",
                 concat("this mix-run reads format version ",
                        kManifestFormatVersion, ", the package has ",
                        Reader::show(version),
                        " (recompile it with a matching mixc)"));

  manifest.target = reader.getString(root, "", "target");
  if (manifest.target != "cpu" && manifest.target != "cuda")
    reader.error(*root.find("target"), "target",
                 "expected \"cpu\" or \"cuda\", got " + quote(manifest.target));
  if (root.find("precision")) {
    manifest.precision = reader.getString(root, "", "precision");
    if (manifest.precision != "fp32" && manifest.precision != "tf32" &&
        manifest.precision != "bf16")
      reader.error(*root.find("precision"), "precision",
                   "expected \"fp32\", \"tf32\" or \"bf16\", got " +
                       quote(manifest.precision));
  }
  if (root.find("operands")) {
    manifest.operands = reader.getString(root, "", "operands");
    if (manifest.operands != "fp32" && manifest.operands != "bf16")
      reader.error(*root.find("operands"), "operands",
                   "expected \"fp32\" or \"bf16\", got " +
                       quote(manifest.operands));
  }
  manifest.batch = reader.getInteger(root, "", "batch", 1);
  manifest.seq = reader.getInteger(root, "", "seq", 1);

  const json::Value &spec = reader.getObject(root, "", "spec");
  manifest.vocabSize = reader.getInteger(spec, "spec.", "vocab_size", 1);
  // The runtime allocates batch x seq x vocab_size logits.
  try {
    getNumElements({manifest.batch, manifest.seq, manifest.vocabSize, 4});
  } catch (const Error &) {
    reader.error(*root.find("batch"), "batch",
                 concat("the logits of batch ", manifest.batch, " x seq ",
                        manifest.seq, " x vocab_size ", manifest.vocabSize,
                        " floats overflow a 64-bit size (expected a "
                        "package mixc wrote)"));
  }
  const json::Value &init = reader.getObject(spec, "spec.", "init");
  manifest.seed =
      static_cast<uint64_t>(reader.getInteger(init, "spec.init.", "seed", 0));
  manifest.initStd =
      reader.getNumber(init, "spec.init.", "std", /*allowZero=*/false);
  manifest.spec = spec;

  const json::Value &params = reader.get(root, "", "params");
  if (!params.isArray())
    reader.error(params, "params",
                 "expected an array, got " + Reader::describe(params));
  if (root.find("stream_shards"))
    manifest.streamShards = reader.getInteger(root, "", "stream_shards", 1);
  std::unordered_set<std::string> names;
  for (size_t i = 0; i < params.getArray().size(); ++i) {
    const json::Value &value = params.getArray()[i];
    ParamInfo param = parseParam(reader, value, i);
    if (!names.insert(param.name).second)
      reader.error(value, concat("params[", i, "]"),
                   "duplicate parameter " + quote(param.name));
    if (param.streamShards != 1 &&
        (param.streamShards != manifest.streamShards ||
         param.shape[0] % param.streamShards != 0))
      reader.error(
          *value.find("stream_shards"), concat("params[", i, "].stream_shards"),
          concat("expected the package's stream_shards (",
                 manifest.streamShards, "), dividing the first dimension ",
                 param.shape[0], ", got ", param.streamShards));
    manifest.params.push_back(std::move(param));
  }

  if (const json::Value *library = root.find("library")) {
    if (!library->isString() || library->getString().empty())
      reader.error(*library, "library", "expected a non-empty string");
    manifest.library = library->getString();
  }
  if (manifest.library) {
    // The compiled update's hyperparameters; the betas must be in [0, 1)
    // for the bias corrections to be positive.
    const json::Value &adamw = reader.getObject(root, "", "adamw");
    Manifest::AdamW hyper;
    hyper.beta1 = reader.getNumber(adamw, "adamw.", "beta1", true);
    hyper.beta2 = reader.getNumber(adamw, "adamw.", "beta2", true);
    for (auto [key, beta] : {std::pair{"beta1", hyper.beta1},
                             std::pair{"beta2", hyper.beta2}})
      if (beta >= 1)
        reader.error(*adamw.find(key), concat("adamw.", key),
                     concat("expected a number in [0, 1), got ", beta));
    hyper.epsilon = reader.getNumber(adamw, "adamw.", "epsilon", false);
    hyper.weightDecay =
        reader.getNumber(adamw, "adamw.", "weight_decay", true);
    hyper.maxGradNorm =
        reader.getNumber(adamw, "adamw.", "max_grad_norm", false);
    manifest.adamw = hyper;
  }
  if (const json::Value *checksum = root.find("library_fnv1a64")) {
    if (!manifest.library)
      reader.error(*checksum, "library_fnv1a64",
                   "a checksum without a library");
    if (!checksum->isString() || checksum->getString().size() != 16 ||
        checksum->getString().find_first_not_of("0123456789abcdef") !=
            std::string::npos)
      reader.error(*checksum, "library_fnv1a64",
                   "expected 16 lowercase hex digits, got " +
                       Reader::show(*checksum));
    manifest.libraryChecksum = checksum->getString();
  }
  if (const json::Value *entries = root.find("entries");
      entries && entries->isObject()) {
    if (const json::Value *decode = entries->find("decode"))
      manifest.decode = parseDecode(reader, *decode, manifest);
    if (const json::Value *prefill = entries->find("prefill")) {
      if (!manifest.decode)
        reader.error(*prefill, "entries.prefill",
                     "a prefill step without "
                     "a decode step");
      if (!prefill->isObject())
        reader.error(*prefill, "entries.prefill",
                     "expected an object, got " + Reader::describe(*prefill));
      manifest.decode->prefillChunk =
          reader.getInteger(*prefill, "entries.prefill.", "chunk", 2);
      if (manifest.decode->prefillChunk > manifest.decode->positions)
        reader.error(*prefill->find("chunk"), "entries.prefill.chunk",
                     concat("expected at most entries.decode.positions (",
                            manifest.decode->positions, ")"));
    }
    for (const json::Member &member : entries->getObject()) {
      const std::string &name = member.key;
      const json::Value &entry = member.value;
      const json::Value *bytes =
          entry.isObject() ? entry.find("arg_bytes") : nullptr;
      if (!bytes)
        continue;
      std::string key = "entries." + name + ".";
      Manifest::EntryArgs args;
      if (!bytes->isArray())
        reader.error(*bytes, key + "arg_bytes",
                     "expected an array of sizes, got " +
                         Reader::describe(*bytes));
      for (size_t i = 0; i < bytes->getArray().size(); ++i) {
        const json::Value &b = bytes->getArray()[i];
        if (!b.isInteger() || b.getInteger() < 1)
          reader.error(b, concat(key, "arg_bytes[", i, "]"),
                       "expected a positive integer, got " + Reader::show(b));
        args.bytes.push_back(uint64_t(b.getInteger()));
      }
      args.numInputs = size_t(reader.getInteger(entry, key, "num_inputs", 0));
      if (args.numInputs > args.bytes.size())
        reader.error(*entry.find("num_inputs"), key + "num_inputs",
                     concat("expected at most the ", args.bytes.size(),
                            " arguments of arg_bytes"));
      if (const json::Value *updated = entry.find("updated_inputs")) {
        if (!updated->isArray())
          reader.error(*updated, key + "updated_inputs",
                       "expected an array of input indices, got " +
                           Reader::describe(*updated));
        for (size_t i = 0; i < updated->getArray().size(); ++i) {
          const json::Value &u = updated->getArray()[i];
          int64_t previous =
              args.updated.empty() ? -1 : int64_t(args.updated.back());
          if (!u.isInteger() || u.getInteger() <= previous ||
              u.getInteger() >= int64_t(args.numInputs))
            reader.error(u, concat(key, "updated_inputs[", i, "]"),
                         concat("expected increasing indices of the ",
                                args.numInputs, " inputs, got ",
                                Reader::show(u)));
          args.updated.push_back(size_t(u.getInteger()));
        }
      }
      manifest.entryArgs[name] = std::move(args);
    }
  }
  return manifest;
}

Manifest mixrt::readManifest(const std::string &packagePath) {
  struct stat st;
  if (::stat(packagePath.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    fail(packagePath, ": not a package directory (expected ", packagePath,
         "/manifest.json)");
  std::string manifestPath = packagePath + "/manifest.json";
  Manifest manifest = parseManifest(readFile(manifestPath), manifestPath);
  manifest.packagePath = packagePath;
  return manifest;
}
