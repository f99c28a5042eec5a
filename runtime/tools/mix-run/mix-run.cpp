//===- mix-run.cpp - Run compiled mixc packages ---------------------------===//
//
// The runtime's command-line tool: `init` writes a package's initial
// parameters, `grad` checks its inputs and computes gradients, `train`,
// `eval` and `generate` train, evaluate and sample. Under `mpirun`, `grad`,
// `train` and `eval` run data-parallel over the ranks and rank 0 writes the
// outputs. Every error becomes one line on stderr and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CommandLine.h"
#include "mixrt/Communicator.h"
#include "mixrt/CompiledModel.h"
#include "mixrt/CrashReport.h"
#include "mixrt/HuggingFace.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"
#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"
#include "mixrt/Train.h"

#include <cmath>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

using namespace mixrt;

static const char *const kTool = "mix-run";

/// The ranks of this run (one, without an MPI launcher).
static Communicator *ranks = &getSingleProcess();

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
      "(docs/models.md\n§8) and writes loss, ce, aux and grad.<name>. Under "
      "mpirun -np R the\nbatch holds R times the package's rows, each rank "
      "takes its share and the\nresults are averaged (docs/training.md).",
      {packageArgument()},
      {{"params", "P.safetensors",
        "every parameter by name, float32 (or a checkpoint)", true},
       {"batch", "BATCH.safetensors",
        "tokens and targets, int32 or int64 of shape (batch, seq)", true},
       {"out", "OUT.safetensors", "the file to write", true}}};
}

static CommandSpec trainSpec() {
  return {
      kTool,
      "train",
      "Trains the package on DIR/train.txt, evaluating on DIR/val.txt (or "
      "on one text\nfile's first nine tenths, evaluating on its last; "
      "docs/training.md):\nwarm-up and cosine learning rate, gradient "
      "clipping, AdamW, checkpoints in\nRUN_DIR/checkpoint.safetensors, "
      "one JSON object a step in RUN_DIR/metrics.jsonl,\nand the loss "
      "curves in RUN_DIR/loss.png and loss.svg. SIGINT or SIGTERM stops the "
      "run\nafter "
      "the current step with a checkpoint (exit status 130 or 143);\n"
      "--resume continues it. Under mpirun -np R each step takes R times "
      "the\npackage's batch, split over the ranks (docs/training.md).",
      {packageArgument()},
      {{"data", "DIR|FILE",
        "a directory (train.txt and val.txt, train.bin and val.bin, or "
        "*.txt files) or one text file (its last tenth validates)",
        true},
       {"steps", "N", "number of optimizer steps", true},
       {"out", "RUN_DIR", "directory for checkpoints and metrics", true},
       {"lr", "LR", "peak learning rate (default 1e-3)", false},
       {"warmup", "N", "warm-up steps (default steps/10)", false},
       {"eval-every", "N", "evaluate every N steps (default steps/10)", false},
       {"ckpt-every", "N",
        "checkpoint every N steps (default: as "
        "eval-every)",
        false},
       {"eval-batches", "N", "validation batches an evaluation (default 8)",
        false},
       {"tokenizer", "byte|gpt2", "tokenizer (default byte)", false},
       {"gpt2-dir", "DIR", "encoder.json and vocab.bpe for gpt2", false},
       {"init", "P.safetensors",
        "start from these parameters (or a checkpoint's) with a fresh "
        "optimizer state",
        false},
       {"resume", "", "continue from RUN_DIR/checkpoint.safetensors", false},
       {"stop-after", "N", "stop with a checkpoint after step N", false},
       {"data-seed", "N",
        "seed of the order batches are drawn in (default 1234; --resume "
        "continues the checkpoint's)",
        false}}};
}

