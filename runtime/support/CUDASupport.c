/*===- CUDASupport.c - The support code of every CUDA package ------------===//
 *
 * Compiled into every CUDA package's shared library (mixc embeds this file
 * and compiles it with the package against the CUDA toolkit):
 *  - the mgpu* functions the lowered host code calls (module load, kernel
 *    launch, allocation, copies), over the CUDA driver API, on one stream;
 *  - the device memory plan: the first call of an entry point records its
 *    allocations' sizes and lifetimes, packs them into one pool, and every
 *    later call takes its buffers from the pool, so no step allocates;
 *  - mixrt_cuda_matmul and its batched forms (PackageABI.h): C += A B,
 *    C = A B (_set) or C = A B + a bias row (_bias, cuBLASLt's BIAS
 *    epilogue) through cuBLASLt (TF32 or BF16 tensor cores, float32
 *    accumulation), its descriptors and algorithm chosen once per call
 *    site;
 *  - mixrt_device_*: what the runtime (which links no CUDA) uses to move
 *    arguments to and from the device and to learn of errors;
 *  - mixrt_nccl_*: the gradients' average over the ranks of a multi-GPU
 *    run, on the devices, through NCCL (opened only when a run needs it),
 *    with a deadline so that a dead rank ends the run instead of hanging;
 *  - mix_comm_rank and mix_comm_all_reduce: a package with sharded
 *    streams (--stream-shards) sums its partial values over the stream
 *    group with NCCL inside each call, on the package's stream;
 *  - mixrt_device_begin_graph: every call of an entry point after the
 *    first as one CUDA graph, captured once and launched after;
 *    mixrt_device_begin_step: a training step's calls (grad, the
 *    gradients' average, adamw) as one graph;
 *  - mixrt_device_profile: with MIXRT_CUDA_PROFILE=1, what the device did
 *    (launches by kernel with the compiler's estimate of their bytes,
 *    products by call site, memsets, copies), for the runtime's report.
 * A CUDA failure is recorded (the first one's message kept) and turns the
 * rest of the call into no-ops; mixrt_device_end reports it.
 *
 *===----------------------------------------------------------------------===*/
#include "mixrt/PackageABI.h"

#include <cuda.h>
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Errors ------------------------------------------------------------ */

static char mixrtError[1024];

static int failed(void) { return mixrtError[0] != 0; }

/* The entry point whose call is being captured as a CUDA graph, or -1;
   whether a step's calls are (mixrt_device_begin_step). */
static int capturingEntry = -1;
static int capturingStep;

static void setError(const char *what, const char *detail) {
  if (failed())
    return;
  snprintf(mixrtError, sizeof mixrtError, "%s: %s%s", what, detail,
           capturingStep ? " (while capturing the step as a CUDA graph; "
                           "MIXRT_CUDA_GRAPH=0 runs without graphs)"
           : capturingEntry >= 0 ? " (while capturing the call as a CUDA "
                                   "graph; MIXRT_CUDA_GRAPH=0 runs without "
                                   "graphs)"
                                 : "");
}

static int checkCu(CUresult status, const char *what) {
  if (status == CUDA_SUCCESS)
    return 1;
  const char *name = NULL, *text = NULL;
  cuGetErrorName(status, &name);
  cuGetErrorString(status, &text);
  char detail[512];
  snprintf(detail, sizeof detail, "%s (%s)", name ? name : "CUDA error",
           text ? text : "no description");
  setError(what, detail);
  return 0;
}

static int checkBlas(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return 1;
  char detail[64];
  snprintf(detail, sizeof detail, "cuBLASLt status %d", (int)status);
  setError(what, detail);
  return 0;
}

/* ---- Context and stream ------------------------------------------------ */

static CUcontext context;
static CUstream stream;
static int ready;

static int initDevice(void) {
  if (ready)
    return 1;
  if (failed())
    return 0;
  int ordinal = 0;
  const char *env = getenv("MIXRT_CUDA_DEVICE");
  if (env && *env)
    ordinal = atoi(env);
  CUdevice device;
  if (!checkCu(cuInit(0), "cuInit") ||
      !checkCu(cuDeviceGet(&device, ordinal), "cuDeviceGet") ||
      !checkCu(cuDevicePrimaryCtxRetain(&context, device),
               "cuDevicePrimaryCtxRetain") ||
      !checkCu(cuCtxSetCurrent(context), "cuCtxSetCurrent") ||
      !checkCu(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
               "cuStreamCreate"))
    return 0;
  int major = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                       device);
  if (major < 9) {
    char detail[128];
    snprintf(detail, sizeof detail,
             "device %d has compute capability %d.x; the package's kernels "
             "are sm_90 cubins",
             ordinal, major);
    setError("MIXRT_CUDA_DEVICE", detail);
    return 0;
  }
  ready = 1;
  return 1;
}

/* ---- The device memory plan -------------------------------------------- */

typedef struct {
  uint64_t size;
  int64_t freedAt; /* event index of the free; -1 while live */
  int64_t allocAt;
  uint64_t offset;
} Block;

typedef struct {
  Block *blocks;
  int64_t count, capacity;
  CUdeviceptr pool;
  uint64_t poolSize;
  int planned;   /* offsets computed, pool allocated */
  int valid;     /* the recorded sequence can be replayed */
} Plan;

enum { kMaxEntries = 16 };
static Plan plans[kMaxEntries];
static int currentEntry = -1;
static int64_t cursor, events;
/* While recording: the real allocations, to free at the call's end. */
static CUdeviceptr *recorded;
static int64_t recordedCount, recordedCapacity;

static void *grow(void *data, int64_t *capacity, int64_t need, size_t size) {
  if (need <= *capacity)
    return data;
  int64_t next = *capacity ? *capacity * 2 : 256;
  while (next < need)
    next *= 2;
  void *grown = realloc(data, (size_t)next * size);
  if (!grown) {
    setError("device memory plan", "out of host memory");
    return NULL;
  }
  *capacity = next;
  return grown;
}

/* First fit by decreasing size over the blocks' lifetimes. */
static void computeOffsets(Plan *plan) {
  int64_t n = plan->count;
  int64_t *order = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!order) {
    plan->valid = 0;
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  for (int64_t i = 1; i < n; ++i) { /* insertion sort, sizes descending */
    int64_t k = order[i], j = i - 1;
    while (j >= 0 && plan->blocks[order[j]].size < plan->blocks[k].size) {
      order[j + 1] = order[j];
      --j;
    }
    order[j + 1] = k;
  }
  uint64_t peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    Block *b = &plan->blocks[order[i]];
    int64_t bEnd = b->freedAt < 0 ? INT64_MAX : b->freedAt;
    uint64_t offset = 0;
    int moved = 1;
    while (moved) {
      moved = 0;
      for (int64_t j = 0; j < i; ++j) {
        Block *o = &plan->blocks[order[j]];
        int64_t oEnd = o->freedAt < 0 ? INT64_MAX : o->freedAt;
        int overlapTime = b->allocAt < oEnd && o->allocAt < bEnd;
        int overlapSpace = offset < o->offset + o->size &&
                           o->offset < offset + b->size;
        if (overlapTime && overlapSpace) {
          offset = (o->offset + o->size + 255) & ~(uint64_t)255;
          moved = 1;
        }
      }
    }
    b->offset = offset;
    if (offset + b->size > peak)
      peak = offset + b->size;
  }
  free(order);
  plan->poolSize = peak;
}

void mixrt_device_begin(int entry) {
  currentEntry = entry >= 0 && entry < kMaxEntries ? entry : -1;
  cursor = 0;
  events = 0;
  if (currentEntry >= 0 && !plans[currentEntry].planned) {
    if (capturingStep) /* planning allocates: no capture may see it */
      setError("capturing the step as a CUDA graph",
               "an entry point called for the first time in it (internal "
               "error)");
    plans[currentEntry].count = 0, plans[currentEntry].valid = 1;
  }
}

void *mgpuMemAlloc(uint64_t size, CUstream s, bool isHostShared) {
  (void)s;
  (void)isHostShared;
  if (!initDevice() || failed())
    return NULL;
  if (size == 0)
    size = 1;
  Plan *plan = currentEntry >= 0 ? &plans[currentEntry] : NULL;
  if (plan && plan->planned) {
    if (cursor < plan->count && plan->blocks[cursor].size == size)
      return (void *)(uintptr_t)(plan->pool + plan->blocks[cursor++].offset);
    setError("device memory plan",
             "this call allocated differently from the first call of the "
             "entry point (internal error)");
    return NULL;
  }
  CUdeviceptr ptr = 0;
  if (!checkCu(cuMemAlloc(&ptr, size), "cuMemAlloc"))
    return NULL;
  if (plan) {
    plan->blocks = (Block *)grow(plan->blocks, &plan->capacity,
                                 plan->count + 1, sizeof(Block));
    recorded = (CUdeviceptr *)grow(recorded, &recordedCapacity,
                                   recordedCount + 1, sizeof(CUdeviceptr));
    if (!plan->blocks || !recorded)
      return NULL;
    Block b = {size, -1, events++, 0};
    plan->blocks[plan->count++] = b;
    recorded[recordedCount++] = ptr;
  }
  return (void *)(uintptr_t)ptr;
}

void mgpuMemFree(void *ptr, CUstream s) {
  (void)s;
  if (!ptr)
    return;
  Plan *plan = currentEntry >= 0 ? &plans[currentEntry] : NULL;
  if (plan && plan->planned)
    return; /* pool memory: reused by the next call */
  if (plan) {
    for (int64_t i = recordedCount - 1; i >= 0; --i)
      if (recorded[i] == (CUdeviceptr)(uintptr_t)ptr) {
        plan->blocks[i].freedAt = events++;
        return; /* freed at the end of the call */
      }
  }
  checkCu(cuMemFree((CUdeviceptr)(uintptr_t)ptr), "cuMemFree");
}

/* Ends a call: waits for the stream; after the first call of an entry,
   frees its allocations and plans its pool. Returns 0, or -1 with the
   first error's message in mixrt_device_error(). */
static void endCapture(void);
static int waitForStep(void);
static int replaying; /* this call launched its entry's graph */

int mixrt_device_end(void) {
  if (capturingEntry >= 0)
    endCapture();
  if (ready && !capturingStep) /* a step waits at its end */
    waitForStep();
  Plan *plan = currentEntry >= 0 && !replaying ? &plans[currentEntry] : NULL;
  replaying = 0;
  if (plan && !plan->planned) {
    for (int64_t i = 0; i < recordedCount; ++i)
      cuMemFree(recorded[i]);
    recordedCount = 0;
    if (!failed() && plan->valid) {
      computeOffsets(plan);
      if (plan->valid &&
          checkCu(cuMemAlloc(&plan->pool, plan->poolSize ? plan->poolSize : 1),
                  "cuMemAlloc of the step's memory pool"))
        plan->planned = 1;
    }
  } else if (plan && plan->planned && cursor != plan->count) {
    setError("device memory plan",
             "this call allocated fewer buffers than the first call");
  }
  currentEntry = -1;
  return failed() ? -1 : 0;
}

