/*===- Launch.c - The emulated device's modules and kernel launches -------===//
 *
 * Part of the CUDA emulator (runtime/emulator). An emulated package's
 * kernels are host functions in the package itself (mixemu/Emulator.h):
 * mixemu_launch_k runs one thread of kernel k. So
 *  - cuModuleLoadData only checks that the image is the emulator's
 *    ("MIXEMU01": the package was compiled with --emulate), and
 *  - cuModuleGetFunction finds mixemu_launch_k and mixemu_nparams_k in the
 *    shared object this file is linked into (dladdr on one of its own
 *    functions, then dlopen(RTLD_NOLOAD) of that file and dlsym: this
 *    works in a model.so that the runtime opened RTLD_LOCAL, where a
 *    global lookup would not see the package, or would see another one),
 *    else among the kernels registered with mixemu_register_kernel. Found
 *    kernels are kept in a hash table, since the host code looks its
 *    kernel up before every launch.
 *    A kernel's static shared memory size and flags (mixemu_shared_bytes_k,
 *    mixemu_flags_k) are found the same way, and are 0 when absent.
 * cuLaunchKernel rejects what an H200 rejects (more than 1024 threads per
 * block, block dimensions over (1024, 1024, 64), grid dimensions over
 * (2^31 - 1, 65535, 65535), over 48 KiB of static and dynamic shared
 * memory together, an empty dimension), with a message naming the kernel,
 * then runs the grid on the calling thread, the blocks in order. Each
 * block's shared memory is one window of 48 KiB, filled with 0xFF bytes
 * before the block runs (Emulator.h). A kernel whose threads never wait
 * for each other runs its block's threads one after another (x fastest,
 * then y, then z), which is exact for it and fast; one marked
 * MIXEMU_KERNEL_SYNCHRONIZES (it has barriers or shuffles) runs them as
 * fibers (Fibers.c), in the same order until each waits. In count-only
 * mode (MIXEMU_COUNT_ONLY=1) a launch is checked and counted as usual,
 * but none of its threads runs.
 * A failed check in a kernel (mixemu_fail) longjmps back here, out of the
 * kernel's frames (generated code, which holds no resources), and makes
 * the fault sticky: cuLaunchKernel returns CUDA_ERROR_ILLEGAL_ADDRESS and
 * every later call fails with the message, block and thread. From a fiber
 * it first switches back to the scheduler's stack, which is this one.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* dladdr, RTLD_NOLOAD */

#include "Internal.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- Modules ----------------------------------------------------------- */

struct CUmod_st {
  struct CUmod_st *next; /* the loaded modules */
};

static struct CUmod_st *modules;

static CUresult checkModule(CUmodule module, const char *what) {
  for (struct CUmod_st *m = modules; m; m = m->next)
    if (m == module)
      return CUDA_SUCCESS;
  return mixemuError(CUDA_ERROR_INVALID_HANDLE, "%s: %p is not a loaded module",
                     what, (void *)module);
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!module || !image)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuModuleLoadData: no module or no image");
  /* Byte by byte: a shorter, NUL-terminated image stops at its end. */
  const char *bytes = (const char *)image;
  for (int i = 0; i < MIXEMU_IMAGE_MAGIC_SIZE; ++i)
    if (bytes[i] != MIXEMU_IMAGE_MAGIC[i])
      return mixemuError(CUDA_ERROR_INVALID_IMAGE,
                         "the package's kernels are not the emulator's (their "
                         "image does not start with \"" MIXEMU_IMAGE_MAGIC
                         "\"): compile the package with --emulate to run it "
                         "without a GPU");
  struct CUmod_st *m = (struct CUmod_st *)malloc(sizeof *m);
  if (!m)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuModuleLoadData");
  m->next = modules;
  modules = m;
  *module = m;
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  for (struct CUmod_st **link = &modules; *link; link = &(*link)->next)
    if (*link == hmod) {
      *link = hmod->next;
      free(hmod);
      return CUDA_SUCCESS;
    }
  return checkModule(hmod, "cuModuleUnload");
}

/* ---- Finding kernels --------------------------------------------------- */

