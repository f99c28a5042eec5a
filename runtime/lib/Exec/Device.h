//===- Device.h - The device side of a cuda package -------------*- C++ -*-===//
//
// The routines a cuda package's support code exports to the runtime
// (PackageABI.h: mixrt_device_*, mixrt_nccl_*), bound once, and what the
// runtime does with them: a device buffer for each argument, the copies
// around each call, the training state kept in device memory between calls,
// and the gradients' average over NCCL.
//
// Device buffers. An argument of an entry call is either a kept host buffer
// (CompiledModel::keepOnDevice: the training state) or not:
//  * a kept buffer has one device buffer, whichever entry point takes it
//    (grad's parameters and adamw's are the same host vectors, so the same
//    device buffer; grad's gradient outputs are adamw's gradient inputs).
//    It records which copy is current: an input is uploaded only when its
//    device copy is not; what a call writes to it (an output, an updated
//    input) stays on the device and makes the host copy stale until
//    syncToHost. An emulated package fills a stale host copy with NaNs
//    (0xFF bytes), so a read that misses syncToHost cannot go unnoticed in
//    the tests;
//  * any other argument (tokens, targets, the loss terms, AdamW's
//    hyperparameters and gradient norm, and every argument of a caller that
//    keeps nothing) has a device buffer of its entry point, allocated at
//    its first use, and is copied in before each call and out after it, as
//    the runtime always did; an input staged ahead of the call (the next
//    training step's tokens and targets, uploaded while a step runs:
//    stageInput) is copied on the device from its staging buffer instead,
//    if it still holds the same bytes.
// The entry point gets the device buffers in its argument order.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_EXEC_DEVICE_H
#define MIXRT_LIB_EXEC_DEVICE_H

#include "mixrt/CompiledModel.h"
#include "mixrt/PackageABI.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mixrt {

struct CompiledModel::Device {
  decltype(&mixrt_device_begin) begin;
  decltype(&mixrt_device_end) end;
  decltype(&mixrt_device_error) error;
  decltype(&mixrt_device_alloc) alloc;
  decltype(&mixrt_device_free) free;
  decltype(&mixrt_device_upload) upload;
  decltype(&mixrt_device_download) download;
  decltype(&mixrt_nccl_unique_id) ncclUniqueId;
  decltype(&mixrt_nccl_init) ncclInit;
  decltype(&mixrt_nccl_average) ncclAverage;
  /// Optional (packages from before the profile lack it).
  decltype(&mixrt_device_profile) profile = nullptr;
  /// Optional (packages from before cuda stream shards lack it).
  decltype(&mixrt_nccl_init_streams) ncclInitStreams = nullptr;
  /// Optional (packages from before CUDA graphs lack it); null also when
  /// MIXRT_CUDA_GRAPH=0: every call runs the entry's host code.
  decltype(&mixrt_device_begin_graph) beginGraph = nullptr;
  /// Optional likewise (packages from before step graphs lack them).
  decltype(&mixrt_device_begin_step) beginStep = nullptr;
  decltype(&mixrt_device_end_step) endStep = nullptr;
  /// Optional (packages from before the overlapped average lack them);
  /// null also when MIXRT_NCCL_BUCKET_MB=0: grad's outputs are averaged
  /// after the call (ncclAverage).
  decltype(&mixrt_nccl_begin_average) ncclBeginAverage = nullptr;
  decltype(&mixrt_nccl_end_average) ncclEndAverage = nullptr;
  /// The floats of a bucket of the overlapped average.
  uint64_t bucketFloats = 0;
  /// Optional likewise (packages from before staged inputs lack them).
  decltype(&mixrt_device_stage) stage = nullptr;
  decltype(&mixrt_device_take_staged) takeStaged = nullptr;
  /// The arguments staged ahead of their calls (stageInput), by slot:
  /// (entry point, argument index).
  std::vector<std::pair<std::string, size_t>> stageSlots;
  /// The slots the support code has (mixrt_device_stage).
  static constexpr size_t kMaxStageSlots = 8;
  /// MIXRT_CUDA_PROFILE=1 and the package can: the support code counts
  /// what the device does, and reportStep prints it for each training step
  /// (and the destructor for the calls after the last one).
  bool profiling = false;
  /// The calls, and the copies of kept buffers outside calls (keep,
  /// syncToHost), since the last report.
  int64_t callsSinceStep = 0, transfersSinceStep = 0, reports = 0;
  /// Which rank's report it is, after the title, when the run has several
  /// ("data rank 1 of 2", "stream rank 0 of 2", or both): under mpirun the
  /// ranks' reports share one stderr.
  std::string dataRankLabel, streamRankLabel;
  /// The entry points called so far, by index (their memory planned).
  std::vector<bool> called;
  /// Each entry point's device buffers for the arguments it does not take
  /// from kept buffers, by argument index (null until first used).
  std::map<std::string, std::vector<void *>> buffers;