const char *mixrt_device_error(void) { return mixrtError; }

uint64_t mixrt_device_pool_bytes(int entry) {
  return entry >= 0 && entry < kMaxEntries ? plans[entry].poolSize : 0;
}

#ifndef MIXRT_MATMUL_COMPUTE
#define MIXRT_MATMUL_COMPUTE CUBLAS_COMPUTE_32F_FAST_TF32
#endif

/* ---- The profile (MIXRT_CUDA_PROFILE=1) -------------------------------- */

/* What the device did since the runtime last asked (mixrt_device_profile):
   launches by kernel with the compiler's estimate of their bytes, products
   by call site, memsets and copies. Counted only when asked for. */

/* The compiler's estimate of each kernel's traffic (PackageABI.h); weak:
   a library linked without it (the unit tests) counts no bytes. */
extern const char mixrt_kernel_traffic[] __attribute__((weak));

typedef struct {
  char *name;
  long long read, written; /* one launch's bytes; -1: not estimated */
  long long flops;         /* one launch's float operations; -1: likewise */
  long long mmaFlops;      /* and on the tensor cores; -1: likewise */
  uint64_t launches;
} KernelCount;

typedef struct {
  uint64_t calls;
  int64_t batch, m, n, k;
} SiteCount;

enum { kFunctionSlots = 8192 };
static int profiling = -1; /* -1: MIXRT_CUDA_PROFILE not read yet */
static mixrt_device_profile_t counts;
static KernelCount *kernelCounts;
static int64_t numKernelCounts, kernelCountCapacity;
static struct {
  CUfunction function;
  int64_t kernel;
} functionSlots[kFunctionSlots];
static SiteCount *siteCounts;
static int64_t siteCountCapacity;

static int profileOn(void) {
  if (profiling < 0) {
    const char *env = getenv("MIXRT_CUDA_PROFILE");
    profiling = env && *env && strcmp(env, "0") != 0;
  }
  return profiling;
}

/* The estimate of kernel `name` from the compiler's table. */
static void lookUpTraffic(KernelCount *k) {
  k->read = k->written = k->flops = k->mmaFlops = -1;
  if (!mixrt_kernel_traffic)
    return;
  size_t length = strlen(k->name);
  for (const char *line = mixrt_kernel_traffic; *line;) {
    const char *end = strchr(line, '\n');
    if (!end)
      end = line + strlen(line);
    if ((size_t)(end - line) > length && strncmp(line, k->name, length) == 0 &&
        line[length] == ' ') {
      sscanf(line + length, "%lld %lld %lld %lld", &k->read, &k->written,
             &k->flops, &k->mmaFlops);
      return;
    }
    line = *end ? end + 1 : end;
  }
}

static unsigned functionHash(CUfunction f) {
  return (unsigned)(((uintptr_t)f >> 4) * 2654435761u) % kFunctionSlots;
}

/* Counts launches of `function` under `name` (mgpuModuleGetFunction). */
static void profileFunction(CUfunction function, const char *name) {
  unsigned h = functionHash(function);
  for (unsigned probe = 0; probe < kFunctionSlots; ++probe) {
    unsigned slot = (h + probe) % kFunctionSlots;
    if (functionSlots[slot].function == function)
      return;
    if (functionSlots[slot].function)
      continue;
    int64_t i = 0;
    while (i < numKernelCounts && strcmp(kernelCounts[i].name, name) != 0)
      ++i;
    if (i == numKernelCounts) {
      KernelCount *grown =
          (KernelCount *)grow(kernelCounts, &kernelCountCapacity,
                              numKernelCounts + 1, sizeof(KernelCount));
      char *copy = (char *)malloc(strlen(name) + 1);
      if (!grown || !copy) {
        free(copy);
        return;
      }
      kernelCounts = grown;
      strcpy(copy, name);
      KernelCount k = {copy, -1, -1, -1, -1, 0};
      lookUpTraffic(&k);
      kernelCounts[numKernelCounts++] = k;
    }
    functionSlots[slot].function = function;
    functionSlots[slot].kernel = i;
    return;
  }
}

static void profileLaunch(CUfunction function) {
  ++counts.launches;
  unsigned h = functionHash(function);
  for (unsigned probe = 0; probe < kFunctionSlots; ++probe) {
    unsigned slot = (h + probe) % kFunctionSlots;
    if (!functionSlots[slot].function)
      return;
    if (functionSlots[slot].function != function)
      continue;
    KernelCount *k = &kernelCounts[functionSlots[slot].kernel];
    ++k->launches;
    counts.kernelBytesRead += k->read > 0 ? (uint64_t)k->read : 0;
    counts.kernelBytesWritten += k->written > 0 ? (uint64_t)k->written : 0;
    counts.kernelFlops += k->flops > 0 ? (double)k->flops : 0;
    counts.kernelMmaFlops += k->mmaFlops > 0 ? (double)k->mmaFlops : 0;
    return;
  }
}

static void profileCopy(int kind, uint64_t bytes) {
  ++counts.copies[kind];
  counts.copyBytes[kind] += bytes;
}

/* A product of site `site`: C[M,N] (+)= A[M,K] B[K,N], `batch` times;
   `readsC`: it accumulates into C; `bias`: the floats its epilogue moves
   besides (a bias row, a bias gradient, a pre-activation; 0: none). */
static void profileProduct(int64_t site, int64_t batch, int64_t m, int64_t n,
                           int64_t k, int bf16, int roundD, int readsC,
                           int64_t bias) {
  if (site >= siteCountCapacity) {
    int64_t old = siteCountCapacity;
    SiteCount *grown = (SiteCount *)grow(siteCounts, &siteCountCapacity,
                                         site + 1, sizeof(SiteCount));
    if (!grown)
      return;
    siteCounts = grown;
    memset(siteCounts + old, 0,
           sizeof(SiteCount) * (size_t)(siteCountCapacity - old));
  }
  SiteCount *s = &siteCounts[site];
  s->batch = batch;
  s->m = m;
  s->n = n;
  s->k = k;
  ++s->calls;
  ++counts.matmuls;
  double products = (double)batch;
  double flops = 2.0 * products * (double)m * (double)n * (double)k;
  /* A and B in their type (bf16 or f32); C, the bias and the auxiliary
     matrix f32, or bf16 for a rounded epilogue (roundD). */
  uint64_t bytes =
      (uint64_t)batch *
      ((bf16 ? 2 : 4) * (uint64_t)(m * k + k * n) +
       (roundD ? 2 : 4) * (uint64_t)((readsC ? 2 : 1) * m * n + bias));
  counts.matmulFlops += flops;
  counts.matmulBytes += bytes;
  double peak = bf16 || MIXRT_MATMUL_COMPUTE == CUBLAS_COMPUTE_32F_FAST_16BF
                    ? MIXRT_H200_BF16_FLOPS
                    : MIXRT_H200_TF32_FLOPS;
  double computing = flops / peak,
         moving = (double)bytes / MIXRT_H200_MEMORY_BANDWIDTH;
  counts.matmulSeconds += computing > moving ? computing : moving;
}

/* Kernels by their bytes over the counted launches, most first. */
static int byTraffic(const void *x, const void *y) {
  const KernelCount *a = (const KernelCount *)x, *b = (const KernelCount *)y;
  double ta = (double)a->launches * (double)(a->read + a->written);
  double tb = (double)b->launches * (double)(b->read + b->written);
  return ta < tb ? 1 : ta > tb ? -1 : strcmp(a->name, b->name);
}

static void printProfile(const char *title) {
  int64_t used = 0;
  for (int64_t i = 0; i < numKernelCounts; ++i)
    used += kernelCounts[i].launches > 0;
  /* The summary is one write, so that ranks sharing a stderr (mpirun)
     cannot split it. */
  char line[1024];
  int len = snprintf(
      line, sizeof line,
      "mixrt cuda profile: %s: %llu kernel launches (%lld kernels), "
      "%llu bytes read and %llu written, %.6g GFLOP of arithmetic "
      "and %.6g on the tensor cores (compiler's estimate); %llu "
      "memsets (%llu bytes); %llu products (%.6g GFLOP, %llu bytes, %s); "
      "copies: "
      "%llu to the device (%llu bytes), %llu from it (%llu bytes), %llu "
      "on it (%llu bytes)",
      title ? title : "", (unsigned long long)counts.launches, (long long)used,
      (unsigned long long)counts.kernelBytesRead,
      (unsigned long long)counts.kernelBytesWritten, counts.kernelFlops * 1e-9,
      counts.kernelMmaFlops * 1e-9, (unsigned long long)counts.memsets,
      (unsigned long long)counts.memsetBytes,
      (unsigned long long)counts.matmuls, counts.matmulFlops * 1e-9,
      (unsigned long long)counts.matmulBytes,
      counts.matmulBF16 ? "BF16" : "TF32", (unsigned long long)counts.copies[0],
      (unsigned long long)counts.copyBytes[0],
      (unsigned long long)counts.copies[1],
      (unsigned long long)counts.copyBytes[1],
      (unsigned long long)counts.copies[2],
      (unsigned long long)counts.copyBytes[2]);
  if (counts.collectives && len > 0 && (size_t)len < sizeof line)
    len += snprintf(line + len, sizeof line - (size_t)len,
                    "; NCCL all-reduces: %llu (%llu bytes, %llu sent a rank",
                    (unsigned long long)counts.collectives,
                    (unsigned long long)counts.collectiveBytes,
                    (unsigned long long)counts.collectiveWireBytes);
  if (counts.collectives && counts.collectiveHiddenSeconds > 0 && len > 0 &&
      (size_t)len < sizeof line)
    len += snprintf(line + len, sizeof line - (size_t)len,
                    "; %.4g ms of them behind the backward pass",
                    counts.collectiveHiddenSeconds * 1e3);
  if (counts.collectives && len > 0 && (size_t)len < sizeof line)
    len += snprintf(line + len, sizeof line - (size_t)len, ")");
  if (counts.graphLaunches && len > 0 && (size_t)len < sizeof line)
    snprintf(line + len, sizeof line - (size_t)len,
             "; %llu CUDA graph launches (%llu of the above in them)",
             (unsigned long long)counts.graphLaunches,
             (unsigned long long)counts.graphNodes);
  fprintf(stderr, "%s\n", line);
  /* Sorted copies of the launched kernels' counts. */
  KernelCount *sorted =
      (KernelCount *)malloc(sizeof(KernelCount) * (size_t)(used ? used : 1));
  int64_t n = 0;
  for (int64_t i = 0; sorted && i < numKernelCounts; ++i)
    if (kernelCounts[i].launches)
      sorted[n++] = kernelCounts[i];
  if (sorted)
    qsort(sorted, (size_t)n, sizeof(KernelCount), byTraffic);
  if (n)
    fprintf(stderr, "  %-40s %8s %14s %14s %14s %14s\n", "kernel",
            "launches", "bytes read", "bytes written", "flops", "mma flops");
  for (int64_t i = 0; i < n; ++i) {
    char read[32], written[32], flops[32], mmaFlops[32];
    snprintf(read, sizeof read, "%lld", sorted[i].read);
    snprintf(written, sizeof written, "%lld", sorted[i].written);
    snprintf(flops, sizeof flops, "%lld", sorted[i].flops);
    snprintf(mmaFlops, sizeof mmaFlops, "%lld", sorted[i].mmaFlops);
    fprintf(stderr, "  %-40s %8llu %14s %14s %14s %14s\n", sorted[i].name,
            (unsigned long long)sorted[i].launches,
            sorted[i].read < 0 ? "?" : read,
            sorted[i].written < 0 ? "?" : written,
            sorted[i].flops < 0 ? "?" : flops,
            sorted[i].mmaFlops < 0 ? "?" : mmaFlops);
  }
  free(sorted);
  int header = 0;
  for (int64_t i = 0; i < siteCountCapacity; ++i) {
    const SiteCount *s = &siteCounts[i];
    if (!s->calls)
      continue;
    if (!header++)
      fprintf(stderr, "  %-12s %8s %-26s %12s\n", "product site", "calls",
              "batch x m x n x k", "GFLOP");
    char shape[96];
    snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld", (long long)s->batch,
             (long long)s->m, (long long)s->n, (long long)s->k);
    fprintf(stderr, "  %-12lld %8llu %-26s %12.6g\n", (long long)i,
            (unsigned long long)s->calls, shape,
            2e-9 * (double)s->calls * (double)s->batch * (double)s->m *
                (double)s->n * (double)s->k);
  }
}

