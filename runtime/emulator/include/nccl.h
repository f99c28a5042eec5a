/*===- nccl.h - NCCL, as the emulator provides it -----------------*- C -*-===//
 *
 * The subset of NCCL that the packages' support code
 * (runtime/support/CUDASupport.c: mixrt_nccl_*) opens with dlopen and
 * calls, declared for the CUDA emulator (runtime/emulator/Nccl.c), which
 * averages over the ranks' processes of one machine through shared memory.
 *
 * Every enumerator, type and signature matches the toolkit's nccl.h (NCCL
 * 2.x: the ABI has been stable since 2.10, the first with ncclAvg);
 * HeaderCheck.c asserts the values against both where the toolkit has
 * one, and the support code's own _Static_asserts check its declarations
 * against this header in every emulated package. Only what the support
 * code uses, and ncclGetLastError, is declared, and one function of the
 * emulator's own: mixemu_nccl_library, how the support code finds these.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MIXEMU_NCCL_H
#define MIXEMU_NCCL_H

#include <cuda.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime API's stream is the driver's (as in cublasLt.h: the
   emulator has no cuda_runtime.h). */
typedef struct CUstream_st *cudaStream_t;

typedef struct ncclComm *ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9
} ncclDataType_t;

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                              int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

/* The emulator's own (not NCCL's): the shared object the emulator is
   linked into (the package's model.so), as a dlopen handle to dlclose
   when done, or NULL. The support code opens it in place of libnccl.so.2
   and looks the functions above up in it with dlsym, as in the real one.
   In a program that links the emulator itself (the unit tests), the
   program. */
void *mixemu_nccl_library(void);

#ifdef __cplusplus
}
#endif

#endif /* MIXEMU_NCCL_H */
