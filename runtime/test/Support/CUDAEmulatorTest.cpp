//===- CUDAEmulatorTest.cpp - The CUDA emulator, under the support code ---===//
//
// Links the CUDA emulator (runtime/emulator) with the packages' CUDA
// support code (runtime/support/CUDASupport.c) compiled against it, as an
// emulated package contains them, and checks, against values computed
// here by hand or in double precision:
//  - device memory: allocations, copies and memsets round trip; the
//    memory type of host and device pointers; copies that leave their
//    allocation, double frees and host pointers into device memory are
//    errors naming the allocation;
//  - kernels: a kernel written here, registered with the emulator, runs
//    over every block and thread through the support code's own
//    mgpuModuleLoad, mgpuModuleGetFunction and mgpuLaunchKernel, in the
//    documented order; launches beyond an H200's limits, a wrong parameter
//    count, a failed check in a kernel and a barrier are errors that reach
//    mixrt_device_error with the kernel's name (and a kernel's fault is
//    sticky, as on a device);
//  - products: mixrt_cuda_matmul and mixrt_cuda_batch_matmul through the
//    emulated cuBLASLt, with A and B rounded to TF32 (ties away from zero)
//    as the tensor cores round them.
// The support code keeps its first error for good, so every test that
// makes one runs in a death test's child process.
//
//===----------------------------------------------------------------------===//

#include "mixemu/Emulator.h"
#include "mixrt/PackageABI.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

// What the lowered host code calls (CUDASupport.c; not in PackageABI.h).
extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *s, void **params,
                      void **extra, size_t paramsCount);
void mgpuMemcpy(void *dst, void *src, size_t size, void *s);
void *mgpuMemAlloc(uint64_t size, CUstream s, bool isHostShared);
void mgpuMemFree(void *ptr, CUstream s);
}