int mixrt_device_profile(mixrt_device_profile_t *out, const char *title,
                         int print) {
  if (!profileOn())
    return -1;
  counts.matmulBF16 = MIXRT_MATMUL_COMPUTE == CUBLAS_COMPUTE_32F_FAST_16BF;
  if (print)
    printProfile(title);
  if (out)
    *out = counts;
  memset(&counts, 0, sizeof counts);
  for (int64_t i = 0; i < numKernelCounts; ++i)
    kernelCounts[i].launches = 0;
  for (int64_t i = 0; i < siteCountCapacity; ++i)
    siteCounts[i].calls = 0;
  return 0;
}

/* ---- CUDA graphs ------------------------------------------------------- */

/* A call of an entry point after the one that planned its memory does the
   same work on the same buffers (the pool's, and the arguments'): its
   launches, products, memsets and copies on the device are captured
   once as a CUDA graph, and every later call with the same device
   arguments launches the graph instead of running the host code
   (mixrt_device_begin_graph). Every parameter a kernel takes is a
   device pointer or a constant of the package, so the captured values
   stay right; the host's scalars (the learning rate, the step) are device
   buffers the runtime uploads before the call. A call with other
   arguments (the training state moved) captures again. */

typedef struct {
  CUgraphExec exec;
  void **args; /* the device arguments it was captured with */
  uint64_t numArgs;
  /* What one call adds to the profile: the counts, and the launches by
     kernel and the calls by product site (indices into kernelCounts and
     siteCounts). */
  mixrt_device_profile_t counts;
  uint64_t *launches, *calls;
  int64_t numKernels, numSites;
} Graph;

static Graph graphs[kMaxEntries];
/* A training step's calls, captured together (mixrt_device_begin_step). */
static Graph stepGraph;

static void dropGraph(Graph *g) {
  if (g->exec)
    cuGraphExecDestroy(g->exec);
  free(g->args);
  free(g->launches);
  free(g->calls);
  memset(g, 0, sizeof *g);
}

/* The profile's state, kept in g while the call is captured. */
static int markProfile(Graph *g) {
  g->counts = counts;
  g->numKernels = numKernelCounts;
  g->numSites = siteCountCapacity;
  g->launches = (uint64_t *)malloc(sizeof(uint64_t) *
                                   (size_t)(g->numKernels ? g->numKernels : 1));
  g->calls = (uint64_t *)malloc(sizeof(uint64_t) *
                                (size_t)(g->numSites ? g->numSites : 1));
  if (!g->launches || !g->calls) {
    setError("capturing a CUDA graph", "out of host memory");
    return 0;
  }
  for (int64_t i = 0; i < g->numKernels; ++i)
    g->launches[i] = kernelCounts[i].launches;
  for (int64_t i = 0; i < g->numSites; ++i)
    g->calls[i] = siteCounts[i].calls;
  return 1;
}

/* Turns g's mark into what the captured call added since. */
static int profileDelta(Graph *g) {
  mixrt_device_profile_t now = counts, *d = &g->counts;
  d->launches = now.launches - d->launches;
  d->kernelBytesRead = now.kernelBytesRead - d->kernelBytesRead;
  d->kernelBytesWritten = now.kernelBytesWritten - d->kernelBytesWritten;
  d->memsets = now.memsets - d->memsets;
  d->memsetBytes = now.memsetBytes - d->memsetBytes;
  d->matmuls = now.matmuls - d->matmuls;
  d->matmulFlops = now.matmulFlops - d->matmulFlops;
  d->matmulBytes = now.matmulBytes - d->matmulBytes;
  d->matmulSeconds = now.matmulSeconds - d->matmulSeconds;
  for (int i = 0; i < 3; ++i) {
    d->copies[i] = now.copies[i] - d->copies[i];
    d->copyBytes[i] = now.copyBytes[i] - d->copyBytes[i];
  }
  d->kernelFlops = now.kernelFlops - d->kernelFlops;
  d->kernelMmaFlops = now.kernelMmaFlops - d->kernelMmaFlops;
  d->collectives = now.collectives - d->collectives;
  d->collectiveBytes = now.collectiveBytes - d->collectiveBytes;
  d->collectiveWireBytes = now.collectiveWireBytes - d->collectiveWireBytes;
  d->collectiveHiddenSeconds =
      now.collectiveHiddenSeconds - d->collectiveHiddenSeconds;
  d->graphLaunches = 1;
  d->graphNodes =
      d->launches + d->matmuls + d->memsets + d->copies[2] + d->collectives;
  /* Kernels and sites first seen in the call count from 0. */
  uint64_t *launches = (uint64_t *)realloc(
      g->launches,
      sizeof(uint64_t) * (size_t)(numKernelCounts ? numKernelCounts : 1));
  uint64_t *calls = (uint64_t *)realloc(
      g->calls,
      sizeof(uint64_t) * (size_t)(siteCountCapacity ? siteCountCapacity : 1));
  if (launches)
    g->launches = launches;
  if (calls)
    g->calls = calls;
  if (!launches || !calls) {
    setError("capturing a CUDA graph", "out of host memory");
    return 0;
  }
  for (int64_t i = 0; i < numKernelCounts; ++i)
    launches[i] =
        kernelCounts[i].launches - (i < g->numKernels ? launches[i] : 0);
  for (int64_t i = 0; i < siteCountCapacity; ++i)
    calls[i] = siteCounts[i].calls - (i < g->numSites ? calls[i] : 0);
  g->numKernels = numKernelCounts;
  g->numSites = siteCountCapacity;
  /* The captured call's own launch of the graph. */
  counts.graphLaunches += 1;
  counts.graphNodes += d->graphNodes;
  return 1;
}

/* Counts a launch of g's graph as the call it replays. */
static void profileReplay(const Graph *g) {
  const mixrt_device_profile_t *d = &g->counts;
  counts.launches += d->launches;
  counts.kernelBytesRead += d->kernelBytesRead;
  counts.kernelBytesWritten += d->kernelBytesWritten;
  counts.memsets += d->memsets;
  counts.memsetBytes += d->memsetBytes;
  counts.matmuls += d->matmuls;
  counts.matmulFlops += d->matmulFlops;
  counts.matmulBytes += d->matmulBytes;
  counts.matmulSeconds += d->matmulSeconds;
  for (int i = 0; i < 3; ++i) {
    counts.copies[i] += d->copies[i];
    counts.copyBytes[i] += d->copyBytes[i];
  }
  counts.kernelFlops += d->kernelFlops;
  counts.kernelMmaFlops += d->kernelMmaFlops;
  counts.collectives += d->collectives;
  counts.collectiveBytes += d->collectiveBytes;
  counts.collectiveWireBytes += d->collectiveWireBytes;
  counts.collectiveHiddenSeconds += d->collectiveHiddenSeconds;
  counts.graphLaunches += 1;
  counts.graphNodes += d->graphNodes;
  for (int64_t i = 0; i < g->numKernels && i < numKernelCounts; ++i)
    kernelCounts[i].launches += g->launches[i];
  for (int64_t i = 0; i < g->numSites && i < siteCountCapacity; ++i)
    siteCounts[i].calls += g->calls[i];
}

/* The errors' names for a graph, by what it holds. */
typedef struct {
  const char *launching, *beginning, *capturing, *instantiating;
} GraphWords;
static const GraphWords callWords = {
    "launching the call's CUDA graph",
    "beginning to capture the call as a CUDA graph",
    "capturing the call as a CUDA graph (MIXRT_CUDA_GRAPH=0 runs without "
    "graphs)",
    "making the call's CUDA graph executable"};
static const GraphWords stepWords = {
    "launching the step's CUDA graph",
    "beginning to capture the step as a CUDA graph",
    "capturing the step as a CUDA graph (MIXRT_CUDA_GRAPH=0 runs without "
    "graphs)",
    "making the step's CUDA graph executable"};

/* Launches g when it was captured with the device arguments args (1), or
   forgets it and begins capturing the stream into it (0). */
static int launchOrCapture(Graph *g, const GraphWords *words, void *const *args,
                           uint64_t numArgs) {
  if (g->exec && g->numArgs == numArgs &&
      (numArgs == 0 ||
       memcmp(g->args, args, sizeof(void *) * (size_t)numArgs) == 0)) {
    if (checkCu(cuGraphLaunch(g->exec, stream), words->launching) &&
        profileOn())
      profileReplay(g);
    return 1;
  }
  dropGraph(g);
  g->args = (void **)malloc(sizeof(void *) * (size_t)(numArgs ? numArgs : 1));
  if (!g->args) {
    setError("capturing a CUDA graph", "out of host memory");
    return 0;
  }
  if (numArgs)
    memcpy(g->args, args, sizeof(void *) * (size_t)numArgs);
  g->numArgs = numArgs;
  if (profileOn() && !markProfile(g))
    return 0;
  checkCu(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
          words->beginning);
  return 0;
}

int mixrt_device_begin_graph(int entry, void *const *args, uint64_t numArgs) {
  mixrt_device_begin(entry);
  if (currentEntry < 0 || !plans[currentEntry].planned || !initDevice() ||
      failed() || capturingStep)
    return 0; /* the first call plans the memory, with real allocations */
  if (launchOrCapture(&graphs[currentEntry], &callWords, args, numArgs))
    return replaying = 1;
  if (!failed())
    capturingEntry = currentEntry;
  return 0;
}

