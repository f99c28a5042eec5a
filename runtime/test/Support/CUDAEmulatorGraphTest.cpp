//===- CUDAEmulatorGraphTest.cpp - Stream capture and CUDA graphs ---------===//
//
// The emulator's stream capture and graphs (runtime/emulator/Graph.c) and
// the support code's use of them (mixrt_device_begin_graph), checked
// against values computed here:
//  - work queued on a capturing stream (a launch, a memset, a copy on the
//    device) does not run; each launch of the graph runs it, in order,
//    with the parameter values of the capture and the device memory of
//    the moment;
//  - what a graph cannot replay is refused during a capture and
//    invalidates it, as the driver does: a copy of host memory, an
//    allocation, a free and a synchronization (RELAXED allows the
//    allocation), and work on the legacy stream;
//  - through the support code: an entry point's first call runs its host
//    code, its second is captured and run, the third launches the graph
//    without the host code, and a call with other device arguments is
//    captured again; its profile counts a replayed call as the call;
//  - a training step (mixrt_device_begin_step): the calls of two entry
//    points, each called once before, captured as one graph, and the later
//    steps one launch of it without the host code.
//
//===----------------------------------------------------------------------===//

#include "mixemu/Emulator.h"
#include "mixrt/PackageABI.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *s, void **params,
                      void **extra, size_t paramsCount);
void *mgpuMemAlloc(uint64_t size, CUstream s, bool isHostShared);
void mgpuMemFree(void *ptr, CUstream s);
}

namespace {

/// scale_add(x, y, n, a): y[i] += a x[i] for i < n (a an integer, so the
/// results are exact).
void scaleAdd(void **params, const MixEmuThread *t) {
  const float *x = *static_cast<float **>(params[0]);
  float *y = *static_cast<float **>(params[1]);
  int64_t n = *static_cast<int64_t *>(params[2]);
  int64_t a = *static_cast<int64_t *>(params[3]);
  const int64_t *ids = t->ids;
  int64_t i =
      ids[MIXEMU_ID_BID_X] * ids[MIXEMU_ID_BDIM_X] + ids[MIXEMU_ID_TID_X];
  if (i < n)
    y[i] += float(a) * x[i];
}

char kImage[] = MIXEMU_IMAGE_MAGIC;

CUfunction setUp() {
  static CUfunction function = nullptr;
  if (function)
    return function;
  CUdevice device;
  CUcontext context;
  CUmodule module;
  EXPECT_EQ(cuInit(0), CUDA_SUCCESS);
  EXPECT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
  EXPECT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
  EXPECT_EQ(mixemu_register_kernel("scale_add", scaleAdd, 4), 0);
  EXPECT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&function, module, "scale_add"), CUDA_SUCCESS);
  return function;
}

std::vector<float> read(CUdeviceptr p, size_t n) {
  std::vector<float> host(n);
  EXPECT_EQ(cuMemcpyDtoHAsync(host.data(), p, n * sizeof(float), nullptr),
            CUDA_SUCCESS);
  return host;
}

void write(CUdeviceptr p, const std::vector<float> &host) {
  EXPECT_EQ(
      cuMemcpyHtoDAsync(p, host.data(), host.size() * sizeof(float), nullptr),
      CUDA_SUCCESS);
}

