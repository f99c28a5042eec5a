/*===- Memory.c - The emulated device's memory and copies -----------------===//
 *
 * Part of the CUDA emulator (runtime/emulator). Device memory is one
 * region of address space reserved at the first allocation (PROT_NONE,
 * MAP_NORESERVE: it costs no memory until used), so that "device
 * pointers" are real addresses the emulated kernels dereference directly,
 * and yet the emulator can tell them from host memory:
 *  - cuMemAlloc commits the pages of each allocation (read-write) where it
 *    places it, page-aligned (so 256-byte aligned, as the driver
 *    promises), with a guard gap of inaccessible pages after it, so that a
 *    run past the end of a buffer faults instead of reading its
 *    neighbour. Places are chosen next-fit, so freed memory is reused
 *    late, which keeps a use after free more likely to fault;
 *  - cuMemFree decommits the pages (they read as zero when reused) and
 *    rejects what is not the start of a live allocation (double frees);
 *  - every copy and memset must lie inside one live allocation, and a host
 *    side must not be device memory: the error names the allocation and
 *    by how much the range misses it;
 *  - cuPointerGetAttribute(MEMORY_TYPE) answers DEVICE inside a live
 *    allocation and CUDA_ERROR_INVALID_VALUE elsewhere, as the driver does
 *    for unregistered host memory (the support code's mgpuMemcpy tells a
 *    host constant from device memory this way).
 * The total committed is limited to an H200's memory (143771 MiB).
 * In count-only mode (MIXEMU_COUNT_ONLY=1) an allocation is placed and
 * counted against that limit as usual, but its pages stay inaccessible
 * (so the host commits nothing for it: a step that needs tens of GB of
 * device memory costs none), copies and memsets are checked and counted
 * but move nothing, and a copy to the host fills the host's buffer with
 * zeros.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */

#include "Internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* What cudaGetDeviceProperties reports for an H200's HBM3e (141 GB). */
static const uint64_t kDeviceMemory = (uint64_t)143771 << 20;
/* The address space reserved; halved until the system grants it. At most
   half of it is allocated (the rest is the guards' and placement's slack),
   so 512 GiB lets the allocations reach the H200's whole memory. */
static const size_t kReserve = (size_t)512 << 30;
static const size_t kMinReserve = (size_t)1 << 30;
/* The inaccessible gap after each allocation. */
static const size_t kGuard = (size_t)64 << 10;

static uintptr_t arenaBegin, arenaEnd; /* [begin, end) reserved */
static size_t pageSize, guardSize;
static uint64_t limit, committed, serials;
static uintptr_t cursor; /* where the next-fit search starts */

/* The live allocations, sorted by base. */
static MixEmuAllocation *allocations;
static size_t count, capacity;

static size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

static int reserveArena(void) {
  if (arenaBegin)
    return 1;
  long page = sysconf(_SC_PAGESIZE);
  pageSize = page > 0 ? (size_t)page : 4096;
  guardSize = roundUp(kGuard, pageSize);
  for (size_t size = kReserve; size >= kMinReserve; size /= 2) {
    void *p = mmap(NULL, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      continue;
    arenaBegin = (uintptr_t)p;
    arenaEnd = arenaBegin + size;
    cursor = arenaBegin + guardSize; /* a guard before the first one too */
    limit = kDeviceMemory < size / 2 ? kDeviceMemory : size / 2;
    return 1;
  }
  return 0;
}

/* ---- The host kept out of device memory -------------------------------- */

/* Whether the check is on (-1: not decided yet), and whether the live
   allocations are accessible now. */
static int hostCheck = -1;
static int accessible = 1;
static struct sigaction previousSegv;

/* A fault in the arena while the host runs: say so, then let the fault
   take its course (the previous handler, or the default). */
static void onSegv(int sig, siginfo_t *info, void *context) {
  (void)context;
  uintptr_t p = (uintptr_t)info->si_addr;
  if (!accessible && mixemuInArena(p)) {
    char where[256], line[512];
    mixemuDescribeAddress(p, where, sizeof where);
    int n = mixemuCountOnly()
                ? snprintf(line, sizeof line,
                           "CUDA emulator: device memory was touched at "
                           "0x%llx (%s); with MIXEMU_COUNT_ONLY=1 nothing "
                           "may touch it\n",
                           (unsigned long long)p, where)
                : snprintf(line, sizeof line,
                           "CUDA emulator: the host dereferenced device "
                           "memory at 0x%llx (%s); only kernels, copies and "
                           "products may touch it\n",
                           (unsigned long long)p, where);
    if (n > 0)
      (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n
                                                     : sizeof line - 1);
  }
  (void)sig;
  sigaction(SIGSEGV, &previousSegv, NULL);
}

static void decideHostCheck(void) {
  if (hostCheck >= 0)
    return;
  const char *env = getenv("MIXEMU_HOST_ACCESS_CHECK");
  hostCheck = !(env && strcmp(env, "0") == 0);
  if (!hostCheck)
    return;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = onSegv;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previousSegv);
}