/* Ends the capture into g, makes the graph executable and launches it:
   the captured work runs now. */
static void endCaptureInto(Graph *g, const GraphWords *words) {
  CUgraph graph = NULL;
  CUresult ended = cuStreamEndCapture(stream, &graph);
  int captured = !failed() && checkCu(ended, words->capturing);
  if (captured &&
      checkCu(cuGraphInstantiateWithFlags(&g->exec, graph, 0),
              words->instantiating) &&
      (!profileOn() || profileDelta(g)))
    checkCu(cuGraphLaunch(g->exec, stream), words->launching);
  if (graph)
    cuGraphDestroy(graph);
  if (failed())
    dropGraph(g);
}

static void endCapture(void) {
  Graph *g = &graphs[capturingEntry];
  capturingEntry = -1;
  endCaptureInto(g, &callWords);
}

int mixrt_device_begin_step(void *const *args, uint64_t numArgs) {
  if (!initDevice() || failed())
    return -1;
  if (capturingStep || capturingEntry >= 0) {
    setError("mixrt_device_begin_step", "a capture is under way (internal "
                                        "error)");
    return -1;
  }
  if (launchOrCapture(&stepGraph, &stepWords, args, numArgs))
    return 1;
  if (failed())
    return -1;
  capturingStep = 1;
  return 0;
}

int mixrt_device_end_step(void) {
  if (capturingStep) {
    capturingStep = 0;
    endCaptureInto(&stepGraph, &stepWords);
  }
  if (ready)
    waitForStep();
  return failed() ? -1 : 0;
}

/* ---- Moving data for the runtime --------------------------------------- */

void *mixrt_device_alloc(uint64_t size) {
  if (!initDevice())
    return NULL;
  CUdeviceptr ptr = 0;
  if (!checkCu(cuMemAlloc(&ptr, size ? size : 1), "cuMemAlloc"))
    return NULL;
  return (void *)(uintptr_t)ptr;
}

void mixrt_device_free(void *ptr) {
  if (ptr && ready)
    cuMemFree((CUdeviceptr)(uintptr_t)ptr);
}

int mixrt_device_upload(void *device, const void *host, uint64_t size) {
  if (!initDevice())
    return -1;
  if (!checkCu(cuMemcpyHtoDAsync((CUdeviceptr)(uintptr_t)device, host, size,
                                 stream),
               "copying to the device"))
    return -1;
  if (profileOn())
    profileCopy(0, size);
  return 0;
}

int mixrt_device_download(void *host, const void *device, uint64_t size) {
  if (!initDevice())
    return -1;
  if (!checkCu(cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)device, size,
                                 stream),
               "copying from the device"))
    return -1;
  if (!checkCu(cuStreamSynchronize(stream), "copying from the device"))
    return -1;
  if (profileOn())
    profileCopy(1, size);
  return 0;
}

/* ---- Inputs staged during the previous call ---------------------------- */

/* An input the host knows before the call that reads it (the next training
   step's token batch, drawn while the current step runs) goes up while the
   package's stream is busy: from a page-locked copy, into a staging
   buffer of its slot, on a stream of its own. The call that reads it then
   copies the staging buffer into its argument's buffer on the package's
   stream (a copy on the device, after the upload's event), instead of an
   upload from pageable memory on the critical path. A staging buffer is
   overwritten only after the package's stream has copied out of it (the
   copy stream waits for that event), and the page-locked copy only after
   its upload ended. */
enum { kMaxStages = 8 };
typedef struct {
  void *host;         /* page-locked: what was staged */
  CUdeviceptr device; /* the staging buffer */
  uint64_t capacity, size;
  CUevent uploaded, taken;
  int pending, everTaken;
} Stage;
static Stage stages[kMaxStages];
static CUstream copyStream;

static Stage *findStage(int slot, const char *what) {
  if (slot >= 0 && slot < kMaxStages)
    return &stages[slot];
  char detail[64];
  snprintf(detail, sizeof detail, "slot %d is not in [0, %d)", slot,
           kMaxStages);
  setError(what, detail);
  return NULL;
}

int mixrt_device_stage(int slot, const void *host, uint64_t size) {
  const char *what = "staging an input";
  Stage *s = initDevice() && !failed() ? findStage(slot, what) : NULL;
  if (!s || size == 0)
    return s ? 0 : -1;
  if (!copyStream &&
      !checkCu(cuStreamCreate(&copyStream, CU_STREAM_NON_BLOCKING), what))
    return -1;
  if (!s->uploaded &&
      (!checkCu(cuEventCreate(&s->uploaded, CU_EVENT_DISABLE_TIMING), what) ||
       !checkCu(cuEventCreate(&s->taken, CU_EVENT_DISABLE_TIMING), what)))
    return -1;
  /* The last upload has read the page-locked copy, the last take the
     staging buffer (it was queued before this call's graph). */
  if (s->capacity && !checkCu(cuEventSynchronize(s->uploaded), what))
    return -1;
  if (size > s->capacity) {
    if (s->everTaken && !checkCu(cuEventSynchronize(s->taken), what))
      return -1;
    if (s->host)
      cuMemFreeHost(s->host);
    if (s->device)
      cuMemFree(s->device);
    s->host = NULL;
    s->device = 0;
    s->capacity = 0;
    if (!checkCu(cuMemHostAlloc(&s->host, size, 0), what) ||
        !checkCu(cuMemAlloc(&s->device, size), what))
      return -1;
    s->capacity = size;
  }
  memcpy(s->host, host, size);
  if ((s->everTaken &&
       !checkCu(cuStreamWaitEvent(copyStream, s->taken, 0), what)) ||
      !checkCu(cuMemcpyHtoDAsync(s->device, s->host, size, copyStream), what) ||
      !checkCu(cuEventRecord(s->uploaded, copyStream), what))
    return -1;
  s->size = size;
  s->pending = 1;
  if (profileOn())
    profileCopy(0, size);
  return 0;
}

int mixrt_device_take_staged(int slot, void *device, const void *host,
                             uint64_t size) {
  const char *what = "taking a staged input";
  Stage *s = initDevice() && !failed() ? findStage(slot, what) : NULL;
  if (!s)
    return -1;
  /* Only what was staged, unchanged since: else the caller uploads. */
  if (!s->pending || s->size != size || memcmp(s->host, host, size) != 0)
    return 0;
  s->pending = 0;
  if (!checkCu(cuStreamWaitEvent(stream, s->uploaded, 0), what) ||
      !checkCu(cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)device, s->device,
                                 size, stream),
               what) ||
      !checkCu(cuEventRecord(s->taken, stream), what))
    return -1;
  s->everTaken = 1;
  if (profileOn())
    profileCopy(2, size);
  return 1;
}

static void releaseStages(void) {
  for (int i = 0; i < kMaxStages; ++i) {
    Stage *s = &stages[i];
    if (ready) {
      if (s->uploaded)
        cuEventSynchronize(s->uploaded);
      if (s->host)
        cuMemFreeHost(s->host);
      if (s->device)
        cuMemFree(s->device);
      if (s->uploaded)
        cuEventDestroy(s->uploaded);
      if (s->taken)
        cuEventDestroy(s->taken);
    }
    memset(s, 0, sizeof *s);
  }
  if (copyStream && ready)
    cuStreamDestroy(copyStream);
  copyStream = NULL;
}

/* ---- What the lowered launches call ------------------------------------ */

void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  if (!initDevice())
    return NULL;
  CUmodule module = NULL;
  checkCu(cuModuleLoadData(&module, data), "loading the package's kernels");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel;
  return mgpuModuleLoad(data, 0);
}

void mgpuModuleUnload(void *module) {
  if (module && ready)
    cuModuleUnload((CUmodule)module);
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module || failed())
    return NULL;
  CUfunction function = NULL;
  if (checkCu(cuModuleGetFunction(&function, (CUmodule)module, name),
              "cuModuleGetFunction") &&
      profileOn())
    profileFunction(function, name);
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *s, void **params,
                      void **extra, size_t paramsCount) {
  (void)s;
  if (!function || failed())
    return;
  /* The host passes each argument as one pointer (a memref as its bare
     data pointer); a kernel compiled for another convention would read
     past the end of `params`. */
  size_t offset = 0, size = 0;
  if (paramsCount == 0 ||
      cuFuncGetParamInfo((CUfunction)function, paramsCount - 1, &offset,
                         &size) != CUDA_SUCCESS ||
      cuFuncGetParamInfo((CUfunction)function, paramsCount, &offset, &size) ==
          CUDA_SUCCESS) {
    const char *name = NULL;
    cuFuncGetName(&name, (CUfunction)function);
    char detail[256];
    snprintf(detail, sizeof detail,
             "kernel %s does not take the %zu parameters the host passes "
             "(the kernel and host code disagree on the calling convention)",
             name ? name : "?", paramsCount);
    setError("mgpuLaunchKernel", detail);
    return;
  }
  if (checkCu(cuLaunchKernel((CUfunction)function, (unsigned)gridX,
                             (unsigned)gridY, (unsigned)gridZ,
                             (unsigned)blockX, (unsigned)blockY,
                             (unsigned)blockZ, (unsigned)smem, stream, params,
                             extra),
              "cuLaunchKernel") &&
      profileOn())
    profileLaunch((CUfunction)function);
}

/* Every launch and copy goes to the one stream, in order; the host waits
   for it in mixrt_device_end and mixrt_device_download only. */
void *mgpuStreamCreate(void) {
  initDevice();
  return stream;
}
void mgpuStreamDestroy(void *s) { (void)s; }
void mgpuStreamSynchronize(void *s) { (void)s; }

/* The package's constants on the device. The host code's only host
   memory is the package's constant globals (immutable): the first copy of
   one uploads it into a device buffer of its own, and every copy of it,
   that one included, is a copy on the device from there. A CUDA graph
   cannot copy pageable host memory, and no step needs to cross PCIe for
   a constant. */
typedef struct {
  const void *host;
  size_t size;
  CUdeviceptr device;
} DeviceConstant;

static DeviceConstant *constants;
static int64_t numConstants, constantCapacity;

static CUdeviceptr deviceConstant(const void *host, size_t size) {
  for (int64_t i = 0; i < numConstants; ++i)
    if (constants[i].host == host && constants[i].size == size)
      return constants[i].device;
  if (capturingEntry >= 0 || capturingStep) { /* no allocation now */
    setError("copying a constant to the device",
             "a constant the entry point's first call did not copy "
             "(internal error)");
    return 0;
  }
  DeviceConstant c = {host, size, 0};
  DeviceConstant *grown = (DeviceConstant *)grow(
      constants, &constantCapacity, numConstants + 1, sizeof(DeviceConstant));
  if (!grown)
    return 0;
  constants = grown;
  if (!checkCu(cuMemAlloc(&c.device, size), "cuMemAlloc of a constant") ||
      !checkCu(cuMemcpyHtoDAsync(c.device, host, size, stream),
               "copying a constant to the device"))
    return 0;
  if (profileOn())
    profileCopy(0, size);
  constants[numConstants++] = c;
  return c.device;
}

