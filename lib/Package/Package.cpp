//===- Package.cpp - Writing MODEL.mixpkg ---------------------------------===//
//
// The manifest and the package directory, written to a temporary directory
// and renamed into place so a reader never sees half a package.
//
//===----------------------------------------------------------------------===//

#include "mix/Package/Package.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mix;
using llvm::json::Array;
using llvm::json::Object;

static llvm::StringRef initName(ParamInfo::Init init) {
  switch (init) {
  case ParamInfo::Init::Normal:
    return "normal";
  case ParamInfo::Init::Uniform:
    return "uniform";
  case ParamInfo::Init::Zeros:
    return "zeros";
  case ParamInfo::Init::Ones:
    return "ones";
  case ParamInfo::Init::Identity:
    return "identity";
  }
  llvm_unreachable("unknown init");
}

llvm::json::Value mlir::mix::manifestJSON(const PackageContents &c) {
  Array params;
  for (const ParamInfo &p : paramTable(c.spec)) {
    Array shape;
    for (int64_t d : p.shape)
      shape.push_back(d);
    Object o{{"name", p.name},
             {"shape", std::move(shape)},
             {"init", initName(p.init)},
             {"decay", p.decay}};
    if (p.init == ParamInfo::Init::Normal)
      o["std"] = p.scale;
    if (p.init == ParamInfo::Init::Uniform)
      o["bound"] = p.scale;
    if (p.perStream && c.streamShards > 1)
      o["stream_shards"] = c.streamShards;
    params.push_back(std::move(o));
  }
  Object manifest{{"format", "mixpkg"},
                  {"format_version", kPackageFormatVersion},
                  {"compiler", kCompilerVersion},
                  {"target", c.target},
                  {"precision", c.precision},
                  {"batch", c.batch},
                  {"seq", c.seq},
                  {"spec", c.spec.toJSON()},
                  {"params", std::move(params)}};
  if (c.operands != "fp32")
    manifest["operands"] = c.operands;
  if (c.streamShards > 1)
    manifest["stream_shards"] = c.streamShards;
  if (c.emulated)
    manifest["emulated"] = true;
  if (!c.library.empty()) {
    manifest["library"] = c.library;
    if (c.adamw)
      manifest["adamw"] = Object{{"beta1", c.adamw->beta1},
                                 {"beta2", c.adamw->beta2},
                                 {"epsilon", c.adamw->epsilon},
                                 {"weight_decay", c.adamw->weightDecay},
                                 {"max_grad_norm", c.adamw->maxGradNorm}};
    // Each entry point: void mix_<name>(void **args), with args pointing
    // at the parameters, tokens, targets, then the outputs, in order.
    Array gradOutputs{"loss", "ce", "aux"};
    for (const ParamInfo &p : paramTable(c.spec))
      gradOutputs.push_back("grad." + p.name);
    manifest["entries"] = Object{
        {"forward", Object{{"symbol", MIX_FORWARD_SYMBOL},
                           {"outputs", Array{"loss", "ce", "aux"}}}},
        {"grad",
         Object{{"symbol", MIX_GRAD_SYMBOL}, {"outputs", std::move(gradOutputs)}}},
        {"logits",
         Object{{"symbol", MIX_LOGITS_SYMBOL}, {"outputs", Array{"logits"}}}},
        {"adamw", Object{{"symbol", MIX_ADAMW_SYMBOL},
                         {"inputs", "params, grads, m, v, [lr, 1 - beta1^t, "
                                    "1 - beta2^t]"},
                         {"outputs", "grad_norm"},
                         {"updates", "params, m, v, in place"}}}};
    if (c.decodeBatch > 0) {
      // mix_decode: the parameters, tokens (Bd, 1), the position, the
      // state; then the logits (Bd, 1, V). The state is written over.
      Array state;
      int64_t bytes = 0;
      for (const DecodeStateInfo &s : decodeStateTable(c.spec, c.decodeBatch)) {
        Array shape;
        for (int64_t d : s.shape)
          shape.push_back(d);
        state.push_back(Object{{"name", s.name}, {"shape", std::move(shape)}});
        bytes += s.numElements() * int64_t(sizeof(float));
      }
      (*manifest["entries"].getAsObject())["decode"] =
          Object{{"symbol", MIX_DECODE_SYMBOL},
                 {"batch", c.decodeBatch},
                 {"positions", c.spec.nPositions},
                 {"inputs", "params, tokens (batch, 1), position, state"},
                 {"outputs", Array{"logits"}},
                 {"updates", "state, in place"},
                 {"state", std::move(state)},
                 {"state_bytes", bytes}};
      if (c.prefillChunk > 1)
        (*manifest["entries"].getAsObject())["prefill"] = Object{
            {"symbol", MIX_PREFILL_SYMBOL},
            {"chunk", c.prefillChunk},
            {"inputs", "params, tokens (batch, chunk), position, state (as "
                       "decode's)"},
            {"outputs", Array{"logits (batch, chunk, vocab)"}},
            {"updates", "state, in place"}};
    }
    for (const auto &[name, args] : c.entryArgs) {
      Object *entry = manifest["entries"].getAsObject()->getObject(name);
      if (!entry)
        continue;
      Array bytes;
      for (int64_t b : args.bytes)
        bytes.push_back(b);
      (*entry)["arg_bytes"] = std::move(bytes);
      (*entry)["num_inputs"] = args.numInputs;
      if (!args.updated.empty())
        (*entry)["updated_inputs"] = Array(args.updated);
    }
  }
  return manifest;
}

