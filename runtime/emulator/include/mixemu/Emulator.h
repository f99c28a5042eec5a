/*===- Emulator.h - The CUDA emulator's own interface -------------*- C -*-===//
 *
 * What an emulated CUDA package (mixc --target cuda --emulate) and the
 * emulation library compiled into it (runtime/emulator) agree on, besides
 * the CUDA APIs themselves:
 *  - the kernels: mixc compiles each kernel `k` of the package for the
 *    host and exports, from model.so,
 *      void mixemu_launch_k(void **params, const MixEmuThread *thread);
 *      const int64_t mixemu_nparams_k;
 *      const int64_t mixemu_shared_bytes_k;
 *      const int64_t mixemu_flags_k;
 *    mixemu_launch_k runs one thread of k. `params` is cuLaunchKernel's
 *    kernelParams array unchanged (params[i] points at the i-th argument's
 *    value; a memref argument is its device pointer), and `thread` holds
 *    the thread's ids and the launch's sizes (MIXEMU_ID_*) and its block's
 *    shared memory. mixemu_shared_bytes_k is the size of k's static shared
 *    memory (its workgroup attributions) and mixemu_flags_k says how its
 *    threads must run (MIXEMU_KERNEL_*); either may be absent, which
 *    means 0;
 *  - what the emulated kernels call: mixemu_fail when a check fails (a
 *    bounds check of a memory access), mixemu_barrier for __syncthreads
 *    and mixemu_shuffle for a warp shuffle;
 *  - the image: the package's gpu.binary object, which the support code
 *    passes to cuModuleLoadData, starts with the 8 bytes "MIXEMU01";
 *  - hooks for tests and tools: explicit kernel registration, the last
 *    error's message, count-only mode (MIXEMU_COUNT_ONLY) and the profile
 *    counters.
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

/* The exported names of kernel k's thread function, parameter count,
   static shared memory size and flags. */
#define MIXEMU_LAUNCH_PREFIX "mixemu_launch_"
#define MIXEMU_NPARAMS_PREFIX "mixemu_nparams_"
#define MIXEMU_SHARED_BYTES_PREFIX "mixemu_shared_bytes_"
#define MIXEMU_FLAGS_PREFIX "mixemu_flags_"

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

/* A block's shared memory, as the kernels see it: one window of 48 KiB
   (what an H200 gives a block without opting in), static shared memory
   (the workgroup attributions, each at a multiple of 16 bytes) first,
   then the launch's dynamic shared memory. The window is the same for
   every block; what the launch uses of it is filled with 0xFF bytes (a
   NaN as float, -1 as an integer) before each block runs: on a device
   shared memory starts uninitialized, and a kernel that reads it before
   writing it should not find plausible zeros. */
#define MIXEMU_SHARED_WINDOW_BYTES 49152
/* Where the dynamic part starts: the static size rounded up to this. */
#define MIXEMU_SHARED_ALIGNMENT 16

/* What a thread of a launch is given besides the kernel's arguments (the
   launcher reads the members at their C offsets: 0, 96, 104). */
typedef struct {
  int64_t ids[MIXEMU_NUM_IDS]; /* MIXEMU_ID_* */
  void *shared;                /* the block's MIXEMU_SHARED_WINDOW_BYTES */
  int64_t dynamicSharedBytes;  /* the launch's sharedMemBytes */
} MixEmuThread;

/* Runs one thread of a kernel. */
typedef void (*mixemu_launch_fn)(void **params, const MixEmuThread *thread);

/* mixemu_flags_k: the kernel's threads wait for each other (it calls
   mixemu_barrier or mixemu_shuffle). The emulator then runs the threads
   of each block as fibers (each on a stack of its own, switched at every
   barrier and shuffle) instead of one after another. */
#define MIXEMU_KERNEL_SYNCHRONIZES 1

/* Makes kernel `name` known to cuModuleGetFunction, for tests and for a
   host that links its kernels without exporting them. The package's own
   exported symbols are looked up first; a registration replaces an
   earlier one of the same name. Returns 0, or -1 when name or launch is
   NULL or nparams is negative. mixemu_register_kernel registers a kernel
   without shared memory or flags. */