namespace {

//===----------------------------------------------------------------------===//
// Kernels, as the compiler emits them: one thread per call.
//===----------------------------------------------------------------------===//

int64_t globalThread(const int64_t *ids) {
  return ids[MIXEMU_ID_BID_X] * ids[MIXEMU_ID_BDIM_X] + ids[MIXEMU_ID_TID_X];
}

/// double_it(x, y, n): y[i] = 2 x[i] for i < n.
void doubleIt(void **params, const int64_t *ids) {
  const float *x = *static_cast<float **>(params[0]);
  float *y = *static_cast<float **>(params[1]);
  int64_t n = *static_cast<int64_t *>(params[2]);
  int64_t i = globalThread(ids);
  if (i < n)
    y[i] = 2 * x[i];
}

/// record_order(out): out[the thread's place in the grid] = how many
/// threads ran before it, so out[i] == i when the emulator runs blocks in
/// order and each block's threads x fastest.
int64_t threadsRun;
void recordOrder(void **params, const int64_t *ids) {
  int64_t *out = *static_cast<int64_t **>(params[0]);
  const int64_t *d = ids;
  int64_t block =
      d[MIXEMU_ID_BID_X] +
      d[MIXEMU_ID_GDIM_X] *
          (d[MIXEMU_ID_BID_Y] + d[MIXEMU_ID_GDIM_Y] * d[MIXEMU_ID_BID_Z]);
  int64_t thread =
      d[MIXEMU_ID_TID_X] +
      d[MIXEMU_ID_BDIM_X] *
          (d[MIXEMU_ID_TID_Y] + d[MIXEMU_ID_BDIM_Y] * d[MIXEMU_ID_TID_Z]);
  int64_t perBlock =
      d[MIXEMU_ID_BDIM_X] * d[MIXEMU_ID_BDIM_Y] * d[MIXEMU_ID_BDIM_Z];
  out[block * perBlock + thread] = threadsRun++;
}

/// fails_at_5(unused): the bounds check of thread 5 fails. (The support
/// code takes a kernel without parameters for a calling-convention error.)
void failsAt5(void **, const int64_t *ids) {
  if (globalThread(ids) == 5)
    mixemu_fail("kernel fails_at_5: memref.store index 5 out of [0, 5)");
}

/// uses_barrier(unused): __syncthreads.
void usesBarrier(void **, const int64_t *) { mixemu_barrier(); }

/// The kernels' image in an emulated package.
char kImage[] = MIXEMU_IMAGE_MAGIC;

/// The driver's state the direct tests need (the support code makes the
/// same calls when it first needs the device), and the test's kernels.
void setUpEmulator() {
  static bool done = false;
  if (done)
    return;
  CUdevice device;
  CUcontext context;
  ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
  ASSERT_EQ(cuDeviceGet(&device, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuDevicePrimaryCtxRetain(&context, device), CUDA_SUCCESS);
  ASSERT_EQ(cuCtxSetCurrent(context), CUDA_SUCCESS);
  ASSERT_EQ(mixemu_register_kernel("double_it", doubleIt, 3), 0);
  ASSERT_EQ(mixemu_register_kernel("record_order", recordOrder, 1), 0);
  ASSERT_EQ(mixemu_register_kernel("fails_at_5", failsAt5, 1), 0);
  ASSERT_EQ(mixemu_register_kernel("uses_barrier", usesBarrier, 1), 0);
  done = true;
}

/// The message cuGetErrorString gives for `status`.
std::string errorString(CUresult status) {
  const char *text = nullptr;
  cuGetErrorString(status, &text);
  return text ? text : "";
}

/// A device buffer of the direct tests.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  explicit DeviceBuffer(size_t size) {
    EXPECT_EQ(cuMemAlloc(&ptr, size), CUDA_SUCCESS);
  }
  ~DeviceBuffer() {
    if (ptr)
      cuMemFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

/// Device memory through the support code (mixrt_device_*).
template <typename T> void *upload(const std::vector<T> &host) {
  void *device = mixrt_device_alloc(host.size() * sizeof(T));
  EXPECT_NE(device, nullptr) << mixrt_device_error();
  EXPECT_EQ(mixrt_device_upload(device, host.data(), host.size() * sizeof(T)),
            0)
      << mixrt_device_error();
  return device;
}
template <typename T> std::vector<T> download(const void *device, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(mixrt_device_download(host.data(), device, n * sizeof(T)), 0)
      << mixrt_device_error();
  return host;
}

/// Runs `body` in a death test's child, then prints the support code's
/// error to stderr for the test's pattern and exits with 0.
[[noreturn]] void reportAndExit(const std::function<void()> &body) {
  body();
  std::fprintf(stderr, "device error: %s\n", mixrt_device_error());
  std::fflush(stderr);
  std::_Exit(0);
}

/// The support code's handle of a registered kernel.
void *supportKernel(const char *name) {
  void *module = mgpuModuleLoad(kImage, sizeof kImage - 1);
  EXPECT_NE(module, nullptr) << mixrt_device_error();
  void *function = mgpuModuleGetFunction(module, name);
  EXPECT_NE(function, nullptr) << mixrt_device_error();
  return function;
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

TEST(CUDAEmulator, AllocCopyRoundTrip) {
  setUpEmulator();
  const size_t n = 1000;
  std::vector<uint8_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i)
    in[i] = uint8_t(i * 7 + 3);
  DeviceBuffer a(n), b(n + 5);
  EXPECT_EQ(a.ptr % 256, 0u);
  EXPECT_EQ(b.ptr % 256, 0u);
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, in.data(), n, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoDAsync(b.ptr + 5, a.ptr, n, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyDtoHAsync(out.data(), b.ptr + 5, n, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(out, in);

  // Words of 0xdeadbeef over all but the first of 250.
  EXPECT_EQ(cuMemsetD32Async(a.ptr + 4, 0xdeadbeefu, 249, nullptr),
            CUDA_SUCCESS);
  std::vector<uint32_t> words(250);
  EXPECT_EQ(cuMemcpyDtoHAsync(words.data(), a.ptr, 1000, nullptr),
            CUDA_SUCCESS);
  uint32_t first;
  std::memcpy(&first, in.data(), 4);
  EXPECT_EQ(words[0], first);
  for (size_t i = 1; i < 250; ++i)
    ASSERT_EQ(words[i], 0xdeadbeefu) << "word " << i;

  // Streams are handles; everything is done when queued.
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, in.data(), n, stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamQuery(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_INVALID_HANDLE);

  // Through the support code.
  std::vector<float> values = {1.5f, -2.25f, 3.0f, 1e-3f, 7.0f};
  void *device = upload(values);
  EXPECT_EQ(download<float>(device, values.size()), values);
  mixrt_device_free(device);
  EXPECT_STREQ(mixrt_device_error(), "");
}

TEST(CUDAEmulator, PointerMemoryType) {
  setUpEmulator();
  DeviceBuffer a(100);
  CUmemorytype type = CU_MEMORYTYPE_HOST;
  EXPECT_EQ(
      cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, a.ptr),
      CUDA_SUCCESS);
  EXPECT_EQ(type, CU_MEMORYTYPE_DEVICE);
  type = CU_MEMORYTYPE_HOST;
  EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  a.ptr + 99),
            CUDA_SUCCESS);
  EXPECT_EQ(type, CU_MEMORYTYPE_DEVICE);

  // Host memory (a constant, the stack, the heap), the byte past the end
  // of an allocation and freed memory are not device memory.
  static const float constant[4] = {1, 2, 3, 4};
  int local = 0;
  std::vector<double> heap(16);
  for (uintptr_t p : {uintptr_t(constant), uintptr_t(&local),
                      uintptr_t(heap.data()), uintptr_t(a.ptr + 100)})
    EXPECT_EQ(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CUdeviceptr(p)),
              CUDA_ERROR_INVALID_VALUE)
        << std::hex << p;
  CUdeviceptr freed;
  ASSERT_EQ(cuMemAlloc(&freed, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree(freed), CUDA_SUCCESS);
  EXPECT_EQ(
      cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, freed),
      CUDA_ERROR_INVALID_VALUE);

