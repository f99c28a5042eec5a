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

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <set>
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
  device->stage = reinterpret_cast<decltype(device->stage)>(
      ::dlsym(handle, MIXRT_DEVICE_STAGE_SYMBOL));
  device->takeStaged = reinterpret_cast<decltype(device->takeStaged)>(
      ::dlsym(handle, MIXRT_DEVICE_TAKE_STAGED_SYMBOL));
  if (!device->stage || !device->takeStaged)
    device->stage = nullptr, device->takeStaged = nullptr;
  double bucketMegabytes = ncclBucketMegabytes();
  if (bucketMegabytes > 0) {
    device->ncclBeginAverage =
        reinterpret_cast<decltype(device->ncclBeginAverage)>(
            ::dlsym(handle, MIXRT_NCCL_BEGIN_AVERAGE_SYMBOL));
    device->ncclEndAverage = reinterpret_cast<decltype(device->ncclEndAverage)>(
        ::dlsym(handle, MIXRT_NCCL_END_AVERAGE_SYMBOL));
    if (!device->ncclBeginAverage || !device->ncclEndAverage)
      device->ncclBeginAverage = nullptr, device->ncclEndAverage = nullptr;
    device->bucketFloats =
        std::max<uint64_t>(1, uint64_t(bucketMegabytes * 1e6 / sizeof(float)));
  }
  if (cudaGraphsWanted()) {
    device->beginGraph = reinterpret_cast<decltype(device->beginGraph)>(
        ::dlsym(handle, MIXRT_DEVICE_BEGIN_GRAPH_SYMBOL));
    device->beginStep = reinterpret_cast<decltype(device->beginStep)>(
        ::dlsym(handle, MIXRT_DEVICE_BEGIN_STEP_SYMBOL));
    device->endStep = reinterpret_cast<decltype(device->endStep)>(
        ::dlsym(handle, MIXRT_DEVICE_END_STEP_SYMBOL));
  }
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

void CompiledModel::Device::prepare(const Manifest &manifest, Call &call,
                                    size_t numArgs) {
  const Manifest::EntryArgs &sizes = manifest.entryArgs.at(call.name);
  if (numArgs != 0 && numArgs != sizes.bytes.size())
    fail(manifest.manifestPath, ": entries.", call.name, ".arg_bytes has ",
         sizes.bytes.size(), " arguments, but the entry point takes ", numArgs,
         " (recompile the package with mixc)");
  size_t n = sizes.bytes.size();
  // Each argument's device buffer: its kept buffer's, or the entry's own.
  std::vector<void *> &entryBuffers = buffers[call.name];
  entryBuffers.resize(n, nullptr);
  call.device.assign(n, nullptr);
  call.kept.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    call.kept[i] =
        findKept(manifest, call.host[i], sizes.bytes[i], call.name, i);
    if (call.kept[i]) {
      call.device[i] = call.kept[i]->device;
      continue;
    }
    if (!entryBuffers[i] && !(entryBuffers[i] = alloc(sizes.bytes[i])))
      failWith(manifest, "allocating the arguments");
    call.device[i] = entryBuffers[i];
  }
  // The inputs: a kept one only if its device copy is stale; another from
  // its staging buffer if it was staged with these bytes (stageInput).
  for (size_t i = 0; i < sizes.numInputs; ++i) {
    Kept *k = call.kept[i];
    if (k && k->deviceCurrent)
      continue;
    if (!k && takeStaged) {
      auto slot = std::find(stageSlots.begin(), stageSlots.end(),
                            std::pair<std::string, size_t>(call.name, i));
      if (slot != stageSlots.end()) {
        int taken = takeStaged(int(slot - stageSlots.begin()), call.device[i],
                               call.host[i], sizes.bytes[i]);
        if (taken < 0)
          failWith(manifest, "taking a staged input");
        if (taken == 1)
          continue;
      }
    }
    if (upload(call.device[i], call.host[i], sizes.bytes[i]) != 0)
      failWith(manifest, "copying the inputs");
    if (k)
      k->deviceCurrent = true;
  }
}

