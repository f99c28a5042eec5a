//===- Trainer.cpp - The training loop of mix-run train -------------------===//
//
// Samples batches from the tokenized corpus, runs the compiled gradient and
// AdamW entry points, evaluates, checkpoints (atomically, checksummed, with
// the data sampler's state and the optimizer's moments) and logs metrics.
// Faults: SIGINT and SIGTERM end the run after the current step with a
// checkpoint; a run killed at any moment resumes from its last checkpoint
// with its metrics cut back to it; a non-finite loss, gradient or state
// stops the run without touching the last good checkpoint. A cuda package
// keeps the state (parameters, gradients, moments) in device memory for the
// whole run; the host's copies are brought up to date only where the host
// reads them (checkpoints, the non-finite checks).
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "Batches.h"
#include "Checkpoint.h"
#include "Metrics.h"
#include "StopSignals.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"
#include "mixrt/Upcycle.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
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
using Clock = std::chrono::steady_clock;
using Tensors = std::vector<std::vector<float>>;

void checkOptions(const TrainOptions &o) {
  if (o.steps < 1)
    fail("--steps must be at least 1, got ", o.steps);
  if (!(o.lr > 0) || !std::isfinite(o.lr))
    fail("--lr must be a positive number, got ", o.lr);
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

void checkVocabSize(const Tokenizer &tokenizer, const Manifest &manifest,
                    const std::string &package) {
  if (tokenizer.getVocabSize() > manifest.vocabSize)
    fail(package, ": the model's vocab_size is ", manifest.vocabSize,
         ", but the ", tokenizer.getName(), " tokenizer has ",
         tokenizer.getVocabSize(), " tokens");
}

std::string formatDuration(double seconds) {
  int s = int(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, (s / 60) % 60,
                s % 60);
  return buf;
}

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// "nan", "inf" or "-inf" (whatever the sign of a NaN), else the number.
std::string formatValue(double value) {
  if (std::isnan(value))
    return "nan";
  return concat(value);
}

/// "'PREFIX.NAME' holds VALUE at element I" for the first NaN or infinity
/// in \p tensors (one a parameter of \p manifest), or "" if there is none.
std::string findNonFinite(const Manifest &manifest, const Tensors &tensors,
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
std::string findLargest(const Manifest &manifest, const Tensors &tensors,
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

std::vector<const float *> constPtrs(const Tensors &vs) {
  std::vector<const float *> out;
  for (const auto &v : vs)
    out.push_back(v.data());
  return out;
}

std::vector<float *> ptrs(Tensors &vs) {
  std::vector<float *> out;
  for (auto &v : vs)
    out.push_back(v.data());
  return out;
}

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

/// One run of `mix-run train` on a loaded package and corpus: its run
/// directory, its state, its metrics and its step loop.
class Trainer {
public:
  Trainer(const TrainOptions &o, Communicator &comm, const Manifest &manifest,
          CompiledModel &model, const RankGrid &grid, const Corpus &trainData,
          const Corpus &valData);

  /// Trains to --steps or --stop-after, or until a stop signal; returns
  /// the exit status of train().
  int run();

private:
  // Setting up.
  void openRunDirectory();
  void resumeFromCheckpoint();
  void startFresh();
  void openMetrics();
  void keepMetricsUpToCheckpoint();
  void announce() const;
  void keepStateOnDevice();

  // A step.
  std::optional<int> runStep();
  void drawBatch(BatchSampler &sampler, std::vector<int32_t> &tokensOut,
                 std::vector<int32_t> &targetsOut);
  void stageNextBatch(int64_t step, const BatchSampler &sampler);
  LossValues computeGradients(int64_t step);
  float update(int64_t step, double lr);
  bool oneCallStep() const;
  std::pair<LossValues, float> trainStep(int64_t step, double lr,
                                         const BatchSampler &sampler);
  bool isEvalStep(int64_t step) const {
    return step % evalEvery == 0 || step == o.steps;
  }
  void evaluateAt(int64_t step);
  void writeMetrics(int64_t step, const LossValues &loss, double lr,
                    float gradNorm, double tps);
  void reportProgress(int64_t step, float loss, double tps) const;
  std::optional<int> checkStopSignals(int64_t step);
  void finish() const;

  // Faults and checkpoints.
  std::string keptCheckpoint() const;
  [[noreturn]] void failNonFinite(int64_t step, const char *what, float value,
                                  bool afterUpdate) const;
  void save();

  const TrainOptions &o;
  Communicator &comm;
  const Manifest &manifest;
  CompiledModel &model;
  const RankGrid &grid;
  const Corpus &trainData, &valData;
  const bool root;
  const int ranks;
  const bool streamSharded;
  Communicator &dataComm;
  const int dataRanks, dataRank;
  int64_t warmup, evalEvery, ckptEvery;
  std::string ckptPath, metricsPath;
  /// Rank 0 owns the run directory; the others only read its checkpoint.
  std::optional<FileLock> lock;
  TrainState state;
  bool resumed = false;
  std::optional<AppendFile> metrics;
  std::vector<std::pair<int64_t, double>> trainCurve, valCurve;
  Tensors grads;
  /// The last checkpoint this run can stand on (-1: none yet).
  int64_t savedStep = -1;
  bool tty;
  /// Each step draws dataRanks * batch sequences, in the order one rank
  /// with that batch would, and this rank takes its share (docs/models.md §7).
  int64_t tokensPerStep;
  uint64_t span;
  std::vector<int32_t> tokens, targets;
  /// The next step's batch, drawn while the device runs a step and staged
  /// for upload (stageNextBatch).
  std::vector<int32_t> nextTokens, nextTargets;
  Clock::time_point start;
  int64_t firstStep = 0;
  double lastVal = NAN;
  /// Frees the device copies of the state (keepStateOnDevice) when the run
  /// ends, however it ends, before the state itself goes: declared after
  /// it.
  struct ReleaseDeviceCopies {
    CompiledModel &model;
    ~ReleaseDeviceCopies() { model.releaseDeviceCopies(); }
  } releaseDeviceCopies{model};
};

Trainer::Trainer(const TrainOptions &o, Communicator &comm,
                 const Manifest &manifest, CompiledModel &model,
                 const RankGrid &grid, const Corpus &trainData,
                 const Corpus &valData)
    : o(o), comm(comm), manifest(manifest), model(model), grid(grid),
      trainData(trainData), valData(valData), root(comm.isRoot()),
      ranks(comm.getSize()), streamSharded(manifest.streamShards > 1),
      dataComm(*grid.data), dataRanks(dataComm.getSize()),
      dataRank(dataComm.getRank()) {
  warmup = o.warmup >= 0 ? o.warmup : o.steps / 10;
  evalEvery =
      o.evalEvery > 0 ? o.evalEvery : std::max<int64_t>(1, o.steps / 10);
  ckptEvery = o.ckptEvery > 0 ? o.ckptEvery : evalEvery;
  ckptPath = o.outDir + "/checkpoint.safetensors";
  metricsPath = o.outDir + "/metrics.jsonl";
  tty = root && ::isatty(STDERR_FILENO);
  tokensPerStep = dataRanks * manifest.batch * manifest.seq;
  span = trainData.size() - uint64_t(manifest.seq) - 1;
}

int Trainer::run() {
  if (root)
    openRunDirectory();
  if (o.resume && std::filesystem::exists(ckptPath))
    resumeFromCheckpoint();
  else
    startFresh();
  openMetrics();
  grads.resize(manifest.params.size());
  for (size_t i = 0; i < grads.size(); ++i)
    grads[i].resize(state.params[i].size());
  savedStep = resumed ? state.step : -1;
  announce();
  keepStateOnDevice();
  start = Clock::now();
  firstStep = state.step;
  lastVal = valCurve.empty() ? NAN : valCurve.back().second;
  // From here on SIGINT and SIGTERM end the run after the current step.
  StopSignals signals;
  while (state.step < o.steps)
    if (std::optional<int> status = runStep())
      return *status;
  // The run ends with the state current on the host (the last step's
  // checkpoint has copied it there already, so this copies nothing).
  for (Tensors *group : {&state.params, &state.m, &state.v})
    model.syncToHost(*group);
  finish();
  return 0;
}

//===----------------------------------------------------------------------===//
// Setting up
//===----------------------------------------------------------------------===//

void Trainer::openRunDirectory() {
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
  removeTemporaryFiles(o.outDir + "/loss.svg");
}

void Trainer::resumeFromCheckpoint() {
  state = loadCheckpoint(ckptPath, manifest);
  if (state.step > o.steps)
    fail(ckptPath, ": the checkpoint is at step ", state.step,
         ", past --steps ", o.steps, " (expected --steps >= ", state.step, ")");
  if (o.stopAfter >= 0 && o.stopAfter <= state.step)
    fail(ckptPath, ": the checkpoint is at step ", state.step,
         ", so --stop-after ", o.stopAfter,
         " has passed (expected --stop-after > ", state.step, ")");
  resumed = true;
}

void Trainer::startFresh() {
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
  // The package's initialization, or the parameters of --init (checked as
  // grad's are: every parameter, float32 of its shape, finite).
  TensorFile init = o.initParams.empty() ? initParams(manifest)
                                         : readParamsOrCheckpoint(o.initParams);
  if (!o.initParams.empty() && isDenseForMixture(manifest, init)) {
    init = upcycleDense(manifest, init, o.initParams);
    if (root)
      std::cerr << "mix-run: upcycling the dense model in " << o.initParams
                << ": every stream kernel starts as its c_fc, the gate as "
                   "the package initializes it\n";
  }
  std::vector<const Tensor *> ordered =
      checkParams(manifest, init,
                  o.initParams.empty() ? manifest.packagePath : o.initParams);
  if (!o.initParams.empty() && root)
    std::cerr << "mix-run: starting from the parameters in " << o.initParams
              << " (fresh optimizer state)\n";
  for (const Tensor *t : ordered) {
    const float *d = t->getData<float>();
    state.params.emplace_back(d, d + t->getNumElements());
    state.m.emplace_back(t->getNumElements(), 0.0f);
    state.v.emplace_back(t->getNumElements(), 0.0f);
  }
  state.sampler = o.dataSeed;
}

/// A fresh run starts a fresh metrics file; a resumed one keeps the lines
/// up to its checkpoint's step and drops any written after it.
void Trainer::openMetrics() {
  if (root)
    metrics.emplace(metricsPath, /*truncate=*/!resumed);
  if (resumed && root)
    keepMetricsUpToCheckpoint();
}

void Trainer::keepMetricsUpToCheckpoint() {
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

/// Says how the ranks share the work and what precision the products use.
void Trainer::announce() const {
  if (root && streamSharded)
    std::cerr << "mix-run: stream-parallel over " << manifest.streamShards
              << " ranks ("
              << (manifest.target == "cuda" ? "NCCL" : comm.getName())
              << "): each computes "
              << manifest.spec.find("cmollm")->find("streams")->getInteger() /
                     manifest.streamShards
              << " of the cMoLLM streams\n";
  if (root && manifest.precision != "fp32")
    std::cerr << "mix-run: " << manifest.precision << " matrix products"
              << (manifest.operands == "bf16" ? ", their operands kept in bf16"
                  : manifest.target == "cuda" ? " of float32 operands"
                                              : "")
              << " (float32 accumulation, parameters and optimizer state)\n";
  if (root && dataRanks > 1)
    std::cerr << "mix-run: data-parallel over " << dataRanks << " ranks ("
              << (model.averagesOverRanks() ? "NCCL" : comm.getName())
              << "): " << dataRanks << " x " << manifest.batch
              << " sequences a step\n";
}

/// A cuda package keeps the state on the device from here on (unless
/// MIXRT_CUDA_RESIDENT=0): the parameters and moments, uploaded now (from
/// the initialization or the checkpoint), and the gradients, which grad
/// writes there for adamw. Gradients averaged on the host (MPI, without
/// NCCL) are copied as before: the host reads and writes them.
void Trainer::keepStateOnDevice() {
  if (!model.keepsOnDevice())
    return;
  for (Tensors *group : {&state.params, &state.m, &state.v})
    model.keepParametersOnDevice(*group, /*upload=*/true);
  if (dataRanks == 1 || model.averagesOverRanks())
    model.keepParametersOnDevice(grads, /*upload=*/false);
  model.reportDeviceStep("the upload of the training state");
}

//===----------------------------------------------------------------------===//
// A step
//===----------------------------------------------------------------------===//

/// Runs the next step; returns the exit status if the run stops after it.
std::optional<int> Trainer::runStep() {
  int64_t step = state.step + 1;
  auto t0 = Clock::now();
  BatchSampler sampler{state.sampler};
  drawBatch(sampler, tokens, targets);
  double lr = learningRate(step, o.steps, warmup, o.lr);
  auto [loss, gradNorm] =
      oneCallStep() ? trainStep(step, lr, sampler)
                    : std::pair{computeGradients(step), update(step, lr)};
  model.reportDeviceStep(concat("step ", step));
  state.step = step;
  state.sampler = sampler.state;

  double seconds = secondsSince(t0);
  double tps = seconds > 0 ? double(tokensPerStep) / seconds : 0;
  trainCurve.emplace_back(step, loss.loss);
  writeMetrics(step, loss, lr, gradNorm, tps);
  bool stopping = step == o.stopAfter;
  if (step % ckptEvery == 0 || step == o.steps || stopping)
    save();
  reportProgress(step, loss.loss, tps);
  if (stopping) {
    if (root)
      std::cerr << (tty ? "\n" : "") << "mix-run: stopped after step " << step
                << " as --stop-after asks; checkpoint in " << ckptPath
                << "; resume with --resume\n";
    return 0;
  }
  return checkStopSignals(step);
}

/// This rank's share of the step's sequences, into \p tokensOut and
/// \p targetsOut.
void Trainer::drawBatch(BatchSampler &sampler, std::vector<int32_t> &tokensOut,
                        std::vector<int32_t> &targetsOut) {
  std::vector<uint64_t> offsets;
  for (int64_t i = 0; i < dataRanks * manifest.batch; ++i) {
    uint64_t offset = sampler.next() % (span + 1);
    if (i / manifest.batch == dataRank)
      offsets.push_back(offset);
  }
  fillBatch(trainData, offsets, manifest.seq, tokensOut, targetsOut);
}

/// The loss and gradients of the batch, averaged over the data ranks.
LossValues Trainer::computeGradients(int64_t step) {
  LossValues loss = model.grad(constPtrs(state.params), tokens.data(),
                               targets.data(), ptrs(grads));
  if (dataRanks > 1 && !model.averagesOverRanks())
    loss = averageOverRanks(dataComm, loss, grads, concat(" of step ", step));
  if (!std::isfinite(loss.loss))
    failNonFinite(step, "the loss", loss.loss, /*afterUpdate=*/false);
  return loss;
}

/// Whether the step is CompiledModel::trainStep (one CUDA graph): a cuda
/// package whose gradients are not averaged on the host.
bool Trainer::oneCallStep() const {
  return model.isOnDevice() && (dataRanks == 1 || model.averagesOverRanks());
}

/// grad and adamw as one step: the host sees the loss after the update, so
/// a non-finite one is reported as found after it (gradients first). While
/// the device runs it, the next step's batch is drawn from \p sampler (as
/// it stands after this step's) and staged.
std::pair<LossValues, float> Trainer::trainStep(int64_t step, double lr,
                                                const BatchSampler &sampler) {
  std::array<float, 3> hyper = model.adamwHyperparameters(step, lr);
  auto [loss, gradNorm] =
      model.trainStep(ptrs(state.params), tokens.data(), targets.data(),
                      ptrs(grads), ptrs(state.m), ptrs(state.v), hyper.data(),
                      [&] { stageNextBatch(step, sampler); });
  if (!std::isfinite(loss.loss))
    failNonFinite(step, "the loss", loss.loss, /*afterUpdate=*/true);
  if (!std::isfinite(gradNorm))
    failNonFinite(step, "the gradient norm", gradNorm, /*afterUpdate=*/true);
  return {loss, gradNorm};
}

/// Draws step \p step + 1's batch (if the run has one) from a copy of
/// \p sampler and starts its upload: the next step draws the same batch
/// again (the sampler's state is only committed with its step, so a
/// checkpoint or a stop in between changes nothing) and finds it on the
/// device.
void Trainer::stageNextBatch(int64_t step, const BatchSampler &sampler) {
  if (step >= o.steps || step == o.stopAfter)
    return;
  BatchSampler next{sampler.state};
  drawBatch(next, nextTokens, nextTargets);
  model.stageBatch(nextTokens.data(), nextTargets.data());
}

/// The compiled AdamW update; returns the gradient norm.
float Trainer::update(int64_t step, double lr) {
  // The bias corrections with the betas the update was compiled with.
  std::array<float, 3> hyper = model.adamwHyperparameters(step, lr);
  // AdamW writes the new parameters and moments over the old ones.
  float gradNorm = model.adamw(ptrs(state.params), constPtrs(grads),
                               ptrs(state.m), ptrs(state.v), hyper.data());
  if (!std::isfinite(gradNorm))
    failNonFinite(step, "the gradient norm", gradNorm, /*afterUpdate=*/true);
  return gradNorm;
}

void Trainer::evaluateAt(int64_t step) {
  lastVal = evaluate(model, manifest, constPtrs(state.params), valData,
                     o.evalBatches, dataComm);
  model.reportDeviceStep(concat("the evaluation at step ", step));
  if (!std::isfinite(lastVal))
    fail("step ", step, ": the validation cross-entropy is not finite (",
         formatValue(lastVal), ")", keptCheckpoint());
  valCurve.emplace_back(step, lastVal);
}

/// The wall-clock time now, UTC, to the millisecond, in ISO 8601:
/// "2026-12-03T13:55:12.345Z".
static std::string utcTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                    now.time_since_epoch())
                    .count() %
                1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                utc.tm_min, utc.tm_sec, int(millis));
  return text;
}

/// The step's line of metrics.jsonl, evaluating first if it is due; the
/// line ends with the wall-clock time it was written.
void Trainer::writeMetrics(int64_t step, const LossValues &loss, double lr,
                           float gradNorm, double tps) {
  std::ostringstream line;
  // Nine significant digits: a float's value, exactly.
  line.precision(9);
  line << "{\"step\": " << step << ", \"loss\": " << loss.loss
       << ", \"ce\": " << loss.ce << ", \"aux\": " << loss.aux
       << ", \"lr\": " << lr << ", \"grad_norm\": " << gradNorm
       << ", \"tokens_per_s\": " << tps;
  if (isEvalStep(step)) {
    evaluateAt(step);
    line << ", \"val_ce\": " << lastVal
         << ", \"val_ppl\": " << std::exp(lastVal);
  }
  line << ", \"time\": \"" << utcTimestamp() << "\"}\n";
  // One write a line: a run killed now leaves whole lines, or one partial
  // last line that --resume drops.
  if (root)
    metrics->append(line.str());
}

/// The progress bar on a terminal, else a line at each evaluation.
void Trainer::reportProgress(int64_t step, float loss, double tps) const {
  double elapsed = secondsSince(start);
  double eta = elapsed / double(step - firstStep) * double(o.steps - step);
  // Before the first evaluation there is no validation loss to show.
  char val[32] = "-";
  if (!std::isnan(lastVal))
    std::snprintf(val, sizeof val, "%.4f", lastVal);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "step %lld/%lld  loss %.4f  val_ce %s  %.0f tok/s  "
                "elapsed %s  left %s",
                (long long)step, (long long)o.steps, loss, val, tps,
                formatDuration(elapsed).c_str(), formatDuration(eta).c_str());
  if (tty) {
    int width = 24, done = int(width * step / o.steps);
    std::cerr << "\r[" << std::string(done, '=')
              << std::string(width - done, ' ') << "] " << buf << "\x1b[K"
              << std::flush;
  } else if (root && (isEvalStep(step) || step == 1)) {
    std::cerr << buf << "\n";
  }
}