  // So the support code's mgpuMemcpy copies a host constant to the device
  // and device memory within it.
  void *d1 = mixrt_device_alloc(sizeof constant);
  void *d2 = mixrt_device_alloc(sizeof constant);
  mgpuMemcpy(d1, const_cast<float *>(constant), sizeof constant, nullptr);
  mgpuMemcpy(d2, d1, sizeof constant, nullptr);
  EXPECT_EQ(download<float>(d2, 4), std::vector<float>(constant, constant + 4));
  mixrt_device_free(d1);
  mixrt_device_free(d2);
  EXPECT_STREQ(mixrt_device_error(), "");
}

TEST(CUDAEmulator, CopiesOutsideAnAllocationAreErrors) {
  setUpEmulator();
  std::vector<uint8_t> host(2000, 1);
  DeviceBuffer a(1000);
  // One byte too many.
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, host.data(), 1001, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  std::string message = errorString(CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(message.find("cuMemcpyHtoDAsync destination"), std::string::npos)
      << message;
  EXPECT_NE(message.find("bytes [0, 1001) of allocation #"), std::string::npos)
      << message;
  EXPECT_NE(message.find("(1000 bytes at 0x"), std::string::npos) << message;
  EXPECT_NE(message.find("ends 1 bytes past"), std::string::npos) << message;
  // From inside, over the end.
  EXPECT_EQ(cuMemcpyDtoHAsync(host.data(), a.ptr + 996, 8, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  // Between two allocations: into the guard after the first.
  EXPECT_EQ(cuMemcpyDtoDAsync(a.ptr + 1004, a.ptr, 4, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  message = errorString(CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(message.find("4 bytes past the end of allocation #"),
            std::string::npos)
      << message;
  // A host pointer that is device memory.
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, reinterpret_cast<void *>(a.ptr + 500), 8,
                              nullptr),
            CUDA_ERROR_INVALID_VALUE);
  // A misaligned memset.
  EXPECT_EQ(cuMemsetD32Async(a.ptr + 2, 0, 4, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  // Freed memory, and a double free.
  CUdeviceptr freed;
  ASSERT_EQ(cuMemAlloc(&freed, 64), CUDA_SUCCESS);
  ASSERT_EQ(cuMemFree(freed), CUDA_SUCCESS);
  EXPECT_EQ(cuMemcpyHtoDAsync(freed, host.data(), 4, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree(freed), CUDA_ERROR_INVALID_VALUE);
  message = errorString(CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(message.find("not the start of a live allocation"),
            std::string::npos)
      << message;
  // None of these is sticky: the context still works.
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, host.data(), 1000, nullptr), CUDA_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

TEST(CUDAEmulator, KernelRunsThroughTheSupportCode) {
  setUpEmulator();
  const int64_t n = 1000; // 8 blocks of 128, the last one partly idle
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = 0.25f * float(i) - 100.0f;
  void *dx = upload(x);
  void *dy = mixrt_device_alloc(n * sizeof(float));
  int64_t count = n;
  void *params[] = {&dx, &dy, &count};
  void *function = supportKernel("double_it");
  MixEmuProfile before = *mixemu_profile();
  mgpuLaunchKernel(function, 8, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr,
                   3);
  ASSERT_STREQ(mixrt_device_error(), "");
  EXPECT_EQ(mixemu_profile()->launches, before.launches + 1);
  EXPECT_EQ(mixemu_profile()->threads, before.threads + 8 * 128);
  std::vector<float> y = download<float>(dy, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2 * (0.25f * float(i) - 100.0f)) << "y[" << i << "]";
  mixrt_device_free(dx);
  mixrt_device_free(dy);
  EXPECT_STREQ(mixrt_device_error(), "");
}

TEST(CUDAEmulator, GridRunsInOrder) {
  setUpEmulator();
  CUmodule module;
  CUfunction function;
  ASSERT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&function, module, "record_order"),
            CUDA_SUCCESS);
  const int64_t total = (2 * 3 * 2) * (4 * 2 * 3);
  DeviceBuffer out(total * sizeof(int64_t));
  void *params[] = {&out.ptr};
  threadsRun = 0;
  ASSERT_EQ(
      cuLaunchKernel(function, 2, 3, 2, 4, 2, 3, 0, nullptr, params, nullptr),
      CUDA_SUCCESS);
  std::vector<int64_t> order(total, -1);
  ASSERT_EQ(cuMemcpyDtoHAsync(order.data(), out.ptr, total * sizeof(int64_t),
                              nullptr),
            CUDA_SUCCESS);
  for (int64_t i = 0; i < total; ++i)
    ASSERT_EQ(order[i], i);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

TEST(CUDAEmulator, LaunchesBeyondTheDeviceAreRejected) {
  setUpEmulator();
  CUmodule module;
  CUfunction function;
  ASSERT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
  ASSERT_EQ(cuModuleGetFunction(&function, module, "fails_at_5"), CUDA_SUCCESS);
  struct Launch {
    unsigned g[3], b[3], smem;
    const char *message;
  };
  const Launch launches[] = {
      {{1, 1, 1}, {2048, 1, 1}, 0, "2048 threads per block"},
      {{1, 1, 1}, {32, 32, 2}, 0, "2048 threads per block"},
      {{1, 1, 1}, {1, 1, 65}, 0, "blocks of (1, 1, 65) threads exceed"},
      {{1, 65536, 1}, {1, 1, 1}, 0, "a grid of (1, 65536, 1) blocks"},
      {{1, 1, 65536}, {1, 1, 1}, 0, "a grid of (1, 1, 65536) blocks"},
      {{0, 1, 1}, {1, 1, 1}, 0, "an empty dimension"},
      {{1, 1, 1}, {1, 0, 1}, 0, "an empty dimension"},
      {{1, 1, 1}, {1, 1, 1}, 48 * 1024 + 1, "49153 bytes of dynamic shared"},
  };
  int64_t unused = 0;
  void *params[] = {&unused};
  for (const Launch &l : launches) {
    EXPECT_EQ(cuLaunchKernel(function, l.g[0], l.g[1], l.g[2], l.b[0], l.b[1],
                             l.b[2], l.smem, nullptr, params, nullptr),
              CUDA_ERROR_INVALID_VALUE)
        << l.message;
    std::string message = errorString(CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(message.rfind("kernel fails_at_5: ", 0), 0u) << message;
    EXPECT_NE(message.find(l.message), std::string::npos) << message;
  }
  // At the limits, threads 0 to 4 of one block run (and none fails).
  EXPECT_EQ(cuLaunchKernel(function, 1, 1, 1, 5, 1, 1, 48 * 1024, nullptr,
                           params, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
}

TEST(CUDAEmulator, KernelsAndImagesAreFound) {
  setUpEmulator();
  CUmodule module;
  CUfunction function;
  const char cubin[] = "\x7f"
                       "ELF";
  EXPECT_EQ(cuModuleLoadData(&module, cubin), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(errorString(CUDA_ERROR_INVALID_IMAGE).find("--emulate"),
            std::string::npos);
  ASSERT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&function, module, "no_such_kernel"),
            CUDA_ERROR_NOT_FOUND);
  EXPECT_NE(errorString(CUDA_ERROR_NOT_FOUND).find("no kernel no_such_kernel"),
            std::string::npos);
  ASSERT_EQ(cuModuleGetFunction(&function, module, "double_it"), CUDA_SUCCESS);
  CUfunction again;
  ASSERT_EQ(cuModuleGetFunction(&again, module, "double_it"), CUDA_SUCCESS);
  EXPECT_EQ(again, function);
  const char *name = nullptr;
  ASSERT_EQ(cuFuncGetName(&name, function), CUDA_SUCCESS);
  EXPECT_STREQ(name, "double_it");
  // Three parameters of 8 bytes.
  size_t offset = 0, size = 0;
  EXPECT_EQ(cuFuncGetParamInfo(function, 2, &offset, &size), CUDA_SUCCESS);
  EXPECT_EQ(offset, 16u);
  EXPECT_EQ(size, 8u);
  EXPECT_EQ(cuFuncGetParamInfo(function, 3, &offset, &size),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleUnload(module), CUDA_ERROR_INVALID_HANDLE);
}

TEST(CUDAEmulatorDeathTest, KernelFaultNamesTheKernelAndSticks) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                void *function = supportKernel("fails_at_5");
                // Threads 0 to 3 of block 0 pass; block 1's thread 1 fails.
                int64_t unused = 0;
                void *params[] = {&unused};
                mgpuLaunchKernel(function, 3, 1, 1, 4, 1, 1, 0, nullptr, params,
                                 nullptr, 1);
                // Every later call fails with the fault, as on a device.
                CUdeviceptr p;
                CUresult later = cuMemAlloc(&p, 16);
                std::fprintf(stderr, "later: %d %s\n", int(later),
                             errorString(later).c_str());
              }),
              ::testing::ExitedWithCode(0),
              "later: 700 kernel fails_at_5: memref.store index 5 out of "
              "\\[0, 5\\) \\(block 1, thread 1\\).*device error: "
              "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS \\(kernel "
              "fails_at_5: memref.store index 5 out of \\[0, 5\\) \\(block "
              "1, thread 1\\)\\)");
}

// The first call of an entry point allocates for real and plans one pool;
// a later call that allocates what the plan does not hold is an error, as
// it would be on the device (no allocation inside a step).
TEST(CUDAEmulatorDeathTest, AllocationBeyondThePlanIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                mixrt_device_begin(0);
                mgpuMemFree(mgpuMemAlloc(64, nullptr, false), nullptr);
                if (mixrt_device_end() != 0)
                  return;
                std::fprintf(stderr, "planned\n");
                mixrt_device_begin(0);
                void *same = mgpuMemAlloc(64, nullptr, false);
                std::fprintf(stderr, "from the pool: %s\n",
                             same ? "yes" : "no");
                // One buffer more than the first call had.
                void *extra = mgpuMemAlloc(64, nullptr, false);
                std::fprintf(stderr, "extra: %p\n", extra);
                mixrt_device_end();
              }),
              ::testing::ExitedWithCode(0),
              "planned.*from the pool: yes.*extra: \\(nil\\).*device "
              "error: device memory plan: this call allocated differently "
              "from the first call of the entry point");
}

TEST(CUDAEmulatorDeathTest, FewerAllocationsThanThePlanAreAnError) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                mixrt_device_begin(1);
                mgpuMemFree(mgpuMemAlloc(256, nullptr, false), nullptr);
                mixrt_device_end();
                mixrt_device_begin(1);
                mixrt_device_end();
              }),
              ::testing::ExitedWithCode(0),
              "device error: device memory plan: this call allocated fewer "
              "buffers than the first call");
}