  /// A host buffer kept in device memory (see the file comment). At least
  /// one of the two copies is current at any time.
  struct Kept {
    void *device = nullptr;
    uint64_t bytes = 0;
    bool deviceCurrent = false, hostCurrent = true;
  };
  /// The kept buffers by host address.
  std::map<const void *, Kept> kept;
  /// MIXRT_CUDA_RESIDENT is not 0: keep() keeps.
  bool residencyWanted = true;
  /// The package runs on the emulator: stale host copies are filled with
  /// NaNs.
  bool poisonStaleHostCopies = false;

  /// Binds every routine from the loaded library \p handle, each with the
  /// type PackageABI.h declares; on failure, \p missing names the first
  /// routine the library lacks and the result is null.
  static std::unique_ptr<Device> bind(void *handle, const char *&missing);

  ~Device();

  [[noreturn]] void failWith(const Manifest &manifest, const char *what);

  /// Calls \p entry, entry point \p name (index \p index), with the host
  /// arguments \p args: kept ones through their device buffers, the others
  /// copied to the device and back (the outputs and the updated inputs).
  /// With \p ncclRanks > 0, grad's outputs are averaged over the ranks on
  /// the device first.
  void call(const Manifest &manifest, mix_entry_point_fn entry,
            const char *name, int index, void **args, size_t numArgs,
            int ncclRanks);

  /// One call of an entry point, as Device::call makes it: \p host is
  /// the caller's arguments, \p device the buffers the entry point gets.
  struct Call {
    mix_entry_point_fn entry;
    const char *name;
    int index;
    void **host;
    std::vector<void *> device;
    std::vector<Kept *> kept;
  };
  /// Whether a training step's calls (grad, NCCL's average, adamw) can run
  /// as one CUDA graph (runStep): graphs are wanted and the package can.
  bool runsStepsAsGraphs() const { return beginStep && endStep; }
  /// Runs \p calls (grad then adamw) as one step: their inputs uploaded
  /// first, grad's outputs averaged over \p ncclRanks (if > 0) between
  /// them, all of it one CUDA graph (captured by the first such step, and
  /// launched by the later ones with the same device buffers). Where that
  /// cannot be (no step graphs, an entry point not called before, or a
  /// buffer that one call writes and a later one reads not kept on the
  /// device), the calls are made one by one as call() makes them.
  /// \p whileRunning, if any, runs once the step's work is queued and
  /// before the host waits for it (with one graph launched, while the
  /// device runs it): where the next step's inputs are staged.
  void runStep(const Manifest &manifest, std::vector<Call> &calls,
               int ncclRanks, const std::function<void()> &whileRunning = {});

  /// Starts uploading \p host, input \p index of entry point \p entry
  /// (not a kept buffer), for that entry's next call, which takes it from
  /// the staging buffer if it still holds the same bytes (prepare). False
  /// when the package cannot stage (the next call uploads as always).
  bool stageInput(const Manifest &manifest, const char *entry, size_t index,
                  const void *host);

