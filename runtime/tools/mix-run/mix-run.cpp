//===- mix-run.cpp - Run compiled mixc packages ---------------------------===//
//
// The runtime's command-line tool: `init` writes a package's initial
// parameters, `grad` checks its inputs and computes gradients; train, eval
// and generate arrive later. Every error becomes one line on stderr and a
// non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CommandLine.h"
#include "mixrt/CompiledModel.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"
#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <algorithm>
#include <iostream>
#include <new>
#include <sys/stat.h>

using namespace mixrt;

static const char *const kTool = "mix-run";

static CommandSpec::Positional packageArgument() {
  return {"PKG", "the package directory written by mixc (MODEL.mixpkg)"};
}

static CommandSpec initSpec() {
  return {kTool,
          "init",
          "Writes every parameter of the package, float32, initialised from "
          "the seed\nin its manifest (docs/package.md).",
          {packageArgument()},
          {{"out", "P.safetensors", "the parameter file to write", true}}};
}

static CommandSpec gradSpec() {
  return {
      kTool,
      "grad",
      "Computes the loss and the gradient of every parameter on one batch "
      "(SPEC\nsection 8) and writes loss, ce, aux and grad.<name>.",
      {packageArgument()},
      {{"params", "P.safetensors", "every parameter by name, float32", true},
       {"batch", "BATCH.safetensors",
        "tokens and targets, int32 or int64 of shape (batch, seq)", true},
       {"out", "OUT.safetensors", "the file to write", true}}};
}

static CommandSpec pendingSpec(const char *name, const char *summary) {
  return {
      kTool, name, std::string(summary) + " (not implemented yet).", {}, {}};
}

static int runInit(const ParsedArgs &args) {
  Manifest manifest = readManifest(args.positionals[0]);
  writeSafetensors(args.get("out"), initParams(manifest));
  return 0;
}

static int runGrad(const ParsedArgs &args) {
  Manifest manifest = readManifest(args.positionals[0]);
  const std::string &paramsPath = args.get("params");
  const std::string &batchPath = args.get("batch");
  TensorFile params = readSafetensors(paramsPath);
  std::vector<const Tensor *> ordered = checkParams(manifest, params, paramsPath);
  TensorFile batchFile = readSafetensors(batchPath);
  TokenBatch batch = checkBatch(manifest, batchFile, batchPath);
  if (!manifest.library)
    fail(manifest.packagePath,
         " has no compiled code (library missing from manifest)");
  std::string library = manifest.packagePath + "/" + *manifest.library;
  struct stat st;
  if (::stat(library.c_str(), &st) != 0)
    fail(library, ": the package's compiled code is missing");
  CompiledModel model(manifest);

  std::vector<int32_t> tokens(batch.tokens.begin(), batch.tokens.end());
  std::vector<int32_t> targets(batch.targets.begin(), batch.targets.end());
  std::vector<const float *> paramData;
  for (const Tensor *t : ordered)
    paramData.push_back(t->getData<float>());
  std::vector<std::vector<float>> grads;
  std::vector<float *> gradData;
  for (const ParamInfo &p : manifest.params)
    grads.emplace_back(getNumElements(p.shape));
  for (std::vector<float> &g : grads)
    gradData.push_back(g.data());
  LossValues loss = model.grad(paramData, tokens.data(), targets.data(),
                               gradData);

  TensorFile out;
  out.add("loss", Tensor::create<float>({}, {loss.loss}));
  out.add("ce", Tensor::create<float>({}, {loss.ce}));
  out.add("aux", Tensor::create<float>({}, {loss.aux}));
  for (size_t i = 0; i < manifest.params.size(); ++i)
    out.add("grad." + manifest.params[i].name,
            Tensor::create<float>(manifest.params[i].shape, grads[i]));
  writeSafetensors(args.get("out"), out);
  return 0;
}

static void printTopUsage(std::ostream &os) {
  os << "usage: mix-run <command> [arguments]\n\n"
        "Runs packages compiled by mixc (MODEL.mixpkg).\n\n"
        "commands:\n"
        "  init      write the initial parameters of a package\n"
        "  grad      compute the loss and every gradient on one batch\n"
        "  train     train a package (not implemented yet)\n"
        "  eval      evaluate a package (not implemented yet)\n"
        "  generate  sample text from a package (not implemented yet)\n\n"
        "Run 'mix-run <command> --help' for the arguments of a command.\n";
}

static int run(const std::vector<std::string> &words) {
  if (words.empty()) {
    printTopUsage(std::cerr);
    return 1;
  }
  const std::string &command = words[0];
  if (command == "--help" || command == "-h" || command == "help") {
    printTopUsage(std::cout);
    return 0;
  }
  std::vector<std::string> rest(words.begin() + 1, words.end());
  CommandSpec spec;
  int (*body)(const ParsedArgs &) = nullptr;
  if (command == "init") {
    spec = initSpec();
    body = runInit;
  } else if (command == "grad") {
    spec = gradSpec();
    body = runGrad;
  } else if (command == "train") {
    spec = pendingSpec("train", "Trains a package");
  } else if (command == "eval") {
    spec = pendingSpec("eval", "Evaluates a package");
  } else if (command == "generate") {
    spec = pendingSpec("generate", "Samples text from a package");
  } else {
    fail("unknown command ", quote(command),
         " (expected init, grad, train, eval or generate; see 'mix-run "
         "--help')");
  }
  if (!body) {
    if (std::find(rest.begin(), rest.end(), "--help") == rest.end() &&
        std::find(rest.begin(), rest.end(), "-h") == rest.end())
      fail(command, " is not implemented yet");
    std::cout << formatUsage(spec);
    return 0;
  }
  ParsedArgs args = parseArgs(spec, rest);
  if (args.help) {
    std::cout << formatUsage(spec);
    return 0;
  }
  return body(args);
}

int main(int argc, char **argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  try {
    return run(words);
  } catch (const std::bad_alloc &) {
    std::cerr << kTool << ": error: out of memory\n";
  } catch (const std::exception &e) {
    std::cerr << kTool << ": error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << kTool << ": error: unexpected failure\n";
  }
  return 1;
}
