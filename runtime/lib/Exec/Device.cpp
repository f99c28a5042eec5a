//===- Device.cpp - The device side of a cuda package ---------------------===//
//
// Binding the support code's device routines, the copies around each entry
// point's call, and the NCCL communicator over the data-parallel ranks. The
// kept buffers (the training state in device memory) are
// DeviceResidency.cpp's.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "DeviceProfile.h"

#include "mixrt/Environment.h"
#include "mixrt/Error.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <thread>
#include <type_traits>

using namespace mixrt;

std::unique_ptr<CompiledModel::Device>
CompiledModel::Device::bind(void *handle, const char *&missing) {
  auto device = std::make_unique<Device>();
  missing = nullptr;
  auto bindOne = [&](auto &fn, const char *name) {
    void *symbol = ::dlsym(handle, name);
    if (!symbol && !missing)
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol);
  };
  bindOne(device->begin, MIXRT_DEVICE_BEGIN_SYMBOL);
  bindOne(device->end, MIXRT_DEVICE_END_SYMBOL);
  bindOne(device->error, MIXRT_DEVICE_ERROR_SYMBOL);
  bindOne(device->alloc, MIXRT_DEVICE_ALLOC_SYMBOL);
  bindOne(device->free, MIXRT_DEVICE_FREE_SYMBOL);
  bindOne(device->upload, MIXRT_DEVICE_UPLOAD_SYMBOL);
  bindOne(device->download, MIXRT_DEVICE_DOWNLOAD_SYMBOL);
  bindOne(device->ncclUniqueId, MIXRT_NCCL_UNIQUE_ID_SYMBOL);
  bindOne(device->ncclInit, MIXRT_NCCL_INIT_SYMBOL);
  bindOne(device->ncclAverage, MIXRT_NCCL_AVERAGE_SYMBOL);
  if (missing)
    return nullptr;
  device->profile = reinterpret_cast<decltype(device->profile)>(
      ::dlsym(handle, MIXRT_DEVICE_PROFILE_SYMBOL));
  device->ncclInitStreams = reinterpret_cast<decltype(device->ncclInitStreams)>(
      ::dlsym(handle, MIXRT_NCCL_INIT_STREAMS_SYMBOL));
  if (cudaGraphsWanted())
    device->beginGraph = reinterpret_cast<decltype(device->beginGraph)>(
        ::dlsym(handle, MIXRT_DEVICE_BEGIN_GRAPH_SYMBOL));
  device->residencyWanted = cudaResidencyWanted();
  // The emulator's own diagnostics entry point marks an emulated package.
  device->poisonStaleHostCopies =
      ::dlsym(handle, "mixemu_last_error") != nullptr;
  if (cudaProfileWanted()) {
    device->profiling = device->profile != nullptr;
    if (!device->profile)
      std::fprintf(stderr,
                   "mix-run: warning: MIXRT_CUDA_PROFILE=1, but the package "
                   "was compiled without the profile (recompile it with "
                   "mixc)\n");
  }
  return device;
}

CompiledModel::Device::~Device() {
  reportStep(reports ? "the calls after the last step" : "the run");
  for (auto &[name, list] : buffers)
    for (void *b : list)
      if (b)
        free(b);
  release();
}

void CompiledModel::Device::failWith(const Manifest &manifest,
                                     const char *what) {
  const char *why = error();
  fail(manifest.packagePath, ": ", what,
       " on the CUDA device failed: ", why && *why ? why : "unknown error");
}

void CompiledModel::Device::call(const Manifest &manifest,
                                 mix_entry_point_fn entry, const char *name,
                                 int index, void **args, size_t numArgs,
                                 int ncclRanks) {
  const Manifest::EntryArgs &sizes = manifest.entryArgs.at(name);
  if (numArgs != 0 && numArgs != sizes.bytes.size())
    fail(manifest.manifestPath, ": entries.", name, ".arg_bytes has ",
         sizes.bytes.size(), " arguments, but the entry point takes ", numArgs,
         " (recompile the package with mixc)");
  size_t n = sizes.bytes.size();
  // Each argument's device buffer: its kept buffer's, or the entry's own.
  std::vector<void *> &entryBuffers = buffers[name];
  entryBuffers.resize(n, nullptr);
  std::vector<void *> deviceArgs(n);
  std::vector<Kept *> keptArgs(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    keptArgs[i] = findKept(manifest, args[i], sizes.bytes[i], name, i);
    if (keptArgs[i]) {
      deviceArgs[i] = keptArgs[i]->device;
      continue;
    }
    if (!entryBuffers[i] && !(entryBuffers[i] = alloc(sizes.bytes[i])))
      failWith(manifest, "allocating the arguments");
    deviceArgs[i] = entryBuffers[i];
  }
  // The inputs: a kept one only if its device copy is stale.
  for (size_t i = 0; i < sizes.numInputs; ++i) {
    Kept *k = keptArgs[i];
    if (k && k->deviceCurrent)
      continue;
    if (upload(deviceArgs[i], args[i], sizes.bytes[i]) != 0)
      failWith(manifest, "copying the inputs");
    if (k)
      k->deviceCurrent = true;
  }
  // From the second call of an entry point on, its work is one CUDA graph
  // launch: the host code runs only when the graph is captured.
  bool replayed = false;
  if (beginGraph)
    replayed = beginGraph(index, deviceArgs.data(), n) == 1;
  else
    begin(index);
  if (!replayed)
    entry(deviceArgs.data());
  if (end() != 0)
    failWith(manifest, concat("the ", name, " step").c_str());
  if (ncclRanks > 0 && std::strcmp(name, "grad") == 0) {
    // Every output of grad (the three loss terms, then the gradients) is
    // averaged over the ranks on the device, where the gradients stay if
    // they are kept there.
    std::vector<void *> outputs(deviceArgs.begin() + sizes.numInputs,
                                deviceArgs.end());
    std::vector<uint64_t> floats;
    for (size_t i = sizes.numInputs; i < n; ++i)
      floats.push_back(sizes.bytes[i] / sizeof(float));
    if (ncclAverage(outputs.data(), floats.data(), int(outputs.size())) != 0)
      failWith(manifest, "averaging the gradients over the ranks");
  }
  // What the call wrote: a kept buffer stays on the device, the others are
  // copied back.
  auto copyBack = [&](size_t i, const char *what) {
    if (keptArgs[i])
      wroteOnDevice(args[i], *keptArgs[i]);
    else if (download(args[i], deviceArgs[i], sizes.bytes[i]) != 0)
      failWith(manifest, what);
  };
  for (size_t i = sizes.numInputs; i < n; ++i)
    copyBack(i, "copying the outputs");
  for (size_t i : sizes.updated)
    copyBack(i, "copying the updated inputs");
  if (profiling)
    ++callsSinceStep;
}