struct CUfunc_st {
  char *name;
  mixemu_launch_fn launch;
  int64_t nparams;
  int64_t sharedBytes;    /* static shared memory */
  int64_t flags;          /* MIXEMU_KERNEL_* */
  int registered;         /* from mixemu_register_kernel */
  struct CUfunc_st *next; /* in its hash bucket */
};

typedef struct Registration {
  char *name;
  mixemu_launch_fn launch;
  int64_t nparams, sharedBytes, flags;
  struct Registration *next;
} Registration;

enum { kBuckets = 1024, kMaxName = 480 };
static struct CUfunc_st *functions[kBuckets];
static Registration *registrations;

static unsigned hashName(const char *name) {
  uint32_t h = 2166136261u; /* FNV-1a 32 */
  for (const unsigned char *c = (const unsigned char *)name; *c; ++c)
    h = (h ^ *c) * 16777619u;
  return h % kBuckets;
}

static struct CUfunc_st *cached(const char *name) {
  for (struct CUfunc_st *f = functions[hashName(name)]; f; f = f->next)
    if (strcmp(f->name, name) == 0)
      return f;
  return NULL;
}

static char *copyString(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = (char *)malloc(n);
  if (copy)
    memcpy(copy, s, n);
  return copy;
}

int mixemu_register_kernel(const char *name, mixemu_launch_fn launch,
                           int64_t nparams) {
  return mixemu_register_kernel_ex(name, launch, nparams, 0, 0);
}

int mixemu_register_kernel_ex(const char *name, mixemu_launch_fn launch,
                              int64_t nparams, int64_t sharedBytes,
                              int64_t flags) {
  if (!name || !launch || nparams < 0 || sharedBytes < 0 ||
      sharedBytes > MIXEMU_SHARED_WINDOW_BYTES)
    return -1;
  Registration *r = registrations;
  while (r && strcmp(r->name, name) != 0)
    r = r->next;
  if (!r) {
    r = (Registration *)malloc(sizeof *r);
    if (!r || !(r->name = copyString(name))) {
      free(r);
      return -1;
    }
    r->next = registrations;
    registrations = r;
  }
  r->launch = launch;
  r->nparams = nparams;
  r->sharedBytes = sharedBytes;
  r->flags = flags;
  struct CUfunc_st *f = cached(name);
  if (f && f->registered) {
    f->launch = launch;
    f->nparams = nparams;
    f->sharedBytes = sharedBytes;
    f->flags = flags;
  }
  return 0;
}

/* The int64_t constant `prefix``name` exported by self, or `absent`. */
static int64_t exportedConstant(void *self, const char *prefix,
                                const char *name, int64_t absent) {
  char symbol[sizeof MIXEMU_SHARED_BYTES_PREFIX + kMaxName];
  snprintf(symbol, sizeof symbol, "%s%s", prefix, name);
  const int64_t *value = (const int64_t *)dlsym(self, symbol);
  return value ? *value : absent;
}

/* Kernel `name` among the symbols of the object this file is linked into:
   its launch function in f->launch and its constants in f. Returns 1 when
   found, 0 when not, -1 when the launch function is there without its
   parameter count. */