static CommandSpec evalSpec() {
  return {kTool,
          "eval",
          "Validation cross-entropy and perplexity of parameters on the "
          "validation part of\nthe corpus (DIR/val.txt, DIR/val.bin, a "
          "directory's validation files, or the\nlast tenth of one text "
          "file).",
          {packageArgument()},
          {{"params", "P.safetensors",
            "the parameters (or a checkpoint's "
            "param.* tensors)",
            true},
           {"data", "DIR|FILE",
            "the corpus, as train takes it; its validation part", true},
           {"eval-batches", "N", "validation batches (default 8)", false},
           {"tokenizer", "byte|gpt2", "tokenizer (default byte)", false},
           {"gpt2-dir", "DIR", "encoder.json and vocab.bpe for gpt2", false}}};
}

static int runTrain(const ParsedArgs &args) {
  TrainOptions o;
  o.package = args.positionals[0];
  o.dataDir = args.get("data");
  o.outDir = args.get("out");
  o.steps = args.getInteger("steps", 1, int64_t(1) << 40);
  if (args.getOptional("lr"))
    o.lr = args.getNumber("lr");
  if (args.getOptional("warmup"))
    o.warmup = args.getInteger("warmup", 0, int64_t(1) << 40);
  if (args.getOptional("eval-every"))
    o.evalEvery = args.getInteger("eval-every", 1, int64_t(1) << 40);
  if (args.getOptional("ckpt-every"))
    o.ckptEvery = args.getInteger("ckpt-every", 1, int64_t(1) << 40);
  if (args.getOptional("eval-batches"))
    o.evalBatches = args.getInteger("eval-batches", 1, 1 << 20);
  if (auto t = args.getOptional("tokenizer"))
    o.tokenizer = *t;
  if (auto d = args.getOptional("gpt2-dir"))
    o.gpt2Dir = *d;
  o.resume = args.getOptional("resume").has_value();
  if (auto init = args.getOptional("init"))
    o.initParams = *init;
  o.comm = ranks;
  if (args.getOptional("stop-after"))
    o.stopAfter = args.getInteger("stop-after", 1, int64_t(1) << 40);
  if (args.getOptional("data-seed"))
    o.dataSeed = uint64_t(args.getInteger("data-seed", 0, INT64_MAX));
  return train(o);
}

/// The tokenizer the options name; its ids must all be token ids of the
/// model, or the compiled code would index past the embedding table.
static std::unique_ptr<Tokenizer>
createCheckedTokenizer(const ParsedArgs &args, const Manifest &manifest) {
  std::unique_ptr<Tokenizer> tokenizer =
      createTokenizer(args.getOptional("tokenizer").value_or("byte"),
                      args.getOptional("gpt2-dir").value_or(""));
  if (tokenizer->getVocabSize() > manifest.vocabSize)
    fail(manifest.packagePath, ": the model's vocab_size is ",
         manifest.vocabSize, ", but the ", tokenizer->getName(),
         " tokenizer has ", tokenizer->getVocabSize(),
         " tokens (expected at most vocab_size)");
  return tokenizer;
}

static CommandSpec generateSpec() {
  return {
      kTool,
      "generate",
      "Samples text after a prompt (temperature and top-k).",
      {packageArgument()},
      {{"params", "P.safetensors", "the parameters (or a checkpoint)", true},
       {"prompt", "TEXT", "the text to continue (default \"The \")", false},
       {"tokens", "N", "how many tokens to sample (default 200)", false},
       {"temperature", "T",
        "softmax temperature; 0 is greedy (default "
        "0.8)",
        false},
       {"top-k", "K", "sample among the K likeliest (default 40; 0: all)",
        false},
       {"seed", "S", "sampler seed (default 0; continuation c uses S + c)",
        false},
       {"batch", "N",
        "continuations to sample, up to the package's decode batch at once "
        "(default 1)",
        false},
       {"decode", "cache|full",
        "the compiled decode step with its key-value cache (default, where "
        "the package has one), or the whole training-shaped forward for "
        "every token",
        false},
       {"tokenizer", "byte|gpt2", "tokenizer (default byte)", false},
       {"gpt2-dir", "DIR", "encoder.json and vocab.bpe for gpt2", false}}};
}

