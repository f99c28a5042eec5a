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
//    count and a failed check in a kernel are errors that reach
//    mixrt_device_error with the kernel's name (and a kernel's fault is
//    sticky, as on a device);
//  - threads that work together: block sums through shared memory and
//    barriers (on fibers) in blocks of every shape up to 1024 threads;
//    shared memory starts as 0xFF bytes in every block; each shuffle mode
//    against its definition, a warp sum, and a shuffle of a narrower width;
//    and, made on purpose, the mistakes: a barrier some threads do not
//    reach (they returned, or wait at another), a shuffle some lanes do not
//    reach or that lanes beyond its width run, a barrier in a kernel not
//    marked to run on fibers, and a failed check inside a fiber, each named
//    with the kernel, the block and the threads;
//  - products: mixrt_cuda_matmul and mixrt_cuda_batch_matmul through the
//    emulated cuBLASLt, with A and B rounded to TF32 (ties away from zero)
//    as the tensor cores round them;
//  - count-only mode (MIXEMU_COUNT_ONLY): a launch, a product, a memset and
//    copies each way are counted as in the normal mode, but no kernel
//    thread runs, nothing is written to device memory, copies to the host
//    bring zeros, and gigabytes of device memory cost the host none.
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
#include <numeric>
#include <random>
#include <string>
#include <unistd.h>
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
void mgpuMemset32(void *dst, unsigned value, size_t count, void *s);
}