static int findExported(const char *name, struct CUfunc_st *f) {
  Dl_info info;
  if (!dladdr((void *)&findExported, &info) || !info.dli_fname)
    return 0;
  void *self = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
  if (!self)
    return 0;
  char symbol[sizeof MIXEMU_LAUNCH_PREFIX + kMaxName];
  snprintf(symbol, sizeof symbol, MIXEMU_LAUNCH_PREFIX "%s", name);
  void *function = dlsym(self, symbol);
  f->nparams = exportedConstant(self, MIXEMU_NPARAMS_PREFIX, name, -1);
  /* Absent: none, and no flags. */
  f->sharedBytes = exportedConstant(self, MIXEMU_SHARED_BYTES_PREFIX, name, 0);
  f->flags = exportedConstant(self, MIXEMU_FLAGS_PREFIX, name, 0);
  dlclose(self);
  if (!function)
    return 0;
  if (f->nparams < 0)
    return -1;
  f->launch = (mixemu_launch_fn)function;
  return 1;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
                             const char *name) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!hfunc || !name)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuModuleGetFunction: no result or no name");
  if ((status = checkModule(hmod, "cuModuleGetFunction")) != CUDA_SUCCESS)
    return status;
  struct CUfunc_st *f = cached(name);
  if (f) {
    *hfunc = f;
    return CUDA_SUCCESS;
  }
  if (strlen(name) > kMaxName)
    return mixemuError(CUDA_ERROR_NOT_FOUND,
                       "cuModuleGetFunction: a kernel name of %zu bytes",
                       strlen(name));
  struct CUfunc_st kernel = {0};
  int registered = 0, found = findExported(name, &kernel);
  if (found < 0)
    return mixemuError(CUDA_ERROR_NOT_FOUND,
                       "the package exports " MIXEMU_LAUNCH_PREFIX "%s but "
                       "not " MIXEMU_NPARAMS_PREFIX "%s",
                       name, name);
  if (!found) {
    Registration *r = registrations;
    while (r && strcmp(r->name, name) != 0)
      r = r->next;
    if (!r)
      return mixemuError(
          CUDA_ERROR_NOT_FOUND,
          "the package has no kernel %s (no symbol " MIXEMU_LAUNCH_PREFIX
          "%s, and none registered)",
          name, name);
    kernel.launch = r->launch;
    kernel.nparams = r->nparams;
    kernel.sharedBytes = r->sharedBytes;
    kernel.flags = r->flags;
    registered = 1;
  }
  if (!(f = (struct CUfunc_st *)malloc(sizeof *f)) ||
      !(f->name = copyString(name))) {
    free(f);
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuModuleGetFunction");
  }
  f->launch = kernel.launch;
  f->nparams = kernel.nparams;
  f->sharedBytes = kernel.sharedBytes;
  f->flags = kernel.flags;
  f->registered = registered;
  unsigned bucket = hashName(name);
  f->next = functions[bucket];
  functions[bucket] = f;
  *hfunc = f;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc) {
  if (!name || !hfunc)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  *name = hfunc->name;
  return CUDA_SUCCESS;
}

/* Every parameter is passed as 8 bytes (a pointer or a 64-bit scalar). */
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                            size_t *paramOffset, size_t *paramSize) {
  if (!func)
    return mixemuError(CUDA_ERROR_INVALID_HANDLE, NULL);
  if (paramIndex >= (uint64_t)func->nparams)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  if (paramOffset)
    *paramOffset = 8 * paramIndex;
  if (paramSize)
    *paramSize = 8;
  return CUDA_SUCCESS;
}

/* ---- Launches ---------------------------------------------------------- */

/* The launch in progress: what mixemu_fail needs to end it. */
static struct {
  struct CUfunc_st *function; /* NULL outside a launch */
  const MixEmuThread *thread; /* the one running, named in messages */
  CUresult status;            /* why it ended early */
  jmp_buf exit;
} running;

const char *mixemuRunningKernel(void) {
  return running.function ? running.function->name : NULL;
}

void mixemuSetRunningThread(const MixEmuThread *thread) {
  running.thread = thread;
}

static void describeThread(char *out, size_t size) {
  const int64_t *id = running.thread->ids;
  if (id[MIXEMU_ID_GDIM_Y] == 1 && id[MIXEMU_ID_GDIM_Z] == 1 &&
      id[MIXEMU_ID_BDIM_Y] == 1 && id[MIXEMU_ID_BDIM_Z] == 1)
    snprintf(out, size, "block %lld, thread %lld",
             (long long)id[MIXEMU_ID_BID_X], (long long)id[MIXEMU_ID_TID_X]);
  else
    snprintf(out, size, "block (%lld, %lld, %lld), thread (%lld, %lld, %lld)",
             (long long)id[MIXEMU_ID_BID_X], (long long)id[MIXEMU_ID_BID_Y],
             (long long)id[MIXEMU_ID_BID_Z], (long long)id[MIXEMU_ID_TID_X],
             (long long)id[MIXEMU_ID_TID_Y], (long long)id[MIXEMU_ID_TID_Z]);
}