static void protectAll(int prot);

void mixemuDeviceAccess(int on) {
  decideHostCheck();
  if (mixemuCountOnly())
    on = 0; /* nothing is run: device memory is never touched */
  if (!hostCheck || accessible == !!on)
    return;
  accessible = !!on;
  protectAll(on ? PROT_READ | PROT_WRITE : PROT_NONE);
}

/* The number of allocations whose base is at most p. */
static size_t upperBound(uintptr_t p) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (allocations[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const MixEmuAllocation *mixemuFindAllocation(uintptr_t p) {
  size_t i = upperBound(p);
  if (i == 0)
    return NULL;
  const MixEmuAllocation *a = &allocations[i - 1];
  return p - a->base < a->size ? a : NULL;
}

int mixemuInArena(uintptr_t p) { return p >= arenaBegin && p < arenaEnd; }

uint64_t mixemuDeviceBytes(void) { return committed; }

/* Whether [p, p + n) meets the arena. */
static int touchesArena(uintptr_t p, size_t n) {
  return arenaBegin && p < arenaEnd && (p >= arenaBegin || arenaBegin - p < n);
}

static void describeAllocation(const MixEmuAllocation *a, char *out,
                               size_t size) {
  snprintf(out, size, "allocation #%llu (%zu bytes at 0x%llx)",
           (unsigned long long)a->serial, a->size, (unsigned long long)a->base);
}

void mixemuDescribeAddress(uintptr_t p, char *out, size_t size) {
  char what[128];
  const MixEmuAllocation *a = mixemuFindAllocation(p);
  if (a) {
    describeAllocation(a, what, sizeof what);
    snprintf(out, size, "byte %zu of %s", (size_t)(p - a->base), what);
    return;
  }
  if (!mixemuInArena(p)) {
    snprintf(out, size, "host memory, not device memory");
    return;
  }
  size_t i = upperBound(p);
  if (i > 0 &&
      p - allocations[i - 1].base < allocations[i - 1].mapped + guardSize) {
    describeAllocation(&allocations[i - 1], what, sizeof what);
    snprintf(out, size, "%zu bytes past the end of %s",
             (size_t)(p - allocations[i - 1].base - allocations[i - 1].size),
             what);
  } else if (i < count && allocations[i].base - p <= guardSize) {
    describeAllocation(&allocations[i], what, sizeof what);
    snprintf(out, size, "%zu bytes before %s",
             (size_t)(allocations[i].base - p), what);
  } else {
    snprintf(out, size,
             "device memory that is not allocated (freed, or "
             "never allocated)");
  }
}

CUresult mixemuCheckRange(uintptr_t p, size_t n, const char *what) {
  if (n == 0)
    return CUDA_SUCCESS;
  char where[256];
  const MixEmuAllocation *a = mixemuFindAllocation(p);
  if (!a) {
    mixemuDescribeAddress(p, where, sizeof where);
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: 0x%llx is not in a live device allocation: it is "
                       "%s",
                       what, (unsigned long long)p, where);
  }
  size_t offset = (size_t)(p - a->base);
  if (n > a->size - offset) {
    describeAllocation(a, where, sizeof where);
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: bytes [%zu, %zu) of %s: the range ends %zu bytes "
                       "past the allocation's end",
                       what, offset, offset + n, where, n - (a->size - offset));
  }
  return CUDA_SUCCESS;
}

