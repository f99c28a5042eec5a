//===- Trainer.cpp - The training loop of mix-run train -------------------===//
//
// Samples batches from the tokenized corpus, runs the compiled gradient and
// AdamW entry points, evaluates, checkpoints (atomically, with the data
// sampler's state and the optimizer's moments) and logs metrics.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/CommandLine.h"
#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
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
  file.metadata = {{"format", "mixrt-checkpoint-1"},
                   {"step", std::to_string(state.step)},
                   {"sampler", std::to_string(state.sampler)}};
  writeSafetensors(path, file);
}

State loadCheckpoint(const std::string &path, const Manifest &manifest) {
  TensorFile file = readSafetensors(path);
  State state;
  std::string format, step, sampler;
  for (auto &[k, val] : file.metadata) {
    if (k == "format")
      format = val;
    if (k == "step")
      step = val;
    if (k == "sampler")
      sampler = val;
  }
  if (format != "mixrt-checkpoint-1" || step.empty() || sampler.empty())
    fail(path, ": not a mix-run checkpoint (missing format, step or sampler "
               "metadata)");
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
} // namespace

double mixrt::evaluate(const CompiledModel &model, const Manifest &manifest,
                       const std::vector<const float *> &params,
                       const Corpus &corpus, int64_t batches) {
  int64_t b = manifest.batch, seq = manifest.seq;
  uint64_t span = corpus.size() - uint64_t(seq) - 1;
  int64_t sequences = batches * b;
  std::vector<int32_t> tokens, targets;
  double total = 0;
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<uint64_t> offsets;
    for (int64_t i = 0; i < b; ++i)
      offsets.push_back(span * uint64_t(k * b + i) / uint64_t(sequences));
    fillBatch(corpus, offsets, seq, tokens, targets);
    total += model.forward(params, tokens.data(), targets.data()).ce;
  }
  return total / double(batches);
}