/// FNV-1a, 64 bits: the checksum of the library in the manifest, as
/// mix-run computes it (runtime/lib/Support/Init.cpp).
static uint64_t fnv1a64(llvm::StringRef bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

static llvm::Error writeFile(const llvm::Twine &path,
                             llvm::function_ref<void(llvm::raw_ostream &)> fn) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path.str(), ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  fn(os);
  os.close();
  if (std::error_code err = os.error()) {
    os.clear_error();
    return llvm::createStringError(err, "writing '%s' failed: %s",
                                   path.str().c_str(), err.message().c_str());
  }
  return llvm::Error::success();
}

std::string mlir::mix::getManifestSource(const PackageContents &contents) {
  std::string json = llvm::formatv("{0}", manifestJSON(contents)).str();
  // Exported whatever the support code's visibility flags; `?` escaped so
  // that no "??x" can read as a trigraph.
  std::string out = "__attribute__((visibility(\"default\"), used))\n"
                    "const char " MIX_PACKAGE_MANIFEST_SYMBOL "[] = \"";
  for (unsigned char c : json) {
    if (c == '"' || c == '\\' || c == '?')
      out += '\\';
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    // Three octal digits: an octal escape ends there, a hex one would not.
    out += llvm::formatv("\\{0}{1}{2}", c >> 6, (c >> 3) & 7, c & 7).str();
  }
  return out + "\";\n";
}

llvm::Error mlir::mix::checkPackageDestination(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  // Not following a final symbolic link: its target is not ours to replace.
  if (std::error_code ec = llvm::sys::fs::status(path, status, false)) {
    if (ec == std::errc::no_such_file_or_directory)
      return llvm::Error::success();
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  }
  auto refuse = [&](const char *what) {
    return llvm::createStringError(
        std::make_error_code(std::errc::file_exists),
        "'%s' exists and is %s; give -o a new path or an existing package "
        "directory",
        path.str().c_str(), what);
  };
  switch (status.type()) {
  case llvm::sys::fs::file_type::directory_file:
    break;
  case llvm::sys::fs::file_type::symlink_file:
    return refuse("a symbolic link, not a package directory");
  default:
    return refuse("not a package directory");
  }
  // A package's manifest says so: web apps and browser extensions have a
  // manifest.json too.
  llvm::SmallString<256> manifest(path);
  llvm::sys::path::append(manifest, "manifest.json");
  if (!llvm::sys::fs::is_regular_file(manifest))
    return refuse("a directory without a manifest.json, not a package");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(manifest);
  if (!text)
    return refuse("a directory whose manifest.json cannot be read");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*text)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return refuse("a directory whose manifest.json is not a package's");
  }
  const llvm::json::Object *object = json->getAsObject();
  if (!object || object->getString("format") != "mixpkg")
    return refuse("a directory whose manifest.json is not a package's");
  return llvm::Error::success();
}