/* The first gap of span bytes at or after `from`, gaps being the space
   between allocations and their guards; 0 when there is none. */
static uintptr_t findGap(uintptr_t from, size_t span) {
  uintptr_t gapStart = arenaBegin + guardSize;
  for (size_t i = 0; i <= count; ++i) {
    uintptr_t gapEnd = i < count ? allocations[i].base : arenaEnd;
    uintptr_t start = gapStart > from ? gapStart : from;
    if (start <= gapEnd && gapEnd - start >= span)
      return start;
    if (i < count)
      gapStart = allocations[i].base + allocations[i].mapped + guardSize;
  }
  return 0;
}

/* Room for one more allocation's record. */
static void protectAll(int prot) {
  for (size_t i = 0; i < count; ++i)
    mprotect((void *)allocations[i].base, allocations[i].mapped, prot);
}

void mixemuRestoreAccess(void) {
  decideHostCheck();
  if (!hostCheck || accessible)
    protectAll(PROT_READ | PROT_WRITE);
}

static int growAllocations(void) {
  if (count < capacity)
    return 1;
  size_t next = capacity ? 2 * capacity : 256;
  MixEmuAllocation *grown =
      (MixEmuAllocation *)realloc(allocations, sizeof(MixEmuAllocation) * next);
  if (!grown)
    return 0;
  allocations = grown;
  capacity = next;
  return 1;
}

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckUnsafeCall("cuMemAlloc")) != CUDA_SUCCESS)
    return status;
  if (!dptr || bytesize == 0)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "cuMemAlloc: %s",
                       dptr ? "0 bytes" : "no result");
  if (!reserveArena())
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                       "cuMemAlloc: the emulator could not reserve address "
                       "space for the device's memory");
  if (bytesize > limit || committed + roundUp(bytesize, pageSize) > limit)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                       "cuMemAlloc of %zu bytes: the device's %llu bytes "
                       "hold only %llu more (%zu allocations are live)",
                       bytesize, (unsigned long long)limit,
                       (unsigned long long)(limit - committed), count);
  size_t mapped = roundUp(bytesize, pageSize), span = mapped + guardSize;
  uintptr_t base = findGap(cursor, span);
  if (!base)
    base = findGap(arenaBegin, span);
  if (!base || !growAllocations())
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                       "cuMemAlloc of %zu bytes: the emulator's address space "
                       "or bookkeeping is exhausted",
                       bytesize);
  /* In count-only mode the pages stay as reserved: inaccessible, and
     costing the host nothing. */
  if (!mixemuCountOnly() &&
      mprotect((void *)base, mapped, PROT_READ | PROT_WRITE) != 0)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                       "cuMemAlloc of %zu bytes: the host has no memory for "
                       "it",
                       bytesize);
  decideHostCheck();
  if (!accessible && !mixemuCountOnly()) /* the host runs: keep it out */
    mprotect((void *)base, mapped, PROT_NONE);
  size_t i = upperBound(base);
  memmove(&allocations[i + 1], &allocations[i],
          sizeof(MixEmuAllocation) * (count - i));
  MixEmuAllocation a = {base, bytesize, mapped, ++serials};
  allocations[i] = a;
  ++count;
  committed += mapped;
  if (committed > mixemuProfileCounters.peakDeviceBytes)
    mixemuProfileCounters.peakDeviceBytes = committed;
  cursor = base + span;
  *dptr = (CUdeviceptr)base;
  return CUDA_SUCCESS;
}

/* Page-locked host memory: host memory like any other here, kept in a
   list so that cuMemFreeHost can refuse what it did not allocate. */