int mixemu_register_kernel(const char *name, mixemu_launch_fn launch,
                           int64_t nparams);
/* The same with the kernel's static shared memory size (0 to
   MIXEMU_SHARED_WINDOW_BYTES, else -1) and flags (MIXEMU_KERNEL_*). */
int mixemu_register_kernel_ex(const char *name, mixemu_launch_fn launch,
                              int64_t nparams, int64_t sharedBytes,
                              int64_t flags);

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

/* __syncthreads, in a kernel marked MIXEMU_KERNEL_SYNCHRONIZES: the thread
   waits until every thread of its block has reached the barrier. `site`
   names the barrier (the op's location) for messages and tells barriers
   apart (by address; NULL is one more barrier). The threads of a block
   must all reach the same barrier: when some wait at one barrier and
   others have returned, or wait at another barrier, the launch ends as
   with mixemu_fail but with CUDA_ERROR_LAUNCH_FAILED and a message naming
   the kernel, the block and the threads ("kernel K: a barrier (loc(...))
   that threads 4-7 of block 0 did not reach (they returned)"). Called in
   a kernel without the flag, it ends the launch the same way. */
void mixemu_barrier(const char *site);

/* The modes of mixemu_shuffle (gpu.shuffle's). */
enum {
  MIXEMU_SHUFFLE_XOR = 0,
  MIXEMU_SHUFFLE_DOWN = 1,
  MIXEMU_SHUFFLE_UP = 2,
  MIXEMU_SHUFFLE_IDX = 3
};

/* A warp shuffle (gpu.shuffle, shfl.sync) of a 32-bit value, in a kernel
   marked MIXEMU_KERNEL_SYNCHRONIZES. A warp is 32 consecutive threads of
   the block (linear ids, x fastest); lane k of the warp gives `value` and
   gets that of lane j:
     XOR: j = k ^ offset,  DOWN: j = k + offset,  UP: j = k - offset,
     IDX: j = offset,
   valid when 0 <= j < width; otherwise it gets its own value back (as a
   device does) and valid is false. Returns the value in the low 32 bits
   and valid in bit 32. Lanes 0 to width - 1 of the warp, all of them
   existing and none other, must reach the same shuffle (`site`, as for
   mixemu_barrier) with the same width, 1 to 32: on a device the lanes
   below the width make the shuffle's mask. Anything else ends the launch
   as a divergent barrier does ("kernel K: a shuffle (loc(...)) that lanes
   16-31 of warp 0 of block 0 did not reach (they returned)"). */
int64_t mixemu_shuffle(const char *site, int32_t mode, int32_t value,
                       int32_t offset, int32_t width);

/* A warp's exchange of registers, for the emulation of a tensor-core
   product (mma.sync; lib/Target/CUDA/EmulateMma.cpp): each of the 32 lanes
   gives `count` floats at `give` and, once all 32 are there, gets every
   lane's at `all` (lane l's at all[l * count], 32 * count floats). Every
   lane of the warp must reach the same exchange (`site`), as for a
   shuffle of width 32; anything else ends the launch as a divergent
   shuffle does. One exchange stands for the 32 shuffles a product's
   operands would take. */
void mixemu_exchange(const char *site, const float *give, int32_t count,
                     float *all);

/* A warp's tensor-core product, mma.sync.m16n8k8 with tf32 operands and
   float32 accumulators: each lane gives its A fragment `a` (4 floats), its
   B fragment `b` (2) and its accumulator fragment `cd` (4), which it gets
   back as D = A B + C. The fragments are the PTX ISA's, as
   lib/Target/CUDA/EmulateMma.cpp states them (and checks against MLIR's):
   with lane = 4 g + t, a[v] = A[g + 8 (v % 2)][t + 4 (v / 2)],
   b[v] = B[t + 4 v][g], cd[v] = C[g + 8 (v / 2)][2 t + v % 2]. The
   operands are read as tf32 (their 13 lowest mantissa bits cleared), their
   products are exact in float32, and each element adds its eight in order
   of k. The lanes meet as at a mixemu_exchange of width 32. */
