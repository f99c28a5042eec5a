//===- Trainer.cpp - The training loop of mix-run train -------------------===//
//
// Samples batches from the tokenized corpus, runs the compiled gradient and
// AdamW entry points, evaluates, checkpoints (atomically, checksummed, with
// the data sampler's state and the optimizer's moments) and logs metrics.
// Faults: SIGINT and SIGTERM end the run after the current step with a
// checkpoint; a run killed at any moment resumes from its last checkpoint
// with its metrics cut back to it; a non-finite loss, gradient or state
// stops the run without touching the last good checkpoint.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/CommandLine.h"
#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"
#include "mixrt/Json.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

using namespace mixrt;

double mixrt::learningRate(int64_t step, int64_t total, int64_t warmup,
                           double peak) {
  if (warmup > 0 && step <= warmup)
    return peak * double(step) / double(warmup);
  double span = double(std::max<int64_t>(1, total - warmup));
  double progress = std::min(1.0, double(step - warmup) / span);
  return peak * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * progress)));
}

namespace {
/// splitmix64: the batch sampler's generator; its state is checkpointed.
struct Sampler {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// Inputs and targets of `batch` sequences starting at `offsets`.
void fillBatch(const Corpus &corpus, const std::vector<uint64_t> &offsets,
               int64_t seq, std::vector<int32_t> &tokens,
               std::vector<int32_t> &targets) {
  tokens.clear();
  targets.clear();
  const std::vector<TokenId> &ids = corpus.getTokens();
  for (uint64_t off : offsets)
    for (int64_t s = 0; s < seq; ++s) {
      tokens.push_back(int32_t(ids[off + s]));
      targets.push_back(int32_t(ids[off + s + 1]));
    }
}

std::unique_ptr<Tokenizer> makeTokenizer(const TrainOptions &o) {
  if (o.tokenizer == "byte")
    return createTokenizer("byte", "");
  if (o.tokenizer == "gpt2") {
    if (o.gpt2Dir.empty())
      fail("--tokenizer gpt2 needs --gpt2-dir DIR (with encoder.json and "
           "vocab.bpe; scripts/fetch-data.sh puts them in data/gpt2)");
    return createTokenizer("gpt2", o.gpt2Dir);
  }
  fail("unknown tokenizer ", quote(o.tokenizer), " (expected byte or gpt2)");
}

std::string formatDuration(double seconds) {
  int s = int(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, (s / 60) % 60,
                s % 60);
  return buf;
}

/// The state the loop carries and checkpoints.
struct State {
  std::vector<std::vector<float>> params, m, v;
  int64_t step = 0;
  uint64_t sampler = 0;
};

/// The checkpoint format: 2 carries a checksum (kChecksumKey) and must
/// match it; 1, written before checksums, loads unverified with a warning.
constexpr const char *kCheckpointFormat = "mixrt-checkpoint-2";
constexpr const char *kUnverifiedCheckpointFormat = "mixrt-checkpoint-1";

/// "nan", "inf" or "-inf" (whatever the sign of a NaN), else the number.
std::string formatValue(double value) {
  if (std::isnan(value))
    return "nan";
  return concat(value);
}

/// "'PREFIX.NAME' holds VALUE at element I" for the first NaN or infinity
/// in \p tensors (one a parameter of \p manifest), or "" if there is none.
std::string findNonFinite(const Manifest &manifest,
                          const std::vector<std::vector<float>> &tensors,
                          const char *prefix) {
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t j = 0; j < tensors[i].size(); ++j)
      if (!std::isfinite(tensors[i][j]))
        return concat(quote(prefix + manifest.params[i].name), " holds ",
                      formatValue(tensors[i][j]), " at element ", j);
  return "";
}

/// "'PREFIX.NAME' (VALUE at element I)" for the element of \p tensors of
/// the largest magnitude.
std::string findLargest(const Manifest &manifest,
                        const std::vector<std::vector<float>> &tensors,
                        const char *prefix) {
  size_t bestI = 0, bestJ = 0;
  float best = -1;
  for (size_t i = 0; i < tensors.size(); ++i)
    for (size_t j = 0; j < tensors[i].size(); ++j)
      if (std::fabs(tensors[i][j]) > best) {
        best = std::fabs(tensors[i][j]);
        bestI = i;
        bestJ = j;
      }
  if (best < 0)
    return "none";
  return concat(quote(prefix + manifest.params[bestI].name), " (",
                tensors[bestI][bestJ], " at element ", bestJ, ")");
}

//===----------------------------------------------------------------------===//
// Stopping on SIGINT and SIGTERM
//===----------------------------------------------------------------------===//

/// The first stop signal received (0 if none) and how many arrived.
std::atomic<int> stopSignal{0}, stopCount{0};
/// Whether stderr is a terminal (a progress bar may need ending).
bool stopOnTerminal = false;
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void writeToStderr(const char *text) {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

/// Notes the signal for the loop to act on after the current step. The
/// second signal only says so; the third ends the process at once, by the
/// signal's default action (the last checkpoint is intact: checkpoints
/// replace the file atomically).
extern "C" void onStopSignal(int signo) {
  int expected = 0;
  stopSignal.compare_exchange_strong(expected, signo);
  int count = ++stopCount;
  if (count == 2) {
    if (stopOnTerminal)
      writeToStderr("\n");
    writeToStderr("mix-run: still stopping: finishing the step and "
                  "writing the checkpoint; interrupt once more to quit at "
                  "once, keeping the previous checkpoint\n");
  } else if (count >= 3) {
    ::signal(signo, SIG_DFL);
    ::raise(signo);
  }
}

/// Routes SIGINT and SIGTERM to onStopSignal while the training loop runs.
class StopSignals {
public:
  StopSignals() {
    stopSignal = 0;
    stopCount = 0;
    stopOnTerminal = ::isatty(STDERR_FILENO);
    struct sigaction action = {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    // Restart interrupted system calls: the loop's file I/O goes on.
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, &previousInt);
    ::sigaction(SIGTERM, &action, &previousTerm);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &previousInt, nullptr);
    ::sigaction(SIGTERM, &previousTerm, nullptr);
  }
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// The signal that asked the run to stop, or 0.
  static int get() { return stopSignal.load(); }

private:
  struct sigaction previousInt = {}, previousTerm = {};
};

const char *getSignalName(int signo) {
  switch (signo) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  }
  return "a signal";
}