void CompiledModel::Device::reportStep(const std::string &title) {
  if (!profiling || (callsSinceStep == 0 && transfersSinceStep == 0))
    return;
  // Copies of kept buffers alone (their upload, a checkpoint's download)
  // are reported under the title alone.
  std::string heading =
      callsSinceStep == 0
          ? title
          : concat(title, " (", callsSinceStep,
                   callsSinceStep == 1 ? " call" : " calls", ")");
  for (const std::string *label : {&dataRankLabel, &streamRankLabel})
    if (!label->empty())
      heading += concat(", ", *label);
  mixrt_device_profile_t counts{};
  if (profile(&counts, heading.c_str(), /*print=*/1) == 0)
    std::fprintf(stderr, "mixrt cuda profile: %s: %s\n", heading.c_str(),
                 formatEstimate(estimateH200(counts)).c_str());
  callsSinceStep = transfersSinceStep = 0;
  ++reports;
}

bool mixrt::cudaGraphsWanted() {
  return readSwitch("MIXRT_CUDA_GRAPH",
                    "run each call of an entry point after its first as a "
                    "CUDA graph",
                    "launch every kernel from the host")
      .value_or(true);
}

/// Whether a cuda package run on \p ranks data-parallel ranks averages its
/// gradients with NCCL: MIXRT_NCCL=1 always, 0 never, unset when there is
/// more than one rank.
static bool useNccl(int ranks) {
  return readSwitch("MIXRT_NCCL", "average the gradients on the GPUs with NCCL",
                    "on the host over MPI")
      .value_or(ranks > 1);
}

void CompiledModel::Device::joinNccl(const Manifest &manifest,
                                     Communicator &data) {
  join(manifest, data, ncclInit, "the NCCL communicator");
}

void CompiledModel::Device::joinStreamGroup(const Manifest &manifest,
                                            Communicator &streams) {
  if (!ncclInitStreams)
    fail(manifest.packagePath, "/", *manifest.library,
         ": the cuda package's code has no '", MIXRT_NCCL_INIT_STREAMS_SYMBOL,
         "' (recompile the package with mixc)");
  join(manifest, streams, ncclInitStreams,
       "the stream group's NCCL communicator");
}

void CompiledModel::Device::join(const Manifest &manifest, Communicator &data,
                                 decltype(&mixrt_nccl_init) init,
                                 const char *what) {
  char id[128] = {};
  if (data.isRoot() && ncclUniqueId(id) != 0)
    failWith(manifest, concat("making ", what, "'s id").c_str());
  data.broadcast(id, sizeof id, concat(what, "'s id"));
  // ncclCommInitRank waits for every rank to join and has no deadline of
  // its own: a watchdog ends this rank (and so the launcher ends the run)
  // if they do not.
  double timeout = getRankTimeout();
  std::mutex mutex;
  std::condition_variable joinedCondition;
  bool joined = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (joinedCondition.wait_for(lock, std::chrono::duration<double>(timeout),
                                 [&] { return joined; }))
      return;
    std::fprintf(stderr,
                 "mix-run: error: rank %d of %d: the other ranks did not "
                 "join %s in %g s (a rank died or stalled; "
                 "MIXRT_RANK_TIMEOUT sets the limit); ending the run\n",
                 data.getRank(), data.getSize(), what, timeout);
    std::fflush(stderr);
    std::_Exit(1);
  });
  int status = init(id, data.getSize(), data.getRank(), timeout);
  {
    std::lock_guard<std::mutex> lock(mutex);
    joined = true;
  }
  joinedCondition.notify_one();
  watchdog.join();
  if (status != 0)
    failWith(manifest, concat("joining ", what).c_str());
}

void CompiledModel::connectDevices(Communicator &data) {
  // The variable is checked for every package: a typo is an error even
  // where it would not matter.
  bool nccl = useNccl(data.getSize());
  if (device && data.getSize() > 1)
    device->dataRankLabel =
        concat("data rank ", data.getRank(), " of ", data.getSize());
  if (!device || !nccl)
    return;
  device->joinNccl(manifest, data);
  ncclRanks = data.getSize();
}