void mixemu_mma_m16n8k8_tf32(const char *site, const float *a, const float *b,
                             float *cd);

/* mma.sync.m16n8k16 with bf16 operands and float32 accumulators (row-major
   A, column-major B): as mixemu_mma_m16n8k8_tf32, but `a` holds the bits of
   4 registers and `b` of 2 (as floats), two bf16 a register, element 2 r
   in the low half of register r: with lane = 4 g + t,
   a[v] = A[g + 8 (v / 2 % 2)][2 t + v % 2 + 8 (v / 4)],
   b[v] = B[2 t + v % 2 + 8 (v / 2)][g], cd as for m16n8k8. Products of
   bf16 are exact in float32; each element adds its sixteen in order of k. */
void mixemu_mma_m16n8k16_bf16(const char *site, const float *a, const float *b,
                              float *cd);

/*===-- Diagnostics ------------------------------------------------------===*/

/* The message of the emulator's last failed call (the one
   cuGetErrorString gives for its status), or "" when there was none.
   cuBLASLt's functions return only a status; their details are here. */
const char *mixemu_last_error(void);

/*===-- Count-only mode --------------------------------------------------===*/

/* MIXEMU_COUNT_ONLY=1 in the environment (read once, by cuInit or the
   first query; unset, empty or 0: off; any other value makes cuInit fail
   with CUDA_ERROR_INVALID_VALUE and a message naming the variable): every
   kernel launch, product (cublasLtMatmul), copy, memset and all-reduce is
   checked exactly as usual (the context, the stream, the launch's limits
   and parameter count, the descriptors, that every range lies in one live
   allocation) and counted as usual, in these counters and so in the
   support code's profile (MIXRT_CUDA_PROFILE), but not run: no kernel
   thread runs, no product is computed, no data moves. Allocations reserve
   their address space and count against the device's memory as usual,
   but their pages are never made accessible, so nothing is committed on
   the host and allocations of many GB cost no memory; device memory is
   never touched (a touch would fault). A copy to the host fills the
   host's buffer with zeros, so what the host reads is deterministic (the
   losses are 0). So the profile of a step is complete, and quick to
   make, at any size; its results are not the model's, and the emulator
   says so once on stderr ("CUDA emulator: MIXEMU_COUNT_ONLY=1: nothing is
   computed; the results are not the model's"). At exit it says how much
   device memory the run needed ("CUDA emulator: MIXEMU_COUNT_ONLY=1: at
   most N bytes of device memory were allocated at once (...)"): whether
   the step fits in an H200's. */
int mixemu_count_only(void);

/* Turns count-only mode on or off whatever the environment says (for
   tests). Allocations made while it was on become accessible as any other
   once it is off; their contents are zero. */
void mixemu_set_count_only(int on);

/*===-- Counters ---------------------------------------------------------===*/

/* Counters of what the emulator ran (in count-only mode: checked and
   counted, not run), besides the support code's profile
   (MIXRT_CUDA_PROFILE). */
typedef struct {
  uint64_t launches;     /* kernel launches run to completion */
  uint64_t threads;      /* kernel threads run */
  uint64_t copies[3];    /* copies host to device, device to host, d to d */
  uint64_t copyBytes[3]; /* their bytes */
  uint64_t memsets;      /* cuMemsetD32 calls */
  uint64_t matmuls;      /* cublasLtMatmul calls */
  uint64_t matmulFlops;  /* 2 m n k batch over them */
  /* The most device memory allocated at once (each allocation rounded up
     to whole pages); a reset starts it from what is allocated then. */
  uint64_t peakDeviceBytes;
} MixEmuProfile;

/* The counters since the start or the last mixemu_profile_reset. */
const MixEmuProfile *mixemu_profile(void);
void mixemu_profile_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* MIXEMU_EMULATOR_H */