void mgpuMemcpy(void *dst, void *src, size_t size, void *s) {
  (void)s;
  if (!initDevice() || failed())
    return;
  CUmemorytype type = 0;
  CUresult host = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (CUdeviceptr)(uintptr_t)src);
  CUdeviceptr from = host == CUDA_SUCCESS /* else not device memory */
                         ? (CUdeviceptr)(uintptr_t)src
                         : deviceConstant(src, size);
  if (from &&
      checkCu(
          cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)dst, from, size, stream),
          "cuMemcpyDtoD") &&
      profileOn())
    profileCopy(2, size);
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *s) {
  (void)s;
  if (!initDevice() || failed())
    return;
  if (checkCu(cuMemsetD32Async((CUdeviceptr)(uintptr_t)dst, value, count,
                               stream),
              "cuMemsetD32") &&
      profileOn()) {
    ++counts.memsets;
    counts.memsetBytes += 4 * (uint64_t)count;
  }
}

void mgpuSetDefaultDevice(int32_t device) { (void)device; }

/* ---- Matrix products through cuBLASLt ---------------------------------- */

/* What a product does with C: accumulates into it (beta 1), overwrites it
   (beta 0: the support code's _set forms), overwrites it with a bias row
   added (beta 0 and cuBLASLt's BIAS epilogue: _bias), or overwrites it and
   writes the sums of A's rows, a bias gradient (beta 0 and cuBLASLt's
   BGRADB epilogue: _set_bgrad), or overwrites it with the product times
   the GELU's derivative at a pre-activation (beta 0 and the DGELU
   epilogue: _set_dgelu), or overwrites it with the GELU of the product plus
   a bias row, writing that sum to an auxiliary matrix (beta 0 and the
   GELU_AUX_BIAS epilogue: _bias_gelu). */
typedef enum {
  kAccumulate,
  kOverwrite,
  kAddBias,
  kBiasGrad,
  kGeluGrad,
  kBiasGelu
} Form;

typedef struct {
  int ready;
  Form form;
  int bf16;   /* A and B hold bf16 */
  int roundD; /* C, D, the bias and aux hold bf16 */
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
  int haveAlgo;
} Site;

static cublasLtHandle_t lt;
static Site *sites;
static int64_t siteCapacity;
static CUdeviceptr workspace;
static const size_t kWorkspace = 32u << 20;

/* One operand of a (batched) product as cuBLASLt sees it (column-major):
   the rows x cols matrix, its leading dimension, whether it must be
   transposed to be the operand, and the batch stride. */
typedef struct {
  uint64_t rows, cols;
  int64_t ld, batchStride;
  int transpose;
} Operand;

/* A row-major view X (r x c, strides s0 s1) is, column-major, X^T with
   ld = s0 when s1 == 1, or X with ld = s1 when s0 == 1. Returns 0 when
   neither dimension is contiguous. wantTranspose: the operand is X^T. */
static int describe(int64_t r, int64_t c, int64_t s0, int64_t s1,
                    int wantTranspose, Operand *out) {
  if (s1 == 1 || c == 1) { /* memory holds X^T (c x r) with ld s0 */
    out->rows = (uint64_t)c;
    out->cols = (uint64_t)r;
    out->ld = s0 > c ? s0 : c;
    out->transpose = !wantTranspose;
  } else if (s0 == 1 || r == 1) { /* memory holds X (r x c) with ld s1 */
    out->rows = (uint64_t)r;
    out->cols = (uint64_t)c;
    out->ld = s1 > r ? s1 : r;
    out->transpose = wantTranspose;
  } else {
    return 0;
  }
  return 1;
}

static int setupLt(void) {
  if (lt)
    return 1;
  if (!initDevice())
    return 0;
  if (!checkBlas(cublasLtCreate(&lt), "cublasLtCreate") ||
      !checkCu(cuMemAlloc(&workspace, kWorkspace), "cuMemAlloc (workspace)"))
    return 0;
  return 1;
}

/* Points `s`'s epilogue at its vector `bias` (BIAS, BGRADB,
   GELU_AUX_BIAS) and its auxiliary matrix `aux` (DGELU, GELU_AUX_BIAS). */
static int setEpilogueOperands(Site *s, const void *bias, const void *aux) {
  if (bias && !checkBlas(cublasLtMatmulDescSetAttribute(
                             s->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                             sizeof bias),
                         "BIAS_POINTER"))
    return 0;
  return !aux ||
         checkBlas(cublasLtMatmulDescSetAttribute(
                       s->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                       sizeof aux),
                   "EPILOGUE_AUX_POINTER");
}

/* C[M,N] (+)= A[M,K] B[K,N] over `batch` products, as C^T = B^T A^T in
   cuBLASLt's column-major terms (C must be row-contiguous); with kAddBias,
   `bias` is the contiguous row of N floats added to every row of C (the
   bias of C^T's rows, as the BIAS epilogue takes it); with kBiasGrad, the
   M floats at `bias` get the sums of A's rows (cuBLASLt's B is A^T: BGRADB
   sums it over k, one sum for each of C^T's columns); with kGeluGrad,
   `aux` is the pre-activation, laid out as C (DGELU's auxiliary input,
   C^T column-major with C's leading dimension); with kBiasGelu, `bias` is
   the row added and `aux`, laid out as C, gets the sum before the GELU
   (GELU_AUX_BIAS's auxiliary output). A and B are bf16 with `bf16`; C,
   the bias and aux are float, or bf16 with `roundD` (cuBLASLt gives the
   bias and the auxiliary matrix D's type outside FP8). */