// Between the emulator's calls, device memory is inaccessible: host code
// that dereferences a device pointer (which on a GPU reads garbage or
// faults) is stopped, and the address and its allocation are named.
TEST(CUDAEmulatorDeathTest, HostDereferencingDeviceMemoryIsReported) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan handles SIGSEGV itself";
#endif
#endif
  setUpEmulator();
  EXPECT_DEATH(
      {
        CUdeviceptr p = 0;
        float one = 1;
        if (cuMemAlloc(&p, 64) != CUDA_SUCCESS ||
            cuMemcpyHtoDAsync(p, &one, sizeof one, nullptr) != CUDA_SUCCESS)
          std::_Exit(0);
        // Through the emulator, the value is there...
        float back = 0;
        if (cuMemcpyDtoHAsync(&back, p, sizeof back, nullptr) != CUDA_SUCCESS ||
            back != 1)
          std::_Exit(0);
        // ...but the host may not read it itself.
        volatile float *direct = reinterpret_cast<volatile float *>(p);
        std::fprintf(stderr, "read %g\n", double(*direct));
      },
      "the host dereferenced device memory at 0x[0-9a-f]+ \\(byte 0 of "
      "allocation #[0-9]+ \\(64 bytes");
}

TEST(CUDAEmulatorDeathTest, OversizedBlockIsRejected) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                void *function = supportKernel("double_it");
                void *params[3] = {};
                mgpuLaunchKernel(function, 1, 1, 1, 2048, 1, 1, 0, nullptr,
                                 params, nullptr, 3);
              }),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_INVALID_VALUE "
              "\\(kernel double_it: 2048 threads per block \\(2048, 1, 1\\) "
              "exceed the device's 1024\\)");
}