/// Deletes one of writePackage's own directories (the temporary package or
/// the moved-aside old one), unlinking rather than following a symbolic
/// link found under its name.
static void removeOwnDirectory(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status, /*Follow=*/false) &&
      status.type() == llvm::sys::fs::file_type::symlink_file) {
    llvm::sys::fs::remove(path);
    return;
  }
  llvm::sys::fs::remove_directories(path);
}

llvm::Error mlir::mix::writePackage(
    llvm::StringRef path, const PackageContents &contents,
    llvm::function_ref<llvm::Error(llvm::StringRef dir)> writeArtifacts) {
  if (llvm::Error e = checkPackageDestination(path))
    return e;
  llvm::SmallString<256> tmp(path);
  tmp += llvm::formatv(".tmp{0}", llvm::sys::Process::getProcessId()).str();
  removeOwnDirectory(tmp);
  if (std::error_code ec = llvm::sys::fs::create_directories(tmp))
    return llvm::createStringError(
        ec, "cannot write '%s': cannot create '%s': %s", path.str().c_str(),
        tmp.c_str(), ec.message().c_str());
  auto cleanup = [&](llvm::Error e) {
    removeOwnDirectory(tmp);
    return e;
  };
  if (llvm::Error e =
          writeFile(tmp + "/model.mlir",
                    [&](llvm::raw_ostream &os) { contents.module->print(os); }))
    return cleanup(std::move(e));
  if (llvm::Error e = writeArtifacts(tmp))
    return cleanup(std::move(e));
  // The manifest comes last: it records the library's checksum, which the
  // runtime compares before loading it.
  llvm::json::Value manifest = manifestJSON(contents);
  if (!contents.library.empty()) {
    std::string library = (tmp + "/" + contents.library).str();
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        llvm::MemoryBuffer::getFile(library);
    if (!bytes)
      return cleanup(llvm::createStringError(
          bytes.getError(), "cannot read '%s': %s", library.c_str(),
          bytes.getError().message().c_str()));
    (*manifest.getAsObject())["library_fnv1a64"] =
        llvm::formatv("{0}", llvm::format_hex_no_prefix(
                                 fnv1a64((*bytes)->getBuffer()), 16))
            .str();
  }
  if (llvm::Error e =
          writeFile(tmp + "/manifest.json", [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}", manifest) << "\n";
          }))
    return cleanup(std::move(e));

  // Replace an older package only now that the new one is complete, and
  // only if it still is one: the compile took a while.
  if (llvm::Error e = checkPackageDestination(path))
    return cleanup(std::move(e));
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> old(path);
    old += llvm::formatv(".old{0}", llvm::sys::Process::getProcessId()).str();
    removeOwnDirectory(old);
    if (std::error_code ec = llvm::sys::fs::rename(path, old))
      return cleanup(llvm::createStringError(ec, "cannot replace '%s': %s",
                                             path.str().c_str(),
                                             ec.message().c_str()));
    // What was renamed is what gets deleted: check it once more under its
    // new name, which no one else uses, so that a package swapped for a
    // symbolic link after the check above is put back, not followed.
    if (llvm::Error e = checkPackageDestination(old)) {
      llvm::consumeError(std::move(e));
      llvm::sys::fs::rename(old, path);
      return cleanup(llvm::createStringError(
          std::make_error_code(std::errc::file_exists),
          "'%s' changed while the package was compiled and is no longer a "
          "package directory; left as it is",
          path.str().c_str()));
    }
    if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
      llvm::sys::fs::rename(old, path);
      return cleanup(llvm::createStringError(ec, "cannot write '%s': %s",
                                             path.str().c_str(),
                                             ec.message().c_str()));
    }
    removeOwnDirectory(old);
    return llvm::Error::success();
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
    return cleanup(llvm::createStringError(
        ec, "cannot write '%s': %s", path.str().c_str(), ec.message().c_str()));
  return llvm::Error::success();
}