void mixemuLeaveLaunch(void) { longjmp(running.exit, 1); }

void mixemuEndLaunch(CUresult status, const char *message, int withThread) {
  const char *name = running.function->name;
  size_t length = strlen(name);
  int named = strncmp(message, "kernel ", 7) == 0 &&
              strncmp(message + 7, name, length) == 0 &&
              (message[7 + length] == ':' || message[7 + length] == ' ' ||
               message[7 + length] == 0);
  char where[128] = "", text[1024];
  if (withThread) {
    where[0] = ' ';
    where[1] = '(';
    describeThread(where + 2, sizeof where - 3);
    strcat(where, ")");
  }
  if (named)
    snprintf(text, sizeof text, "%s%s", message, where);
  else
    snprintf(text, sizeof text, "kernel %s: %s%s", name, message, where);
  mixemuSetSticky(status, text);
  running.status = status;
  /* Never longjmp from a fiber's stack to the launch's: the scheduler,
     back on the launch's stack, leaves for it. */
  if (mixemuOnFiber())
    mixemuAbandonFiber();
  mixemuLeaveLaunch();
}

void mixemu_fail(const char *message) {
  if (!message)
    message = "a check failed";
  if (!running.function) {
    fprintf(stderr, "mixemu: %s (outside a kernel launch)\n", message);
    abort();
  }
  mixemuEndLaunch(CUDA_ERROR_ILLEGAL_ADDRESS, message, /*withThread=*/1);
}

/* The blocks' shared memory: MIXEMU_SHARED_WINDOW_BYTES with an
   inaccessible page after them, mapped at the first launch and kept. */
static unsigned char *sharedWindow(void) {
  static unsigned char *window;
  if (!window) {
    size_t page = 4096, size = MIXEMU_SHARED_WINDOW_BYTES + page;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return NULL;
    mprotect((unsigned char *)p + MIXEMU_SHARED_WINDOW_BYTES, page, PROT_NONE);
    window = (unsigned char *)p;
  }
  return window;
}

/* The launcher reads MixEmuThread at these offsets (EmulatorLaunchers.cpp:
   {[12 x i64], ptr, i64}). */
_Static_assert(offsetof(MixEmuThread, shared) == 8 * MIXEMU_NUM_IDS &&
                   offsetof(MixEmuThread, dynamicSharedBytes) ==
                       8 * MIXEMU_NUM_IDS + sizeof(void *),
               "MixEmuThread's layout is the launcher's");

/* Where the dynamic shared memory starts: after the static part. */
static size_t staticSharedBytes(const struct CUfunc_st *f) {
  return ((size_t)f->sharedBytes + MIXEMU_SHARED_ALIGNMENT - 1) /
         MIXEMU_SHARED_ALIGNMENT * MIXEMU_SHARED_ALIGNMENT;
}

/* Runs every thread of the grid, block after block. */
static void runGrid(struct CUfunc_st *f, void **params, const unsigned g[3],
                    const unsigned b[3], unsigned char *shared,
                    unsigned sharedMemBytes) {
  MixEmuThread thread;
  int64_t *id = thread.ids;
  for (int d = 0; d < 3; ++d) {
    id[MIXEMU_ID_BDIM_X + d] = b[d];
    id[MIXEMU_ID_GDIM_X + d] = g[d];
  }
  thread.shared = shared;
  thread.dynamicSharedBytes = sharedMemBytes;
  /* What the block may use of its window (checkLimits: all of it fits). */
  size_t used = staticSharedBytes(f) + sharedMemBytes;
  int fibers = (f->flags & MIXEMU_KERNEL_SYNCHRONIZES) != 0;
  unsigned threads = b[0] * b[1] * b[2];
  running.thread = &thread;
  for (unsigned bz = 0; bz < g[2]; ++bz)
    for (unsigned by = 0; by < g[1]; ++by)
      for (unsigned bx = 0; bx < g[0]; ++bx) {
        id[MIXEMU_ID_BID_X] = bx;
        id[MIXEMU_ID_BID_Y] = by;
        id[MIXEMU_ID_BID_Z] = bz;
        memset(shared, 0xFF, used);
        if (fibers) {
          mixemuRunBlockOnFibers(f->launch, params, &thread, threads);
          running.thread = &thread;
          continue;
        }
        for (unsigned tz = 0; tz < b[2]; ++tz)
          for (unsigned ty = 0; ty < b[1]; ++ty)
            for (unsigned tx = 0; tx < b[0]; ++tx) {
              id[MIXEMU_ID_TID_X] = tx;
              id[MIXEMU_ID_TID_Y] = ty;
              id[MIXEMU_ID_TID_Z] = tz;
              f->launch(params, &thread);
            }
      }
}