static void matmul(int64_t site, Form form, int bf16, int roundD,
                   const void *bias, const void *aux, int64_t batch,
                   const void *a, int64_t M, int64_t K, int64_t sa0,
                   int64_t sa1, int64_t sab, const void *b, int64_t sb0,
                   int64_t sb1, int64_t sbb, int64_t N, void *c, int64_t sc0,
                   int64_t sc1, int64_t scb) {
  if (failed() || !setupLt())
    return;
  if (site >= siteCapacity) {
    int64_t old = siteCapacity;
    sites = (Site *)grow(sites, &siteCapacity, site + 1, sizeof(Site));
    if (!sites)
      return;
    memset(sites + old, 0, sizeof(Site) * (size_t)(siteCapacity - old));
  }
  Site *s = &sites[site];
  if (!s->ready) {
    Operand opA, opB; /* cuBLASLt's A is our B^T, its B our A^T */
    if (sc1 != 1 && N != 1) {
      setError("mixrt_cuda_matmul", "the product's result is not row-major");
      return;
    }
    if (!describe(K, N, sb0, sb1, /*wantTranspose=*/1, &opA) ||
        !describe(M, K, sa0, sa1, /*wantTranspose=*/1, &opB)) {
      setError("mixrt_cuda_matmul", "an operand has no contiguous dimension");
      return;
    }
    opA.batchStride = sbb;
    opB.batchStride = sab;
    cublasOperation_t ta = opA.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t tb = opB.transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    int64_t ldc = sc0 > N ? sc0 : N;
    const uint32_t epilogue = form == kBiasGrad   ? CUBLASLT_EPILOGUE_BGRADB
                              : form == kGeluGrad ? CUBLASLT_EPILOGUE_DGELU
                              : form == kBiasGelu
                                  ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS
                                  : CUBLASLT_EPILOGUE_BIAS;
    int epilogued = form != kAccumulate && form != kOverwrite;
    s->form = form;
    s->bf16 = bf16;
    s->roundD = roundD;
    /* bf16 operands in memory (--precision bf16) are what the tensor cores
       multiply: the plain float32 compute type, nothing left to round. */
    const cublasComputeType_t compute =
        bf16 ? CUBLAS_COMPUTE_32F : MIXRT_MATMUL_COMPUTE;
    const cudaDataType_t operandType = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    if (!checkBlas(cublasLtMatmulDescCreate(&s->desc, compute, CUDA_R_32F),
                   "cublasLtMatmulDescCreate") ||
        !checkBlas(cublasLtMatmulDescSetAttribute(
                       s->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                   "TRANSA") ||
        !checkBlas(cublasLtMatmulDescSetAttribute(
                       s->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                   "TRANSB") ||
        (epilogued && !checkBlas(cublasLtMatmulDescSetAttribute(
                                     s->desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                     &epilogue, sizeof epilogue),
                                 "EPILOGUE")) ||
        !checkBlas(cublasLtMatrixLayoutCreate(&s->a, operandType, opA.rows,
                                              opA.cols, opA.ld),
                   "layout A") ||
        !checkBlas(cublasLtMatrixLayoutCreate(&s->b, operandType, opB.rows,
                                              opB.cols, opB.ld),
                   "layout B") ||
        !checkBlas(cublasLtMatrixLayoutCreate(&s->c,
                                              roundD ? CUDA_R_16BF : CUDA_R_32F,
                                              (uint64_t)N, (uint64_t)M, ldc),
                   "layout C"))
      return;
    if (batch > 1) {
      int32_t count = (int32_t)batch;
      int64_t strides[3] = {opA.batchStride, opB.batchStride, scb};
      cublasLtMatrixLayout_t layouts[3] = {s->a, s->b, s->c};
      for (int i = 0; i < 3; ++i)
        if (!checkBlas(cublasLtMatrixLayoutSetAttribute(
                           layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                           &count, sizeof count),
                       "batch count") ||
            !checkBlas(cublasLtMatrixLayoutSetAttribute(
                           layouts[i],
                           CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                           &strides[i], sizeof strides[i]),
                       "batch stride"))
          return;
    }
    if (aux && !checkBlas(cublasLtMatmulDescSetAttribute(
                              s->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                              &ldc, sizeof ldc),
                          "EPILOGUE_AUX_LD"))
      return;
    if (epilogued && !setEpilogueOperands(s, bias, aux))
      return;
    cublasLtMatmulPreference_t pref;
    size_t ws = kWorkspace;
    int found = 0;
    cublasLtMatmulHeuristicResult_t result;
    if (!checkBlas(cublasLtMatmulPreferenceCreate(&pref), "preference") ||
        !checkBlas(cublasLtMatmulPreferenceSetAttribute(
                       pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                       sizeof ws),
                   "workspace preference"))
      return;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
        lt, s->desc, s->a, s->b, s->c, s->c, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
      s->algo = result.algo;
      s->haveAlgo = 1;
    }
    s->ready = 1;
  }
  if (s->form != form || s->bf16 != bf16 || s->roundD != roundD) {
    setError("mixrt_cuda_matmul", "a call site's products differ in form");
    return;
  }
  /* The vector and the auxiliary matrix may move between calls (the
     descriptor holds their addresses). */
  if (form != kAccumulate && form != kOverwrite &&
      !setEpilogueOperands(s, bias, aux))
    return;
  const float one = 1.0f, zero = 0.0f;
  if (profileOn())
    profileProduct(site, batch, M, N, K, bf16, roundD, form == kAccumulate,
                   form == kAddBias    ? N
                   : form == kBiasGrad ? M
                   : form == kGeluGrad ? M * N
                   : form == kBiasGelu ? N + M * N
                                       : 0);
  checkBlas(cublasLtMatmul(lt, s->desc, &one, b, s->a, a, s->b,
                           form == kAccumulate ? &one : &zero, c, s->c, c,
                           s->c, s->haveAlgo ? &s->algo : NULL,
                           (void *)(uintptr_t)workspace, kWorkspace,
                           (cudaStream_t)stream),
            "cublasLtMatmul");
}

/* ---- Averaging across ranks with NCCL ---------------------------------- */

/* libnccl is opened when a run first needs it (a cuda package trained on
   several ranks), so a package runs on one GPU without it. The few types
   and constants used are declared here, ABI-stable since NCCL 2.10 (the
   first with ncclAvg); where the toolkit has nccl.h they are checked
   against it when the package is compiled. */
typedef struct {
  char internal[128];
} MixNcclId;
typedef struct MixNcclComm *MixNcclCommRef;
enum {
  kNcclSuccess = 0,
  kNcclInProgress = 7,
  kNcclFloat32 = 7,
  kNcclSum = 0,
  kNcclAvg = 4
};
#if __has_include(<nccl.h>)
#include <nccl.h>
_Static_assert(sizeof(MixNcclId) == sizeof(ncclUniqueId), "ncclUniqueId");
_Static_assert(kNcclSuccess == ncclSuccess && kNcclInProgress == ncclInProgress,
               "ncclResult_t");
_Static_assert(kNcclFloat32 == ncclFloat32, "ncclDataType_t");
_Static_assert(kNcclAvg == ncclAvg && kNcclSum == ncclSum, "ncclRedOp_t");
#endif

static struct {
  void *library;
  int (*getUniqueId)(MixNcclId *);
  int (*commInitRank)(MixNcclCommRef *, int, MixNcclId, int);
  int (*allReduce)(const void *, void *, size_t, int, int, MixNcclCommRef,
                   CUstream);
  int (*groupStart)(void);
  int (*groupEnd)(void);
  int (*commGetAsyncError)(MixNcclCommRef, int *);
  int (*commAbort)(MixNcclCommRef);
  int (*commDestroy)(MixNcclCommRef);
  const char *(*getErrorString)(int);
  /* The data-parallel ranks' communicator (mixrt_nccl_init), and the stream
     group's (mixrt_nccl_init_streams), with this rank's place in it. */
  MixNcclCommRef comm;
  int ranks;
  MixNcclCommRef streams;
  int streamRanks, streamRank;
  double timeout;
} nccl;

static int checkNccl(int status, const char *what) {
  if (status == kNcclSuccess)
    return 1;
  char detail[256];
  snprintf(detail, sizeof detail, "NCCL error %d (%s)", status,
           nccl.getErrorString ? nccl.getErrorString(status) : "?");
  setError(what, detail);
  return 0;
}

#ifdef MIXEMU_CUDA_EMULATOR
#include <nccl.h> /* the emulator's: mixemu_nccl_library */
#endif

static int loadNccl(void) {
  if (nccl.library)
    return 1;
  if (failed())
    return 0;
#ifdef MIXEMU_CUDA_EMULATOR
  /* An emulated package's NCCL is the emulator's (runtime/emulator/Nccl.c,
     over shared memory), in the package's own library; MIXRT_NCCL_LIBRARY
     does not apply: a real NCCL cannot reach the emulator's device memory. */
  void *library = mixemu_nccl_library();
  if (!library) {
    setError("loading NCCL", "the CUDA emulator cannot open its own library");
    return 0;
  }
#else
  const char *path = getenv("MIXRT_NCCL_LIBRARY");
  if (!path || !*path)
    path = "libnccl.so.2";
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    char detail[768];
    snprintf(detail, sizeof detail,
             "%s (a cuda package run on several ranks averages its "
             "gradients with NCCL: install it, or name the library with "
             "MIXRT_NCCL_LIBRARY, or set MIXRT_NCCL=0 to average on the "
             "host over MPI)",
             dlerror());
    setError("loading NCCL", detail);
    return 0;
  }
#endif
#define MIX_NCCL_SYMBOL(field, name)                                          \
  if (!(*(void **)&nccl.field = dlsym(library, name))) {                      \
    setError("loading NCCL", "the library has no " name " (NCCL 2.10 or "     \
                             "later is needed)");                             \
    dlclose(library);                                                         \
    return 0;                                                                 \
  }
  MIX_NCCL_SYMBOL(getUniqueId, "ncclGetUniqueId")
  MIX_NCCL_SYMBOL(commInitRank, "ncclCommInitRank")
  MIX_NCCL_SYMBOL(allReduce, "ncclAllReduce")
  MIX_NCCL_SYMBOL(groupStart, "ncclGroupStart")
  MIX_NCCL_SYMBOL(groupEnd, "ncclGroupEnd")
  MIX_NCCL_SYMBOL(commGetAsyncError, "ncclCommGetAsyncError")
  MIX_NCCL_SYMBOL(commAbort, "ncclCommAbort")
  MIX_NCCL_SYMBOL(commDestroy, "ncclCommDestroy")
  MIX_NCCL_SYMBOL(getErrorString, "ncclGetErrorString")
#undef MIX_NCCL_SYMBOL
  nccl.library = library;
  return 1;
}

/* The communicator's id, made by the first rank and sent to the others by
   the runtime (over MPI). Writes 128 bytes to id. */
int mixrt_nccl_unique_id(void *id) {
  if (!loadNccl())
    return -1;
  MixNcclId made;
  if (!checkNccl(nccl.getUniqueId(&made), "ncclGetUniqueId"))
    return -1;
  memcpy(id, &made, sizeof made);
  return 0;
}

/* Joins *comm, a communicator of `ranks` ranks with the id from
   mixrt_nccl_unique_id. Blocks until every rank has joined (the runtime
   bounds the wait). */
static int joinCommunicator(MixNcclCommRef *comm, const void *id, int ranks,
                            int rank, double timeout, const char *what) {
  if (!loadNccl() || !initDevice())
    return -1;
  if (*comm) {
    setError(what, "the communicator exists already");
    return -1;
  }
  MixNcclId joined;
  memcpy(&joined, id, sizeof joined);
  if (!checkNccl(nccl.commInitRank(comm, ranks, joined, rank),
                 "ncclCommInitRank")) {
    *comm = NULL;
    return -1;
  }
  nccl.timeout = timeout;
  return 0;
}

/* The data-parallel ranks' communicator. Later collectives give up after
   timeout seconds. */
int mixrt_nccl_init(const void *id, int ranks, int rank, double timeout) {
  if (joinCommunicator(&nccl.comm, id, ranks, rank, timeout,
                       "mixrt_nccl_init") != 0)
    return -1;
  nccl.ranks = ranks;
  return 0;
}

/* The stream group's communicator (a package compiled with
   --stream-shards): the sums inside the compiled code run over it. */