//===----------------------------------------------------------------------===//
// Checkpoints and metrics
//===----------------------------------------------------------------------===//

void saveCheckpoint(const std::string &path, const Manifest &manifest,
                    const State &state) {
  TensorFile file;
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamInfo &p = manifest.params[i];
    file.add("param." + p.name,
             Tensor::create<float>(p.shape, state.params[i]));
    file.add("adam_m." + p.name, Tensor::create<float>(p.shape, state.m[i]));
    file.add("adam_v." + p.name, Tensor::create<float>(p.shape, state.v[i]));
  }
  file.metadata = {{"format", kCheckpointFormat},
                   {"step", std::to_string(state.step)},
                   {"sampler", std::to_string(state.sampler)}};
  writeSafetensors(path, file, /*addChecksum=*/true);
}

State loadCheckpoint(const std::string &path, const Manifest &manifest) {
  // readSafetensors verifies the checksum of a file that has one.
  TensorFile file = readSafetensors(path);
  State state;
  std::string format, step, sampler;
  bool checksummed = false;
  for (auto &[k, val] : file.metadata) {
    if (k == "format")
      format = val;
    if (k == "step")
      step = val;
    if (k == "sampler")
      sampler = val;
    if (k == kChecksumKey)
      checksummed = true;
  }
  if ((format != kCheckpointFormat && format != kUnverifiedCheckpointFormat) ||
      step.empty() || sampler.empty())
    fail(path, ": not a mix-run checkpoint (missing format, step or sampler "
               "metadata)");
  if (format == kCheckpointFormat && !checksummed)
    fail(path, ": checkpoint format ", kCheckpointFormat, " without a ",
         quote(kChecksumKey),
         " in its __metadata__ (expected the checksum every such checkpoint "
         "carries)");
  if (!checksummed)
    std::cerr << "mix-run: warning: " << path << " has no checksum (format "
              << format
              << ", written before checkpoints carried one); loading it "
                 "unverified\n";
  state.step = parseInteger(step, path + ": metadata 'step'");
  if (state.step < 0)
    fail(path, ": metadata 'step' is ", state.step,
         ", expected a non-negative integer");
  auto [end, ec] = std::from_chars(
      sampler.data(), sampler.data() + sampler.size(), state.sampler);
  if (ec != std::errc() || end != sampler.data() + sampler.size())
    fail(path, ": metadata 'sampler' is ", quote(sampler),
         ", expected an unsigned 64-bit integer");
  for (const ParamInfo &p : manifest.params)
    for (auto [prefix, into] :
         {std::pair<const char *, std::vector<std::vector<float>> *>{
              "param.", &state.params},
          {"adam_m.", &state.m},
          {"adam_v.", &state.v}}) {
      const Tensor *t = file.find(prefix + p.name);
      if (!t)
        fail(path, ": checkpoint has no tensor ", quote(prefix + p.name));
      if (t->dtype != DType::F32 || t->shape != p.shape)
        fail(path, ": tensor ", quote(prefix + p.name), " is ",
             getDTypeName(t->dtype), " of shape ", formatShape(t->shape),
             ", expected F32 of shape ", formatShape(p.shape));
      const float *d = t->getData<float>();
      checkFinite(d, t->getNumElements(), path, prefix + p.name);
      into->emplace_back(d, d + t->getNumElements());
    }
  return state;
}