/* An H200's limits, as cuLaunchKernel checks them. */
static CUresult checkLimits(const struct CUfunc_st *f, const unsigned g[3],
                            const unsigned b[3], unsigned smem) {
  static const unsigned maxBlock[3] = {1024, 1024, 64};
  static const unsigned maxGrid[3] = {2147483647u, 65535, 65535};
  const unsigned kMaxThreads = 1024,
                 kMaxSharedMemory = MIXEMU_SHARED_WINDOW_BYTES;
  const char *name = f->name;
  /* PTX ISA 8.0, which the kernels are written in, allows 4 KiB of
     parameters (ptxas refuses more); each is 8 bytes here. */
  const long long kMaxParameterBytes = 4096;
  if (f->nparams * 8 > kMaxParameterBytes)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s takes %lld bytes of parameters (%lld of 8 "
                       "bytes), more than the %lld of a PTX 8.0 kernel",
                       name, (long long)f->nparams * 8, (long long)f->nparams,
                       kMaxParameterBytes);
  if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2])
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s: a launch of (%u, %u, %u) blocks of (%u, "
                       "%u, %u) threads has an empty dimension",
                       name, g[0], g[1], g[2], b[0], b[1], b[2]);
  unsigned long long threads = (unsigned long long)b[0] * b[1] * b[2];
  if (threads > kMaxThreads)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s: %llu threads per block (%u, %u, %u) exceed "
                       "the device's %u",
                       name, threads, b[0], b[1], b[2], kMaxThreads);
  for (int d = 0; d < 3; ++d)
    if (b[d] > maxBlock[d])
      return mixemuError(CUDA_ERROR_INVALID_VALUE,
                         "kernel %s: blocks of (%u, %u, %u) threads exceed "
                         "the device's (1024, 1024, 64)",
                         name, b[0], b[1], b[2]);
  for (int d = 0; d < 3; ++d)
    if (g[d] > maxGrid[d])
      return mixemuError(CUDA_ERROR_INVALID_VALUE,
                         "kernel %s: a grid of (%u, %u, %u) blocks exceeds "
                         "the device's (2147483647, 65535, 65535)",
                         name, g[0], g[1], g[2]);
  if (f->sharedBytes == 0 && smem > kMaxSharedMemory)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s: %u bytes of dynamic shared memory exceed "
                       "the %u a block has without opting in",
                       name, smem, kMaxSharedMemory);
  if (staticSharedBytes(f) + (size_t)smem > kMaxSharedMemory)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s: %lld bytes of static and %u of dynamic "
                       "shared memory exceed the %u a block has without "
                       "opting in",
                       name, (long long)f->sharedBytes, smem, kMaxSharedMemory);
  return CUDA_SUCCESS;
}

/* The checks a launch makes when it is queued (run or captured). */
static CUresult checkLaunch(CUfunction f, const unsigned g[3],
                            const unsigned b[3], unsigned sharedMemBytes,
                            CUstream hStream, void **kernelParams,
                            void **extra) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!f)
    return mixemuError(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: no kernel");
  if ((status = mixemuCheckStream(hStream, "cuLaunchKernel")) != CUDA_SUCCESS)
    return status;
  if (running.function)
    return mixemuError(CUDA_ERROR_NOT_SUPPORTED,
                       "kernel %s launches kernel %s: the emulator does not "
                       "run launches from the device",
                       running.function->name, f->name);
  if ((status = checkLimits(f, g, b, sharedMemBytes)) != CUDA_SUCCESS)
    return status;
  if (extra)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s: the emulator takes the arguments in "
                       "kernelParams only, not in extra",
                       f->name);
  if (!kernelParams && f->nparams > 0)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "kernel %s takes %lld parameters; kernelParams is null",
                       f->name, (long long)f->nparams);
  return CUDA_SUCCESS;
}