static int runGenerate(const ParsedArgs &args) {
  Manifest manifest = readManifest(args.positionals[0]);
  // Sampling needs no other rank unless the streams are sharded over them.
  if (manifest.streamShards == 1 && !ranks->isRoot())
    return 0;
  CompiledModel model(manifest);
  const std::string &paramsPath = args.get("params");
  TensorFile params = readParamsOrCheckpoint(paramsPath);
  std::vector<const float *> data;
  for (const Tensor *t : checkParams(manifest, params, paramsPath))
    data.push_back(t->getData<float>());
  std::unique_ptr<Tokenizer> tokenizer = createCheckedTokenizer(args, manifest);
  GenerateOptions o;
  if (args.getOptional("tokens"))
    o.tokens = args.getInteger("tokens", 1, 1 << 20);
  if (args.getOptional("temperature"))
    o.temperature = args.getNumber("temperature");
  if (args.getOptional("top-k"))
    o.topK = args.getInteger("top-k", 0, 1 << 30);
  if (args.getOptional("seed"))
    o.seed = uint64_t(args.getInteger("seed", 0, INT64_MAX));
  if (args.getOptional("batch"))
    o.continuations = args.getInteger("batch", 1, 1 << 16);
  if (std::optional<std::string> method = args.getOptional("decode")) {
    if (*method == "full")
      o.method = GenerateOptions::Method::Full;
    else if (*method != "cache")
      fail("--decode ", quote(*method), ": expected cache or full");
    else if (!model.hasDecode())
      fail("--decode cache: ", manifest.packagePath,
           " has no decode step (it was compiled with --decode-batch 0)");
  }
  std::string prompt = args.getOptional("prompt").value_or("The ");
  std::vector<TokenId> context = tokenizer->encode(prompt);
  bool cached = o.method == GenerateOptions::Method::Cache && model.hasDecode();
  if (cached && ranks->isRoot() &&
      int64_t(context.size()) + o.tokens > manifest.decode->positions)
    std::cerr << kTool << ": note: the prompt (" << context.size()
              << " tokens) and --tokens " << o.tokens
              << " exceed the model's n_positions ("
              << manifest.decode->positions
              << "): each time the context fills, sampling continues from "
                 "its last "
              << std::max<int64_t>(manifest.decode->positions / 2, 1)
              << " tokens, their keys and values computed again\n";
  // A stream-sharded model samples on every rank in step (the logits, and
  // so the samples, are the same on all); rank 0 prints.
  RankGrid grid =
      makeRankGrid(*ranks, manifest.streamShards, manifest.packagePath);
  model.connect(*grid.streams);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<TokenId>> out =
      generate(model, manifest, data, context, o);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!ranks->isRoot())
    return 0;
  for (size_t c = 0; c < out.size(); ++c) {
    if (out.size() > 1)
      std::cout << (c ? "\n" : "") << "[" << c + 1 << "/" << out.size()
                << "]\n";
    std::cout << prompt << tokenizer->decode(out[c]) << "\n";
  }
  std::cout.flush();
  int64_t sampled = o.tokens * int64_t(out.size());
  std::cerr << kTool << ": " << sampled << " tokens in " << std::fixed
            << std::setprecision(3) << seconds << " s ("
            << int64_t(double(sampled) / std::max(seconds, 1e-9))
            << " tokens/s, "
            << (cached ? "decode step with a key-value cache"
                       : "whole forward a token")
            << ")\n";
  return 0;
}