/// What a resumed run keeps of its metrics file.
struct MetricsPrefix {
  /// The bytes kept: whole lines, each a JSON object whose "step" is at
  /// most the checkpoint's, up to the first line that is not.
  uint64_t bytes = 0;
  /// The step of the last line kept (0 if none).
  int64_t lastStep = 0;
  std::vector<std::pair<int64_t, double>> trainCurve, valCurve;
};

/// The lines of \p text up to step \p step. A run killed between writing
/// a step's line and checkpointing it, or while writing a line, leaves
/// lines past its checkpoint, the last perhaps partial: those go.
MetricsPrefix readMetricsPrefix(const std::string &text, int64_t step) {
  MetricsPrefix prefix;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      break;
    json::Value line;
    try {
      line = json::parse(std::string_view(text).substr(begin, end - begin));
    } catch (const json::ParseError &) {
      break;
    }
    const json::Value *lineStep = line.isObject() ? line.find("step") : nullptr;
    if (!lineStep || !lineStep->isInteger() || lineStep->getInteger() > step)
      break;
    prefix.lastStep = lineStep->getInteger();
    if (const json::Value *loss = line.find("loss"); loss && loss->isNumber())
      prefix.trainCurve.emplace_back(prefix.lastStep, loss->getNumber());
    if (const json::Value *val = line.find("val_ce"); val && val->isNumber())
      prefix.valCurve.emplace_back(prefix.lastStep, val->getNumber());
    begin = end + 1;
    prefix.bytes = begin;
  }
  return prefix;
}
} // namespace

LossValues mixrt::averageOverRanks(Communicator &comm, const LossValues &mine,
                                   std::vector<std::vector<float>> &grads,
                                   const std::string &when) {
  double scale = 1.0 / comm.getSize();
  std::string what = "the gradients" + when;
  for (std::vector<float> &g : grads) {
    comm.allReduceSum(g.data(), g.size(), what);
    for (float &x : g)
      x = float(x * scale);
  }
  double values[3] = {mine.loss, mine.ce, mine.aux};
  comm.allReduceSum(values, 3, "the loss" + when);
  LossValues mean;
  mean.loss = float(values[0] * scale);
  mean.ce = float(values[1] * scale);
  mean.aux = float(values[2] * scale);
  return mean;
}