int mixrt_nccl_init_streams(const void *id, int ranks, int rank,
                            double timeout) {
  if (joinCommunicator(&nccl.streams, id, ranks, rank, timeout,
                       "mixrt_nccl_init_streams") != 0)
    return -1;
  nccl.streamRanks = ranks;
  nccl.streamRank = rank;
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Counts `launches` NCCL launches of all-reduces of `floats` in all over
   `ranks` ranks in the profile (the all-reduces of one NCCL group are one
   launch). */
static void profileCollective(uint64_t launches, uint64_t floats, int ranks) {
  uint64_t bytes = floats * sizeof(float);
  counts.collectives += launches;
  counts.collectiveBytes += bytes;
  counts.collectiveWireBytes +=
      ranks > 1 ? 2 * (uint64_t)(ranks - 1) * bytes / (uint64_t)ranks : 0;
}

/* Waits for the package's stream, on which collectives of the
   communicators in comms[0..count) may run. A rank that died or stalls
   shows as no progress: after the timeout every one of them is aborted
   (which ends its kernels) and the wait fails, so a run never hangs in
   NCCL. */
static int waitForRanks(MixNcclCommRef *const *comms, int count,
                        const char *what) {
  double deadline = now() + nccl.timeout;
  for (int polls = 0;; ++polls) {
    CUresult done = cuStreamQuery(stream);
    if (done == CUDA_SUCCESS)
      return 0;
    if (done != CUDA_ERROR_NOT_READY) {
      checkCu(done, what);
      return -1;
    }
    int stuck = now() > deadline;
    for (int i = 0; i < count && !stuck; ++i) {
      int async = kNcclSuccess;
      stuck = !checkNccl(nccl.commGetAsyncError(*comms[i], &async),
                         "ncclCommGetAsyncError") ||
              (async != kNcclInProgress && !checkNccl(async, what));
    }
    if (stuck) {
      if (!failed()) {
        char detail[256];
        snprintf(detail, sizeof detail,
                 "no reply from the other ranks in %g s (a rank died or "
                 "stalled; MIXRT_RANK_TIMEOUT sets the limit)",
                 nccl.timeout);
        setError(what, detail);
      }
      for (int i = 0; i < count; ++i) {
        nccl.commAbort(*comms[i]);
        *comms[i] = NULL;
      }
      return -1;
    }
    if (polls > 1000) {
      struct timespec pause = {0, 100000};
      nanosleep(&pause, NULL);
    }
  }
}

/* Replaces each of the count float buffers by its mean over the ranks, in
   place, in one NCCL group on the package's stream; waits for it (with
   the deadline of waitForRanks). */
int mixrt_nccl_average(void *const *buffers, const uint64_t *floats,
                       int count) {
  if (!nccl.comm) {
    setError("mixrt_nccl_average", "no NCCL communicator");
    return -1;
  }
  if (failed() || !initDevice())
    return -1;
  if (!checkNccl(nccl.groupStart(), "ncclGroupStart"))
    return -1;
  for (int i = 0; i < count; ++i) {
    if (!checkNccl(nccl.allReduce(buffers[i], buffers[i], (size_t)floats[i],
                                  kNcclFloat32, kNcclAvg, nccl.comm, stream),
                   "ncclAllReduce")) {
      nccl.groupEnd();
      return -1;
    }
    if (profileOn())
      profileCollective(i == 0, floats[i], nccl.ranks);
  }
  if (!checkNccl(nccl.groupEnd(), "ncclGroupEnd"))
    return -1;
  if (capturingStep) /* part of the step's graph: its end waits */
    return 0;
  MixNcclCommRef *comms[] = {&nccl.comm};
  return waitForRanks(comms, 1, "averaging across the ranks with NCCL");
}

/* ---- The average overlapped with the backward pass ---------------------- */

/* As DDP does: grad's outputs are averaged in buckets while the backward
   pass goes on. The compiled code calls mix_gradient_ready after the last
   use of each output (the gradients of the last layers come first); once
   the ready ones hold bucketFloats floats, the package's stream records an
   event, the averaging stream waits for it and all-reduces the bucket in
   one NCCL group, and the package's stream goes on with the kernels before
   it. mixrt_nccl_end_average sends the rest and makes the package's stream
   wait for the averaging stream: nothing after the call (adamw, a copy
   down) sees a gradient before its average. Every bucket's all-reduce is
   over buffers nothing later in the call touches, so the two streams
   share no buffer while both run. */

enum { kMaxBuckets = 256 };

static struct {
  int armed;
  int count;
  void **buffers;
  uint64_t *floats;
  unsigned char *sent;
  int *pending; /* the bucket being filled: indices into buffers */
  int numPending;
  uint64_t pendingFloats, bucketFloats;
  int buckets; /* sent on the averaging stream this call */
  CUstream stream;
  CUevent ready, averaged;
  /* For the profile: the estimated time of the package's own work when
     each bucket was sent, and each bucket's time on the links. */
  double workAt[kMaxBuckets], linkSeconds[kMaxBuckets];
} overlap;

/* The package's work so far, in seconds, weighed as the runtime's estimate
   weighs it (DeviceProfile.cpp: kernels, arithmetic, products, launches). */
static double workSeconds(void) {
  double peak =
      counts.matmulBF16 ? MIXRT_H200_BF16_FLOPS : MIXRT_H200_TF32_FLOPS;
  double perLaunch = capturingStep || capturingEntry >= 0
                         ? MIXRT_H200_GRAPH_NODE_SECONDS
                         : MIXRT_H200_LAUNCH_SECONDS;
  return (double)(counts.kernelBytesRead + counts.kernelBytesWritten +
                  counts.memsetBytes) /
             MIXRT_H200_MEMORY_BANDWIDTH +
         counts.kernelFlops / MIXRT_H200_FP32_FLOPS +
         counts.kernelMmaFlops / peak + counts.matmulSeconds +
         (double)(counts.launches + counts.matmuls + counts.memsets +
                  counts.copies[2]) *
             perLaunch;
}

/* Sends the pending bucket. */
static int sendBucket(void) {
  if (overlap.numPending == 0)
    return 0;
  const char *what = "averaging a bucket of gradients with NCCL";
  if (!checkCu(cuEventRecord(overlap.ready, stream), what) ||
      !checkCu(cuStreamWaitEvent(overlap.stream, overlap.ready, 0), what) ||
      !checkNccl(nccl.groupStart(), "ncclGroupStart"))
    return -1;
  for (int p = 0; p < overlap.numPending; ++p) {
    int i = overlap.pending[p];
    if (!checkNccl(nccl.allReduce(overlap.buffers[i], overlap.buffers[i],
                                  (size_t)overlap.floats[i], kNcclFloat32,
                                  kNcclAvg, nccl.comm, overlap.stream),
                   "ncclAllReduce")) {
      nccl.groupEnd();
      return -1;
    }
    overlap.sent[i] = 1;
  }
  if (!checkNccl(nccl.groupEnd(), "ncclGroupEnd"))
    return -1;
  if (profileOn()) {
    uint64_t wire = counts.collectiveWireBytes;
    profileCollective(1, overlap.pendingFloats, nccl.ranks);
    int b = overlap.buckets < kMaxBuckets ? overlap.buckets : kMaxBuckets - 1;
    if (b == overlap.buckets) /* later ones join the last one's */
      overlap.workAt[b] = workSeconds(), overlap.linkSeconds[b] = 0;
    overlap.linkSeconds[b] += (double)(counts.collectiveWireBytes - wire) /
                                  MIXRT_H200_LINK_BANDWIDTH +
                              MIXRT_H200_COLLECTIVE_SECONDS;
  }
  ++overlap.buckets;
  overlap.numPending = 0;
  overlap.pendingFloats = 0;
  return 0;
}

/* What of the buckets' link time the work after them hides: the averaging
   stream runs them in order, each from when it was sent, and the step ends
   when both streams have; what ends later than the package's own work is
   exposed (the latest of each bucket's send plus the link time of it and
   every later one). */
static double hiddenSeconds(void) {
  int n = overlap.buckets < kMaxBuckets ? overlap.buckets : kMaxBuckets;
  double end = workSeconds(), exposed = 0, after = 0;
  for (int b = n - 1; b >= 0; --b) {
    after += overlap.linkSeconds[b];
    double late = (overlap.workAt[b] - end) + after;
    if (late > exposed)
      exposed = late;
  }
  return after - exposed; /* 0 when the last bucket holds every output */
}

static void releaseOverlap(void) {
  free(overlap.buffers);
  free(overlap.floats);
  free(overlap.sent);
  free(overlap.pending);
  overlap.buffers = NULL;
  overlap.floats = NULL;
  overlap.sent = NULL;
  overlap.pending = NULL;
  overlap.count = 0;
}

int mixrt_nccl_begin_average(void *const *buffers, const uint64_t *floats,
                             int count, uint64_t bucketFloats) {
  const char *what = "mixrt_nccl_begin_average";
  if (!nccl.comm) {
    setError(what, "no NCCL communicator");
    return -1;
  }
  if (failed() || !initDevice())
    return -1;
  if (overlap.armed) {
    setError(what, "an average is under way (internal error)");
    return -1;
  }
  if (!overlap.stream &&
      (!checkCu(cuStreamCreate(&overlap.stream, CU_STREAM_NON_BLOCKING),
                what) ||
       !checkCu(cuEventCreate(&overlap.ready, CU_EVENT_DISABLE_TIMING), what) ||
       !checkCu(cuEventCreate(&overlap.averaged, CU_EVENT_DISABLE_TIMING),
                what)))
    return -1;
  if (count > overlap.count) {
    releaseOverlap();
    size_t n = (size_t)count;
    overlap.buffers = (void **)malloc(n * sizeof(void *));
    overlap.floats = (uint64_t *)malloc(n * sizeof(uint64_t));
    overlap.sent = (unsigned char *)malloc(n);
    overlap.pending = (int *)malloc(n * sizeof(int));
    if (!overlap.buffers || !overlap.floats || !overlap.sent ||
        !overlap.pending) {
      releaseOverlap();
      setError(what, "out of host memory");
      return -1;
    }
  }
  overlap.count = count;
  for (int i = 0; i < count; ++i) {
    overlap.buffers[i] = buffers[i];
    overlap.floats[i] = floats[i];
    overlap.sent[i] = 0;
  }
  overlap.numPending = 0;
  overlap.pendingFloats = 0;
  overlap.bucketFloats = bucketFloats ? bucketFloats : 1;
  overlap.buckets = 0;
  overlap.armed = 1;
  return 0;
}

void mix_gradient_ready(void *data) {
  if (!overlap.armed || failed())
    return;
  for (int i = 0; i < overlap.count; ++i)
    if (overlap.buffers[i] == data && !overlap.sent[i]) {
      int queued = 0;
      for (int p = 0; p < overlap.numPending && !queued; ++p)
        queued = overlap.pending[p] == i;
      if (queued)
        return;
      overlap.pending[overlap.numPending++] = i;
      overlap.pendingFloats += overlap.floats[i];
      if (overlap.pendingFloats >= overlap.bucketFloats)
        sendBucket();
      return;
    }
}

int mixrt_nccl_end_average(void) {
  if (!overlap.armed) {
    setError("mixrt_nccl_end_average", "no average is under way (internal "
                                       "error)");
    return -1;
  }
  overlap.armed = 0;
  if (failed())
    return -1;
  /* What the compiled code did not mark (nothing, from a package built
     with the pass) goes in the last bucket. */
  for (int i = 0; i < overlap.count; ++i) {
    int queued = overlap.sent[i];
    for (int p = 0; p < overlap.numPending && !queued; ++p)
      queued = overlap.pending[p] == i;
    if (!queued) {
      overlap.pending[overlap.numPending++] = i;
      overlap.pendingFloats += overlap.floats[i];
    }
  }
  if (sendBucket() != 0)
    return -1;
  const char *what = "waiting for the gradients' average";
  if (!checkCu(cuEventRecord(overlap.averaged, overlap.stream), what) ||
      !checkCu(cuStreamWaitEvent(stream, overlap.averaged, 0), what))
    return -1;
  if (profileOn())
    counts.collectiveHiddenSeconds += hiddenSeconds();
  return 0;
}

/* Waits for the call's work: with the deadline of waitForRanks when it
   may hold NCCL's sums (the stream group's, the gradients' average in the
   call or in a step's graph), which wait for the other ranks. */
static int waitForStep(void) {
  const char *what = "the kernels of the step";
  MixNcclCommRef *comms[2];
  int count = 0;
  if (nccl.streams)
    comms[count++] = &nccl.streams;
  if (nccl.comm)
    comms[count++] = &nccl.comm;
  if (count == 0)
    return checkCu(cuStreamSynchronize(stream), what) ? 0 : -1;
  return waitForRanks(comms, count, what);
}

/* ---- Sums over a stream group (mix.all_reduce) -------------------------- */

/* The compiled code of a package with sharded streams reads its rank (a
   host value: the offsets of its parts) and sums partial values over the
   group in place, on the device: an NCCL all-reduce queued on the
   package's stream, between the kernels that produce and consume the
   buffer (and captured with them in the call's CUDA graph). Unconnected,
   the package is rank 0 of one and the sum is the identity. Weak only
   because the unit tests link the CPU support code, which has its own,
   beside this file (compiled into the emulator's library); a package has
   one support file. */

__attribute__((weak)) int64_t mix_comm_rank(void) { return nccl.streamRank; }

__attribute__((weak)) void mix_comm_all_reduce(float *base, int64_t offset,
                                               int64_t count) {
  if (failed() || count <= 0 || nccl.streamRanks <= 1)
    return;
  if (!nccl.streams) {
    setError("the sum over the stream ranks", "the stream group's NCCL "
                                              "communicator was aborted");
    return;
  }
  float *data = base + offset;
  if (checkNccl(nccl.allReduce(data, data, (size_t)count, kNcclFloat32,
                               kNcclSum, nccl.streams, stream),
                "ncclAllReduce (the partial sums of the sharded streams)") &&
      profileOn())
    profileCollective(1, (uint64_t)count, nccl.streamRanks);
}

/* ---- Unloading --------------------------------------------------------- */

__attribute__((destructor)) static void releaseDevice(void) {
  if (nccl.comm)
    nccl.commDestroy(nccl.comm);
  if (nccl.streams)
    nccl.commDestroy(nccl.streams);
  nccl.comm = nccl.streams = NULL;
  for (int64_t i = 0; i < siteCapacity; ++i)
    if (sites[i].ready) {
      cublasLtMatrixLayoutDestroy(sites[i].a);
      cublasLtMatrixLayoutDestroy(sites[i].b);
      cublasLtMatrixLayoutDestroy(sites[i].c);
      cublasLtMatmulDescDestroy(sites[i].desc);
    }
  free(sites);
  sites = NULL;
  siteCapacity = 0;
  for (int64_t i = 0; i < numKernelCounts; ++i)
    free(kernelCounts[i].name);
  free(kernelCounts);
  kernelCounts = NULL;
  numKernelCounts = kernelCountCapacity = 0;
  free(siteCounts);
  siteCounts = NULL;
  siteCountCapacity = 0;
  for (int e = 0; e < kMaxEntries; ++e) {
    if (plans[e].pool && ready)
      cuMemFree(plans[e].pool);
    free(plans[e].blocks);
    memset(&plans[e], 0, sizeof plans[e]);
  }
  free(recorded);
  recorded = NULL;
  recordedCount = recordedCapacity = 0;
  releaseStages();
  releaseOverlap();
  if (ready && overlap.stream) {
    cuEventDestroy(overlap.ready);
    cuEventDestroy(overlap.averaged);
    cuStreamDestroy(overlap.stream);
  }
  overlap.stream = NULL;
  if (ready) {
    if (workspace)
      cuMemFree(workspace);
    if (lt)
      cublasLtDestroy(lt);
    cuStreamDestroy(stream);
    CUdevice device;
    if (cuCtxGetDevice(&device) == CUDA_SUCCESS)
      cuDevicePrimaryCtxRelease(device);
  }
  workspace = 0;
  lt = NULL;
  ready = 0;
}

/* The public forms (PackageABI.h): each passes its operands' views to
   matmul() in its form. A and B are `bf16` (mixrt_bf16, --precision bf16)
   or float; pointers advance by their element's size. */
static const void *element(const void *base, int bf16, int64_t offset) {
  return (const char *)base + offset * (bf16 ? 2 : 4);
}

static void matmul2(Form form, int bf16, int roundD, const void *bias,
                    const void *aux, MIXRT_OPERANDS_2_INTO(const void, void)) {
  (void)bk;
  (void)cm;
  (void)cn;
  matmul(site, form, bf16, roundD, bias, aux, 1, element(a, bf16, ao), am, ak,
         as0, as1, 0, element(b, bf16, bo), bs0, bs1, 0, bn,
         (char *)c + co * (roundD ? 2 : 4), cs0, cs1, 0);
}

static void matmul3(Form form, int bf16, MIXRT_OPERANDS_3(const void)) {
  (void)bb;
  (void)bk;
  (void)cb;
  (void)cm;
  (void)cn;
  matmul(site, form, bf16, 0, NULL, NULL, ab, element(a, bf16, ao), am, ak, as0,
         as1, asb, element(b, bf16, bo), bs0, bs1, bsb, bn, c + co, cs0, cs1,
         csb);
}

/* Two batch dimensions (mix-head-products: attention's (batch, head)
   products, read in their layouts): one strided-batched product over the
   inner batch dimension for each index of the outer one. */
static void matmul4(Form form, int bf16, MIXRT_OPERANDS_4(const void)) {
  (void)bb0;
  (void)bb1;
  (void)bk;
  (void)cb0;
  (void)cb1;
  (void)cm;
  (void)cn;
  for (int64_t i = 0; i < ab0; ++i)
    matmul(site, form, bf16, 0, NULL, NULL, ab1,
           element(a, bf16, ao + i * asb0), am, ak, as0, as1, asb1,
           element(b, bf16, bo + i * bsb0), bs0, bs1, bsb1, bn,
           c + co + i * csb0, cs0, cs1, csb1);
}

#define MIXRT_FORWARD_2                                                        \
  site, a, ao, am, ak, as0, as1, b, bo, bk, bn, bs0, bs1, c, co, cm, cn, cs0,  \
      cs1
#define MIXRT_FORWARD_3                                                        \
  site, a, ao, ab, am, ak, asb, as0, as1, b, bo, bb, bk, bn, bsb, bs0, bs1, c, \
      co, cb, cm, cn, csb, cs0, cs1
#define MIXRT_FORWARD_4                                                        \
  site, a, ao, ab0, ab1, am, ak, asb0, asb1, as0, as1, b, bo, bb0, bb1, bk,    \
      bn, bsb0, bsb1, bs0, bs1, c, co, cb0, cb1, cm, cn, csb0, csb1, cs0, cs1

/* Whether the vector of `length` floats, `stride` apart, is contiguous and
   `want` long (a bias row, `what`); if not, records why for `name`. */
static int vectorFits(const char *name, const char *what, int64_t length,
                      int64_t stride, int64_t want, const char *wantWhat) {
  char why[160];
  if (stride != 1 && length != 1) {
    snprintf(why, sizeof why, "the %s is not contiguous", what);
    setError(name, why);
    return 0;
  }
  if (length != want) {
    snprintf(why, sizeof why, "the %s's length is not the product's %s", what,
             wantWhat);
    setError(name, why);
    return 0;
  }
  return 1;
}

/* Whether the pre-activation (m x n, strides s0 s1) is shaped and laid out
   as C; if not, records why for `name`. */
static int laidOutAsC(const char *name, int64_t m, int64_t n, int64_t s0,
                      int64_t s1, int64_t cm, int64_t cn, int64_t cs0,
                      int64_t cs1) {
  if (m == cm && n == cn && s0 == cs0 && s1 == cs1)
    return 1;
  setError(name, "the pre-activation is not shaped and laid out as the "
                 "product");
  return 0;
}

/* Each form, for float operands (SUFFIX empty) and bf16 ones (_bf16). */
#define MIXRT_CUDA_FORMS(NAME, SUFFIX, T, BF16)                                \
  void NAME##SUFFIX(MIXRT_OPERANDS_2(T)) {                                     \
    matmul2(kAccumulate, BF16, 0, NULL, NULL, MIXRT_FORWARD_2);                \
  }                                                                            \
  void NAME##_set##SUFFIX(MIXRT_OPERANDS_2(T)) {                               \
    matmul2(kOverwrite, BF16, 0, NULL, NULL, MIXRT_FORWARD_2);                 \
  }                                                                            \
  void NAME##_bias##SUFFIX(MIXRT_OPERANDS_2(T), MIXRT_BIAS) {                  \
    if (vectorFits(#NAME "_bias" #SUFFIX, "bias row", biasn, biass, bn,        \
                   "columns"))                                                 \
      matmul2(kAddBias, BF16, 0, bias + biaso, NULL, MIXRT_FORWARD_2);         \
  }                                                                            \
  void NAME##_set_bgrad##SUFFIX(MIXRT_OPERANDS_2(T), MIXRT_BIAS) {             \
    if (vectorFits(#NAME "_set_bgrad" #SUFFIX, "bias gradient", biasn, biass,  \
                   am, "rows"))                                                \
      matmul2(kBiasGrad, BF16, 0, bias + biaso, NULL, MIXRT_FORWARD_2);        \
  }                                                                            \
  void NAME##_set_dgelu##SUFFIX(MIXRT_OPERANDS_2(T), MIXRT_AUX) {              \
    if (laidOutAsC(#NAME "_set_dgelu" #SUFFIX, auxm, auxn, auxs0, auxs1, cm,   \
                   cn, cs0, cs1))                                              \
      matmul2(kGeluGrad, BF16, 0, NULL, aux + auxo, MIXRT_FORWARD_2);          \
  }                                                                            \
  void NAME##_bias_gelu##SUFFIX(MIXRT_OPERANDS_2(T), MIXRT_BIAS, MIXRT_AUX) {  \
    if (vectorFits(#NAME "_bias_gelu" #SUFFIX, "bias row", biasn, biass, bn,   \
                   "columns") &&                                               \
        laidOutAsC(#NAME "_bias_gelu" #SUFFIX, auxm, auxn, auxs0, auxs1, cm,   \
                   cn, cs0, cs1))                                              \
      matmul2(kBiasGelu, BF16, 0, bias + biaso, aux + auxo, MIXRT_FORWARD_2);  \
  }