typedef struct HostBlock {
  void *p;
  struct HostBlock *next;
} HostBlock;
static HostBlock *hostBlocks;

CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckUnsafeCall("cuMemHostAlloc")) != CUDA_SUCCESS)
    return status;
  if (!pp || bytesize == 0 || Flags != 0)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc: %s",
                       !pp ? "no result"
                       : bytesize == 0
                           ? "0 bytes"
                           : "the emulator takes no flags (portable, mapped, "
                             "write-combined memory)");
  HostBlock *b = (HostBlock *)malloc(sizeof *b);
  void *p = malloc(bytesize);
  if (!b || !p) {
    free(b);
    free(p);
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuMemHostAlloc of %zu bytes",
                       bytesize);
  }
  b->p = p;
  b->next = hostBlocks;
  hostBlocks = b;
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckUnsafeCall("cuMemFreeHost")) != CUDA_SUCCESS)
    return status;
  for (HostBlock **link = &hostBlocks; *link; link = &(*link)->next)
    if ((*link)->p == p) {
      HostBlock *b = *link;
      *link = b->next;
      free(b->p);
      free(b);
      return CUDA_SUCCESS;
    }
  return mixemuError(CUDA_ERROR_INVALID_VALUE,
                     "cuMemFreeHost of %p, which cuMemHostAlloc did not "
                     "return (or was freed)",
                     p);
}

CUresult cuMemFree(CUdeviceptr dptr) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS || dptr == 0 ||
      (status = mixemuCheckUnsafeCall("cuMemFree")) != CUDA_SUCCESS)
    return status;
  uintptr_t p = (uintptr_t)dptr;
  size_t i = upperBound(p);
  if (i == 0 || allocations[i - 1].base != p) {
    char where[256];
    mixemuDescribeAddress(p, where, sizeof where);
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuMemFree of 0x%llx, which is not the start of a live "
                       "allocation: it is %s",
                       (unsigned long long)p, where);
  }
  MixEmuAllocation *a = &allocations[i - 1];
  /* Mapping the range afresh drops its pages and makes it inaccessible. */
  if (mmap((void *)a->base, a->mapped, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
           0) == MAP_FAILED)
    return mixemuError(CUDA_ERROR_UNKNOWN, "cuMemFree: mmap failed");
  committed -= a->mapped;
  memmove(a, a + 1, sizeof(MixEmuAllocation) * (count - i));
  --count;
  return CUDA_SUCCESS;
}

/* The checks every copy starts with. */
static CUresult beginCopy(CUstream stream, const char *what) {
  CUresult status = mixemuCheckContext();
  return status != CUDA_SUCCESS ? status : mixemuCheckStream(stream, what);
}

static CUresult checkHost(const void *p, size_t n, const char *what) {
  if (!p)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: a null host pointer",
                       what);
  if (touchesArena((uintptr_t)p, n))
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: the host memory at %p is device memory", what, p);
  return CUDA_SUCCESS;
}

static void count1(int kind, size_t bytes) {
  ++mixemuProfileCounters.copies[kind];
  mixemuProfileCounters.copyBytes[kind] += bytes;
}

static CUresult emuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
                           size_t ByteCount, CUstream hStream) {
  const char *what = "cuMemcpyHtoDAsync";
  CUresult status = beginCopy(hStream, what);
  if (status != CUDA_SUCCESS || ByteCount == 0)
    return status;
  if ((status = checkHost(srcHost, ByteCount, "cuMemcpyHtoDAsync source")) !=
          CUDA_SUCCESS ||
      (status = mixemuCheckRange((uintptr_t)dstDevice, ByteCount,
                                 "cuMemcpyHtoDAsync destination")) !=
          CUDA_SUCCESS)
    return status;
  if (!mixemuCountOnly())
    memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
  count1(0, ByteCount);
  return CUDA_SUCCESS;
}