void mixrt::train(const TrainOptions &o) {
  if (o.steps < 1)
    fail("--steps must be at least 1, got ", o.steps);
  if (!(o.lr > 0) || !std::isfinite(o.lr))
    fail("--lr must be a positive number, got ", o.lr);
  Manifest manifest = readManifest(o.package);
  CompiledModel model(manifest);
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

  std::error_code ec;
  std::filesystem::create_directories(o.outDir, ec);
  if (ec || !std::filesystem::is_directory(o.outDir))
    fail(o.outDir, ": cannot create the run directory: ",
         ec ? ec.message() : "a file of that name exists");
  std::string ckptPath = o.outDir + "/checkpoint.safetensors";
  std::string metricsPath = o.outDir + "/metrics.jsonl";

  State state;
  if (o.resume && std::filesystem::exists(ckptPath)) {
    state = loadCheckpoint(ckptPath, manifest);
    if (state.step > o.steps)
      fail(ckptPath, ": the checkpoint is at step ", state.step,
           ", past --steps ", o.steps, " (expected --steps >= ", state.step,
           ")");
    std::cerr << "mix-run: resuming from " << ckptPath << " at step "
              << state.step << "\n";
  } else {
    TensorFile init = initParams(manifest);
    for (const NamedTensor &t : init.getTensors()) {
      const float *d = t.tensor.getData<float>();
      state.params.emplace_back(d, d + t.tensor.getNumElements());
      state.m.emplace_back(t.tensor.getNumElements(), 0.0f);
      state.v.emplace_back(t.tensor.getNumElements(), 0.0f);
    }
    state.sampler = o.dataSeed;
    // A fresh run starts a fresh metrics file.
    std::ofstream(metricsPath, std::ios::trunc);
  }
  std::ofstream metrics(metricsPath, std::ios::app);
  if (!metrics)
    fail(metricsPath, ": cannot open for writing: ", std::strerror(errno));

  size_t n = manifest.params.size();
  std::vector<std::vector<float>> grads(n), newParams(n), newM(n), newV(n);
  for (size_t i = 0; i < n; ++i) {
    grads[i].resize(state.params[i].size());
    newParams[i].resize(state.params[i].size());
    newM[i].resize(state.params[i].size());
    newV[i].resize(state.params[i].size());
  }
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

  bool tty = ::isatty(STDERR_FILENO);
  int64_t tokensPerStep = manifest.batch * manifest.seq;
  uint64_t span = trainData.size() - uint64_t(manifest.seq) - 1;
  std::vector<int32_t> tokens, targets;
  std::vector<std::pair<int64_t, double>> trainCurve, valCurve;
  auto start = std::chrono::steady_clock::now();
  int64_t firstStep = state.step;
  double lastVal = NAN;
  const double beta1 = 0.9, beta2 = 0.95;

  while (state.step < o.steps) {
    int64_t step = state.step + 1;
    auto t0 = std::chrono::steady_clock::now();
    Sampler sampler{state.sampler};
    std::vector<uint64_t> offsets;
    for (int64_t i = 0; i < manifest.batch; ++i)
      offsets.push_back(sampler.next() % (span + 1));
    fillBatch(trainData, offsets, manifest.seq, tokens, targets);

    LossValues loss = model.grad(constPtrs(state.params), tokens.data(),
                                 targets.data(), ptrs(grads));
    if (!std::isfinite(loss.loss))
      fail("step ", step, ": the loss is not finite (", loss.loss,
           "); the last good checkpoint is ", ckptPath);
    double lr = learningRate(step, o.steps, warmup, o.lr);
    float hyper[3] = {float(lr), float(1 - std::pow(beta1, double(step))),
                      float(1 - std::pow(beta2, double(step)))};
    float gradNorm = 0;
    std::vector<void *> args;
    for (auto *group : {&state.params, &grads, &state.m, &state.v})
      for (auto &t : *group)
        args.push_back(t.data());
    args.push_back(hyper);
    for (auto *group : {&newParams, &newM, &newV})
      for (auto &t : *group)
        args.push_back(t.data());
    args.push_back(&gradNorm);
    model.adamw(args.data());
    if (!std::isfinite(gradNorm))
      fail("step ", step,
           ": the gradient norm is not finite; the last good "
           "checkpoint is ",
           ckptPath);
    std::swap(state.params, newParams);
    std::swap(state.m, newM);
    std::swap(state.v, newV);
    state.step = step;
    state.sampler = sampler.state;

    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    double tps = double(tokensPerStep) / seconds;
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
                         o.evalBatches);
      valCurve.emplace_back(step, lastVal);
      line << ", \"val_ce\": " << lastVal
           << ", \"val_ppl\": " << std::exp(lastVal);
    }
    line << "}";
    metrics << line.str() << "\n";
    metrics.flush();
    bool stopping = step == o.stopAfter;
    if (step % ckptEvery == 0 || step == o.steps || stopping)
      saveCheckpoint(ckptPath, manifest, state);

    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    double eta = elapsed / double(step - firstStep) * double(o.steps - step);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "step %lld/%lld  loss %.4f  val_ce %.4f  %.0f tok/s  "
                  "elapsed %s  left %s",
                  (long long)step, (long long)o.steps, loss.loss, lastVal, tps,
                  formatDuration(elapsed).c_str(), formatDuration(eta).c_str());
    if (tty) {
      int width = 24, done = int(width * step / o.steps);
      std::cerr << "\r[" << std::string(done, '=')
                << std::string(width - done, ' ') << "] " << buf << "\x1b[K"
                << std::flush;
    } else if (step % evalEvery == 0 || step == o.steps || step == 1) {
      std::cerr << buf << "\n";
    }
    if (stopping) {
      std::cerr << (tty ? "\n" : "") << "mix-run: stopped after step " << step
                << "; resume with --resume\n";
      return;
    }
  }
  if (tty)
    std::cerr << "\n";
  if (!valCurve.empty()) {
    writeLossPlot(o.outDir + "/loss.png", trainCurve, valCurve);
    std::cerr << "mix-run: validation cross-entropy " << valCurve.back().second
              << " nats/token, perplexity " << std::exp(valCurve.back().second)
              << "; plot in " << o.outDir << "/loss.png\n";
  }
}
