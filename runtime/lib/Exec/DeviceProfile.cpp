//===- DeviceProfile.cpp - The cuda profile and its H200 estimate ---------===//

#include "DeviceProfile.h"

#include "mixrt/Environment.h"
#include "mixrt/Error.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mixrt;

RooflineEstimate mixrt::estimateH200(const mixrt_device_profile_t &p) {
  RooflineEstimate e;
  e.kernels = double(p.kernelBytesRead + p.kernelBytesWritten + p.memsetBytes) /
              H200::kMemoryBandwidth;
  // The kernels' mma.sync take the products' precision (mixc
  // --gpu-matmul sets both).
  double peak = p.matmulBF16 ? H200::kBF16Flops : H200::kTF32Flops;
  e.arithmetic = p.kernelFlops / H200::kFP32Flops + p.kernelMmaFlops / peak;
  e.bf16 = p.matmulBF16;
  // Each product's roofline; a package from before counted only the sums.
  e.products = p.matmulSeconds > 0
                   ? p.matmulSeconds
                   : std::max(p.matmulFlops / peak,
                              double(p.matmulBytes) / H200::kMemoryBandwidth);
  uint64_t launched =
      p.launches + p.matmuls + p.memsets + p.copies[2] + p.collectives;
  uint64_t inGraphs = std::min(p.graphNodes, launched);
  e.launches = double(launched - inGraphs) * H200::kLaunchSeconds +
               double(inGraphs) * H200::kGraphNodeSeconds +
               double(p.graphLaunches) * H200::kGraphLaunchSeconds;
  e.graphs = p.graphLaunches > 0;
  e.copies = double(p.copyBytes[0] + p.copyBytes[1]) / H200::kCopyBandwidth +
             double(p.copies[0] + p.copies[1]) * H200::kCopySeconds +
             2 * double(p.copyBytes[2]) / H200::kMemoryBandwidth;
  double collectives = double(p.collectiveWireBytes) / H200::kLinkBandwidth +
                       double(p.collectives) * H200::kCollectiveSeconds;
  e.hiddenCollectives = std::clamp(p.collectiveHiddenSeconds, 0.0, collectives);
  e.collectives = collectives - e.hiddenCollectives;
  return e;
}

void mixrt::accumulate(mixrt_device_profile_t &a,
                       const mixrt_device_profile_t &b) {
  a.launches += b.launches;
  a.kernelBytesRead += b.kernelBytesRead;
  a.kernelBytesWritten += b.kernelBytesWritten;
  a.kernelFlops += b.kernelFlops;
  a.kernelMmaFlops += b.kernelMmaFlops;
  a.memsets += b.memsets;
  a.memsetBytes += b.memsetBytes;
  a.matmuls += b.matmuls;
  a.matmulFlops += b.matmulFlops;
  a.matmulBytes += b.matmulBytes;
  a.matmulSeconds += b.matmulSeconds;
  a.matmulBF16 = b.matmulBF16;
  a.graphLaunches += b.graphLaunches;
  a.graphNodes += b.graphNodes;
  for (int i = 0; i < 3; ++i) {
    a.copies[i] += b.copies[i];
    a.copyBytes[i] += b.copyBytes[i];
  }
  a.collectives += b.collectives;
  a.collectiveBytes += b.collectiveBytes;
  a.collectiveWireBytes += b.collectiveWireBytes;
  a.collectiveHiddenSeconds += b.collectiveHiddenSeconds;
}

std::string mixrt::formatEstimate(const RooflineEstimate &e) {
  std::string collectives =
      e.collectives > 0 || e.hiddenCollectives > 0
          ? concat(" + all-reduces ", e.collectives * 1e3,
                   " ms (NVLink 450 GB/s a direction, 10 us each",
                   e.hiddenCollectives > 0
                       ? concat("; ", e.hiddenCollectives * 1e3,
                                " ms more behind the backward pass")
                       : std::string(),
                   ")")
          : "";
  char text[768];
  std::snprintf(text, sizeof text,
                "H200 estimate (a roofline sum, not a measurement): %.4g ms = "
                "kernels %.4g ms (bytes at 4.8 TB/s) + arithmetic %.4g ms "
                "(FP32 at 67 TFLOP/s, mma at %s) + products %.4g ms + "
                "launches %.4g ms (%s) + copies %.4g ms (PCIe ~50 "
                "GB/s, 10 us each)%s",
                e.total() * 1e3, e.kernels * 1e3, e.arithmetic * 1e3,
                e.bf16 ? "BF16's 989" : "TF32's 494", e.products * 1e3,
                e.launches * 1e3,
                e.graphs ? "1 us each in a CUDA graph, 10 us a graph, 3 us "
                           "outside"
                         : "3 us each",
                e.copies * 1e3, collectives.c_str());
  return text;
}

bool mixrt::cudaProfileWanted() {
  return readSwitch("MIXRT_CUDA_PROFILE",
                    "print what the CUDA device did in each training step, "
                    "with an H200 estimate",
                    "")
      .value_or(false);
}
