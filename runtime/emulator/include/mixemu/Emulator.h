/*===- Emulator.h - The CUDA emulator's own interface -------------*- C -*-===//
 *
 * What an emulated CUDA package (mixc --target cuda --emulate) and the
 * emulation library compiled into it (runtime/emulator) agree on, besides
 * the CUDA APIs themselves:
 *  - the kernels: mixc compiles each kernel `k` of the package for the
 *    host and exports, from model.so,
 *      void mixemu_launch_k(void **params, const int64_t ids[12]);
 *      const int64_t mixemu_nparams_k;
 *    mixemu_launch_k runs one thread of k. `params` is cuLaunchKernel's
 *    kernelParams array unchanged (params[i] points at the i-th argument's
 *    value; a memref argument is its device pointer), and `ids` are the
 *    thread's ids and the launch's sizes (MIXEMU_ID_*);
 *  - what the emulated kernels call: mixemu_fail when a check fails (a
 *    bounds check of a memory access) and mixemu_barrier for __syncthreads;
 *  - the image: the package's gpu.binary object, which the support code
 *    passes to cuModuleLoadData, starts with the 8 bytes "MIXEMU01";
 *  - hooks for tests and tools: explicit kernel registration, the last
 *    error's message, and the profile counters.
 * Plain C: the library is compiled as C into each package.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MIXEMU_EMULATOR_H
#define MIXEMU_EMULATOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Kernels ----------------------------------------------------------===*/

/* The exported names of kernel k's thread function and parameter count. */
#define MIXEMU_LAUNCH_PREFIX "mixemu_launch_"
#define MIXEMU_NPARAMS_PREFIX "mixemu_nparams_"

/* The start of the kernels' image (no terminating NUL). */
#define MIXEMU_IMAGE_MAGIC "MIXEMU01"
#define MIXEMU_IMAGE_MAGIC_SIZE 8

/* The positions in a thread's ids array. */
enum {
  MIXEMU_ID_TID_X = 0,
  MIXEMU_ID_TID_Y = 1,
  MIXEMU_ID_TID_Z = 2,
  MIXEMU_ID_BID_X = 3,
  MIXEMU_ID_BID_Y = 4,
  MIXEMU_ID_BID_Z = 5,
  MIXEMU_ID_BDIM_X = 6,
  MIXEMU_ID_BDIM_Y = 7,
  MIXEMU_ID_BDIM_Z = 8,
  MIXEMU_ID_GDIM_X = 9,
  MIXEMU_ID_GDIM_Y = 10,
  MIXEMU_ID_GDIM_Z = 11,
  MIXEMU_NUM_IDS = 12
};

/* Runs one thread of a kernel. */
typedef void (*mixemu_launch_fn)(void **params, const int64_t *ids);

/* Makes kernel `name` known to cuModuleGetFunction, for tests and for a
   host that links its kernels without exporting them. The package's own
   exported symbols are looked up first; a registration replaces an
   earlier one of the same name. Returns 0, or -1 when name or launch is
   NULL or nparams is negative. */
int mixemu_register_kernel(const char *name, mixemu_launch_fn launch,
                           int64_t nparams);

/*===-- What emulated kernels call ---------------------------------------===*/

/* A check in the running kernel failed; `message` names the kernel and
   what failed ("kernel K: ..."). Ends the launch: cuLaunchKernel returns
   CUDA_ERROR_ILLEGAL_ADDRESS, cuGetErrorString gives the message with the
   failing block and thread, and every later driver call fails with the
   same error (as a device's context does after a fault). Called outside a
   launch, it prints the message and aborts. */
void mixemu_fail(const char *message)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((noreturn))
#endif
    ;

/* __syncthreads. The emulator runs the threads of a block one after
   another, which is exact for kernels without barriers (all of them
   today); running barriers needs each thread on its own fiber, which is
   not done yet. Until then a barrier ends the launch as mixemu_fail does,
   with CUDA_ERROR_LAUNCH_FAILED and the message "kernel K uses a barrier,
   which the emulator runs only with fibers (not yet)". */
void mixemu_barrier(void);

/*===-- Diagnostics ------------------------------------------------------===*/

/* The message of the emulator's last failed call (the one
   cuGetErrorString gives for its status), or "" when there was none.
   cuBLASLt's functions return only a status; their details are here. */
const char *mixemu_last_error(void);

/* Counters of what the emulator ran, for the per-step profile
   (MIXRT_CUDA_PROFILE, not printed yet). */
typedef struct {
  uint64_t launches;     /* kernel launches run to completion */
  uint64_t threads;      /* kernel threads run */
  uint64_t copies[3];    /* copies host to device, device to host, d to d */
  uint64_t copyBytes[3]; /* their bytes */
  uint64_t memsets;      /* cuMemsetD32 calls */
  uint64_t matmuls;      /* cublasLtMatmul calls */
  uint64_t matmulFlops;  /* 2 m n k batch over them */
} MixEmuProfile;

/* The counters since the start or the last mixemu_profile_reset. */
const MixEmuProfile *mixemu_profile(void);
void mixemu_profile_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* MIXEMU_EMULATOR_H */