namespace {
/// A call's outputs on the device and their sizes in floats: what the
/// gradients' average over the ranks takes.
struct Outputs {
  std::vector<void *> buffers;
  std::vector<uint64_t> floats;
  Outputs(const Manifest &manifest, const char *entry,
          const std::vector<void *> &device) {
    const Manifest::EntryArgs &sizes = manifest.entryArgs.at(entry);
    buffers.assign(device.begin() + sizes.numInputs, device.end());
    for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
      floats.push_back(sizes.bytes[i] / sizeof(float));
  }
};
} // namespace

void CompiledModel::Device::average(const Manifest &manifest, const Call &call,
                                    int ncclRanks) {
  if (ncclRanks <= 0 || std::strcmp(call.name, "grad") != 0)
    return;
  // Every output of grad (the three loss terms, then the gradients) is
  // averaged over the ranks on the device, where the gradients stay if
  // they are kept there.
  Outputs outputs(manifest, call.name, call.device);
  if (ncclAverage(outputs.buffers.data(), outputs.floats.data(),
                  int(outputs.buffers.size())) != 0)
    failWith(manifest, "averaging the gradients over the ranks");
}

bool CompiledModel::Device::averagesInCall(const Call &call,
                                           int ncclRanks) const {
  return ncclRanks > 0 && ncclBeginAverage &&
         std::strcmp(call.name, "grad") == 0;
}

bool CompiledModel::Device::runEntry(const Manifest &manifest, Call &call,
                                     int ncclRanks) {
  bool overlapped = averagesInCall(call, ncclRanks);
  if (overlapped) {
    Outputs outputs(manifest, call.name, call.device);
    if (ncclBeginAverage(outputs.buffers.data(), outputs.floats.data(),
                         int(outputs.buffers.size()), bucketFloats) != 0)
      failWith(manifest, "averaging the gradients over the ranks");
  }
  call.entry(call.device.data());
  if (overlapped && ncclEndAverage() != 0)
    failWith(manifest, "averaging the gradients over the ranks");
  return overlapped;
}

void CompiledModel::Device::finish(const Manifest &manifest, Call &call) {
  // What the call wrote: a kept buffer stays on the device, the others are
  // copied back.
  const Manifest::EntryArgs &sizes = manifest.entryArgs.at(call.name);
  auto copyBack = [&](size_t i, const char *what) {
    if (call.kept[i])
      wroteOnDevice(call.host[i], *call.kept[i]);
    else if (download(call.host[i], call.device[i], sizes.bytes[i]) != 0)
      failWith(manifest, what);
  };
  for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
    copyBack(i, "copying the outputs");
  for (size_t i : sizes.updated)
    copyBack(i, "copying the updated inputs");
  if (profiling)
    ++callsSinceStep;
}

void CompiledModel::Device::call(const Manifest &manifest,
                                 mix_entry_point_fn entry, const char *name,
                                 int index, void **args, size_t numArgs,
                                 int ncclRanks) {
  Call c{entry, name, index, args, {}, {}};
  prepare(manifest, c, numArgs);
  // From the second call of an entry point on, its work is one CUDA graph
  // launch: the host code runs only when the graph is captured.
  // The overlapped average is part of the call and of its graph.
  bool replayed = false, averaged = false;
  if (beginGraph)
    replayed = beginGraph(index, c.device.data(), c.device.size()) == 1;
  else
    begin(index);
  if (!replayed)
    averaged = runEntry(manifest, c, ncclRanks);
  else
    averaged = averagesInCall(c, ncclRanks);
  if (end() != 0)
    failWith(manifest, concat("the ", name, " step").c_str());
  if (index >= 0) {
    if (called.size() <= size_t(index))
      called.resize(index + 1);
    called[index] = true;
  }
  if (!averaged)
    average(manifest, c, ncclRanks);
  finish(manifest, c);
}