static CUresult emuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice,
                           size_t ByteCount, CUstream hStream) {
  CUresult status = beginCopy(hStream, "cuMemcpyDtoHAsync");
  if (status != CUDA_SUCCESS || ByteCount == 0)
    return status;
  if ((status = checkHost(dstHost, ByteCount,
                          "cuMemcpyDtoHAsync destination")) != CUDA_SUCCESS ||
      (status = mixemuCheckRange((uintptr_t)srcDevice, ByteCount,
                                 "cuMemcpyDtoHAsync source")) != CUDA_SUCCESS)
    return status;
  if (mixemuCountOnly()) /* deterministic, whatever the device would hold */
    memset(dstHost, 0, ByteCount);
  else
    memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
  count1(1, ByteCount);
  return CUDA_SUCCESS;
}

static CUresult emuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                           size_t ByteCount, CUstream hStream) {
  CUresult status = beginCopy(hStream, "cuMemcpyDtoDAsync");
  if (status != CUDA_SUCCESS || ByteCount == 0)
    return status;
  if ((status = mixemuCheckRange((uintptr_t)srcDevice, ByteCount,
                                 "cuMemcpyDtoDAsync source")) != CUDA_SUCCESS ||
      (status = mixemuCheckRange((uintptr_t)dstDevice, ByteCount,
                                 "cuMemcpyDtoDAsync destination")) !=
          CUDA_SUCCESS)
    return status;
  if (!mixemuCountOnly())
    memmove((void *)(uintptr_t)dstDevice, (const void *)(uintptr_t)srcDevice,
            ByteCount);
  count1(2, ByteCount);
  return CUDA_SUCCESS;
}

static CUresult emuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                          CUstream hStream) {
  CUresult status = beginCopy(hStream, "cuMemsetD32Async");
  if (status != CUDA_SUCCESS || N == 0)
    return status;
  if (dstDevice % 4 != 0 || N > SIZE_MAX / 4)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuMemsetD32Async: 0x%llx is not 4-byte aligned or "
                       "%zu words are too many",
                       (unsigned long long)dstDevice, N);
  if ((status = mixemuCheckRange((uintptr_t)dstDevice, 4 * N,
                                 "cuMemsetD32Async")) != CUDA_SUCCESS)
    return status;
  if (!mixemuCountOnly()) {
    uint32_t *words = (uint32_t *)(uintptr_t)dstDevice;
    for (size_t i = 0; i < N; ++i)
      words[i] = ui;
  }
  ++mixemuProfileCounters.memsets;
  return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr ptr) {
  if (!mixemuInitialized())
    return mixemuError(CUDA_ERROR_NOT_INITIALIZED,
                       "the driver is used before cuInit");
  if (!data || attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuPointerGetAttribute: only the memory type is "
                       "emulated");
  if (!mixemuFindAllocation((uintptr_t)ptr)) {
    char where[256];
    mixemuDescribeAddress((uintptr_t)ptr, where, sizeof where);
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuPointerGetAttribute: 0x%llx is %s",
                       (unsigned long long)ptr, where);
  }
  CUmemorytype type = CU_MEMORYTYPE_DEVICE;
  memcpy(data, &type, sizeof type);
  return CUDA_SUCCESS;
}

/* ---- Copies and memsets as graph nodes -------------------------------- */

/* A copy or memset recorded by a capture: what it was called with. */
typedef struct {
  CUdeviceptr dst, src;
  size_t count; /* bytes of a copy, words of a memset */
  unsigned value;
} DeviceWrite;

static CUresult runCopyNode(void *payload) {
  const DeviceWrite *w = (const DeviceWrite *)payload;
  mixemuDeviceAccess(1);
  CUresult status = emuMemcpyDtoDAsync(w->dst, w->src, w->count, NULL);
  mixemuDeviceAccess(0);
  return status;
}

static CUresult runMemsetNode(void *payload) {
  const DeviceWrite *w = (const DeviceWrite *)payload;
  mixemuDeviceAccess(1);
  CUresult status = emuMemsetD32Async(w->dst, w->value, w->count, NULL);
  mixemuDeviceAccess(0);
  return status;
}

