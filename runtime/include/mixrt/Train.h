//===- Train.h - Training and evaluating compiled packages ------*- C++ -*-===//
//
// The training loop of `mix-run train` (schedule, clipping and AdamW in the
// compiled code, evaluation, checkpoints, metrics, resume) and the
// validation loss of `mix-run eval`.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TRAIN_H
#define MIXRT_TRAIN_H

#include "mixrt/Communicator.h"
#include "mixrt/CompiledModel.h"
#include "mixrt/Corpus.h"
#include "mixrt/Safetensors.h"
#include "mixrt/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mixrt {

struct TrainOptions {
  std::string package, dataDir, outDir;
  /// "byte" or "gpt2" (with gpt2Dir holding encoder.json and vocab.bpe).
  std::string tokenizer = "byte", gpt2Dir;
  int64_t steps = 0;
  double lr = 1e-3;
  /// Warm-up steps; -1 means steps / 10.
  int64_t warmup = -1;
  /// Evaluate and checkpoint every this many steps; -1 means steps / 10.
  int64_t evalEvery = -1, ckptEvery = -1;
  /// Validation batches per evaluation.
  int64_t evalBatches = 8;
  /// A parameter file (or a checkpoint) to start from instead of the
  /// package's initialization, with fresh optimizer moments (fine-tuning);
  /// empty: the initialization. A --resume that finds a checkpoint takes
  /// the checkpoint's state instead.
  std::string initParams;
  bool resume = false;
  /// Stop (with a checkpoint) after this step, as an interrupted run would;
  /// -1 runs to the end.
  int64_t stopAfter = -1;
  /// Seed of the batch sampler.
  uint64_t dataSeed = 1234;
  /// The ranks of a data-parallel run (null: this process alone). Each
  /// rank takes its share of a step's getSize() * batch sequences; rank 0
  /// writes the checkpoints, metrics and plot.
  Communicator *comm = nullptr;
};

/// The learning rate of update `step` (1-based): linear warm-up from 0,
/// then cosine to 10% of `peak` at `total` (docs/models.md §7).
double learningRate(int64_t step, int64_t total, int64_t warmup, double peak);

/// Runs training; throws Error on bad input or a failed step (a
/// non-finite loss, gradient norm, state or validation loss among them).
/// Returns 0 when the run reaches --steps or --stop-after, and 128 + the
/// signal's number when SIGINT or SIGTERM stopped it (after the current
/// step, with a checkpoint).
int train(const TrainOptions &options);

/// The loss and gradients of a data-parallel step: each rank's \p mine
/// and \p grads (replaced in place), averaged over the ranks. Every rank
/// took as many sequences, so the mean of the ranks' means is the whole
/// batch's (the balance loss too: a mean over sequences). \p when ends
/// the collectives' names in a timeout's message (" of step 12").
LossValues averageOverRanks(Communicator &comm, const LossValues &mine,
                            std::vector<std::vector<float>> &grads,
                            const std::string &when = "");

/// The mean cross-entropy over `batches` validation batches, taken at
/// evenly spaced offsets of `corpus`. Under \p comm a batch is getSize()
/// times the package's, each rank computes its share, and every rank
/// returns the mean.
double evaluate(const CompiledModel &model, const Manifest &manifest,
                const std::vector<const float *> &params, const Corpus &corpus,
                int64_t batches, Communicator &comm = getSingleProcess());

struct GenerateOptions {
  int64_t tokens = 200;
  /// 0 samples greedily.
  double temperature = 0.8;
  /// Sample among the k most likely tokens; 0 means all.
  int64_t topK = 40;
  /// Continuation c draws from its own generator, seeded with seed + c.
  uint64_t seed = 0;
  /// How many continuations of the prompt to sample.
  int64_t continuations = 1;
  /// How the next-token logits are computed.
  enum class Method {
    /// The compiled decode step with its key-value cache (when the package
    /// has one, else Full): one position a call, a context of up to
    /// n_positions tokens; when it is full, the cache is refilled from its
    /// last n_positions / 2 tokens.
    Cache,
    /// The whole training-shaped forward (@logits) over the last `seq`
    /// tokens, for every sampled token.
    Full,
  } method = Method::Cache;
};

/// Samples `options.tokens` tokens after `context`, for each of
/// `options.continuations` continuations. A cuda package keeps the
/// parameters and the decode state in device memory meanwhile
/// (CompiledModel::keepOnDevice), released before it returns.
std::vector<std::vector<TokenId>>
generate(CompiledModel &model, const Manifest &manifest,
         const std::vector<const float *> &params,
         const std::vector<TokenId> &context, const GenerateOptions &options);

/// Draws the training loss and the validation cross-entropy against the
/// step with cairo, into STEM.png (compressed) and STEM.svg, each written
/// atomically.
void writeLossPlot(const std::string &stem,
                   const std::vector<std::pair<int64_t, double>> &train,
                   const std::vector<std::pair<int64_t, double>> &val);

} // namespace mixrt

#endif // MIXRT_TRAIN_H
