//===- DeviceProfile.h - The cuda profile and its H200 estimate -*- C++ -*-===//
//
// MIXRT_CUDA_PROFILE=1: after each call of a cuda package's entry point, the
// support code's counts (mixrt_device_profile: launches by kernel with the
// compiler's estimate of their bytes, products by site, copies) and, from
// them, the time an H200 would take, as a roofline sum. An estimate for
// planning, not a measurement: docs/cuda.md says what it leaves out.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_EXEC_DEVICEPROFILE_H
#define MIXRT_LIB_EXEC_DEVICEPROFILE_H

#include "mixrt/PackageABI.h"

#include <string>

namespace mixrt {

/// The H200 (SXM, 141 GB HBM3e) figures the estimate divides by.
struct H200 {
  /// HBM3e bandwidth, bytes/s.
  static constexpr double kMemoryBandwidth = MIXRT_H200_MEMORY_BANDWIDTH;
  /// Dense tensor-core peaks, FLOP/s (float32 accumulation).
  static constexpr double kTF32Flops = MIXRT_H200_TF32_FLOPS;
  static constexpr double kBF16Flops = MIXRT_H200_BF16_FLOPS;
  /// Float32 on the CUDA cores (the kernels' own arithmetic), FLOP/s:
  /// 132 SMs x 128 lanes x 2 (a fused multiply-add) x 1.98 GHz.
  static constexpr double kFP32Flops = MIXRT_H200_FP32_FLOPS;
  /// What one kernel launch costs when kernels run back to back on one
  /// stream (the host's launch and the device's gap between dependent
  /// kernels): about 3 us without CUDA graphs.
  static constexpr double kLaunchSeconds = MIXRT_H200_LAUNCH_SECONDS;
  /// In a CUDA graph the host's share goes: what remains of a kernel
  /// launch is the device's gap between dependent kernels, taken as 1 us,
  /// plus about 10 us a graph launch. Assumptions until a device measures
  /// them.
  static constexpr double kGraphNodeSeconds = MIXRT_H200_GRAPH_NODE_SECONDS;
  static constexpr double kGraphLaunchSeconds = 10e-6;
  /// Host-device copies: PCIe 5.0 x16 at about 50 GB/s in practice (64
  /// GB/s a direction in theory), plus about 10 us a copy.
  static constexpr double kCopyBandwidth = 50e9;
  static constexpr double kCopySeconds = 10e-6;
  /// NCCL all-reduces between the GPUs of one node: NVLink 4 at 900 GB/s a
  /// GPU (both directions together), so 450 GB/s for what a rank sends
  /// (mixrt_device_profile_t::collectiveWireBytes: a ring's 2 (R - 1) / R
  /// of the payload), plus about 10 us a collective (NCCL's latency within
  /// a node). Assumptions until a device measures them.
  static constexpr double kLinkBandwidth = MIXRT_H200_LINK_BANDWIDTH;
  static constexpr double kCollectiveSeconds = MIXRT_H200_COLLECTIVE_SECONDS;
};

/// The estimate's parts, in seconds.
struct RooflineEstimate {
  double kernels = 0;    // the kernels' bytes at HBM bandwidth
  double arithmetic = 0; // the kernels' float operations: CUDA cores, mma
  double products = 0; // the products at the tensor-core peak or HBM
  double launches = 0; // every launch (kernels, products, memsets)
  double copies = 0;   // host-device copies over PCIe, device copies
  double collectives = 0;       // NCCL all-reduces over NVLink, less the hidden
  double hiddenCollectives = 0; // their time behind the backward pass
  bool bf16 = false;   // the tensor cores' rate: bf16's, else tf32's
  bool graphs = false; // some calls ran as CUDA graphs
  double total() const {
    return kernels + arithmetic + products + launches + copies + collectives;
  }
};

/// The time an H200 would take for \p p: every kernel and memset moves its
/// bytes at HBM bandwidth, and the kernels' float operations run at the
/// float32 peak of the CUDA cores, their mma.sync at the tensor cores'
/// peak of the products' precision (mixc --gpu-matmul sets both; added to
/// their bytes' time: an upper bound for kernels that overlap the two);
/// each product takes the longer of its FLOPs at the tensor-core peak of
/// its precision and its bytes at HBM bandwidth (summed over products by
/// the support code); every launch costs kLaunchSeconds, or kGraphNodeSeconds
/// in a CUDA graph (and kGraphLaunchSeconds a graph); copies cross PCIe; NCCL
/// all-reduces send their ring's bytes over NVLink. The parts are added,
/// as on one stream, but for the all-reduces that ran on a stream of their
/// own behind the backward pass: the support code's share of them hidden
/// behind the work after them (collectiveHiddenSeconds) is not counted.
RooflineEstimate estimateH200(const mixrt_device_profile_t &p);

/// Adds \p b's counts to \p a.
void accumulate(mixrt_device_profile_t &a, const mixrt_device_profile_t &b);

/// "H200 estimate (roofline, not a measurement): 1.23 ms = kernels ...".
std::string formatEstimate(const RooflineEstimate &e);

/// Whether MIXRT_CUDA_PROFILE asks for the profile: "1" yes, "0" or unset
/// no; anything else is an error naming the variable.
bool cudaProfileWanted();

} // namespace mixrt

#endif // MIXRT_LIB_EXEC_DEVICEPROFILE_H
