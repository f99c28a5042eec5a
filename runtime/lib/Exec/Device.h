//===- Device.h - The device side of a cuda package -------------*- C++ -*-===//
//
// The routines a cuda package's support code exports to the runtime
// (PackageABI.h: mixrt_device_*, mixrt_nccl_*), bound once, and what the
// runtime does with them: one device buffer an argument of each entry point,
// the copies around each call, and the gradients' average over NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_EXEC_DEVICE_H
#define MIXRT_LIB_EXEC_DEVICE_H

#include "mixrt/CompiledModel.h"
#include "mixrt/PackageABI.h"

#include <cstdint>
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
  /// MIXRT_CUDA_PROFILE=1 and the package can: the support code counts
  /// what the device does, and reportStep prints it for each training step
  /// (and the destructor for the calls after the last one).
  bool profiling = false;
  int64_t callsSinceStep = 0, reports = 0;
  /// One device buffer an argument of each entry point, allocated at its
  /// first call.
  std::map<std::string, std::vector<void *>> buffers;

  /// Binds every routine from the loaded library \p handle, each with the
  /// type PackageABI.h declares; on failure, \p missing names the first
  /// routine the library lacks and the result is null.
  static std::unique_ptr<Device> bind(void *handle, const char *&missing);

  ~Device();

  [[noreturn]] void failWith(const Manifest &manifest, const char *what);

  /// Calls \p entry, entry point \p name (index \p index), with the host
  /// arguments \p args copied to the device and back (the outputs and the
  /// updated inputs). With \p ncclRanks > 0, grad's outputs are averaged
  /// over the ranks on the device first.
  void call(const Manifest &manifest, mix_entry_point_fn entry,
            const char *name, int index, void **args, size_t numArgs,
            int ncclRanks);

  /// The profile of the calls since the last report, by kernel and product
  /// site, with its H200 estimate, under \p title (a training step);
  /// nothing when not profiling or no call was made.
  void reportStep(const std::string &title);

  /// Joins the NCCL communicator of the ranks of \p data (its id sent from
  /// rank 0 over \p data), within the rank timeout.
  void joinNccl(const Manifest &manifest, Communicator &data);
};

} // namespace mixrt

#endif // MIXRT_LIB_EXEC_DEVICE_H