TEST(CUDAEmulatorDeathTest, WrongParameterCountIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                void *function = supportKernel("double_it");
                void *params[3] = {};
                mgpuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, nullptr,
                                 params, nullptr, 2);
              }),
              ::testing::ExitedWithCode(0),
              "device error: mgpuLaunchKernel: kernel double_it does not "
              "take the 2 parameters the host passes");
}

TEST(CUDAEmulatorDeathTest, BarrierIsNotRunYet) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                void *function = supportKernel("uses_barrier");
                int64_t unused = 0;
                void *params[] = {&unused};
                mgpuLaunchKernel(function, 1, 1, 1, 2, 1, 1, 0, nullptr, params,
                                 nullptr, 1);
              }),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED "
              "\\(kernel uses_barrier uses a barrier, which the emulator "
              "runs only with fibers \\(not yet\\) \\(block 0, thread 0\\)");
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// x rounded to TF32 (a 10-bit mantissa), to nearest with ties away from
/// zero, computed from x's value (not its bits).
double referenceTF32(float x) {
  if (x == 0 || !std::isfinite(x))
    return x;
  int exponent;
  double fraction = std::frexp(double(x), &exponent); // in [0.5, 1)
  // 11 significant bits; std::round rounds halves away from zero.
  return std::ldexp(std::round(std::ldexp(fraction, 11)), exponent - 11);
}

