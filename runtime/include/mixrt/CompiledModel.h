//===- CompiledModel.h - Calling a package's compiled code ------*- C++ -*-===//
//
// Loads a package's shared library and calls its entry points through the
// packed C ABI: `void mix_<name>(void **args)`, args pointing at the
// parameters, tokens, targets and then the outputs (docs/package.md).
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_COMPILEDMODEL_H
#define MIXRT_COMPILEDMODEL_H

#include "mixrt/Communicator.h"
#include "mixrt/Manifest.h"
#include "mixrt/PackageABI.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mixrt {

/// What one call of the loss computes.
struct LossValues {
  float loss = 0, ce = 0, aux = 0;
};

class CompiledModel {
public:
  /// Loads the library named by the manifest; throws Error naming the
  /// package if it is missing, corrupt or lacks an entry point.
  explicit CompiledModel(const Manifest &manifest);
  ~CompiledModel();
  CompiledModel(const CompiledModel &) = delete;
  CompiledModel &operator=(const CompiledModel &) = delete;

  /// The loss on one batch (tokens and targets are batch * seq ids).
  LossValues forward(const std::vector<const float *> &params,
                     const int32_t *tokens, const int32_t *targets) const;

  /// The loss and the gradient of every parameter; `grads[i]` must hold as
  /// many floats as parameter i. Gradients kept on the device
  /// (keepOnDevice) stay there: their host copies are stale until
  /// syncToHost().
  LossValues grad(const std::vector<const float *> &params,
                  const int32_t *tokens, const int32_t *targets,
                  const std::vector<float *> &grads) const;

  /// The logits (batch * seq * vocab floats) of a batch of tokens.
  void logits(const std::vector<const float *> &params, const int32_t *tokens,
              float *out) const;

  /// Whether the package has a decode step (Manifest::decode): mixc
  /// compiles one unless --decode-batch 0.
  bool hasDecode() const { return decodeEntry != nullptr; }

  /// One decode step: given one new token of each of the decode batch's
  /// sequences (Manifest::decode->batch ids), all at \p position, and the
  /// state of the positions before it (Manifest::decode->state, zeros
  /// before position 0), writes the next-token logits (batch * vocab
  /// floats) and updates the state in place. The caller keeps \p position
  /// below Manifest::decode->positions.
  void decode(const std::vector<const float *> &params, const int32_t *tokens,
              int32_t position, const std::vector<float *> &state,
              float *logits) const;

  /// The decode step for Manifest::decode->prefillChunk (C) new tokens of
  /// each sequence (batch * C ids, row-major), at positions \p position ..
  /// position + C - 1; writes their logits (batch * C * vocab floats). The
  /// caller keeps position + C within Manifest::decode->positions.
  void prefill(const std::vector<const float *> &params, const int32_t *tokens,
               int32_t position, const std::vector<float *> &state,
               float *logits) const;
  bool hasPrefill() const { return prefillEntry != nullptr; }

  /// The compiled update (docs/models.md §7): clips the gradients by their global
  /// norm, then takes one AdamW step, writing the new parameters and
  /// moments over \p params, \p m and \p v. \p hyper is [lr, 1 - beta1^t,
  /// 1 - beta2^t]. Returns the gradient norm before clipping. Kept
  /// parameters and moments are updated on the device only (keepOnDevice).
  float adamw(const std::vector<float *> &params,
              const std::vector<const float *> &grads,
              const std::vector<float *> &m, const std::vector<float *> &v,
              const float hyper[3]) const;

