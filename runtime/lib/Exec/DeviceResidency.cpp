//===- DeviceResidency.cpp - The training state in device memory ----------===//
//
// Host buffers kept in a cuda package's device memory across entry calls
// (CompiledModel::keepOnDevice): which copy of each is current, the copies
// that make one current, and the checks that keep a host pointer from
// reaching the device by the wrong route. Device.cpp's call() uses them.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "mixrt/Environment.h"
#include "mixrt/Error.h"

#include <cstdlib>
#include <cstring>

using namespace mixrt;

bool mixrt::cudaResidencyWanted() {
  return readSwitch("MIXRT_CUDA_RESIDENT",
                    "keep the training state in device memory",
                    "copy every argument to the device and back around each "
                    "call")
      .value_or(true);
}

void CompiledModel::Device::keep(const Manifest &manifest, void *host,
                                 uint64_t bytes, bool uploadNow) {
  // An empty tensor has no address of its own to find it by, and nothing
  // to copy: it is passed as any other argument.
  if (bytes == 0)
    return;
  auto [it, inserted] = kept.try_emplace(host);
  Kept &k = it->second;
  if (!inserted && k.bytes != bytes)
    fail("internal error: a host buffer kept on the device as ", k.bytes,
         " bytes is kept again as ", bytes);
  if (inserted) {
    k.bytes = bytes;
    k.device = alloc(bytes);
    if (!k.device) {
      kept.erase(it);
      failWith(manifest, "allocating the training state");
    }
  }
  // The host's values are the current ones from now on.
  k.hostCurrent = true;
  k.deviceCurrent = false;
  if (!uploadNow)
    return;
  if (upload(k.device, host, bytes) != 0)
    failWith(manifest, "copying the training state");
  k.deviceCurrent = true;
  ++transfersSinceStep;
}

void CompiledModel::Device::makeHostCurrent(const Manifest &manifest,
                                            const void *host, Kept &k) {
  if (k.hostCurrent)
    return;
  if (download(const_cast<void *>(host), k.device, k.bytes) != 0)
    failWith(manifest, "copying the training state to the host");
  k.hostCurrent = true;
  ++transfersSinceStep;
}

void CompiledModel::Device::syncToHost(const Manifest &manifest) {
  for (auto &[host, k] : kept)
    makeHostCurrent(manifest, host, k);
}

void CompiledModel::Device::syncToHost(const Manifest &manifest,
                                       const void *host, uint64_t bytes) {
  const char *end = static_cast<const char *>(host) + bytes;
  for (auto it = kept.lower_bound(host);
       it != kept.end() && static_cast<const char *>(it->first) < end; ++it)
    makeHostCurrent(manifest, it->first, it->second);
}

void CompiledModel::Device::release() {
  for (auto &[host, k] : kept)
    free(k.device);
  kept.clear();
}

CompiledModel::Device::Kept *
CompiledModel::Device::findKept(const Manifest &manifest, const void *host,
                                uint64_t bytes, const char *name, size_t i) {
  if (kept.empty())
    return nullptr;
  // The kept buffer at or below `host`: it must start there, with the
  // argument's size, or not contain it at all.
  auto it = kept.upper_bound(host);
  if (it == kept.begin())
    return nullptr;
  --it;
  const char *start = static_cast<const char *>(it->first);
  const char *p = static_cast<const char *>(host);
  if (p >= start + it->second.bytes)
    return nullptr;
  if (p != start || it->second.bytes != bytes)
    fail(manifest.packagePath, ": internal error: argument ", i, " of ", name,
         " (", bytes, " bytes) overlaps a buffer kept on the device (",
         it->second.bytes, " bytes at byte ", p - start,
         "): pass kept tensors whole");
  return &it->second;
}

void CompiledModel::Device::wroteOnDevice(void *host, Kept &k) {
  k.deviceCurrent = true;
  if (k.hostCurrent && poisonStaleHostCopies)
    std::memset(host, 0xFF, k.bytes); // every float a NaN
  k.hostCurrent = false;
}

//===----------------------------------------------------------------------===//
// CompiledModel's side
//===----------------------------------------------------------------------===//

bool CompiledModel::keepsOnDevice() const {
  return device && device->residencyWanted;
}

void CompiledModel::keepOnDevice(std::vector<std::vector<float>> &tensors,
                                 bool upload) {
  if (!keepsOnDevice())
    return;
  for (std::vector<float> &t : tensors)
    device->keep(manifest, t.data(), t.size() * sizeof(float), upload);
}

void CompiledModel::syncToHost() {
  if (device)
    device->syncToHost(manifest);
}

void CompiledModel::keepParametersOnDevice(
    std::vector<std::vector<float>> &tensors, bool upload) {
  if (!keepsOnDevice())
    return;
  if (tensors.size() != manifest.params.size())
    fail("internal error: ", tensors.size(), " tensors kept as the ",
         manifest.params.size(), " parameters");
  for (size_t i = 0; i < tensors.size(); ++i) {
    size_t part = tensors[i].size() / size_t(manifest.params[i].streamShards);
    device->keep(manifest, tensors[i].data() + getShardOffset(i),
                 part * sizeof(float), upload);
  }
}

void CompiledModel::syncToHost(const std::vector<std::vector<float>> &tensors) {
  if (device)
    for (const std::vector<float> &t : tensors)
      device->syncToHost(manifest, t.data(), t.size() * sizeof(float));
}

void CompiledModel::releaseDeviceCopies() {
  if (device)
    device->release();
}