/// A signal may reach the ranks at different steps: they agree to stop
/// after the step in which any of them saw one.
std::optional<int> Trainer::checkStopSignals(int64_t step) {
  int64_t signal = StopSignals::get();
  if (ranks > 1)
    comm.allReduceMax(&signal, 1, concat("the stop check of step ", step));
  int signo = int(signal);
  if (!signo)
    return std::nullopt;
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

/// Ends the progress bar; the loss plot and the final validation loss.
void Trainer::finish() const {
  if (tty)
    std::cerr << "\n";
  if (root && !valCurve.empty()) {
    // The run is done and saved: a plot that cannot be written is a
    // warning, not a failed run.
    std::string plots = "; plots in " + o.outDir + "/loss.png and loss.svg";
    try {
      writeLossPlot(o.outDir + "/loss", trainCurve, valCurve);
    } catch (const Error &e) {
      std::cerr << "mix-run: warning: " << e.what() << "\n";
      plots = "";
    }
    std::cerr << "mix-run: validation cross-entropy " << valCurve.back().second
              << " nats/token, perplexity " << std::exp(valCurve.back().second)
              << plots << "\n";
  }
}

//===----------------------------------------------------------------------===//
// Faults and checkpoints
//===----------------------------------------------------------------------===//

/// What a run stopped by a fault says about its last checkpoint.
std::string Trainer::keptCheckpoint() const {
  if (savedStep < 0)
    return "; stopped before writing any checkpoint";
  return concat("; stopped without writing a checkpoint: the last good "
                "one is ",
                ckptPath, " (step ", savedStep, ")");
}

/// A non-finite loss or gradient norm: names the first parameter that is
/// already bad, or else the first bad gradient, or else the largest
/// gradient (the sum of squares overflowed float32). The gradient norm is
/// known only after the update, which writes over the parameters: a bad
/// gradient has made them bad by then, so the gradients are looked at
/// first (\p afterUpdate).
void Trainer::failNonFinite(int64_t step, const char *what, float value,
                            bool afterUpdate) const {
  // The tensors looked at may be on the device only.
  model.syncToHost();
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
  fail("step ", step, ": ", what, " is not finite (", formatValue(value), "); ",
       culprit, keptCheckpoint());
}

/// Checkpoints hold finite values only: a state that went bad in the
/// update stops the run and leaves the previous checkpoint in place.
void Trainer::save() {
  // State kept on the device comes to the host (a cuda package's profile
  // reports the copies as the checkpoint's).
  for (Tensors *group : {&state.params, &state.m, &state.v})
    model.syncToHost(*group);
  model.reportDeviceStep(concat("the checkpoint at step ", state.step));
  // Each stream rank updated only its part of the sharded tensors.
  if (streamSharded)
    for (auto *group : {&state.params, &state.m, &state.v})
      model.gatherShards(*grid.streams, *group,
                         concat("the sharded state of step ", state.step));
  for (auto [group, prefix] :
       {std::pair<const Tensors *, const char *>{&state.params, "param."},
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
      fail(e.what(), savedStep < 0 ? std::string("; no checkpoint was written")
                                   : concat("; the checkpoint of step ",
                                            savedStep, " is unchanged"));
    }
  }
  savedStep = state.step;
}
} // namespace

int mixrt::train(const TrainOptions &o) {
  checkOptions(o);
  Communicator &comm = o.comm ? *o.comm : getSingleProcess();
  Manifest manifest = readManifest(o.package);
  CompiledModel model(manifest);
  // The stream ranks of a stream-sharded package (mixc --stream-shards)
  // share their data rank's batch rows, each computing its own streams;
  // the data ranks split the batch.
  RankGrid grid = makeRankGrid(comm, manifest.streamShards, o.package);
  model.connect(*grid.streams);
  model.connectDevices(*grid.data);
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(o);
  checkVocabSize(*tokenizer, manifest, o.package);
  auto [trainData, valData] =
      loadCorpora(o.dataDir, *tokenizer, manifest.seq, manifest.vocabSize,
                  o.outDir + "/tokens");
  Trainer trainer(o, comm, manifest, model, grid, trainData, valData);
  return trainer.run();
}