  /// Keeps the \p bytes at \p host in device memory from now on, its host
  /// copy current: uploaded now with \p upload, else when a call first
  /// reads it (a buffer that a call writes first is never uploaded).
  /// Keeping a kept buffer again says the host changed it.
  void keep(const Manifest &manifest, void *host, uint64_t bytes, bool upload);

  /// Downloads every kept buffer whose host copy is stale.
  void syncToHost(const Manifest &manifest);
  /// Downloads the kept buffers within the \p bytes at \p host (the
  /// whole tensor, or this rank's part of a stream-sharded one) whose host
  /// copies are stale.
  void syncToHost(const Manifest &manifest, const void *host, uint64_t bytes);

  /// Frees every kept buffer's device copy and forgets it; the host copies
  /// stay as they are (stale ones stale).
  void release();

  /// The profile of the calls and the kept buffers' copies since the last
  /// report, by kernel and product site, with its H200 estimate, under
  /// \p title (a training step); nothing when not profiling or nothing
  /// happened.
  void reportStep(const std::string &title);

  /// Joins the NCCL communicator of the ranks of \p data (its id sent from
  /// rank 0 over \p data), within the rank timeout.
  void joinNccl(const Manifest &manifest, Communicator &data);
  /// The same for the stream group \p streams of a package compiled with
  /// --stream-shards: its compiled code sums over it.
  void joinStreamGroup(const Manifest &manifest, Communicator &streams);

private:
  /// Joins the communicator of \p ranks through \p init (what the error
  /// calls \p what).
  void join(const Manifest &manifest, Communicator &ranks,
            decltype(&mixrt_nccl_init) init, const char *what);

  /// The kept buffer at \p host if there is one, checked against argument
  /// \p i of entry \p name (\p bytes long): a pointer into a kept buffer
  /// other than its start, or a kept buffer of another size, is an error.
  Kept *findKept(const Manifest &manifest, const void *host, uint64_t bytes,
                 const char *name, size_t i);

  /// Downloads \p k, whose host copy is at \p host, if that is stale.
  void makeHostCurrent(const Manifest &manifest, const void *host, Kept &k);

  /// Records that a call wrote \p k, whose host copy is at \p host.
  void wroteOnDevice(void *host, Kept &k);

  /// The phases of a call: its device buffers and the upload of its stale
  /// inputs; grad's outputs averaged over the ranks; the copies back of
  /// what it wrote (or the record that kept buffers have it).
  void prepare(const Manifest &manifest, Call &call, size_t numArgs);
  void average(const Manifest &manifest, const Call &call, int ncclRanks);
  /// Runs \p call's host code; with \p ncclRanks > 0 and the overlapped
  /// average, grad's outputs are averaged in buckets as the code marks them
  /// ready. Returns whether it averaged them (else average() must).
  bool runEntry(const Manifest &manifest, Call &call, int ncclRanks);
  /// Whether \p call's outputs are averaged during it (runEntry).
  bool averagesInCall(const Call &call, int ncclRanks) const;
  void finish(const Manifest &manifest, Call &call);
  /// Whether runStep can run \p calls as one graph (see there).
  bool canRunAsOneGraph(const Manifest &manifest,
                        const std::vector<Call> &calls);
};

/// Whether MIXRT_CUDA_GRAPH lets a cuda package run the calls of an entry
/// point after its first as a CUDA graph: "1" or unset yes, "0" no;
/// anything else is an error naming the variable.
bool cudaGraphsWanted();

/// MIXRT_NCCL_BUCKET_MB: the megabytes (10^6 bytes) of gradients a
/// bucket of the overlapped average holds at least, 25 when unset (DDP's
/// default); 0 averages everything after the backward pass. Anything but a
/// number from 0 to 1e6 is an error naming the variable.
double ncclBucketMegabytes();

/// Whether MIXRT_CUDA_RESIDENT lets the training state live on the device:
/// "1" or unset yes, "0" no; anything else is an error naming the
/// variable.
bool cudaResidencyWanted();

} // namespace mixrt

#endif // MIXRT_LIB_EXEC_DEVICE_H