/* Records a copy or memset in `graph` after the checks the call makes now
   (so that a bad one fails where it is captured, not when it runs). */
static CUresult captureWrite(CUgraph graph, MixEmuNodeFn run, DeviceWrite w,
                             const char *what) {
  CUresult status = beginCopy(NULL, what);
  if (status != CUDA_SUCCESS)
    return status;
  if (run == runCopyNode) {
    status =
        mixemuCheckRange((uintptr_t)w.src, w.count, "cuMemcpyDtoDAsync source");
    if (status == CUDA_SUCCESS)
      status = mixemuCheckRange((uintptr_t)w.dst, w.count,
                                "cuMemcpyDtoDAsync destination");
  } else if (w.dst % 4 != 0 || w.count > SIZE_MAX / 4)
    status = mixemuError(CUDA_ERROR_INVALID_VALUE,
                         "cuMemsetD32Async: 0x%llx is not 4-byte aligned or "
                         "%zu words are too many",
                         (unsigned long long)w.dst, w.count);
  else
    status =
        mixemuCheckRange((uintptr_t)w.dst, 4 * w.count, "cuMemsetD32Async");
  if (status != CUDA_SUCCESS)
    return status;
  DeviceWrite *payload = (DeviceWrite *)malloc(sizeof w);
  if (!payload)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "%s", what);
  *payload = w;
  return mixemuAddNode(graph, run, payload, what);
}

/* A graph cannot copy pageable host memory, and all the emulator's host
   memory is pageable. */
static CUresult refuseHostCopy(CUstream stream, const char *what) {
  CUgraph graph;
  CUresult status = mixemuCaptureOf(stream, what, &graph);
  if (status != CUDA_SUCCESS || !graph)
    return status;
  mixemuCheckNotCapturing(stream, what); /* invalidates the capture */
  return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     "%s on a capturing stream: the host memory is pageable, "
                     "which a graph cannot copy (the capture is invalidated)",
                     what);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
                           size_t ByteCount, CUstream hStream) {
  CUresult refused = refuseHostCopy(hStream, "cuMemcpyHtoDAsync");
  if (refused != CUDA_SUCCESS)
    return refused;
  mixemuDeviceAccess(1);
  CUresult status = emuMemcpyHtoDAsync(dstDevice, srcHost, ByteCount, hStream);
  mixemuDeviceAccess(0);
  return status;
}

CUresult cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice,
                           size_t ByteCount, CUstream hStream) {
  CUresult refused = refuseHostCopy(hStream, "cuMemcpyDtoHAsync");
  if (refused != CUDA_SUCCESS)
    return refused;
  mixemuDeviceAccess(1);
  CUresult status = emuMemcpyDtoHAsync(dstHost, srcDevice, ByteCount, hStream);
  mixemuDeviceAccess(0);
  return status;
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                           size_t ByteCount, CUstream hStream) {
  CUgraph graph;
  CUresult captured = mixemuCaptureOf(hStream, "cuMemcpyDtoDAsync", &graph);
  if (captured != CUDA_SUCCESS)
    return captured;
  if (graph) {
    DeviceWrite w = {dstDevice, srcDevice, ByteCount, 0};
    return captureWrite(graph, runCopyNode, w, "cuMemcpyDtoDAsync");
  }
  mixemuDeviceAccess(1);
  CUresult status = emuMemcpyDtoDAsync(dstDevice, srcDevice, ByteCount, hStream);
  mixemuDeviceAccess(0);
  return status;
}

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                          CUstream hStream) {
  CUgraph graph;
  CUresult captured = mixemuCaptureOf(hStream, "cuMemsetD32Async", &graph);
  if (captured != CUDA_SUCCESS)
    return captured;
  if (graph) {
    DeviceWrite w = {dstDevice, 0, N, ui};
    return captureWrite(graph, runMemsetNode, w, "cuMemsetD32Async");
  }
  mixemuDeviceAccess(1);
  CUresult status = emuMemsetD32Async(dstDevice, ui, N, hStream);
  mixemuDeviceAccess(0);
  return status;
}