/// A (rows x cols) row-major or transposed matrix with a padded leading
/// dimension, in exactly as many floats as it spans.
struct Matrix {
  int64_t rows, cols, s0, s1;
  std::vector<float> data;
  Matrix(int64_t rows, int64_t cols, bool transposed, float fill)
      : rows(rows), cols(cols), s0(transposed ? 1 : cols + 1),
        s1(transposed ? rows + 2 : 1),
        data((rows - 1) * s0 + (cols - 1) * s1 + 1, fill) {}
  float &at(int64_t i, int64_t j) { return data[i * s0 + j * s1]; }
};

/// C += A B through mixrt_cuda_matmul at `site`, against a double product
/// of the TF32-rounded A and B. Padding in C must stay as it was.
void checkProduct(int64_t site, int64_t m, int64_t k, int64_t n, bool transA,
                  bool transB) {
  setUpEmulator();
  std::mt19937 rng{unsigned(site)};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Matrix a(m, k, transA, 0.0f), b(k, n, transB, 0.0f), c(m, n, false, 42.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      a.at(i, p) = dist(rng);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      b.at(p, j) = dist(rng);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c.at(i, j) = dist(rng);
  void *da = upload(a.data), *db = upload(b.data), *dc = upload(c.data);
  mixrt_cuda_matmul(site, static_cast<float *>(da), 0, m, k, a.s0, a.s1,
                    static_cast<float *>(db), 0, k, n, b.s0, b.s1,
                    static_cast<float *>(dc), 0, m, n, c.s0, c.s1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<float> got = download<float>(dc, c.data.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = c.at(i, j), scale = std::fabs(want);
      for (int64_t p = 0; p < k; ++p) {
        double term = referenceTF32(a.at(i, p)) * referenceTF32(b.at(p, j));
        want += term;
        scale += std::fabs(term);
      }
      ASSERT_NEAR(got[i * c.s0 + j * c.s1], want, 1e-5 * scale)
          << "C[" << i << ", " << j << "], A " << (transA ? "T" : "N") << ", B "
          << (transB ? "T" : "N");
    }
  for (int64_t i = 0; i + 1 < m; ++i) // the padding after each row
    EXPECT_EQ(got[i * c.s0 + n], 42.0f);
  for (void *p : {da, db, dc})
    mixrt_device_free(p);
}

TEST(CUDAEmulator, MatmulIsTheRoundedProduct) {
  checkProduct(/*site=*/0, 5, 7, 3, false, false);
  checkProduct(/*site=*/1, 5, 7, 3, true, false);
  checkProduct(/*site=*/2, 5, 7, 3, false, true);
  checkProduct(/*site=*/3, 6, 9, 4, true, true);
}

TEST(CUDAEmulator, BatchedMatmulIsTheRoundedProduct) {
  setUpEmulator();
  const int64_t batch = 3, m = 4, k = 6, n = 5;
  std::mt19937 rng{7};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // Row-major batches, A's and C's padded apart.
  const int64_t asb = m * k + 3, bsb = k * n, csb = m * n + 1;
  std::vector<float> a(batch * asb), b(batch * bsb), c(batch * csb);
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  for (float &x : c)
    x = dist(rng);
  void *da = upload(a), *db = upload(b), *dc = upload(c);
  mixrt_cuda_batch_matmul(/*site=*/10, static_cast<float *>(da), 0, batch, m, k,
                          asb, k, 1, static_cast<float *>(db), 0, batch, k, n,
                          bsb, n, 1, static_cast<float *>(dc), 0, batch, m, n,
                          csb, n, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<float> got = download<float>(dc, c.size());
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = c[q * csb + i * n + j], scale = std::fabs(want);
        for (int64_t p = 0; p < k; ++p) {
          double term = referenceTF32(a[q * asb + i * k + p]) *
                        referenceTF32(b[q * bsb + p * n + j]);
          want += term;
          scale += std::fabs(term);
        }
        ASSERT_NEAR(got[q * csb + i * n + j], want, 1e-5 * scale)
            << "batch " << q << ", C[" << i << ", " << j << "]";
      }
  for (int64_t q = 0; q < batch; ++q) // the gap after each batch of C
    EXPECT_EQ(got[q * csb + m * n], c[q * csb + m * n]);
  for (void *p : {da, db, dc})
    mixrt_device_free(p);
}

TEST(CUDAEmulator, MatmulRoundsToTF32) {
  setUpEmulator();
  // C (4 x 1) += A (4 x 1) B (1 x 1) with B = 1: C = A, rounded.
  const float ulp = std::ldexp(1.0f, -10); // TF32's, at 1
  std::vector<float> a = {1 + ulp / 4,     // below half an ulp: down
                          1 + ulp / 2,     // a tie: away from zero (not even)
                          -(1 + ulp / 2), 1 + 3 * ulp / 4};
  std::vector<float> b = {1.0f}, c(4, 0.0f);
  void *da = upload(a), *db = upload(b), *dc = upload(c);
  mixrt_cuda_matmul(/*site=*/20, static_cast<float *>(da), 0, 4, 1, 1, 1,
                    static_cast<float *>(db), 0, 1, 1, 1, 1,
                    static_cast<float *>(dc), 0, 4, 1, 1, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<float> got = download<float>(dc, 4);
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], 1 + ulp);
  EXPECT_EQ(got[2], -(1 + ulp));
  EXPECT_EQ(got[3], 1 + ulp);
  for (void *p : {da, db, dc})
    mixrt_device_free(p);
}

TEST(CUDAEmulatorDeathTest, MatmulOutsideItsOperandIsAFault) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                // C is 2 x 2 but its buffer holds 3 floats.
                std::vector<float> a(4, 1.0f), b(4, 1.0f), c(3, 0.0f);
                void *da = upload(a), *db = upload(b), *dc = upload(c);
                mixrt_cuda_matmul(30, static_cast<float *>(da), 0, 2, 2, 2, 1,
                                  static_cast<float *>(db), 0, 2, 2, 2, 1,
                                  static_cast<float *>(dc), 0, 2, 2, 2, 1);
                download<float>(dc, 3);
              }),
              ::testing::ExitedWithCode(0),
              "device error: copying from the device: "
              "CUDA_ERROR_ILLEGAL_ADDRESS \\(cublasLtMatmul: operand C "
              "\\(2 x 2, ld 2, 1 batches 0 apart\\): bytes \\[0, 16\\) of "
              "allocation #[0-9]+ \\(12 bytes at 0x");
}

} // namespace