TEST(CUDAEmulatorGraph, CapturedWorkRunsAtEachLaunchOfTheGraph) {
  CUfunction scale = setUp();
  const int64_t n = 300; // 3 blocks of 128, the last one partly idle
  CUdeviceptr x, y, z;
  ASSERT_EQ(cuMemAlloc(&x, n * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&y, n * sizeof(float)), CUDA_SUCCESS);
  ASSERT_EQ(cuMemAlloc(&z, n * sizeof(float)), CUDA_SUCCESS);
  std::vector<float> xs(n);
  for (int64_t i = 0; i < n; ++i)
    xs[i] = float(i) - 7;
  write(x, xs);
  write(y, std::vector<float>(n, -1.0f));
  write(z, std::vector<float>(n, -1.0f));
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

  // y = 0; y += 3 x; z = y; y += 3 x: y = 6 x and z = 3 x when it runs.
  int64_t count = n, a = 3;
  void *params[] = {&x, &y, &count, &a};
  uint64_t launchesBefore = mixemu_profile()->launches;
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  CUstreamCaptureStatus status;
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  ASSERT_EQ(cuMemsetD32Async(y, 0, n, stream), CUDA_SUCCESS);
  ASSERT_EQ(
      cuLaunchKernel(scale, 3, 1, 1, 128, 1, 1, 0, stream, params, nullptr),
      CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyDtoDAsync(z, y, n * sizeof(float), stream), CUDA_SUCCESS);
  ASSERT_EQ(
      cuLaunchKernel(scale, 3, 1, 1, 128, 1, 1, 0, stream, params, nullptr),
      CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  ASSERT_NE(graph, nullptr);
  // Nothing ran: y and z hold what they held.
  EXPECT_EQ(mixemu_profile()->launches, launchesBefore);
  EXPECT_EQ(read(y, n), std::vector<float>(n, -1.0f));
  EXPECT_EQ(read(z, n), std::vector<float>(n, -1.0f));

  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS); // exec keeps the nodes
  // The parameters' values were copied at the capture.
  a = 1000;
  count = 1;
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  EXPECT_EQ(mixemu_profile()->launches, launchesBefore + 2);
  std::vector<float> ys = read(y, n), zs = read(z, n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ys[i], 6 * xs[i]) << "y[" << i << "]";
    ASSERT_EQ(zs[i], 3 * xs[i]) << "z[" << i << "]";
  }
  // Device memory is read when the graph runs.
  for (float &v : xs)
    v = 2 * v + 1;
  write(x, xs);
  ASSERT_EQ(cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ys = read(y, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(ys[i], 6 * xs[i]) << "y[" << i << "]";
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  for (CUdeviceptr p : {x, y, z})
    EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
}

/// Begins a capture on \p stream, runs \p call, which must fail with
/// \p expected, and checks that the capture is invalidated: its end gives
/// no graph.
void expectInvalidates(CUstream stream, CUstreamCaptureMode mode,
                       CUresult expected,
                       const std::function<CUresult()> &call) {
  ASSERT_EQ(cuStreamBeginCapture(stream, mode), CUDA_SUCCESS);
  EXPECT_EQ(call(), expected) << mixemu_last_error();
  CUstreamCaptureStatus status;
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CUgraph graph = reinterpret_cast<CUgraph>(1);
  EXPECT_EQ(cuStreamEndCapture(stream, &graph),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
  ASSERT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
}

TEST(CUDAEmulatorGraph, WhatAGraphCannotReplayInvalidatesTheCapture) {
  CUfunction scale = setUp();
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr d;
  ASSERT_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
  float host[16] = {};
  const CUstreamCaptureMode global = CU_STREAM_CAPTURE_MODE_GLOBAL;
  const CUresult unsupported = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::string why;
  expectInvalidates(stream, global, unsupported, [&] {
    CUresult result = cuMemcpyHtoDAsync(d, host, sizeof host, stream);
    why = mixemu_last_error();
    return result;
  });
  EXPECT_NE(why.find("the host memory is pageable, which a graph cannot "
                     "copy"),
            std::string::npos)
      << why;
  expectInvalidates(stream, global, unsupported, [&] {
    return cuMemcpyDtoHAsync(host, d, sizeof host, stream);
  });
  expectInvalidates(stream, global, unsupported,
                    [&] { return cuStreamSynchronize(stream); });
  expectInvalidates(stream, global, unsupported,
                    [&] { return cuStreamQuery(stream); });
  CUdeviceptr more = 0;
  expectInvalidates(stream, global, unsupported,
                    [&] { return cuMemAlloc(&more, 64); });
  expectInvalidates(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, unsupported,
                    [&] { return cuMemFree(d); });
  int64_t count = 1, a = 1;
  void *params[] = {&d, &d, &count, &a};
  expectInvalidates(stream, global, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, [&] {
    return cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr);
  });
  // Work queued after the capture is invalidated is refused too.
  expectInvalidates(stream, global, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, [&] {
    cuStreamSynchronize(stream);
    return cuMemsetD32Async(d, 0, 16, stream);
  });
  // d is still allocated (the free was refused), and RELAXED allows an
  // allocation and a free.
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
            CUDA_SUCCESS);
  EXPECT_EQ(cuMemAlloc(&more, 64), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(more), CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  // An end without a beginning, and a second beginning.
  EXPECT_EQ(cuStreamEndCapture(stream, &graph),
            CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  ASSERT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_ILLEGAL_STATE);
  ASSERT_EQ(cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFree(d), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
}

/// A device buffer holding \p values.
void *deviceCopy(const std::vector<float> &values) {
  void *device = mixrt_device_alloc(values.size() * sizeof(float));
  EXPECT_EQ(
      mixrt_device_upload(device, values.data(), values.size() * sizeof(float)),
      0);
  return device;
}

/// Checks that the device buffer \p device holds factor x xs[i] exactly.
void expectMultiple(const void *device, const std::vector<float> &xs,
                    float factor, const char *name) {
  std::vector<float> ys(xs.size());
  ASSERT_EQ(mixrt_device_download(ys.data(), device, ys.size() * sizeof(float)),
            0);
  for (size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(ys[i], factor * xs[i]) << name << "[" << i << "]";
}

/// One call of a one-kernel "entry point" through the support code, as
/// the runtime makes it: y += a x over n floats, where args = {x, y}.
/// Returns whether the graph ran instead of the host code.
/// The entry point's host code: y += a x over n floats, args = {x, y}.
void runHostCode(void **args, int64_t n, int64_t a) {
  // A buffer of the memory plan, as the lowered code allocates one.
  mgpuMemFree(mgpuMemAlloc(64, nullptr, false), nullptr);
  void *function = mgpuModuleGetFunction(
      mgpuModuleLoad(kImage, sizeof kImage - 1), "scale_add");
  void *params[] = {&args[0], &args[1], &n, &a};
  mgpuLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr,
                   params, nullptr, 4);
}

bool callEntry(int entry, void **args, int64_t n, int64_t a,
               int *hostCodeRuns) {
  bool replayed = mixrt_device_begin_graph(entry, args, 2) == 1;
  if (!replayed) {
    ++*hostCodeRuns;
    runHostCode(args, n, a);
  }
  EXPECT_EQ(mixrt_device_end(), 0) << mixrt_device_error();
  return replayed;
}

TEST(CUDAEmulatorGraph, LaterCallsOfAnEntryPointLaunchItsGraph) {
  setUp();
  const int64_t n = 200;
  const int entry = 9; // no other test plans it
  std::vector<float> xs(n);
  for (int64_t i = 0; i < n; ++i)
    xs[i] = float(i % 17) - 5;
  std::vector<float> zeros(n, 0.0f);
  void *x = deviceCopy(xs), *y = deviceCopy(zeros), *other = deviceCopy(zeros);
  void *args[] = {x, y};
  int hostCodeRuns = 0;
  // 1: plans the memory; 2: captured, then run; 3 and 4: the graph.
  EXPECT_FALSE(callEntry(entry, args, n, 2, &hostCodeRuns));
  EXPECT_FALSE(callEntry(entry, args, n, 2, &hostCodeRuns));
  EXPECT_TRUE(callEntry(entry, args, n, 2, &hostCodeRuns));
  EXPECT_TRUE(callEntry(entry, args, n, 2, &hostCodeRuns));
  EXPECT_EQ(hostCodeRuns, 2);
  expectMultiple(y, xs, 8, "y");
  // Other arguments: captured again, and that graph runs on them.
  void *moved[] = {x, other};
  EXPECT_FALSE(callEntry(entry, moved, n, 1, &hostCodeRuns));
  EXPECT_TRUE(callEntry(entry, moved, n, 1, &hostCodeRuns));
  EXPECT_EQ(hostCodeRuns, 3);
  expectMultiple(other, xs, 2, "other");
  expectMultiple(y, xs, 8, "y");
  for (void *p : {x, y, other})
    mixrt_device_free(p);
  EXPECT_STREQ(mixrt_device_error(), "");
}

/// The two entry points' calls of a step: y += 2 x (entry 10), then
/// z += 3 y (entry 11).
void callBoth(void **first, void **second, int64_t n) {
  mixrt_device_begin(10);
  runHostCode(first, n, 2);
  EXPECT_EQ(mixrt_device_end(), 0) << mixrt_device_error();
  mixrt_device_begin(11);
  runHostCode(second, n, 3);
  EXPECT_EQ(mixrt_device_end(), 0) << mixrt_device_error();
}

/// A step of the two entry points, as the runtime's runStep makes it. Returns
/// whether the step's graph ran instead of the host code.
bool runStep(void **first, void **second, int64_t n, int *hostCodeRuns) {
  void *key[] = {first[0], first[1], second[0], second[1]};
  int started = mixrt_device_begin_step(key, 4);
  EXPECT_GE(started, 0) << mixrt_device_error();
  if (started == 0) {
    ++*hostCodeRuns;
    callBoth(first, second, n);
  }
  EXPECT_EQ(mixrt_device_end_step(), 0) << mixrt_device_error();
  return started == 1;
}

TEST(CUDAEmulatorGraph, AStepOfTwoEntryPointsIsOneGraph) {
  setUp();
  const int64_t n = 150;
  std::vector<float> xs(n), zeros(n, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    xs[i] = float(i % 13) - 4;
  void *x = deviceCopy(xs), *y = deviceCopy(zeros), *z = deviceCopy(zeros);
  void *first[] = {x, y}, *second[] = {y, z};
  // The first step: each entry point's first call (its memory planned).
  int hostCodeRuns = 0;
  callBoth(first, second, n);
  // Then captured as one graph, and launched: after step k, y = 2 k x and
  // z = 3 (2 + 4 + ... + 2 k) x = 3 k (k + 1) x.
  EXPECT_FALSE(runStep(first, second, n, &hostCodeRuns));
  EXPECT_TRUE(runStep(first, second, n, &hostCodeRuns));
  EXPECT_TRUE(runStep(first, second, n, &hostCodeRuns));
  EXPECT_EQ(hostCodeRuns, 1);
  expectMultiple(y, xs, 8, "y");
  expectMultiple(z, xs, 60, "z");
  for (void *p : {x, y, z})
    mixrt_device_free(p);
  EXPECT_STREQ(mixrt_device_error(), "");
}

} // namespace