/* Runs a checked launch; the kernels may touch device memory while they
   run, the host may not. */
static CUresult runLaunch(struct CUfunc_st *f, const unsigned g[3],
                          const unsigned b[3], unsigned sharedMemBytes,
                          void **kernelParams) {
  uint64_t threads = (uint64_t)g[0] * g[1] * g[2] * b[0] * b[1] * b[2];
  if (mixemuCountOnly()) { /* checked, counted, not run */
    ++mixemuProfileCounters.launches;
    mixemuProfileCounters.threads += threads;
    return CUDA_SUCCESS;
  }
  unsigned char *shared = sharedWindow();
  if (!shared)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                       "kernel %s: no memory for the blocks' shared memory",
                       f->name);
  mixemuDeviceAccess(1);
  running.function = f;
  if (setjmp(running.exit)) {
    running.function = NULL;
    running.thread = NULL;
    mixemuDeviceAccess(0);
    return running.status; /* the message is recorded, and sticky */
  }
  runGrid(f, kernelParams, g, b, shared, sharedMemBytes);
  running.function = NULL;
  running.thread = NULL;
  mixemuDeviceAccess(0);
  ++mixemuProfileCounters.launches;
  mixemuProfileCounters.threads += threads;
  return CUDA_SUCCESS;
}

/* A launch recorded by a capture: the kernel, its shape, and the values
   of its parameters (8 bytes each, cuFuncGetParamInfo) when captured. */
typedef struct {
  struct CUfunc_st *function;
  unsigned grid[3], block[3], sharedMemBytes;
  void **params;     /* params[i] = &values[i] */
  uint64_t values[]; /* then the pointers */
} LaunchNode;

static CUresult runLaunchNode(void *payload) {
  LaunchNode *n = (LaunchNode *)payload;
  CUresult status = mixemuCheckContext();
  return status != CUDA_SUCCESS ? status
                                : runLaunch(n->function, n->grid, n->block,
                                            n->sharedMemBytes, n->params);
}

static CUresult captureLaunch(CUgraph graph, struct CUfunc_st *f,
                              const unsigned g[3], const unsigned b[3],
                              unsigned sharedMemBytes, void **kernelParams) {
  size_t count = (size_t)f->nparams;
  LaunchNode *n = (LaunchNode *)malloc(
      sizeof(LaunchNode) + count * (sizeof(uint64_t) + sizeof(void *)));
  if (!n)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuLaunchKernel of %s",
                       f->name);
  n->function = f;
  memcpy(n->grid, g, sizeof n->grid);
  memcpy(n->block, b, sizeof n->block);
  n->sharedMemBytes = sharedMemBytes;
  n->params = (void **)(n->values + count);
  for (size_t i = 0; i < count; ++i) {
    memcpy(&n->values[i], kernelParams[i], sizeof(uint64_t));
    n->params[i] = &n->values[i];
  }
  return mixemuAddNode(graph, runLaunchNode, n, "cuLaunchKernel");
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                        unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes,
                        CUstream hStream, void **kernelParams, void **extra) {
  const unsigned g[3] = {gridDimX, gridDimY, gridDimZ};
  const unsigned b[3] = {blockDimX, blockDimY, blockDimZ};
  CUresult status =
      checkLaunch(f, g, b, sharedMemBytes, hStream, kernelParams, extra);
  if (status != CUDA_SUCCESS)
    return status;
  CUgraph graph;
  if ((status = mixemuCaptureOf(hStream, "cuLaunchKernel", &graph)) !=
      CUDA_SUCCESS)
    return status;
  return graph ? captureLaunch(graph, f, g, b, sharedMemBytes, kernelParams)
               : runLaunch(f, g, b, sharedMemBytes, kernelParams);
}