double mixrt::evaluate(const CompiledModel &model, const Manifest &manifest,
                       const std::vector<const float *> &params,
                       const Corpus &corpus, int64_t batches,
                       Communicator &comm) {
  // Batch k holds sequences [k * g, (k + 1) * g) of batches * g evenly
  // spaced ones, g = ranks * b; each rank takes its b of them, so any
  // number of ranks evaluates the same sequences as one rank with g.
  int64_t b = manifest.batch, seq = manifest.seq, ranks = comm.getSize();
  int64_t g = ranks * b;
  uint64_t span = corpus.size() - uint64_t(seq) - 1;
  uint64_t sequences = uint64_t(batches * g);
  std::vector<int32_t> tokens, targets;
  double total = 0;
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<uint64_t> offsets;
    for (int64_t i = comm.getRank() * b; i < (comm.getRank() + 1) * b; ++i)
      offsets.push_back(span * uint64_t(k * g + i) / sequences);
    fillBatch(corpus, offsets, seq, tokens, targets);
    total += model.forward(params, tokens.data(), targets.data()).ce;
  }
  comm.allReduceSum(&total, 1, "the validation loss");
  return total / double(batches * ranks);
}

int mixrt::train(const TrainOptions &o) {
  if (o.steps < 1)
    fail("--steps must be at least 1, got ", o.steps);
  if (!(o.lr > 0) || !std::isfinite(o.lr))
    fail("--lr must be a positive number, got ", o.lr);
  Communicator &comm = o.comm ? *o.comm : getSingleProcess();
  const bool root = comm.isRoot();
  const int ranks = comm.getSize();
  Manifest manifest = readManifest(o.package);
  CompiledModel model(manifest);
  // The stream ranks of a stream-sharded package (mixc --stream-shards)
  // share their data rank's batch rows, each computing its own streams;
  // the data ranks split the batch.
  RankGrid grid = makeRankGrid(comm, manifest.streamShards, o.package);
  model.connect(*grid.streams);
  model.connectDevices(*grid.data);
  const bool streamSharded = manifest.streamShards > 1;
  Communicator &dataComm = *grid.data;
  const int dataRanks = dataComm.getSize();
  const int dataRank = dataComm.getRank();
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(o);
  if (tokenizer->getVocabSize() > manifest.vocabSize)
    fail(o.package, ": the model's vocab_size is ", manifest.vocabSize,
         ", but the ", tokenizer->getName(), " tokenizer has ",
         tokenizer->getVocabSize(), " tokens");
  Corpus trainData =
      Corpus::load(o.dataDir + "/train.txt", *tokenizer, manifest.seq);
  Corpus valData =
      Corpus::load(o.dataDir + "/val.txt", *tokenizer, manifest.seq);
  int64_t warmup = o.warmup >= 0 ? o.warmup : o.steps / 10;
  int64_t evalEvery =
      o.evalEvery > 0 ? o.evalEvery : std::max<int64_t>(1, o.steps / 10);
  int64_t ckptEvery = o.ckptEvery > 0 ? o.ckptEvery : evalEvery;

  std::string ckptPath = o.outDir + "/checkpoint.safetensors";
  std::string metricsPath = o.outDir + "/metrics.jsonl";
  // Rank 0 owns the run directory; the others only read its checkpoint.
  std::optional<FileLock> lock;
  if (root) {
    std::error_code ec;
    std::filesystem::create_directories(o.outDir, ec);
    if (ec || !std::filesystem::is_directory(o.outDir))
      fail(o.outDir, ": cannot create the run directory: ",
           ec ? ec.message() : "a file of that name exists");
    // One run a directory: two would interleave their metrics and overwrite
    // each other's checkpoints. The lock also makes it safe to remove the
    // temporary files of a run killed while writing a checkpoint.
    lock.emplace(o.outDir + "/.mix-run.lock");
    if (!lock->tryLock())
      fail(o.outDir, ": another mix-run (pid ", lock->getHolder(),
           ") is training in this directory (expected one run a directory "
           "at a time)");
    removeTemporaryFiles(ckptPath);
    removeTemporaryFiles(o.outDir + "/loss.png");
  }

  State state;
  bool resumed = false;
  if (o.resume && std::filesystem::exists(ckptPath)) {
    state = loadCheckpoint(ckptPath, manifest);
    if (state.step > o.steps)
      fail(ckptPath, ": the checkpoint is at step ", state.step,
           ", past --steps ", o.steps, " (expected --steps >= ", state.step,
           ")");
    if (o.stopAfter >= 0 && o.stopAfter <= state.step)
      fail(ckptPath, ": the checkpoint is at step ", state.step,
           ", so --stop-after ", o.stopAfter,
           " has passed (expected --stop-after > ", state.step, ")");
    resumed = true;
  } else {
    if (o.resume && root)
      std::cerr << "mix-run: no checkpoint in " << o.outDir
                << "; starting from step 0\n";
    // Not silently: the run replaces the directory's checkpoint and
    // metrics as it goes.
    if (!o.resume && root && std::filesystem::exists(ckptPath))
      std::cerr << "mix-run: warning: " << o.outDir
                << " holds a run, which this one replaces (its checkpoint "
                   "at the first checkpoint step, its metrics now); "
                   "--resume would continue it\n";
    TensorFile init = initParams(manifest);
    for (const NamedTensor &t : init.getTensors()) {
      const float *d = t.tensor.getData<float>();
      state.params.emplace_back(d, d + t.tensor.getNumElements());
      state.m.emplace_back(t.tensor.getNumElements(), 0.0f);
      state.v.emplace_back(t.tensor.getNumElements(), 0.0f);
    }
    state.sampler = o.dataSeed;
  }
  // A fresh run starts a fresh metrics file; a resumed one keeps the lines
  // up to its checkpoint's step and drops any written after it.
  std::optional<AppendFile> metrics;
  if (root)
    metrics.emplace(metricsPath, /*truncate=*/!resumed);
  std::vector<std::pair<int64_t, double>> trainCurve, valCurve;
  if (resumed && root) {
    std::cerr << "mix-run: resuming from " << ckptPath << " at step "
              << state.step << "\n";
    std::string text = readFile(metricsPath);
    MetricsPrefix prefix = readMetricsPrefix(text, state.step);
    if (prefix.bytes < text.size()) {
      metrics->truncate(prefix.bytes);
      std::cerr << "mix-run: cut " << metricsPath << " back to step "
                << prefix.lastStep << " (dropped " << text.size() - prefix.bytes
                << " bytes written after the checkpoint)\n";
    }
    if (prefix.lastStep < state.step)
      std::cerr << "mix-run: warning: " << metricsPath << " ends at step "
                << prefix.lastStep << ", before the checkpoint's step "
                << state.step << "; the metrics of the steps between are "
                << "lost\n";
    trainCurve = std::move(prefix.trainCurve);
    valCurve = std::move(prefix.valCurve);
  }

  size_t n = manifest.params.size();
  std::vector<std::vector<float>> grads(n);
  for (size_t i = 0; i < n; ++i)
    grads[i].resize(state.params[i].size());
  auto constPtrs = [](const std::vector<std::vector<float>> &vs) {
    std::vector<const float *> out;
    for (const auto &v : vs)
      out.push_back(v.data());
    return out;
  };
  auto ptrs = [](std::vector<std::vector<float>> &vs) {
    std::vector<float *> out;
    for (auto &v : vs)
      out.push_back(v.data());
    return out;
  };

  // The last checkpoint this run can stand on, and what a run stopped by a
  // fault says about it.
  int64_t savedStep = resumed ? state.step : -1;
  auto keptCheckpoint = [&]() -> std::string {
    if (savedStep < 0)
      return "; stopped before writing any checkpoint";
    return concat("; stopped without writing a checkpoint: the last good "
                  "one is ",
                  ckptPath, " (step ", savedStep, ")");
  };
  // A non-finite loss or gradient norm: names the first parameter that is
  // already bad, or else the first bad gradient, or else the largest
  // gradient (the sum of squares overflowed float32). The gradient norm is
  // known only after the update, which writes over the parameters: a bad
  // gradient has made them bad by then, so the gradients are looked at
  // first (\p afterUpdate).
  auto failNonFinite = [&](int64_t step, const char *what, float value,
                           bool afterUpdate) {
    std::string culprit;
    if (!afterUpdate)
      culprit = findNonFinite(manifest, state.params, "param.");
    if (culprit.empty()) {
      culprit = findNonFinite(manifest, grads, "grad.");
      if (!culprit.empty())
        culprit = "first non-finite gradient: " + culprit;
    }
    if (culprit.empty() && afterUpdate)
      culprit = findNonFinite(manifest, state.params, "param.");
    if (culprit.empty())
      culprit = "every parameter and gradient is finite, the largest "
                "gradient being " +
                findLargest(manifest, grads, "grad.");
    fail("step ", step, ": ", what, " is not finite (", formatValue(value),
         "); ", culprit, keptCheckpoint());
  };
  // Checkpoints hold finite values only: a state that went bad in the
  // update stops the run and leaves the previous checkpoint in place.
  auto save = [&] {
    // Each stream rank updated only its part of the sharded tensors.
    if (streamSharded)
      for (auto *group : {&state.params, &state.m, &state.v})
        model.gatherShards(*grid.streams, *group,
                           concat("the sharded state of step ", state.step));
    for (auto [group, prefix] :
         {std::pair<const std::vector<std::vector<float>> *, const char *>{
              &state.params, "param."},
          {&state.m, "adam_m."},
          {&state.v, "adam_v."}}) {
      std::string bad = findNonFinite(manifest, *group, prefix);
      if (!bad.empty())
        fail("step ", state.step, ": ", bad, " after the update",
             keptCheckpoint());
    }
    if (root) {
      // The metrics of the steps the checkpoint covers reach the disk
      // first. A failed write (a full disk) leaves the last checkpoint as
      // it was: the file is replaced only once the new one is complete.
      metrics->sync();
      try {
        saveCheckpoint(ckptPath, manifest, state);
      } catch (const Error &e) {
        fail(e.what(), savedStep < 0
                           ? std::string("; no checkpoint was written")
                           : concat("; the checkpoint of step ", savedStep,
                                    " is unchanged"));
      }
    }
    savedStep = state.step;
  };

  bool tty = root && ::isatty(STDERR_FILENO);
  // Each step draws dataRanks * batch sequences, in the order one rank with
  // that batch would, and this rank takes its share (SPEC section 7).
  int64_t tokensPerStep = dataRanks * manifest.batch * manifest.seq;
  if (root && streamSharded)
    std::cerr << "mix-run: stream-parallel over " << manifest.streamShards
              << " ranks (" << comm.getName() << "): each computes "
              << manifest.spec.find("cmollm")->find("streams")->getInteger() /
                     manifest.streamShards
              << " of the cMoLLM streams\n";
  if (root && manifest.precision != "fp32")
    std::cerr << "mix-run: " << manifest.precision
              << " matrix products (float32 accumulation, parameters and "
                 "optimizer state)\n";
  if (root && dataRanks > 1)
    std::cerr << "mix-run: data-parallel over " << dataRanks << " ranks ("
              << comm.getName() << "): " << dataRanks << " x " << manifest.batch
              << " sequences a step\n";
  uint64_t span = trainData.size() - uint64_t(manifest.seq) - 1;
  std::vector<int32_t> tokens, targets;
  auto start = std::chrono::steady_clock::now();
  int64_t firstStep = state.step;
  double lastVal = valCurve.empty() ? NAN : valCurve.back().second;
  const double beta1 = 0.9, beta2 = 0.95;
  // From here on SIGINT and SIGTERM end the run after the current step.
  StopSignals signals;

  while (state.step < o.steps) {
    int64_t step = state.step + 1;
    auto t0 = std::chrono::steady_clock::now();
    Sampler sampler{state.sampler};
    std::vector<uint64_t> offsets;
    for (int64_t i = 0; i < dataRanks * manifest.batch; ++i) {
      uint64_t offset = sampler.next() % (span + 1);
      if (i / manifest.batch == dataRank)
        offsets.push_back(offset);
    }
    fillBatch(trainData, offsets, manifest.seq, tokens, targets);

    LossValues loss = model.grad(constPtrs(state.params), tokens.data(),
                                 targets.data(), ptrs(grads));
    if (dataRanks > 1 && !model.averagesOverRanks())
      loss = averageOverRanks(dataComm, loss, grads, concat(" of step ", step));
    if (!std::isfinite(loss.loss))
      failNonFinite(step, "the loss", loss.loss, /*afterUpdate=*/false);
    double lr = learningRate(step, o.steps, warmup, o.lr);
    float hyper[3] = {float(lr), float(1 - std::pow(beta1, double(step))),
                      float(1 - std::pow(beta2, double(step)))};
    // AdamW writes the new parameters and moments over the old ones.
    float gradNorm = model.adamw(ptrs(state.params), constPtrs(grads),
                                 ptrs(state.m), ptrs(state.v), hyper);
    if (!std::isfinite(gradNorm))
      failNonFinite(step, "the gradient norm", gradNorm, /*afterUpdate=*/true);
    state.step = step;
    state.sampler = sampler.state;

    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    double tps = seconds > 0 ? double(tokensPerStep) / seconds : 0;
    trainCurve.emplace_back(step, loss.loss);
    std::ostringstream line;
    // Nine significant digits: a float's value, exactly.
    line.precision(9);
    line << "{\"step\": " << step << ", \"loss\": " << loss.loss
         << ", \"ce\": " << loss.ce << ", \"aux\": " << loss.aux
         << ", \"lr\": " << lr << ", \"grad_norm\": " << gradNorm
         << ", \"tokens_per_s\": " << tps;
    if (step % evalEvery == 0 || step == o.steps) {
      lastVal = evaluate(model, manifest, constPtrs(state.params), valData,
                         o.evalBatches, dataComm);
      if (!std::isfinite(lastVal))
        fail("step ", step, ": the validation cross-entropy is not finite (",
             formatValue(lastVal), ")", keptCheckpoint());
      valCurve.emplace_back(step, lastVal);
      line << ", \"val_ce\": " << lastVal
           << ", \"val_ppl\": " << std::exp(lastVal);
    }
    line << "}\n";
    // One write a line: a run killed now leaves whole lines, or one partial
    // last line that --resume drops.
    if (root)
      metrics->append(line.str());
    bool stopping = step == o.stopAfter;
    if (step % ckptEvery == 0 || step == o.steps || stopping)
      save();

    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    double eta = elapsed / double(step - firstStep) * double(o.steps - step);
    // Before the first evaluation there is no validation loss to show.
    char val[32] = "-";
    if (!std::isnan(lastVal))
      std::snprintf(val, sizeof val, "%.4f", lastVal);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "step %lld/%lld  loss %.4f  val_ce %s  %.0f tok/s  "
                  "elapsed %s  left %s",
                  (long long)step, (long long)o.steps, loss.loss, val, tps,
                  formatDuration(elapsed).c_str(), formatDuration(eta).c_str());
    if (tty) {
      int width = 24, done = int(width * step / o.steps);
      std::cerr << "\r[" << std::string(done, '=')
                << std::string(width - done, ' ') << "] " << buf << "\x1b[K"
                << std::flush;
    } else if (root &&
               (step % evalEvery == 0 || step == o.steps || step == 1)) {
      std::cerr << buf << "\n";
    }
    if (stopping) {
      if (root)
        std::cerr << (tty ? "\n" : "") << "mix-run: stopped after step " << step
                  << " as --stop-after asks; checkpoint in " << ckptPath
                  << "; resume with --resume\n";
      return 0;
    }
    // A signal may reach the ranks at different steps: they agree to stop
    // after the step in which any of them saw one.
    int64_t signal = StopSignals::get();
    if (ranks > 1)
      comm.allReduceMax(&signal, 1, concat("the stop check of step ", step));
    if (int signo = int(signal)) {
      if (savedStep != step)
        save();
      if (root)
        std::cerr << (tty ? "\n" : "") << "mix-run: interrupted by "
                  << getSignalName(signo) << ": stopped after step " << step
                  << " with a checkpoint in " << ckptPath
                  << "; to continue, run the same command with --resume\n";
      // The shells' status for a process ended by the signal.
      return 128 + signo;
    }
  }
  if (tty)
    std::cerr << "\n";
  if (root && !valCurve.empty()) {
    writeLossPlot(o.outDir + "/loss.png", trainCurve, valCurve);
    std::cerr << "mix-run: validation cross-entropy " << valCurve.back().second
              << " nats/token, perplexity " << std::exp(valCurve.back().second)
              << "; plot in " << o.outDir << "/loss.png\n";
  }
  return 0;
}