namespace {

//===----------------------------------------------------------------------===//
// Kernels, as the compiler emits them: one thread per call.
//===----------------------------------------------------------------------===//

int64_t globalThread(const MixEmuThread *t) {
  const int64_t *ids = t->ids;
  return ids[MIXEMU_ID_BID_X] * ids[MIXEMU_ID_BDIM_X] + ids[MIXEMU_ID_TID_X];
}

/// double_it(x, y, n): y[i] = 2 x[i] for i < n.
void doubleIt(void **params, const MixEmuThread *t) {
  const float *x = *static_cast<float **>(params[0]);
  float *y = *static_cast<float **>(params[1]);
  int64_t n = *static_cast<int64_t *>(params[2]);
  int64_t i = globalThread(t);
  if (i < n)
    y[i] = 2 * x[i];
}

/// record_order(out): out[the thread's place in the grid] = how many
/// threads ran before it, so out[i] == i when the emulator runs blocks in
/// order and each block's threads x fastest.
int64_t threadsRun;
void recordOrder(void **params, const MixEmuThread *t) {
  int64_t *out = *static_cast<int64_t **>(params[0]);
  const int64_t *d = t->ids;
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
void failsAt5(void **, const MixEmuThread *t) {
  if (globalThread(t) == 5)
    mixemu_fail("kernel fails_at_5: memref.store index 5 out of [0, 5)");
}

/// unmarked_barrier(unused): __syncthreads in a kernel registered without
/// MIXEMU_KERNEL_SYNCHRONIZES, whose threads run one after another.
void unmarkedBarrier(void **, const MixEmuThread *) {
  mixemu_barrier("loc(unmarked)");
}

/// The thread's place in its block, x fastest, and the block's size.
int64_t linearThread(const MixEmuThread *t) {
  const int64_t *d = t->ids;
  return d[MIXEMU_ID_TID_X] +
         d[MIXEMU_ID_BDIM_X] *
             (d[MIXEMU_ID_TID_Y] + d[MIXEMU_ID_BDIM_Y] * d[MIXEMU_ID_TID_Z]);
}
int64_t blockThreads(const MixEmuThread *t) {
  const int64_t *d = t->ids;
  return d[MIXEMU_ID_BDIM_X] * d[MIXEMU_ID_BDIM_Y] * d[MIXEMU_ID_BDIM_Z];
}

/// block_sum(x, sums): sums[b] = the sum of x over block b's threads (a
/// power of two of them, thread i of block b taking x[b n + i]): each
/// thread puts its element in shared memory, then a tree of halving steps
/// with a barrier after each, as a fused reduction does it.
constexpr int64_t kBlockSumShared = 1024 * sizeof(float);
void blockSum(void **params, const MixEmuThread *t) {
  const float *x = *static_cast<float **>(params[0]);
  float *sums = *static_cast<float **>(params[1]);
  float *partial = static_cast<float *>(t->shared);
  int64_t i = linearThread(t), n = blockThreads(t);
  int64_t block = t->ids[MIXEMU_ID_BID_X];
  partial[i] = x[block * n + i];
  mixemu_barrier("loc(block_sum:store)");
  for (int64_t s = n / 2; s > 0; s /= 2) {
    if (i < s)
      partial[i] += partial[i + s];
    mixemu_barrier("loc(block_sum:step)");
  }
  if (i == 0)
    sums[block] = partial[0];
}

/// rotate(x, y): y[i] = x[(i + 1) % n] through shared memory. Without the
/// barrier's wait, thread i would read its neighbour's slot before the
/// neighbour wrote it.
void rotate(void **params, const MixEmuThread *t) {
  const float *x = *static_cast<float **>(params[0]);
  float *y = *static_cast<float **>(params[1]);
  float *slot = static_cast<float *>(t->shared);
  int64_t i = linearThread(t), n = blockThreads(t);
  slot[i] = x[i];
  mixemu_barrier("loc(rotate)");
  y[i] = slot[(i + 1) % n];
}

/// shared_bits(out): out[the thread] = the first word of its block's shared
/// memory and of the dynamic part, before anyone writes them; then writes
/// both (which the next block must not see).
constexpr int64_t kSharedBitsStatic = 20; // the dynamic part starts at 32
void sharedBits(void **params, const MixEmuThread *t) {
  uint32_t *out = *static_cast<uint32_t **>(params[0]);
  auto *shared = static_cast<unsigned char *>(t->shared);
  int64_t i = globalThread(t);
  std::memcpy(&out[3 * i], shared, 4);
  std::memcpy(&out[3 * i + 1], shared + 32, 4);
  out[3 * i + 2] = uint32_t(t->dynamicSharedBytes);
  std::memset(shared, 0x11, 4);
  std::memset(shared + 32, 0x22, 4);
}

/// The mistakes, made on purpose in blocks of 8 threads.
/// divergent_barrier: a barrier inside `if (t < 4)`.
void divergentBarrier(void **, const MixEmuThread *t) {
  if (linearThread(t) < 4)
    mixemu_barrier("loc(\"divergent.mlir\":3:5)");
}
/// two_barriers: threads 0-3 at one barrier, 4-7 at another.
void twoBarriers(void **, const MixEmuThread *t) {
  if (linearThread(t) < 4)
    mixemu_barrier("loc(first)");
  else
    mixemu_barrier("loc(second)");
}
/// fails_in_fiber: after a barrier, thread 5 of block 1 fails its check.
void failsInFiber(void **, const MixEmuThread *t) {
  mixemu_barrier("loc(before)");
  if (t->ids[MIXEMU_ID_BID_X] == 1 && linearThread(t) == 5)
    mixemu_fail("kernel fails_in_fiber: memref.load index 9 out of [0, 8)");
  mixemu_barrier("loc(after)");
}

/// shuffle_modes(out, mode, offset, width): out[2 k], out[2 k + 1] = the
/// value lane k of the first warp gets (lane j gives 1000 + j) and valid;
/// lanes at or above the width do not shuffle.
void shuffleModes(void **params, const MixEmuThread *t) {
  int32_t *out = *static_cast<int32_t **>(params[0]);
  int32_t mode = int32_t(*static_cast<int64_t *>(params[1]));
  int32_t offset = int32_t(*static_cast<int64_t *>(params[2]));
  int32_t width = int32_t(*static_cast<int64_t *>(params[3]));
  int64_t lane = linearThread(t) % 32;
  if (lane >= width)
    return;
  int64_t packed = mixemu_shuffle("loc(shuffle_modes)", mode,
                                  1000 + int32_t(lane), offset, width);
  out[2 * linearThread(t)] = int32_t(packed);
  out[2 * linearThread(t) + 1] = int32_t(packed >> 32);
}

/// warp_sums(x, sums): sums[w] = the sum of warp w's 32 integers, by the
/// butterfly (xor 16, 8, 4, 2, 1); every lane writes it.
void warpSums(void **params, const MixEmuThread *t) {
  const int32_t *x = *static_cast<int32_t **>(params[0]);
  int32_t *sums = *static_cast<int32_t **>(params[1]);
  int64_t i = linearThread(t);
  int32_t v = x[i];
  for (int32_t d = 16; d > 0; d /= 2)
    v +=
        int32_t(mixemu_shuffle("loc(warp_sums)", MIXEMU_SHUFFLE_XOR, v, d, 32));
  sums[i] = v;
}

/// exchange_all(out): each lane gives (lane, 100 + lane) and, after the
/// exchange, writes what it got into out[i * 64 ...]: every lane's pair.
void exchangeAll(void **params, const MixEmuThread *t) {
  float *out = *static_cast<float **>(params[0]);
  int64_t i = linearThread(t);
  float give[2] = {float(i % 32), float(100 + i % 32)};
  float all[64];
  mixemu_exchange("loc(exchange_all)", give, 2, all);
  for (int64_t k = 0; k < 64; ++k)
    out[i * 64 + k] = all[k];
}

/// mma(a, b, c, d): one warp's m16n8k8 product D = A B + C of the 16 x 8
/// A, the 8 x 8 B and the 16 x 8 C (row-major), each lane giving and
/// getting the fragments of the PTX ISA (lane = 4 g + t).
void mmaProduct(void **params, const MixEmuThread *t) {
  const float *a = *static_cast<float **>(params[0]);
  const float *b = *static_cast<float **>(params[1]);
  const float *c = *static_cast<float **>(params[2]);
  float *d = *static_cast<float **>(params[3]);
  int64_t lane = linearThread(t) % 32, g = lane / 4, l = lane % 4;
  float fa[4], fb[2], fcd[4];
  for (int64_t v = 0; v < 4; ++v)
    fa[v] = a[(g + 8 * (v % 2)) * 8 + l + 4 * (v / 2)];
  for (int64_t v = 0; v < 2; ++v)
    fb[v] = b[(l + 4 * v) * 8 + g];
  for (int64_t v = 0; v < 4; ++v)
    fcd[v] = c[(g + 8 * (v / 2)) * 8 + 2 * l + v % 2];
  mixemu_mma_m16n8k8_tf32("loc(mma)", fa, fb, fcd);
  for (int64_t v = 0; v < 4; ++v)
    d[(g + 8 * (v / 2)) * 8 + 2 * l + v % 2] = fcd[v];
}

/// The bits of \p x, a bf16 value held in a float, as bf16.
uint32_t bf16Bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits >> 16;
}

/// mma_bf16(a, b, c, d): one warp's m16n8k16 product D = A B + C of the
/// 16 x 16 A, the 16 x 8 B (bf16 values held in floats) and the 16 x 8 C
/// (row-major), each lane giving its registers as the PTX ISA's table for
/// .bf16 places them: register r holds elements 2r (low half) and 2r + 1;
/// A's element i lies in row g, plus 8 where i % 4 >= 2, column 2t + i % 2,
/// plus 8 where i >= 4; B's element i in row 2t + i % 2, plus 8 where
/// i >= 2, column g.
void mmaBF16Product(void **params, const MixEmuThread *t) {
  const float *a = *static_cast<float **>(params[0]);
  const float *b = *static_cast<float **>(params[1]);
  const float *c = *static_cast<float **>(params[2]);
  float *d = *static_cast<float **>(params[3]);
  int64_t lane = linearThread(t) % 32, g = lane / 4, l = lane % 4;
  uint32_t ra[4] = {}, rb[2] = {};
  for (int64_t i = 0; i < 8; ++i) {
    int64_t row = g + (i % 4 >= 2 ? 8 : 0),
            col = 2 * l + i % 2 + (i >= 4 ? 8 : 0);
    ra[i / 2] |= bf16Bits(a[row * 16 + col]) << (16 * (i % 2));
  }
  for (int64_t i = 0; i < 4; ++i) {
    int64_t row = 2 * l + i % 2 + (i >= 2 ? 8 : 0);
    rb[i / 2] |= bf16Bits(b[row * 8 + g]) << (16 * (i % 2));
  }
  float fa[4], fb[2], fcd[4];
  std::memcpy(fa, ra, sizeof fa);
  std::memcpy(fb, rb, sizeof fb);
  for (int64_t v = 0; v < 4; ++v)
    fcd[v] = c[(g + 8 * (v / 2)) * 8 + 2 * l + v % 2];
  mixemu_mma_m16n8k16_bf16("loc(mma_bf16)", fa, fb, fcd);
  for (int64_t v = 0; v < 4; ++v)
    d[(g + 8 * (v / 2)) * 8 + 2 * l + v % 2] = fcd[v];
}

/// divergent_shuffle: lanes 16-31 return before the shuffle of width 32.
void divergentShuffle(void **, const MixEmuThread *t) {
  if (linearThread(t) % 32 < 16)
    mixemu_shuffle("loc(divergent_shuffle)", MIXEMU_SHUFFLE_XOR, 1, 1, 32);
}
/// wide_shuffle: every lane runs a shuffle of width 16.
void wideShuffle(void **, const MixEmuThread *) {
  mixemu_shuffle("loc(wide_shuffle)", MIXEMU_SHUFFLE_DOWN, 1, 1, 16);
}

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
  ASSERT_EQ(mixemu_register_kernel("unmarked_barrier", unmarkedBarrier, 1), 0);
  const int64_t sync = MIXEMU_KERNEL_SYNCHRONIZES;
  ASSERT_EQ(mixemu_register_kernel_ex("block_sum", blockSum, 2, kBlockSumShared,
                                      sync),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("rotate", rotate, 2, 256, sync), 0);
  ASSERT_EQ(mixemu_register_kernel_ex("shared_bits", sharedBits, 1,
                                      kSharedBitsStatic, 0),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("divergent_barrier", divergentBarrier, 1,
                                      0, sync),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("two_barriers", twoBarriers, 1, 0, sync),
            0);
  ASSERT_EQ(
      mixemu_register_kernel_ex("fails_in_fiber", failsInFiber, 1, 0, sync), 0);
  ASSERT_EQ(
      mixemu_register_kernel_ex("shuffle_modes", shuffleModes, 4, 0, sync), 0);
  ASSERT_EQ(mixemu_register_kernel_ex("warp_sums", warpSums, 2, 0, sync), 0);
  ASSERT_EQ(mixemu_register_kernel_ex("exchange_all", exchangeAll, 1, 0, sync),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("mma", mmaProduct, 4, 0, sync), 0);
  ASSERT_EQ(mixemu_register_kernel_ex("mma_bf16", mmaBF16Product, 4, 0, sync),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("divergent_shuffle", divergentShuffle, 1,
                                      0, sync),
            0);
  ASSERT_EQ(mixemu_register_kernel_ex("wide_shuffle", wideShuffle, 1, 0, sync),
            0);
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

TEST(CUDAEmulator, CaptureForksAndJoins) {
  setUpEmulator();
  CUstream origin, side;
  ASSERT_EQ(cuStreamCreate(&origin, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent forked, joined, outside;
  for (CUevent *e : {&forked, &joined, &outside})
    ASSERT_EQ(cuEventCreate(e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  DeviceBuffer a(16), b(16);
  ASSERT_EQ(cuMemsetD32Async(a.ptr, 0, 4, nullptr), CUDA_SUCCESS);
  ASSERT_EQ(cuMemsetD32Async(b.ptr, 0, 4, nullptr), CUDA_SUCCESS);
  auto words = [](const DeviceBuffer &buffer) {
    std::vector<uint32_t> host(4);
    EXPECT_EQ(cuMemcpyDtoHAsync(host.data(), buffer.ptr, 16, nullptr),
              CUDA_SUCCESS);
    return host;
  };
  auto isCapturing = [](CUstream stream) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    EXPECT_EQ(cuStreamIsCapturing(stream, &status), CUDA_SUCCESS);
    return status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  };

  // A stream that waits for an event recorded in a capture joins it: its
  // work is recorded, not run, until the origin waits for it back.
  ASSERT_EQ(cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32Async(a.ptr, 1, 4, origin), CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(forked, origin), CUDA_SUCCESS);
  EXPECT_FALSE(isCapturing(side));
  EXPECT_EQ(cuStreamWaitEvent(side, forked, 0), CUDA_SUCCESS);
  EXPECT_TRUE(isCapturing(side));
  EXPECT_EQ(cuMemsetD32Async(b.ptr, 2, 4, side), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamSynchronize(side), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(cuMemsetD32Async(b.ptr, 2, 4, side),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CUgraph graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(origin, &graph),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_FALSE(isCapturing(side));

  ASSERT_EQ(cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32Async(a.ptr, 1, 4, origin), CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(forked, origin), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(side, forked, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32Async(b.ptr, 2, 4, side), CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(joined, side), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(origin, joined, 0), CUDA_SUCCESS);
  // No host waits for work that has not run.
  EXPECT_EQ(cuEventSynchronize(joined), CUDA_ERROR_CAPTURED_EVENT);
  // Only the origin ends the capture, and the forked stream leaves it.
  EXPECT_EQ(cuStreamEndCapture(side, &graph),
            CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  ASSERT_EQ(cuStreamEndCapture(origin, &graph), CUDA_SUCCESS);
  EXPECT_FALSE(isCapturing(side));
  EXPECT_EQ(words(a), std::vector<uint32_t>(4, 0));
  EXPECT_EQ(words(b), std::vector<uint32_t>(4, 0));
  CUgraphExec exec = nullptr;
  ASSERT_EQ(cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(cuGraphLaunch(exec, origin), CUDA_SUCCESS);
  EXPECT_EQ(words(a), std::vector<uint32_t>(4, 1));
  EXPECT_EQ(words(b), std::vector<uint32_t>(4, 2));
  EXPECT_EQ(cuGraphExecDestroy(exec), CUDA_SUCCESS);
  EXPECT_EQ(cuGraphDestroy(graph), CUDA_SUCCESS);

  // Work the origin never waited for: no graph. The join must come after
  // the forked stream's last work, not before it.
  ASSERT_EQ(cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(forked, origin), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(side, forked, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32Async(b.ptr, 3, 4, side), CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(joined, side), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(origin, joined, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuMemsetD32Async(b.ptr, 4, 4, side), CUDA_SUCCESS);
  graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(origin, &graph),
            CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_FALSE(isCapturing(side));

  // Recorded again outside a capture, an event can be waited for.
  EXPECT_EQ(cuEventSynchronize(joined), CUDA_ERROR_CAPTURED_EVENT);
  EXPECT_EQ(cuEventRecord(joined, side), CUDA_SUCCESS);
  EXPECT_EQ(cuEventSynchronize(joined), CUDA_SUCCESS);

  // A capturing stream may not wait for work outside its capture.
  EXPECT_EQ(cuEventRecord(outside, side), CUDA_SUCCESS);
  ASSERT_EQ(cuStreamBeginCapture(origin, CU_STREAM_CAPTURE_MODE_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(origin, outside, 0),
            CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  EXPECT_EQ(cuStreamEndCapture(origin, &graph),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  // Nothing of the captures that failed ran.
  EXPECT_EQ(words(b), std::vector<uint32_t>(4, 2));

  for (CUevent e : {forked, joined, outside})
    EXPECT_EQ(cuEventDestroy(e), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(side), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamDestroy(origin), CUDA_SUCCESS);
}

TEST(CUDAEmulator, EventsAndPageLockedMemory) {
  setUpEmulator();
  CUevent event;
  ASSERT_EQ(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(cuEventCreate(&event, 0x40), CUDA_ERROR_INVALID_VALUE);
  CUstream stream;
  ASSERT_EQ(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // Work is done when queued: a wait for an event, recorded or not, has
  // nothing to wait for.
  EXPECT_EQ(cuStreamWaitEvent(stream, event, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuEventRecord(event, stream), CUDA_SUCCESS);
  EXPECT_EQ(cuEventSynchronize(event), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(nullptr, event, 0), CUDA_SUCCESS);
  EXPECT_EQ(cuStreamWaitEvent(stream, event, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(cuEventDestroy(event), CUDA_SUCCESS);
  EXPECT_EQ(cuEventSynchronize(event), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuEventDestroy(event), CUDA_ERROR_INVALID_HANDLE);

  void *pinned = nullptr;
  ASSERT_EQ(cuMemHostAlloc(&pinned, 64, 0), CUDA_SUCCESS);
  std::memset(pinned, 7, 64);
  DeviceBuffer a(64);
  EXPECT_EQ(cuMemcpyHtoDAsync(a.ptr, pinned, 64, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(pinned), CUDA_SUCCESS);
  EXPECT_EQ(cuMemFreeHost(pinned), CUDA_ERROR_INVALID_VALUE);
  std::vector<uint8_t> heap(8);
  EXPECT_EQ(cuMemFreeHost(heap.data()), CUDA_ERROR_INVALID_VALUE);
  std::vector<uint8_t> back(64);
  EXPECT_EQ(cuMemcpyDtoHAsync(back.data(), a.ptr, 64, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(back, std::vector<uint8_t>(64, 7));
}

TEST(CUDAEmulator, StagedInputsAreTakenOnlyUnchanged) {
  setUpEmulator();
  std::vector<int32_t> batch = {1, 2, 3, 4, 5, 6};
  size_t bytes = batch.size() * sizeof(int32_t);
  void *device = mixrt_device_alloc(bytes);
  // Nothing staged in slot 1: the caller uploads.
  EXPECT_EQ(mixrt_device_take_staged(1, device, batch.data(), bytes), 0);
  ASSERT_EQ(mixrt_device_stage(1, batch.data(), bytes), 0)
      << mixrt_device_error();
  // The host may reuse its buffer at once: the staged copy is its own.
  std::vector<int32_t> staged = batch;
  batch.assign(batch.size(), -1);
  // Other bytes, or another size, are not what was staged.
  EXPECT_EQ(mixrt_device_take_staged(1, device, batch.data(), bytes), 0);
  EXPECT_EQ(mixrt_device_take_staged(1, device, staged.data(), bytes - 4), 0);
  EXPECT_EQ(mixrt_device_take_staged(1, device, staged.data(), bytes), 1);
  EXPECT_EQ(download<int32_t>(device, staged.size()), staged);
  // Taken once: the next call uploads unless staged again.
  EXPECT_EQ(mixrt_device_take_staged(1, device, staged.data(), bytes), 0);
  std::vector<int32_t> longer = {9, 8, 7, 6, 5, 4, 3, 2};
  void *device2 = mixrt_device_alloc(longer.size() * sizeof(int32_t));
  ASSERT_EQ(mixrt_device_stage(1, longer.data(), 32), 0);
  EXPECT_EQ(mixrt_device_take_staged(1, device2, longer.data(), 32), 1);
  EXPECT_EQ(download<int32_t>(device2, longer.size()), longer);
  EXPECT_STREQ(mixrt_device_error(), "");
  mixrt_device_free(device);
  mixrt_device_free(device2);
}

TEST(CUDAEmulatorDeathTest, StagingSlotOutOfRangeIsAnError) {
  EXPECT_EXIT(
      {
        setUpEmulator();
        int32_t x = 0;
        if (mixrt_device_stage(8, &x, 4) == 0)
          std::exit(0);
        std::fprintf(stderr, "%s\n", mixrt_device_error());
        std::exit(1);
      },
      ::testing::ExitedWithCode(1), "slot 8 is not in \\[0, 8\\)");
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

TEST(CUDAEmulatorDeathTest, BarrierInAnUnmarkedKernelIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                void *function = supportKernel("unmarked_barrier");
                int64_t unused = 0;
                void *params[] = {&unused};
                mgpuLaunchKernel(function, 1, 1, 1, 2, 1, 1, 0, nullptr, params,
                                 nullptr, 1);
              }),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED "
              "\\(kernel unmarked_barrier: a barrier in a kernel not marked "
              "MIXEMU_KERNEL_SYNCHRONIZES, whose threads run one after "
              "another \\(block 0, thread 0\\)\\)");
}

//===----------------------------------------------------------------------===//
// Threads that work together
//===----------------------------------------------------------------------===//

/// Launches registered kernel `name` directly; returns its status.
CUresult launch(const char *name, const unsigned g[3], const unsigned b[3],
                void **params, unsigned sharedMemBytes = 0) {
  CUmodule module;
  CUfunction function;
  EXPECT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
  EXPECT_EQ(cuModuleGetFunction(&function, module, name), CUDA_SUCCESS);
  CUresult status = cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2],
                                   sharedMemBytes, nullptr, params, nullptr);
  EXPECT_EQ(cuModuleUnload(module), CUDA_SUCCESS);
  return status;
}

template <typename T> std::vector<T> fromDevice(CUdeviceptr p, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cuMemcpyDtoHAsync(host.data(), p, n * sizeof(T), nullptr),
            CUDA_SUCCESS);
  return host;
}

TEST(CUDAEmulator, BlockSumsThroughSharedMemoryAndBarriers) {
  setUpEmulator();
  struct Shape {
    unsigned blocks, b[3];
  };
  // One-, two- and three-dimensional blocks, up to the device's 1024
  // threads, and a block of one thread.
  const Shape shapes[] = {
      {3, {256, 1, 1}}, {2, {8, 4, 2}}, {2, {1024, 1, 1}}, {4, {1, 1, 1}}};
  for (const Shape &shape : shapes) {
    const int64_t n = int64_t(shape.b[0]) * shape.b[1] * shape.b[2];
    const int64_t total = shape.blocks * n;
    std::vector<float> x(total);
    std::vector<int64_t> want(shape.blocks, 0);
    for (int64_t i = 0; i < total; ++i) {
      x[i] = float(i % 13);
      want[i / n] += i % 13;
    }
    DeviceBuffer dx(total * sizeof(float)), dsums(shape.blocks * sizeof(float));
    ASSERT_EQ(
        cuMemcpyHtoDAsync(dx.ptr, x.data(), total * sizeof(float), nullptr),
        CUDA_SUCCESS);
    void *params[] = {&dx.ptr, &dsums.ptr};
    const unsigned g[3] = {shape.blocks, 1, 1};
    MixEmuProfile before = *mixemu_profile();
    ASSERT_EQ(launch("block_sum", g, shape.b, params), CUDA_SUCCESS)
        << errorString(CUDA_ERROR_LAUNCH_FAILED);
    EXPECT_EQ(mixemu_profile()->threads, before.threads + uint64_t(total));
    std::vector<float> sums = fromDevice<float>(dsums.ptr, shape.blocks);
    for (unsigned blk = 0; blk < shape.blocks; ++blk)
      EXPECT_EQ(sums[blk], float(want[blk]))
          << "block " << blk << " of (" << shape.b[0] << ", " << shape.b[1]
          << ", " << shape.b[2] << ") threads";
  }
}

TEST(CUDAEmulator, BarrierWaitsForEveryThread) {
  setUpEmulator();
  const int64_t n = 64;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = float(3 * i + 1);
  DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float));
  ASSERT_EQ(cuMemcpyHtoDAsync(dx.ptr, x.data(), n * sizeof(float), nullptr),
            CUDA_SUCCESS);
  void *params[] = {&dx.ptr, &dy.ptr};
  const unsigned g[3] = {1, 1, 1}, b[3] = {unsigned(n), 1, 1};
  ASSERT_EQ(launch("rotate", g, b, params), CUDA_SUCCESS);
  std::vector<float> y = fromDevice<float>(dy.ptr, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], float(3 * ((i + 1) % n) + 1)) << "y[" << i << "]";
}

// On a device shared memory starts uninitialized: here every block finds
// 0xFF bytes in the static and the dynamic part, whatever the block before
// wrote; the dynamic part starts at the static size rounded up to 16.
TEST(CUDAEmulator, SharedMemoryStartsAsOxFFInEveryBlock) {
  setUpEmulator();
  const unsigned g[3] = {3, 1, 1}, b[3] = {2, 1, 1};
  DeviceBuffer out(3 * 2 * 3 * sizeof(uint32_t));
  void *params[] = {&out.ptr};
  ASSERT_EQ(launch("shared_bits", g, b, params, /*sharedMemBytes=*/100),
            CUDA_SUCCESS);
  std::vector<uint32_t> bits = fromDevice<uint32_t>(out.ptr, 3 * 2 * 3);
  for (int block = 0; block < 3; ++block) {
    const uint32_t *first = &bits[3 * 2 * block], *second = first + 3;
    EXPECT_EQ(first[0], 0xFFFFFFFFu) << "block " << block;
    EXPECT_EQ(first[1], 0xFFFFFFFFu) << "block " << block;
    // The block's threads share it (they run one after another here).
    EXPECT_EQ(second[0], 0x11111111u) << "block " << block;
    EXPECT_EQ(second[1], 0x22222222u) << "block " << block;
    EXPECT_EQ(first[2], 100u);
  }
}

TEST(CUDAEmulator, SharedMemoryLimitCountsStaticAndDynamic) {
  setUpEmulator();
  EXPECT_EQ(mixemu_register_kernel_ex("too_much_shared", rotate, 2,
                                      48 * 1024 + 1,
                                      MIXEMU_KERNEL_SYNCHRONIZES),
            -1);
  DeviceBuffer out(3 * sizeof(uint32_t));
  void *params[] = {&out.ptr};
  const unsigned g[3] = {1, 1, 1}, b[3] = {1, 1, 1};
  // 20 static bytes take 32 (the dynamic part's alignment) of the 48 KiB.
  EXPECT_EQ(launch("shared_bits", g, b, params, 48 * 1024 - 32), CUDA_SUCCESS);
  EXPECT_EQ(launch("shared_bits", g, b, params, 48 * 1024 - 31),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(errorString(CUDA_ERROR_INVALID_VALUE)
                .find("kernel shared_bits: 20 bytes of static and 49121 of "
                      "dynamic shared memory exceed the 49152"),
            std::string::npos)
      << errorString(CUDA_ERROR_INVALID_VALUE);
}

// Each mode of mixemu_shuffle against its definition in Emulator.h, in
// both warps of a block of 64: lane k gets lane j's value (1000 + j) and
// valid when 0 <= j < width, else its own and not valid.
TEST(CUDAEmulator, ShufflesFollowTheirDefinition) {
  setUpEmulator();
  struct Case {
    int32_t mode, offset, width;
  };
  const Case cases[] = {
      {MIXEMU_SHUFFLE_XOR, 1, 32},  {MIXEMU_SHUFFLE_XOR, 21, 32},
      {MIXEMU_SHUFFLE_XOR, 16, 16}, {MIXEMU_SHUFFLE_XOR, 3, 8},
      {MIXEMU_SHUFFLE_DOWN, 3, 32}, {MIXEMU_SHUFFLE_DOWN, 1, 16},
      {MIXEMU_SHUFFLE_UP, 3, 32},   {MIXEMU_SHUFFLE_UP, 20, 32},
      {MIXEMU_SHUFFLE_IDX, 5, 32},  {MIXEMU_SHUFFLE_IDX, 40, 32},
      {MIXEMU_SHUFFLE_IDX, 7, 4}};
  const int64_t n = 64;
  for (const Case &c : cases) {
    std::vector<int32_t> init(2 * n, -7);
    DeviceBuffer out(2 * n * sizeof(int32_t));
    ASSERT_EQ(cuMemcpyHtoDAsync(out.ptr, init.data(), 2 * n * sizeof(int32_t),
                                nullptr),
              CUDA_SUCCESS);
    int64_t mode = c.mode, offset = c.offset, width = c.width;
    void *params[] = {&out.ptr, &mode, &offset, &width};
    const unsigned g[3] = {1, 1, 1}, b[3] = {unsigned(n), 1, 1};
    ASSERT_EQ(launch("shuffle_modes", g, b, params), CUDA_SUCCESS)
        << errorString(CUDA_ERROR_LAUNCH_FAILED);
    std::vector<int32_t> got = fromDevice<int32_t>(out.ptr, 2 * n);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = i % 32, j = 0;
      switch (c.mode) {
      case MIXEMU_SHUFFLE_XOR:
        j = k ^ c.offset;
        break;
      case MIXEMU_SHUFFLE_DOWN:
        j = k + c.offset;
        break;
      case MIXEMU_SHUFFLE_UP:
        j = k - c.offset;
        break;
      default:
        j = c.offset;
      }
      bool valid = j >= 0 && j < c.width;
      std::string where = "mode " + std::to_string(c.mode) + ", offset " +
                          std::to_string(c.offset) + ", width " +
                          std::to_string(c.width) + ", thread " +
                          std::to_string(i);
      if (k >= c.width) { // did not shuffle
        EXPECT_EQ(got[2 * i], -7) << where;
        continue;
      }
      EXPECT_EQ(got[2 * i], int32_t(1000 + (valid ? j : k))) << where;
      EXPECT_EQ(got[2 * i + 1], valid ? 1 : 0) << where;
    }
  }
}

TEST(CUDAEmulator, WarpSumsThroughShuffles) {
  setUpEmulator();
  const int64_t n = 96; // three warps
  std::vector<int32_t> x(n);
  int64_t want[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    x[i] = int32_t(i * i - 50);
    want[i / 32] += x[i];
  }
  DeviceBuffer dx(n * sizeof(int32_t)), dsums(n * sizeof(int32_t));
  ASSERT_EQ(cuMemcpyHtoDAsync(dx.ptr, x.data(), n * sizeof(int32_t), nullptr),
            CUDA_SUCCESS);
  void *params[] = {&dx.ptr, &dsums.ptr};
  const unsigned g[3] = {1, 1, 1}, b[3] = {unsigned(n), 1, 1};
  ASSERT_EQ(launch("warp_sums", g, b, params), CUDA_SUCCESS);
  std::vector<int32_t> sums = fromDevice<int32_t>(dsums.ptr, n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(sums[i], want[i / 32])
        << "lane " << i % 32 << " of warp " << i / 32;
}

TEST(CUDAEmulator, ExchangeGivesEveryLaneTheWarps) {
  setUpEmulator();
  const int64_t n = 64; // two warps
  DeviceBuffer dout(n * 64 * sizeof(float));
  void *params[] = {&dout.ptr};
  const unsigned g[3] = {1, 1, 1}, b[3] = {unsigned(n), 1, 1};
  ASSERT_EQ(launch("exchange_all", g, b, params), CUDA_SUCCESS);
  std::vector<float> out = fromDevice<float>(dout.ptr, n * 64);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < 32; ++l) {
      ASSERT_EQ(out[i * 64 + 2 * l], float(l)) << "thread " << i;
      ASSERT_EQ(out[i * 64 + 2 * l + 1], float(100 + l)) << "thread " << i;
    }
}

/// The product of small integers (exact in float32 whatever the order of
/// the sums) against the plain loop, and an operand's bits beyond tf32's
/// ignored: 1 + 2^-20 is read as 1.
/// Runs the warp product `kernel` on one warp with A, B and C (row-major)
/// and checks D against \p want exactly.
void checkWarpProduct(const char *kernel, const std::vector<float> &a,
                      const std::vector<float> &b, const std::vector<float> &c,
                      const std::vector<float> &want) {
  DeviceBuffer da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4),
      dd(c.size() * 4);
  ASSERT_EQ(cuMemcpyHtoDAsync(da.ptr, a.data(), a.size() * 4, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoDAsync(db.ptr, b.data(), b.size() * 4, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyHtoDAsync(dc.ptr, c.data(), c.size() * 4, nullptr),
            CUDA_SUCCESS);
  void *params[] = {&da.ptr, &db.ptr, &dc.ptr, &dd.ptr};
  const unsigned g[3] = {1, 1, 1}, bl[3] = {32, 1, 1};
  ASSERT_EQ(launch(kernel, g, bl, params), CUDA_SUCCESS);
  std::vector<float> d = fromDevice<float>(dd.ptr, 16 * 8);
  for (int i = 0; i < 16 * 8; ++i)
    ASSERT_EQ(d[i], want[i]) << "row " << i / 8 << ", column " << i % 8;
}

TEST(CUDAEmulator, TensorCoreProductOfAWarp) {
  setUpEmulator();
  std::vector<float> a(16 * 8), b(8 * 8), c(16 * 8), want(16 * 8);
  for (int i = 0; i < 16 * 8; ++i) {
    a[i] = float((i * 7) % 11) - 5;
    c[i] = float((i * 5) % 13) - 6;
  }
  for (int i = 0; i < 8 * 8; ++i)
    b[i] = float((i * 3) % 7) - 3;
  a[0] = 1.0f + std::ldexp(1.0f, -20);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      float sum = c[r * 8 + n];
      for (int k = 0; k < 8; ++k)
        sum += (r == 0 && k == 0 ? 1.0f : a[r * 8 + k]) * b[k * 8 + n];
      want[r * 8 + n] = sum;
    }
  checkWarpProduct("mma", a, b, c, want);
}

TEST(CUDAEmulator, BF16TensorCoreProductOfAWarp) {
  setUpEmulator();
  // Operands exact in bf16 (8 significant bits), every product exact and
  // every sum of them exact in float32: the result is the closed form's.
  std::vector<float> a(16 * 16), b(16 * 8), c(16 * 8), want(16 * 8);
  for (int i = 0; i < 16 * 16; ++i)
    a[i] = float((i * 7) % 23 - 11) * 0.25f;
  for (int i = 0; i < 16 * 8; ++i) {
    b[i] = float((i * 5) % 19 - 9) * 0.5f;
    c[i] = float((i * 3) % 13) - 6;
  }
  a[5] = 1.0f + std::ldexp(1.0f, -7); // the last bit bf16 keeps
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double sum = c[r * 8 + n];
      for (int k = 0; k < 16; ++k)
        sum += double(a[r * 16 + k]) * double(b[k * 8 + n]);
      want[r * 8 + n] = float(sum);
    }
  checkWarpProduct("mma_bf16", a, b, c, want);
}

/// Runs `name` on blocks of (bx, by, 1) threads in a death test's child and
/// reports the device error, then the error of a later call (sticky).
void launchAndReport(const char *name, unsigned gx, unsigned gy, unsigned bx,
                     unsigned by) {
  reportAndExit([&] {
    void *function = supportKernel(name);
    int64_t unused = 0;
    void *params[] = {&unused};
    mgpuLaunchKernel(function, gx, gy, 1, bx, by, 1, 0, nullptr, params,
                     nullptr, 1);
    CUdeviceptr p;
    CUresult later = cuMemAlloc(&p, 16);
    std::fprintf(stderr, "later: %d\n", int(later));
  });
}

TEST(CUDAEmulatorDeathTest, BarrierSomeThreadsDoNotReachIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(launchAndReport("divergent_barrier", 2, 1, 8, 1),
              ::testing::ExitedWithCode(0),
              "later: 719.*device error: cuLaunchKernel: "
              "CUDA_ERROR_LAUNCH_FAILED \\(kernel divergent_barrier: a "
              "barrier at loc\\(\"divergent.mlir\":3:5\\) that threads 4-7 of "
              "block 0 did not reach \\(they returned\\)\\)");
}

TEST(CUDAEmulatorDeathTest, ThreadsAtDifferentBarriersAreAnError) {
  setUpEmulator();
  EXPECT_EXIT(launchAndReport("two_barriers", 1, 2, 4, 2),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED "
              "\\(kernel two_barriers: threads 0-3 of block \\(0, 0, 0\\) "
              "\\(linear ids, x fastest\\) wait at a barrier at "
              "loc\\(first\\), threads 4-7 at another at loc\\(second\\)\\)");
}

// mixemu_fail on a fiber's stack: the launch ends from the scheduler's, the
// fault names the thread and sticks, and the process goes on unharmed.
TEST(CUDAEmulatorDeathTest, FailureInsideAFiberEndsTheLaunch) {
  setUpEmulator();
  EXPECT_EXIT(
      reportAndExit([] {
        void *function = supportKernel("fails_in_fiber");
        int64_t unused = 0;
        void *params[] = {&unused};
        mgpuLaunchKernel(function, 2, 1, 1, 8, 1, 1, 0, nullptr, params,
                         nullptr, 1);
        CUdeviceptr p;
        CUresult later = cuMemAlloc(&p, 16);
        std::vector<int> onTheStack(1000, 1);
        std::fprintf(stderr, "later: %d %s; still running: %d\n", int(later),
                     errorString(later).c_str(),
                     std::accumulate(onTheStack.begin(), onTheStack.end(), 0));
      }),
      ::testing::ExitedWithCode(0),
      "later: 700 kernel fails_in_fiber: memref.load index 9 out of \\[0, "
      "8\\) \\(block 1, thread 5\\); still running: 1000.*device error: "
      "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS \\(kernel fails_in_fiber: "
      "memref.load index 9 out of \\[0, 8\\) \\(block 1, thread 5\\)\\)");
}

TEST(CUDAEmulatorDeathTest, ShuffleSomeLanesDoNotReachIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(launchAndReport("divergent_shuffle", 1, 1, 64, 1),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED "
              "\\(kernel divergent_shuffle: a shuffle at "
              "loc\\(divergent_shuffle\\) that lanes 16-31 of warp 0 of block "
              "0 did not reach \\(they returned\\)\\)");
}

TEST(CUDAEmulatorDeathTest, LanesBeyondAShufflesWidthAreAnError) {
  setUpEmulator();
  EXPECT_EXIT(launchAndReport("wide_shuffle", 1, 1, 32, 1),
              ::testing::ExitedWithCode(0),
              "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED "
              "\\(kernel wide_shuffle: lanes 16-31 of warp 0 of block 0 run "
              "a shuffle at loc\\(wide_shuffle\\) of width 16, which only the "
              "lanes below its width may run\\)");
}

TEST(CUDAEmulatorDeathTest, ShuffleWiderThanItsWarpIsAnError) {
  setUpEmulator();
  EXPECT_EXIT(
      reportAndExit([] {
        void *function = supportKernel("warp_sums");
        DeviceBuffer x(40 * sizeof(int32_t)), sums(40 * sizeof(int32_t));
        void *params[] = {&x.ptr, &sums.ptr};
        mgpuLaunchKernel(function, 1, 1, 1, 40, 1, 1, 0, nullptr, params,
                         nullptr, 2);
      }),
      ::testing::ExitedWithCode(0),
      "device error: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED \\(kernel "
      "warp_sums: a shuffle at loc\\(warp_sums\\) of width 32 in warp 1 of "
      "block 0, which has 8 lanes\\)");
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

/// The forms of a product: C += A B (mixrt_cuda_matmul), C = A B (_set:
/// C's old values are never read), C = A B + bias (_bias), C = A B with
/// the sums of A's rows written (_set_bgrad), C = gelu'(U) * A B
/// (_set_dgelu), C = gelu(A B + bias) with U = A B + bias (_bias_gelu).
enum class Form { Accumulate, Set, Bias, BiasGrad, GeluGrad, BiasGelu };

/// The tanh-approximated GELU, in double.
double gelu(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// The tanh-approximated GELU's derivative, in double.
double geluDerivative(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  double t = std::tanh(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
}

/// A product through the support code at `site` in `form`, against a
/// double product of the TF32-rounded A and B. Padding in C must stay as
/// it was.
void checkProduct(int64_t site, int64_t m, int64_t k, int64_t n, bool transA,
                  bool transB, Form form = Form::Accumulate) {
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
  // A product that overwrites C must not read it: NaNs there would show.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c.at(i, j) = form == Form::Accumulate ? dist(rng) : NAN;
  // The bias row sits at an offset of 2 in its buffer; a bias gradient
  // (m floats) is written over NaNs, with NaNs beside it.
  int64_t vector = form == Form::BiasGrad ? m : n;
  std::vector<float> bias(vector + 4, NAN);
  if (form == Form::Bias || form == Form::BiasGelu)
    for (int64_t j = 0; j < n; ++j)
      bias[2 + j] = dist(rng);
  // A pre-activation laid out as C, over the GELU's bend and tails (NaNs
  // where the product writes it).
  Matrix u(m, n, false, NAN);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      u.at(i, j) = form == Form::BiasGelu ? NAN : 4.0f * dist(rng);
  void *du = upload(u.data);
  void *da = upload(a.data), *db = upload(b.data), *dc = upload(c.data),
       *dbias = upload(bias);
  auto *fa = static_cast<float *>(da), *fb = static_cast<float *>(db),
       *fc = static_cast<float *>(dc);
  switch (form) {
  case Form::Accumulate:
    mixrt_cuda_matmul(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n, b.s0, b.s1,
                      fc, 0, m, n, c.s0, c.s1);
    break;
  case Form::Set:
    mixrt_cuda_matmul_set(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n, b.s0,
                          b.s1, fc, 0, m, n, c.s0, c.s1);
    break;
  case Form::Bias:
    mixrt_cuda_matmul_bias(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n, b.s0,
                           b.s1, fc, 0, m, n, c.s0, c.s1,
                           static_cast<float *>(dbias), 2, n, 1);
    break;
  case Form::BiasGrad:
    mixrt_cuda_matmul_set_bgrad(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n,
                                b.s0, b.s1, fc, 0, m, n, c.s0, c.s1,
                                static_cast<float *>(dbias), 2, m, 1);
    break;
  case Form::GeluGrad:
    mixrt_cuda_matmul_set_dgelu(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n,
                                b.s0, b.s1, fc, 0, m, n, c.s0, c.s1,
                                static_cast<float *>(du), 0, m, n, u.s0, u.s1);
    break;
  case Form::BiasGelu:
    mixrt_cuda_matmul_bias_gelu(site, fa, 0, m, k, a.s0, a.s1, fb, 0, k, n,
                                b.s0, b.s1, fc, 0, m, n, c.s0, c.s1,
                                static_cast<float *>(dbias), 2, n, 1,
                                static_cast<float *>(du), 0, m, n, u.s0, u.s1);
    break;
  }
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<float> got = download<float>(dc, c.data.size());
  std::vector<float> gotU = download<float>(du, u.data.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool biased = form == Form::Bias || form == Form::BiasGelu;
      double want = form == Form::Accumulate ? c.at(i, j)
                    : biased                 ? bias[2 + j]
                                             : 0.0;
      double scale = std::fabs(want);
      for (int64_t p = 0; p < k; ++p) {
        double term = referenceTF32(a.at(i, p)) * referenceTF32(b.at(p, j));
        want += term;
        scale += std::fabs(term);
      }
      if (form == Form::GeluGrad) {
        // The derivative in float loses digits where 1 + tanh cancels
        // (the negative tail): a few ulps of 1, not of the slope.
        double slope = geluDerivative(u.at(i, j));
        want *= slope;
        scale *= std::fabs(slope) + 0.1;
      }
      if (form == Form::BiasGelu) {
        // The pre-activation, then its GELU (slope at most 1.13).
        ASSERT_NEAR(gotU[i * u.s0 + j * u.s1], want, 1e-5 * scale)
            << "U[" << i << ", " << j << "]";
        want = gelu(want);
        scale *= 1.2;
      }
      ASSERT_NEAR(got[i * c.s0 + j * c.s1], want, 1e-5 * scale)
          << "C[" << i << ", " << j << "], A " << (transA ? "T" : "N") << ", B "
          << (transB ? "T" : "N") << ", form " << int(form);
    }
  for (int64_t i = 0; i + 1 < m; ++i) // the padding after each row
    EXPECT_EQ(got[i * c.s0 + n], 42.0f);
  if (form == Form::BiasGrad) {
    // The sums of A's rows, as the tensor cores read A.
    std::vector<float> sums = download<float>(dbias, bias.size());
    for (int64_t i = 0; i < m; ++i) {
      double want = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += referenceTF32(a.at(i, p));
        scale += std::fabs(a.at(i, p));
      }
      ASSERT_NEAR(sums[2 + i], want, 1e-5 * scale) << "row " << i;
    }
    EXPECT_TRUE(std::isnan(sums[1]) && std::isnan(sums[2 + m]));
  }
  for (void *p : {da, db, dc, dbias, du})
    mixrt_device_free(p);
}

TEST(CUDAEmulator, MatmulIsTheRoundedProduct) {
  checkProduct(/*site=*/0, 5, 7, 3, false, false);
  checkProduct(/*site=*/1, 5, 7, 3, true, false);
  checkProduct(/*site=*/2, 5, 7, 3, false, true);
  checkProduct(/*site=*/3, 6, 9, 4, true, true);
}

TEST(CUDAEmulator, MatmulOverwritesOrAddsABias) {
  checkProduct(/*site=*/4, 5, 7, 3, false, false, Form::Set);
  checkProduct(/*site=*/5, 6, 9, 4, true, true, Form::Set);
  checkProduct(/*site=*/6, 5, 7, 3, false, false, Form::Bias);
  checkProduct(/*site=*/7, 6, 9, 4, true, true, Form::Bias);
}

// A weight gradient's product writes its bias gradient too (BGRADB).
TEST(CUDAEmulator, MatmulWritesTheSumsOfARowsOfA) {
  checkProduct(/*site=*/11, 5, 7, 3, true, false, Form::BiasGrad);
  checkProduct(/*site=*/12, 6, 9, 4, false, true, Form::BiasGrad);
}

// A GELU's backward step rides on the product before it (DGELU; C's rows
// 8 and 16 floats apart, as cuBLASLt wants the pre-activation's).
TEST(CUDAEmulator, MatmulTimesTheGeluDerivative) {
  checkProduct(/*site=*/13, 5, 7, 7, true, false, Form::GeluGrad);
  checkProduct(/*site=*/14, 6, 9, 15, false, true, Form::GeluGrad);
}

// A linear layer's GELU rides on its product, the pre-activation kept
// (GELU_AUX_BIAS).
TEST(CUDAEmulator, MatmulAddsABiasAndAppliesTheGelu) {
  checkProduct(/*site=*/16, 5, 7, 7, false, false, Form::BiasGelu);
  checkProduct(/*site=*/17, 6, 9, 15, true, true, Form::BiasGelu);
}

/// The bf16 value nearest x's top half (its bits truncated): exactly a
/// bf16, as a float and as the bits the _bf16 forms take.
float truncatedToBF16(float x, uint16_t *bits) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  *bits = uint16_t(u >> 16);
  u &= 0xffff0000u;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// --precision bf16: the operands in memory are bf16 (the _bf16 forms,
// CUDA_R_16BF layouts, the 32F compute type): C = A B + bias and C = A B
// with the sums of A's rows, against a double product of the same bf16
// values (each product of two is exact in float: nothing is rounded but
// the float sums).
TEST(CUDAEmulator, MatmulTakesBF16Operands) {
  setUpEmulator();
  const int64_t m = 5, k = 9, n = 4;
  std::mt19937 rng{7};
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n), bias(n);
  std::vector<uint16_t> aBits(m * k), bBits(k * n);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = truncatedToBF16(dist(rng), &aBits[i]);
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = truncatedToBF16(dist(rng), &bBits[i]);
  for (float &x : bias)
    x = dist(rng);
  std::vector<float> c(m * n, NAN), sums(m, NAN);
  void *da = upload(aBits), *db = upload(bBits), *dc = upload(c),
       *dbias = upload(bias), *dsums = upload(sums);
  auto *ha = static_cast<mixrt_bf16 *>(da), *hb = static_cast<mixrt_bf16 *>(db);
  auto *fc = static_cast<float *>(dc);
  // A row-major (m x k), B row-major (k x n).
  mixrt_cuda_matmul_bias_bf16(/*site=*/50, ha, 0, m, k, k, 1, hb, 0, k, n, n, 1,
                              fc, 0, m, n, n, 1, static_cast<float *>(dbias), 0,
                              n, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<float> got = download<float>(dc, c.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = bias[j], scale = std::fabs(bias[j]);
      for (int64_t p = 0; p < k; ++p) {
        want += double(a[i * k + p]) * b[p * n + j];
        scale += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      ASSERT_NEAR(got[i * n + j], want, 1e-6 * scale) << i << ", " << j;
    }
  // A weight gradient: A read transposed (A^T is k x m, row-major), with
  // BGRADB's sums of A's rows (of the bf16 values).
  std::vector<uint16_t> atBits(k * m);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      atBits[p * m + i] = aBits[i * k + p];
  void *dat = upload(atBits);
  mixrt_cuda_matmul_set_bgrad_bf16(
      /*site=*/51, static_cast<mixrt_bf16 *>(dat), 0, m, k, 1, m, hb, 0, k, n,
      n, 1, fc, 0, m, n, n, 1, static_cast<float *>(dsums), 0, m, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  got = download<float>(dc, c.size());
  std::vector<float> gotSums = download<float>(dsums, sums.size());
  for (int64_t i = 0; i < m; ++i) {
    double want = 0, scale = 0;
    for (int64_t p = 0; p < k; ++p) {
      want += a[i * k + p];
      scale += std::fabs(a[i * k + p]);
    }
    ASSERT_NEAR(gotSums[i], want, 1e-6 * scale) << "row " << i;
    for (int64_t j = 0; j < n; ++j) {
      double product = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        product += double(a[i * k + p]) * b[p * n + j];
        magnitude += std::fabs(double(a[i * k + p]) * b[p * n + j]);
      }
      ASSERT_NEAR(got[i * n + j], product, 1e-6 * magnitude);
    }
  }
  for (void *p : {da, db, dc, dbias, dsums, dat})
    mixrt_device_free(p);
}

/// The float a bf16's bits stand for (exact).
float widenBF16(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// --precision bf16's GELU on the epilogue (the _bf16_to_bf16 forms): H =
// gelu(A B + bias) and U = A B + bias stored as bf16 (rounded to nearest,
// the bias bf16 too: cuBLASLt gives it and the auxiliary matrix D's type),
// then dU = (A B) gelu'(U) from that bf16 U, stored as bf16. Against double
// products of the same bf16 values: within half a bf16 ulp of the float
// result (2^-8 of the value, relative) and the float sums' error.
TEST(CUDAEmulator, MatmulWritesTheGeluRoundedToBF16) {
  setUpEmulator();
  const int64_t m = 5, k = 9, n = 8; // U's rows 8 elements apart
  std::mt19937 rng{11};
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> a(m * k), b(k * n), bias(n);
  std::vector<uint16_t> aBits(m * k), bBits(k * n), biasBits(n);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = truncatedToBF16(dist(rng), &aBits[i]);
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = truncatedToBF16(dist(rng), &bBits[i]);
  for (int64_t j = 0; j < n; ++j)
    bias[j] = truncatedToBF16(dist(rng), &biasBits[j]);
  // NaNs where the products write (bf16 0xffff).
  std::vector<uint16_t> nans(m * n, 0xffff);
  void *da = upload(aBits), *db = upload(bBits), *dbias = upload(biasBits),
       *dh = upload(nans), *du = upload(nans), *ddu = upload(nans);
  auto *ha = static_cast<mixrt_bf16 *>(da), *hb = static_cast<mixrt_bf16 *>(db);
  mixrt_cuda_matmul_bias_gelu_bf16_to_bf16(
      /*site=*/52, ha, 0, m, k, k, 1, hb, 0, k, n, n, 1,
      static_cast<mixrt_bf16 *>(dh), 0, m, n, n, 1,
      static_cast<mixrt_bf16 *>(dbias), 0, n, 1, static_cast<mixrt_bf16 *>(du),
      0, m, n, n, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<uint16_t> h = download<uint16_t>(dh, nans.size());
  std::vector<uint16_t> u = download<uint16_t>(du, nans.size());
  auto product = [&](int64_t i, int64_t j, double &scale) {
    double sum = 0;
    scale = 0;
    for (int64_t p = 0; p < k; ++p) {
      sum += double(a[i * k + p]) * b[p * n + j];
      scale += std::fabs(double(a[i * k + p]) * b[p * n + j]);
    }
    return sum;
  };
  const double halfUlp = 1.0 / 256; // of a bf16, relative, and some
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double scale;
      double x = product(i, j, scale) + bias[j];
      scale += std::fabs(bias[j]);
      ASSERT_NEAR(widenBF16(u[i * n + j]), x,
                  halfUlp * std::fabs(x) + 1e-6 * scale)
          << "U[" << i << ", " << j << "]";
      // The GELU of the float pre-activation, not of the stored one.
      ASSERT_NEAR(widenBF16(h[i * n + j]), gelu(x),
                  halfUlp * std::fabs(gelu(x)) + 2e-6 * scale)
          << "H[" << i << ", " << j << "]";
    }
  // The backward step, from the U the forward stored.
  mixrt_cuda_matmul_set_dgelu_bf16_to_bf16(
      /*site=*/53, ha, 0, m, k, k, 1, hb, 0, k, n, n, 1,
      static_cast<mixrt_bf16 *>(ddu), 0, m, n, n, 1,
      static_cast<mixrt_bf16 *>(du), 0, m, n, n, 1);
  ASSERT_STREQ(mixrt_device_error(), "");
  std::vector<uint16_t> dU = download<uint16_t>(ddu, nans.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double scale;
      double slope = geluDerivative(widenBF16(u[i * n + j]));
      double want = product(i, j, scale) * slope;
      // The derivative in float loses digits where 1 + tanh cancels (as
      // MatmulTimesTheGeluDerivative allows).
      ASSERT_NEAR(widenBF16(dU[i * n + j]), want,
                  halfUlp * std::fabs(want) +
                      1e-5 * scale * (std::fabs(slope) + 0.1))
          << "dU[" << i << ", " << j << "]";
    }
  for (void *p : {da, db, dbias, dh, du, ddu})
    mixrt_device_free(p);
}

// The pre-activation must be laid out as the product.
TEST(CUDAEmulatorDeathTest, MatmulGeluGradientNeedsItsLayout) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                std::vector<float> ones(64, 1.0f);
                auto *p = static_cast<float *>(upload(ones));
                mixrt_cuda_matmul_set_dgelu(15, p, 0, 2, 2, 2, 1, p, 0, 2, 2, 2,
                                            1, p, 0, 2, 2, 8, 1, p, 0, 2, 2, 4,
                                            1);
              }),
              ::testing::ExitedWithCode(0),
              "device error: mixrt_cuda_matmul_set_dgelu: the pre-activation "
              "is not shaped and laid out as the product");
}

/// Runs a 2 x 2 product of ones in `form` at `site`, with the bias
/// `stride` floats apart.
void productOfOnes(int64_t site, Form form, int64_t stride = 1) {
  std::vector<float> ones(16, 1.0f);
  auto *a = static_cast<float *>(upload(ones)),
       *c = static_cast<float *>(upload(ones)),
       *bias = static_cast<float *>(upload(ones));
  if (form == Form::Bias)
    mixrt_cuda_matmul_bias(site, a, 0, 2, 2, 2, 1, a, 0, 2, 2, 2, 1, c, 0, 2, 2,
                           2, 1, bias, 0, 2, stride);
  else if (form == Form::Set)
    mixrt_cuda_matmul_set(site, a, 0, 2, 2, 2, 1, a, 0, 2, 2, 2, 1, c, 0, 2, 2,
                          2, 1);
  else
    mixrt_cuda_matmul(site, a, 0, 2, 2, 2, 1, a, 0, 2, 2, 2, 1, c, 0, 2, 2, 2,
                      1);
}

// The BIAS epilogue reads a packed row.
TEST(CUDAEmulatorDeathTest, MatmulBiasMustBeContiguous) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] { productOfOnes(8, Form::Bias, 2); }),
              ::testing::ExitedWithCode(0),
              "device error: mixrt_cuda_matmul_bias: the bias row is not "
              "contiguous");
}

// A call site is one product: its descriptor holds its form.
TEST(CUDAEmulatorDeathTest, MatmulSiteKeepsItsForm) {
  setUpEmulator();
  EXPECT_EXIT(reportAndExit([] {
                productOfOnes(9, Form::Set);
                std::fprintf(stderr, "first: %s\n", mixrt_device_error());
                productOfOnes(9, Form::Accumulate);
              }),
              ::testing::ExitedWithCode(0),
              "first: \ndevice error: mixrt_cuda_matmul: a call site's "
              "products differ in form");
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

//===----------------------------------------------------------------------===//
// Count-only mode (MIXEMU_COUNT_ONLY=1)
//===----------------------------------------------------------------------===//

/// Count-only mode for one test's scope, normal again at its end whatever
/// happens in between.
struct CountOnlyScope {
  CountOnlyScope() { mixemu_set_count_only(1); }
  ~CountOnlyScope() { mixemu_set_count_only(0); }
  CountOnlyScope(const CountOnlyScope &) = delete;
  CountOnlyScope &operator=(const CountOnlyScope &) = delete;
};

/// What the emulator's counters grew by since `before`.
MixEmuProfile countedSince(const MixEmuProfile &before) {
  const MixEmuProfile &now = *mixemu_profile();
  MixEmuProfile d{};
  d.launches = now.launches - before.launches;
  d.threads = now.threads - before.threads;
  for (int i = 0; i < 3; ++i) {
    d.copies[i] = now.copies[i] - before.copies[i];
    d.copyBytes[i] = now.copyBytes[i] - before.copyBytes[i];
  }
  d.memsets = now.memsets - before.memsets;
  d.matmuls = now.matmuls - before.matmuls;
  d.matmulFlops = now.matmulFlops - before.matmulFlops;
  return d;
}

void expectSameCounts(const MixEmuProfile &a, const MixEmuProfile &b) {
  EXPECT_EQ(a.launches, b.launches);
  EXPECT_EQ(a.threads, b.threads);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.copies[i], b.copies[i]) << "copies of kind " << i;
    EXPECT_EQ(a.copyBytes[i], b.copyBytes[i]) << "copy bytes of kind " << i;
  }
  EXPECT_EQ(a.memsets, b.memsets);
  EXPECT_EQ(a.matmuls, b.matmuls);
  EXPECT_EQ(a.matmulFlops, b.matmulFlops);
}

/// The device buffers of the count-only test: x, y and z of n floats; a
/// (2 x 3), b (3 x 2) and c (2 x 2) of a product.
struct OneOfEachBuffers {
  static constexpr int64_t n = 300;
  void *x, *y, *z, *a, *b, *c;
};

/// Runs one of everything the emulator counts, through the support code:
/// x = 0, 1, 2, ... copied to the device; y = 2 x (double_it, 3 blocks of
/// 128); c += a b; z = 1.0f (a memset); z's first 4 floats = y's (a copy
/// on the device); then y copied back, which it returns.
std::vector<float> runOneOfEach(const OneOfEachBuffers &d) {
  std::vector<float> xs(d.n);
  std::iota(xs.begin(), xs.end(), 0.0f);
  EXPECT_EQ(mixrt_device_upload(d.x, xs.data(), d.n * sizeof(float)), 0);
  int64_t count = d.n;
  void *x = d.x, *y = d.y;
  void *params[] = {&x, &y, &count};
  mgpuLaunchKernel(supportKernel("double_it"), 3, 1, 1, 128, 1, 1, 0, nullptr,
                   params, nullptr, 3);
  mixrt_cuda_matmul(/*site=*/40, static_cast<float *>(d.a), 0, 2, 3, 3, 1,
                    static_cast<float *>(d.b), 0, 3, 2, 2, 1,
                    static_cast<float *>(d.c), 0, 2, 2, 2, 1);
  mgpuMemset32(d.z, 0x3f800000u, d.n, nullptr);
  mgpuMemcpy(d.z, d.y, 4 * sizeof(float), nullptr);
  return download<float>(d.y, d.n);
}

/// The host's resident memory, in bytes.
uint64_t residentBytes() {
  unsigned long long size = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%llu %llu", &size, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return uint64_t(resident) * uint64_t(sysconf(_SC_PAGESIZE));
}

TEST(CUDAEmulator, CountOnlyCountsWhatItDoesNotRun) {
  setUpEmulator();
  using B = OneOfEachBuffers;
  const std::vector<float> sentinel(B::n, -7.0f), ab(6, 0.5f), c0(4, 3.0f);
  B d{upload(sentinel), upload(sentinel), upload(sentinel),
      upload(ab),       upload(ab),       upload(c0)};
  ASSERT_FALSE(mixemu_count_only());

  // The normal mode: everything runs.
  MixEmuProfile before = *mixemu_profile();
  std::vector<float> y = runOneOfEach(d);
  ASSERT_STREQ(mixrt_device_error(), "");
  MixEmuProfile normal = countedSince(before);
  EXPECT_EQ(normal.launches, 1u);
  EXPECT_EQ(normal.threads, 3u * 128u);
  EXPECT_EQ(normal.matmuls, 1u);
  EXPECT_EQ(normal.matmulFlops, 2u * 2u * 2u * 3u);
  EXPECT_EQ(normal.memsets, 1u);
  EXPECT_EQ(normal.copies[0], 1u);
  EXPECT_EQ(normal.copies[1], 1u);
  EXPECT_EQ(normal.copies[2], 1u);
  for (int64_t i = 0; i < B::n; ++i)
    ASSERT_EQ(y[i], 2.0f * float(i)) << "y[" << i << "]";
  EXPECT_EQ(download<float>(d.c, 4), std::vector<float>(4, 3.75f));

  // Back to the sentinels, then the same work counted only.
  for (void *p : {d.x, d.y, d.z})
    ASSERT_EQ(mixrt_device_upload(p, sentinel.data(), B::n * sizeof(float)), 0);
  ASSERT_EQ(mixrt_device_upload(d.c, c0.data(), 4 * sizeof(float)), 0);
  {
    testing::internal::CaptureStderr();
    CountOnlyScope countOnly;
    std::string warning = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(mixemu_count_only());
    EXPECT_NE(warning.find("CUDA emulator: MIXEMU_COUNT_ONLY=1: nothing is "
                           "computed; the results are not the model's"),
              std::string::npos)
        << warning;
    before = *mixemu_profile();
    y = runOneOfEach(d);
    ASSERT_STREQ(mixrt_device_error(), "");
    expectSameCounts(countedSince(before), normal);
    // The copy back brings zeros, not the device's sentinels.
    EXPECT_EQ(y, std::vector<float>(B::n, 0.0f));

    // No thread of a kernel runs, though the launch is checked and counted.
    CUmodule module;
    CUfunction recordOrderFn;
    ASSERT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
    ASSERT_EQ(cuModuleGetFunction(&recordOrderFn, module, "record_order"),
              CUDA_SUCCESS);
    CUdeviceptr out = reinterpret_cast<CUdeviceptr>(d.x);
    void *params[] = {&out};
    threadsRun = 0;
    before = *mixemu_profile();
    EXPECT_EQ(cuLaunchKernel(recordOrderFn, 2, 1, 1, 64, 1, 1, 0, nullptr,
                             params, nullptr),
              CUDA_SUCCESS);
    EXPECT_EQ(threadsRun, 0);
    EXPECT_EQ(countedSince(before).launches, 1u);
    EXPECT_EQ(countedSince(before).threads, 128u);
    // ...and still refused beyond the device's limits.
    EXPECT_EQ(cuLaunchKernel(recordOrderFn, 1, 1, 1, 2048, 1, 1, 0, nullptr,
                             params, nullptr),
              CUDA_ERROR_INVALID_VALUE);
    // Copies are still checked against their allocation.
    EXPECT_EQ(cuMemcpyDtoDAsync(out, out + 4, B::n * sizeof(float), nullptr),
              CUDA_ERROR_INVALID_VALUE);

    // Gigabytes of device memory, set and copied: the host commits none of
    // it.
    const size_t big = size_t(4) << 30;
    uint64_t resident = residentBytes();
    CUdeviceptr p = 0;
    ASSERT_EQ(cuMemAlloc(&p, big), CUDA_SUCCESS);
    EXPECT_GE(mixemu_profile()->peakDeviceBytes, big); // as on the device
    EXPECT_EQ(cuMemsetD32Async(p, 0x12345678u, big / 4, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuMemcpyDtoDAsync(p, p + big / 2, big / 2, nullptr),
              CUDA_SUCCESS);
    EXPECT_LT(residentBytes(), resident + (uint64_t(64) << 20));
    EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
  }
  ASSERT_FALSE(mixemu_count_only());

  // Nothing the counted work would have written was written.
  for (void *p : {d.x, d.y, d.z})
    EXPECT_EQ(download<float>(p, B::n), sentinel);
  EXPECT_EQ(download<float>(d.c, 4), c0);
  for (void *p : {d.x, d.y, d.z, d.a, d.b, d.c})
    mixrt_device_free(p);
  EXPECT_STREQ(mixrt_device_error(), "");
}

} // namespace