static int runEval(const ParsedArgs &args) {
  Manifest manifest = readManifest(args.positionals[0]);
  CompiledModel model(manifest);
  const std::string &paramsPath = args.get("params");
  TensorFile source = readParamsOrCheckpoint(paramsPath);
  std::vector<const float *> data;
  for (const Tensor *t : checkParams(manifest, source, paramsPath))
    data.push_back(t->getData<float>());
  std::unique_ptr<Tokenizer> tokenizer = createCheckedTokenizer(args, manifest);
  Corpus val = loadValidationCorpus(args.get("data"), *tokenizer, manifest.seq,
                                    manifest.vocabSize);
  int64_t batches = args.getOptional("eval-batches")
                        ? args.getInteger("eval-batches", 1, 1 << 20)
                        : 8;
  // Stream ranks evaluate their data rank's share of the batches together.
  RankGrid grid =
      makeRankGrid(*ranks, manifest.streamShards, manifest.packagePath);
  model.connect(*grid.streams);
  double ce = evaluate(model, manifest, data, val, batches, *grid.data);
  if (!ranks->isRoot())
    return 0;
  std::cout << "val_ce " << ce << " nats/token\nperplexity " << std::exp(ce)
            << "\n";
  return 0;
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
  TensorFile params = readParamsOrCheckpoint(paramsPath);
  std::vector<const Tensor *> ordered =
      checkParams(manifest, params, paramsPath);
  TensorFile batchFile = readSafetensors(batchPath);
  // Under D data-parallel ranks the batch holds D times the package's
  // rows; each rank takes its share and the results are averaged (docs/models.md
  // §7). The stream ranks of a stream-sharded package share their
  // data rank's rows.
  RankGrid grid =
      makeRankGrid(*ranks, manifest.streamShards, manifest.packagePath);
  bool streamSharded = manifest.streamShards > 1;
  int dataRanks = grid.data->getSize();
  int dataRank = grid.data->getRank();
  TokenBatch all = checkBatch(manifest, batchFile, batchPath, dataRanks);
  int64_t share = manifest.batch * manifest.seq;
  TokenBatch batch = all;
  batch.batch = manifest.batch;
  batch.tokens.assign(all.tokens.begin() + dataRank * share,
                      all.tokens.begin() + (dataRank + 1) * share);
  batch.targets.assign(all.targets.begin() + dataRank * share,
                       all.targets.begin() + (dataRank + 1) * share);
  if (!manifest.library)
    fail(manifest.packagePath,
         " has no compiled code (library missing from manifest)");
  std::string library = manifest.packagePath + "/" + *manifest.library;
  struct stat st;
  if (::stat(library.c_str(), &st) != 0)
    fail(library, ": the package's compiled code is missing");
  CompiledModel model(manifest);
  model.connect(*grid.streams);
  model.connectDevices(*grid.data);

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
  LossValues loss =
      model.grad(paramData, tokens.data(), targets.data(), gradData);
  if (streamSharded)
    model.gatherShards(*grid.streams, grads, "the gradients");
  if (dataRanks > 1 && !model.averagesOverRanks())
    loss = averageOverRanks(*grid.data, loss, grads);
  if (!ranks->isRoot())
    return 0;

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

/// export's and import's --format (hf only) checked, then the manifest of
/// --package.
static Manifest readHuggingFaceArgs(const ParsedArgs &args) {
  const std::string &format = args.get("format");
  if (format != "hf")
    fail("--format ", quote(format),
         ": the formats are hf (Hugging Face's GPT2LMHeadModel)");
  return readManifest(args.get("package"));
}

static CommandSpec exportSpec() {
  return {kTool,
          "export",
          "Writes a package's parameters in another library's layout. "
          "--format hf: Hugging\nFace's GPT2LMHeadModel (model.safetensors "
          "with transformers' names and its\nConv1D layout, and "
          "config.json), for dense packages (docs/training.md).",
          {{"CKPT", "the parameters: a checkpoint or a parameter file"}},
          {{"package", "PKG", "the package the parameters are of", true},
           {"format", "hf", "the layout (only hf today)", true},
           {"out", "DIR", "the directory to write (made if missing)", true}}};
}

static int runExport(const ParsedArgs &args) {
  if (!ranks->isRoot())
    return 0;
  Manifest manifest = readHuggingFaceArgs(args);
  const std::string &paramsPath = args.positionals[0];
  TensorFile params = readParamsOrCheckpoint(paramsPath);
  exportHuggingFaceGPT2(manifest, checkParams(manifest, params, paramsPath),
                        args.get("out"));
  return 0;
}

static CommandSpec importSpec() {
  return {kTool,
          "import",
          "Writes the parameters of a package from another library's "
          "checkpoint. --format hf:\na Hugging Face GPT-2 directory "
          "(config.json and model.safetensors), for a dense\npackage of "
          "the same sizes (docs/training.md).",
          {{"DIR", "the checkpoint directory"}},
          {{"package", "PKG", "the package to write parameters for", true},
           {"format", "hf", "the layout (only hf today)", true},
           {"out", "P.safetensors", "the parameter file to write", true}}};
}

static int runImport(const ParsedArgs &args) {
  if (!ranks->isRoot())
    return 0;
  Manifest manifest = readHuggingFaceArgs(args);
  TensorFile params = importHuggingFaceGPT2(manifest, args.positionals[0]);
  checkParams(manifest, params, args.positionals[0]);
  writeSafetensors(args.get("out"), params);
  return 0;
}

static void printTopUsage(std::ostream &os) {
  os << "usage: mix-run <command> [arguments]\n\n"
        "Runs packages compiled by mixc (MODEL.mixpkg).\n\n"
        "commands:\n"
        "  init      write the initial parameters of a package\n"
        "  grad      compute the loss and every gradient on one batch\n"
        "  train     train a package on a text corpus\n"
        "  eval      validation cross-entropy and perplexity\n"
        "  generate  sample text after a prompt\n"
        "  export    write the parameters for Hugging Face's transformers\n"
        "  import    read parameters from a Hugging Face checkpoint\n\n"
        "Run 'mix-run <command> --help' for the arguments of a command, "
        "'mix-run --version' for the version.\n";
}

static std::pair<CommandSpec, CommandBody>
selectCommand(const std::string &command) {
  if (command == "init")
    return {initSpec(), runInit};
  if (command == "grad")
    return {gradSpec(), runGrad};
  if (command == "train")
    return {trainSpec(), runTrain};
  if (command == "eval")
    return {evalSpec(), runEval};
  if (command == "generate")
    return {generateSpec(), runGenerate};
  if (command == "export")
    return {exportSpec(), runExport};
  if (command == "import")
    return {importSpec(), runImport};
  fail("unknown command ", quote(command),
       " (expected init, grad, train, eval, generate, export or import; see "
       "'mix-run --help')");
}

static int run(const std::vector<std::string> &words) {
  return runSubcommand(words, printTopUsage, selectCommand);
}

/// Under several ranks on one machine, each gets its share of the cores
/// for its OpenMP threads (oneDNN's), unless the user chose.
static void shareCores(const Communicator &comm) {
  if (comm.getSize() == 1 || std::getenv("OMP_NUM_THREADS"))
    return;
  long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  long threads = std::max(1L, cores / std::max(1, comm.getLocalSize()));
  ::setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
}

/// Under several ranks, each uses its own GPU (a cuda package's
/// MIXRT_CUDA_DEVICE), the local rank's, unless the user chose.
static void assignDevices(const Communicator &comm) {
  if (comm.getSize() == 1 || std::getenv("MIXRT_CUDA_DEVICE"))
    return;
  ::setenv("MIXRT_CUDA_DEVICE", std::to_string(comm.getLocalRank()).c_str(), 1);
}

/// Commands that only write an output (init) run on rank 0; generate runs
/// on every rank, which for any but a stream-sharded package means rank 0.
static int runOnRanks(const std::vector<std::string> &words) {
  bool dataParallel =
      !words.empty() && (words[0] == "grad" || words[0] == "train" ||
                         words[0] == "eval" || words[0] == "generate");
  if (!dataParallel && !ranks->isRoot())
    return 0;
  return run(words);
}

int main(int argc, char **argv) {
  installCrashReporter(kTool);
  std::unique_ptr<Communicator> comm;
  try {
    comm = createCommunicator(&argc, &argv, getRankTimeout());
  } catch (const std::exception &e) {
    std::cerr << (std::string(kTool) + ": error: " + e.what() + "\n");
    return 1;
  }
  ranks = comm.get();
  shareCores(*comm);
  assignDevices(*comm);
  int status = runToolMain(kTool, argc, argv, runOnRanks);
  // A rank that failed ends the others at once rather than leave them
  // waiting in a collective for the timeout.
  if (status == 1 && comm->getSize() > 1)
    comm->abort(status);
  ranks = &getSingleProcess();
  return status;
}