#define MIXRT_CUDA_BATCH_FORMS(NAME, SUFFIX, T, BF16, R)                       \
  void NAME##SUFFIX(MIXRT_OPERANDS_##R(T)) {                                   \
    matmul##R(kAccumulate, BF16, MIXRT_FORWARD_##R);                           \
  }                                                                            \
  void NAME##_set##SUFFIX(MIXRT_OPERANDS_##R(T)) {                             \
    matmul##R(kOverwrite, BF16, MIXRT_FORWARD_##R);                            \
  }

MIXRT_CUDA_FORMS(mixrt_cuda_matmul, , float, 0)
MIXRT_CUDA_FORMS(mixrt_cuda_matmul, _bf16, mixrt_bf16, 1)

/* --precision bf16's GELU on the epilogue: C rounded to bf16, the bias and
   the pre-activation bf16 too. */
void mixrt_cuda_matmul_set_dgelu_bf16_to_bf16(MIXRT_OPERANDS_2_INTO(mixrt_bf16,
                                                                    mixrt_bf16),
                                              MIXRT_AUX_OF(mixrt_bf16)) {
  if (laidOutAsC("mixrt_cuda_matmul_set_dgelu_bf16_to_bf16", auxm, auxn, auxs0,
                 auxs1, cm, cn, cs0, cs1))
    matmul2(kGeluGrad, 1, 1, NULL, aux + auxo, MIXRT_FORWARD_2);
}

void mixrt_cuda_matmul_bias_gelu_bf16_to_bf16(MIXRT_OPERANDS_2_INTO(mixrt_bf16,
                                                                    mixrt_bf16),
                                              MIXRT_BIAS_OF(mixrt_bf16),
                                              MIXRT_AUX_OF(mixrt_bf16)) {
  if (vectorFits("mixrt_cuda_matmul_bias_gelu_bf16_to_bf16", "bias row", biasn,
                 biass, bn, "columns") &&
      laidOutAsC("mixrt_cuda_matmul_bias_gelu_bf16_to_bf16", auxm, auxn, auxs0,
                 auxs1, cm, cn, cs0, cs1))
    matmul2(kBiasGelu, 1, 1, bias + biaso, aux + auxo, MIXRT_FORWARD_2);
}
MIXRT_CUDA_BATCH_FORMS(mixrt_cuda_batch_matmul, , float, 0, 3)
MIXRT_CUDA_BATCH_FORMS(mixrt_cuda_batch_matmul, _bf16, mixrt_bf16, 1, 3)
MIXRT_CUDA_BATCH_FORMS(mixrt_cuda_batch2_matmul, , float, 0, 4)
MIXRT_CUDA_BATCH_FORMS(mixrt_cuda_batch2_matmul, _bf16, mixrt_bf16, 1, 4)