  /// grad, then adamw with its gradients, as one training step: the loss
  /// of the batch and the gradient norm. Where the package can (a cuda
  /// package whose gradients stay on the device: kept, and averaged over
  /// the ranks with NCCL if any), the step after the first runs as one
  /// CUDA graph (grad, the average, adamw; docs/cuda.md), so the host sees
  /// the loss only after the update; elsewhere the two calls as above.
  /// \p hyper as adamw's. \p whileRunning, if any, runs once the step's
  /// work is queued and before the host waits for it: a one-graph step's
  /// device runs it meanwhile (stageBatch the next batch there).
  std::pair<LossValues, float>
  trainStep(const std::vector<float *> &params, const int32_t *tokens,
            const int32_t *targets, const std::vector<float *> &grads,
            const std::vector<float *> &m, const std::vector<float *> &v,
            const float hyper[3],
            const std::function<void()> &whileRunning = {}) const;

  /// Starts uploading the next grad call's \p tokens and \p targets
  /// while the device runs the current step (a cuda package that can;
  /// not with sharded streams): that call copies them on the device if
  /// they still hold the same values when it runs, and uploads them
  /// otherwise. Returns whether they were staged.
  bool stageBatch(const int32_t *tokens, const int32_t *targets) const;

  /// The `hyper` of step \p step (1-based) at learning rate \p lr:
  /// [lr, 1 - beta1^step, 1 - beta2^step], with the betas the compiled
  /// update was built with (the manifest's `adamw`).
  std::array<float, 3> adamwHyperparameters(int64_t step, double lr) const;

  /// Connects a stream-sharded package (Manifest::streamShards > 1) to the
  /// ranks it runs on: this rank computes its part of the streams and the
  /// compiled code sums the parts over \p comm (a cuda package over an
  /// NCCL communicator of the same ranks, joined here: collective). Fails
  /// unless \p comm has exactly streamShards ranks. Nothing to do for
  /// other packages.
  void connect(Communicator &comm);

  /// Where this rank's part of parameter \p i starts in the whole tensor
  /// (in elements): 0 unless the parameter is stream-sharded. The model's
  /// callers pass whole tensors; the model passes this part to the code.
  size_t getShardOffset(size_t i) const;

  /// Completes \p tensors (one a parameter, whole) of which each rank has
  /// computed only its own part of the stream-sharded ones (gradients, or
  /// updated parameters and moments): afterwards every rank holds all the
  /// parts. Collective: every rank calls it. \p what names it in errors.
  void gatherShards(Communicator &comm,
                    std::vector<std::vector<float>> &tensors,
                    const std::string &what) const;

  /// Whether the package runs on a CUDA device (its arguments are copied
  /// there and back around each call, unless kept there: keepOnDevice).
  bool isOnDevice() const { return device != nullptr; }

  //===--------------------------------------------------------------------===//
  // The training state in device memory (cuda packages; docs/cuda.md)
  //
  // A cuda package's entry points take every argument from host memory:
  // the inputs are copied to the device before the call, the outputs and
  // updated inputs back after it. A caller that passes the same host
  // tensors to call after call (the Trainer: parameters, gradients, AdamW
  // moments) keeps them in device memory instead. Then a call that takes a
  // kept tensor (its data() pointer) as an input uploads it only if the
  // host changed it, and what a call writes to a kept tensor stays on the
  // device: ITS HOST COPY IS STALE until syncToHost(). Everything else
  // (tokens, targets, loss terms, AdamW's hyperparameters and gradient
  // norm) is copied as before, so grad(), forward() and adamw() still
  // return their scalars; only the kept tensors' host values lag behind.
  // In an emulated package a stale host copy holds NaNs, so a missed
  // syncToHost shows in every test.
  //===--------------------------------------------------------------------===//

  /// Whether keepOnDevice keeps anything: a cuda package, unless
  /// MIXRT_CUDA_RESIDENT=0.
  bool keepsOnDevice() const;