bool CompiledModel::Device::canRunAsOneGraph(const Manifest &manifest,
                                             const std::vector<Call> &calls) {
  if (!runsStepsAsGraphs())
    return false;
  std::set<const void *> written; // host buffers an earlier call writes
  for (const Call &c : calls) {
    if (c.index < 0 || size_t(c.index) >= called.size() || !called[c.index])
      return false;
    const Manifest::EntryArgs &sizes = manifest.entryArgs.at(c.name);
    for (size_t i = 0; i < sizes.numInputs; ++i)
      if (written.count(c.host[i]) &&
          !findKept(manifest, c.host[i], sizes.bytes[i], c.name, i))
        return false;
    for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
      written.insert(c.host[i]);
    for (size_t i : sizes.updated)
      written.insert(c.host[i]);
  }
  return true;
}

bool CompiledModel::Device::stageInput(const Manifest &manifest,
                                       const char *entry, size_t index,
                                       const void *host) {
  const Manifest::EntryArgs &sizes = manifest.entryArgs.at(entry);
  if (!stage || index >= sizes.numInputs)
    return false;
  std::pair<std::string, size_t> key(entry, index);
  auto slot = std::find(stageSlots.begin(), stageSlots.end(), key);
  if (slot == stageSlots.end()) {
    if (stageSlots.size() == kMaxStageSlots)
      return false;
    slot = stageSlots.insert(stageSlots.end(), key);
  }
  if (stage(int(slot - stageSlots.begin()), host, sizes.bytes[index]) != 0)
    failWith(manifest, "staging an input");
  ++transfersSinceStep;
  return true;
}

void CompiledModel::Device::runStep(const Manifest &manifest,
                                    std::vector<Call> &calls, int ncclRanks,
                                    const std::function<void()> &whileRunning) {
  if (!canRunAsOneGraph(manifest, calls)) {
    for (Call &c : calls)
      call(manifest, c.entry, c.name, c.index, c.host, 0, ncclRanks);
    if (whileRunning)
      whileRunning();
    return;
  }
  // Every input first: what grad writes into kept buffers counts as on the
  // device already, so adamw uploads none of it.
  std::vector<void *> key;
  for (Call &c : calls) {
    prepare(manifest, c, 0);
    const Manifest::EntryArgs &sizes = manifest.entryArgs.at(c.name);
    for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
      if (c.kept[i])
        c.kept[i]->deviceCurrent = true;
    key.insert(key.end(), c.device.begin(), c.device.end());
  }
  int started = beginStep(key.data(), key.size());
  if (started < 0)
    failWith(manifest, "beginning the training step's CUDA graph");
  if (started == 0)
    for (Call &c : calls) {
      begin(c.index);
      bool averaged = runEntry(manifest, c, ncclRanks);
      if (end() != 0)
        failWith(manifest, concat("the ", c.name, " step").c_str());
      if (!averaged)
        average(manifest, c, ncclRanks);
    }
  // The graph launched (a replay) runs while the host stages what comes
  // next; a step being captured is launched by endStep.
  if (started == 1 && whileRunning)
    whileRunning();
  if (endStep() != 0)
    failWith(manifest, "the training step");
  if (started == 0 && whileRunning)
    whileRunning();
  for (Call &c : calls)
    finish(manifest, c);
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
                    "run each training step, and each call of an entry "
                    "point, after the first as a CUDA graph",
                    "launch every kernel from the host")
      .value_or(true);
}

double mixrt::ncclBucketMegabytes() {
  const char *value = std::getenv("MIXRT_NCCL_BUCKET_MB");
  if (!value || !*value)
    return 25;
  char *end = nullptr;
  double megabytes = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(megabytes) || megabytes < 0 ||
      megabytes > 1e6)
    fail("MIXRT_NCCL_BUCKET_MB is ", quote(value),
         ", expected the megabytes of a bucket of gradients averaged during "
         "the backward pass (0 to 1e6; 0 averages them after it)");
  return megabytes;
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