  /// Keeps each of \p tensors in device memory from now on, its host copy
  /// current: uploaded now if \p upload, else when a call first reads it
  /// (never, for a tensor a call writes before any reads it: grad's
  /// gradients). Keeping a tensor again says the host has changed it (its
  /// device copy is replaced); a host write that is not followed by that
  /// never reaches the device. The tensors must not be resized or freed
  /// until releaseDeviceCopies(). Nothing when !keepsOnDevice().
  void keepOnDevice(std::vector<std::vector<float>> &tensors, bool upload);
  /// The same for \p tensors one a parameter, whole, in the manifest's
  /// order (the parameters, their gradients, a moment): of a stream-sharded
  /// parameter, only this rank's part is kept (what the calls take); the
  /// rest of its host copy is never read by them.
  void keepParametersOnDevice(std::vector<std::vector<float>> &tensors,
                              bool upload);

  /// Makes every kept tensor's host copy current: downloads each one a
  /// call has written since. Call it before reading kept tensors on the
  /// host (to save them, to look for non-finite values, ...).
  void syncToHost();
  /// The same for those of \p tensors that are kept (the others are
  /// current on the host already).
  void syncToHost(const std::vector<std::vector<float>> &tensors);

  /// Stops keeping tensors on the device and frees their device copies;
  /// host copies that are stale stay stale (syncToHost first to keep the
  /// values).
  void releaseDeviceCopies();

  /// With MIXRT_CUDA_PROFILE=1 and a cuda package: prints the profile of the
  /// calls (and kept tensors' copies) since the last report, summed, with
  /// the H200 estimate, under \p title (a training step, the state's
  /// upload, a checkpoint). Otherwise nothing.
  void reportDeviceStep(const std::string &title) const;

  /// Connects a cuda package to the data-parallel ranks of \p data through
  /// NCCL (the communicator's id sent from rank 0 over \p data): grad()
  /// then returns the gradients and loss terms averaged over the ranks,
  /// reduced on the devices. Done when \p data has more than one rank, or
  /// always with MIXRT_NCCL=1; MIXRT_NCCL=0 leaves the average to the host
  /// (averageOverRanks, over MPI). Collective; nothing to do for cpu
  /// packages.
  void connectDevices(Communicator &data);

  /// Whether grad() averages over the data-parallel ranks itself (after
  /// connectDevices chose NCCL); the caller must not average again.
  bool averagesOverRanks() const { return ncclRanks > 0; }

private:
  using Entry = mix_entry_point_fn;
  Entry lookup(const char *symbol) const;
  /// Calls the decode or prefill entry with \p len tokens a sequence.
  void step(Entry entry, const char *name, int index, int64_t len,
            const std::vector<const float *> &params, const int32_t *tokens,
            int32_t position, const std::vector<float *> &state,
            float *logits) const;
  /// Fails unless the library's compiled-in manifest (mixc's
  /// mix_package_manifest) is the manifest that was read, checksum aside.
  void checkEmbeddedManifest(const std::string &path);
  /// Calls entry point \p name (index \p index) with the packed host
  /// arguments \p args (\p numArgs of them, 0 if not known): directly on
  /// the CPU, or through device copies.
  void call(Entry entry, const char *name, int index, void **args,
            size_t numArgs) const;
  /// \p args as the call takes them: each stream-sharded parameter's part.
  std::vector<void *> argsForCall(const char *name, void **args,
                                  size_t numArgs) const;

  /// The packed arguments \p args of entry \p name with every sharded
  /// parameter (and its gradient and moments) moved to this rank's part.
  std::vector<void *> localArgs(const char *name, void **args,
                                size_t numArgs) const;

  const Manifest &manifest;
  /// This process's stream rank once connected; -1 before.
  int streamRank = -1;
  /// The ranks grad() averages over with NCCL; 0 when it does not.
  int ncclRanks = 0;
  void *handle = nullptr;
  Entry forwardEntry = nullptr, gradEntry = nullptr, adamwEntry = nullptr,
        logitsEntry = nullptr, decodeEntry = nullptr, prefillEntry = nullptr;
  /// The device side of a cuda package (null for cpu packages).
  struct Device;
  std::unique_ptr<Device> device;
};

} // namespace mixrt

#endif // MIXRT_COMPILEDMODEL_H
