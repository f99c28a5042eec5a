/*===- HeaderCheck.c - The emulator's CUDA headers match the toolkit's ----===//
 *
 * The emulator declares its own cuda.h, cublasLt.h and nccl.h (include/),
 * so that the packages' support code compiles against them unchanged. They
 * must mean what the toolkit's headers mean: the same numeric values,
 * struct layouts and function types. This file states them once, and is
 * compiled against the emulator's headers (with the emulator) and, where
 * a CUDA toolkit is installed, against the toolkit's (CMakeLists.txt):
 * a difference on either side fails the build. It defines nothing.
 *
 *===----------------------------------------------------------------------===*/

#include <cublasLt.h>
#include <cuda.h>

#include <stddef.h>

#define MIXEMU_VALUE(name, value)                                              \
  _Static_assert((long long)(name) == (value), #name " is " #value);

MIXEMU_VALUE(CUDA_SUCCESS, 0)
MIXEMU_VALUE(CUDA_ERROR_INVALID_VALUE, 1)
MIXEMU_VALUE(CUDA_ERROR_OUT_OF_MEMORY, 2)
MIXEMU_VALUE(CUDA_ERROR_NOT_INITIALIZED, 3)
MIXEMU_VALUE(CUDA_ERROR_DEINITIALIZED, 4)
MIXEMU_VALUE(CUDA_ERROR_NO_DEVICE, 100)
MIXEMU_VALUE(CUDA_ERROR_INVALID_DEVICE, 101)
MIXEMU_VALUE(CUDA_ERROR_INVALID_IMAGE, 200)
MIXEMU_VALUE(CUDA_ERROR_INVALID_CONTEXT, 201)
MIXEMU_VALUE(CUDA_ERROR_INVALID_HANDLE, 400)
MIXEMU_VALUE(CUDA_ERROR_ILLEGAL_STATE, 401)
MIXEMU_VALUE(CUDA_ERROR_NOT_FOUND, 500)
MIXEMU_VALUE(CUDA_ERROR_NOT_READY, 600)
MIXEMU_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS, 700)
MIXEMU_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)
MIXEMU_VALUE(CUDA_ERROR_LAUNCH_FAILED, 719)
MIXEMU_VALUE(CUDA_ERROR_NOT_SUPPORTED, 801)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905)
MIXEMU_VALUE(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906)
MIXEMU_VALUE(CUDA_ERROR_CAPTURED_EVENT, 907)
MIXEMU_VALUE(CUDA_ERROR_UNKNOWN, 999)
MIXEMU_VALUE(CU_STREAM_DEFAULT, 0)
MIXEMU_VALUE(CU_STREAM_NON_BLOCKING, 1)
MIXEMU_VALUE(CU_EVENT_DEFAULT, 0)
MIXEMU_VALUE(CU_EVENT_DISABLE_TIMING, 2)
MIXEMU_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL, 0)
MIXEMU_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1)
MIXEMU_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED, 2)
MIXEMU_VALUE(CU_STREAM_CAPTURE_STATUS_NONE, 0)
MIXEMU_VALUE(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1)
MIXEMU_VALUE(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)
MIXEMU_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)
MIXEMU_VALUE(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2)
MIXEMU_VALUE(CU_MEMORYTYPE_HOST, 1)
MIXEMU_VALUE(CU_MEMORYTYPE_DEVICE, 2)
MIXEMU_VALUE(CU_MEMORYTYPE_ARRAY, 3)
MIXEMU_VALUE(CU_MEMORYTYPE_UNIFIED, 4)

MIXEMU_VALUE(CUDA_R_32F, 0)
MIXEMU_VALUE(CUDA_R_16F, 2)
MIXEMU_VALUE(CUDA_R_16BF, 14)
MIXEMU_VALUE(CUBLAS_STATUS_SUCCESS, 0)
MIXEMU_VALUE(CUBLAS_STATUS_NOT_INITIALIZED, 1)
MIXEMU_VALUE(CUBLAS_STATUS_ALLOC_FAILED, 3)
MIXEMU_VALUE(CUBLAS_STATUS_INVALID_VALUE, 7)
MIXEMU_VALUE(CUBLAS_STATUS_ARCH_MISMATCH, 8)
MIXEMU_VALUE(CUBLAS_STATUS_MAPPING_ERROR, 11)
MIXEMU_VALUE(CUBLAS_STATUS_EXECUTION_FAILED, 13)
MIXEMU_VALUE(CUBLAS_STATUS_INTERNAL_ERROR, 14)
MIXEMU_VALUE(CUBLAS_STATUS_NOT_SUPPORTED, 15)
MIXEMU_VALUE(CUBLAS_STATUS_LICENSE_ERROR, 16)
MIXEMU_VALUE(CUBLAS_OP_N, 0)
MIXEMU_VALUE(CUBLAS_OP_T, 1)
MIXEMU_VALUE(CUBLAS_OP_C, 2)
MIXEMU_VALUE(CUBLAS_COMPUTE_32F, 68)
MIXEMU_VALUE(CUBLAS_COMPUTE_32F_PEDANTIC, 69)
MIXEMU_VALUE(CUBLAS_COMPUTE_32F_FAST_16F, 74)
MIXEMU_VALUE(CUBLAS_COMPUTE_32F_FAST_16BF, 75)
MIXEMU_VALUE(CUBLAS_COMPUTE_32F_FAST_TF32, 77)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_SCALE_TYPE, 1)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_TRANSA, 3)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_TRANSB, 4)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE, 7)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 11)
MIXEMU_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 12)
MIXEMU_VALUE(CUBLASLT_EPILOGUE_DEFAULT, 1)
MIXEMU_VALUE(CUBLASLT_EPILOGUE_BIAS, 4)
MIXEMU_VALUE(CUBLASLT_EPILOGUE_BGRADB, 512)
MIXEMU_VALUE(CUBLASLT_EPILOGUE_DGELU, 192)
MIXEMU_VALUE(CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 164)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_TYPE, 0)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_ORDER, 1)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_ROWS, 2)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_COLS, 3)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_LD, 4)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5)
MIXEMU_VALUE(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 6)
MIXEMU_VALUE(CUBLASLT_MATMUL_PREF_SEARCH_MODE, 0)
MIXEMU_VALUE(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1)

_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr");
_Static_assert(sizeof(CUdevice) == sizeof(int), "CUdevice");
_Static_assert(sizeof(CUresult) == 4, "CUresult");
_Static_assert(sizeof(cublasOperation_t) == 4, "cublasOperation_t");
_Static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "cublasLtMatmulAlgo_t");
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96,
               "cublasLtMatmulHeuristicResult_t");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) == 64,
               "cublasLtMatmulHeuristicResult_t.workspaceSize");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, state) == 72,
               "cublasLtMatmulHeuristicResult_t.state");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, wavesCount) == 76,
               "cublasLtMatmulHeuristicResult_t.wavesCount");

/* The function types, as the support code calls them (an initializer of
   another type is an error under -Werror). */
#define MIXEMU_TYPE(name, type)                                                \
  __attribute__((unused)) static __typeof__(type) const check_##name = name;

typedef CUdeviceptr Dptr;
typedef CUstream Stream;
MIXEMU_TYPE(cuGetErrorName, CUresult (*)(CUresult, const char **))
MIXEMU_TYPE(cuGetErrorString, CUresult (*)(CUresult, const char **))
MIXEMU_TYPE(cuInit, CUresult (*)(unsigned))
MIXEMU_TYPE(cuDeviceGet, CUresult (*)(CUdevice *, int))
MIXEMU_TYPE(cuDeviceGetAttribute,
            CUresult (*)(int *, CUdevice_attribute, CUdevice))
MIXEMU_TYPE(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice))
MIXEMU_TYPE(cuDevicePrimaryCtxRelease, CUresult (*)(CUdevice))
MIXEMU_TYPE(cuCtxSetCurrent, CUresult (*)(CUcontext))
MIXEMU_TYPE(cuCtxGetDevice, CUresult (*)(CUdevice *))
MIXEMU_TYPE(cuStreamCreate, CUresult (*)(CUstream *, unsigned))
MIXEMU_TYPE(cuStreamDestroy, CUresult (*)(CUstream))
MIXEMU_TYPE(cuStreamSynchronize, CUresult (*)(CUstream))
MIXEMU_TYPE(cuStreamQuery, CUresult (*)(CUstream))
MIXEMU_TYPE(cuStreamBeginCapture, CUresult (*)(CUstream, CUstreamCaptureMode))
MIXEMU_TYPE(cuStreamEndCapture, CUresult (*)(CUstream, CUgraph *))
MIXEMU_TYPE(cuStreamIsCapturing,
            CUresult (*)(CUstream, CUstreamCaptureStatus *))
MIXEMU_TYPE(cuGraphInstantiateWithFlags,
            CUresult (*)(CUgraphExec *, CUgraph, unsigned long long))
MIXEMU_TYPE(cuGraphLaunch, CUresult (*)(CUgraphExec, CUstream))
MIXEMU_TYPE(cuGraphExecDestroy, CUresult (*)(CUgraphExec))
MIXEMU_TYPE(cuGraphDestroy, CUresult (*)(CUgraph))
MIXEMU_TYPE(cuMemAlloc, CUresult (*)(Dptr *, size_t))
MIXEMU_TYPE(cuMemFree, CUresult (*)(Dptr))
MIXEMU_TYPE(cuMemcpyHtoDAsync, CUresult (*)(Dptr, const void *, size_t, Stream))
MIXEMU_TYPE(cuMemcpyDtoHAsync, CUresult (*)(void *, Dptr, size_t, Stream))
MIXEMU_TYPE(cuMemcpyDtoDAsync, CUresult (*)(Dptr, Dptr, size_t, Stream))
MIXEMU_TYPE(cuMemsetD32Async, CUresult (*)(Dptr, unsigned, size_t, Stream))
MIXEMU_TYPE(cuPointerGetAttribute,
            CUresult (*)(void *, CUpointer_attribute, Dptr))
MIXEMU_TYPE(cuModuleLoadData, CUresult (*)(CUmodule *, const void *))
MIXEMU_TYPE(cuModuleUnload, CUresult (*)(CUmodule))
MIXEMU_TYPE(cuModuleGetFunction,
            CUresult (*)(CUfunction *, CUmodule, const char *))
MIXEMU_TYPE(cuFuncGetName, CUresult (*)(const char **, CUfunction))
MIXEMU_TYPE(cuFuncGetParamInfo,
            CUresult (*)(CUfunction, size_t, size_t *, size_t *))
MIXEMU_TYPE(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned,
                                         unsigned, unsigned, unsigned, unsigned,
                                         unsigned, CUstream, void **, void **))

typedef cublasLtMatrixLayout_t Layout;
MIXEMU_TYPE(cublasLtCreate, cublasStatus_t (*)(cublasLtHandle_t *))
MIXEMU_TYPE(cublasLtDestroy, cublasStatus_t (*)(cublasLtHandle_t))
MIXEMU_TYPE(cublasLtMatmulDescCreate,
            cublasStatus_t (*)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                               cudaDataType_t))
MIXEMU_TYPE(cublasLtMatmulDescDestroy, cublasStatus_t (*)(cublasLtMatmulDesc_t))
MIXEMU_TYPE(cublasLtMatmulDescSetAttribute,
            cublasStatus_t (*)(cublasLtMatmulDesc_t,
                               cublasLtMatmulDescAttributes_t, const void *,
                               size_t))
MIXEMU_TYPE(cublasLtMatrixLayoutCreate,
            cublasStatus_t (*)(Layout *, cudaDataType, uint64_t, uint64_t,
                               int64_t))
MIXEMU_TYPE(cublasLtMatrixLayoutDestroy, cublasStatus_t (*)(Layout))
MIXEMU_TYPE(cublasLtMatrixLayoutSetAttribute,
            cublasStatus_t (*)(Layout, cublasLtMatrixLayoutAttribute_t,
                               const void *, size_t))
MIXEMU_TYPE(cublasLtMatmulPreferenceCreate,
            cublasStatus_t (*)(cublasLtMatmulPreference_t *))
MIXEMU_TYPE(cublasLtMatmulPreferenceDestroy,
            cublasStatus_t (*)(cublasLtMatmulPreference_t))
MIXEMU_TYPE(cublasLtMatmulPreferenceSetAttribute,
            cublasStatus_t (*)(cublasLtMatmulPreference_t,
                               cublasLtMatmulPreferenceAttributes_t,
                               const void *, size_t))
MIXEMU_TYPE(cublasLtMatmulAlgoGetHeuristic,
            cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, Layout,
                               Layout, Layout, Layout,
                               cublasLtMatmulPreference_t, int,
                               cublasLtMatmulHeuristicResult_t *, int *))
MIXEMU_TYPE(cublasLtMatmul,
            cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                               const void *, const void *, Layout, const void *,
                               Layout, const void *, const void *, Layout,
                               void *, Layout, const cublasLtMatmulAlgo_t *,
                               void *, size_t, cudaStream_t))

/* NCCL (nccl.h), where the toolkit has it: NCCL is a separate package. */
#if __has_include(<nccl.h>)
#include <nccl.h>

MIXEMU_VALUE(NCCL_UNIQUE_ID_BYTES, 128)
MIXEMU_VALUE(ncclSuccess, 0)
MIXEMU_VALUE(ncclUnhandledCudaError, 1)
MIXEMU_VALUE(ncclSystemError, 2)
MIXEMU_VALUE(ncclInternalError, 3)
MIXEMU_VALUE(ncclInvalidArgument, 4)
MIXEMU_VALUE(ncclInvalidUsage, 5)
MIXEMU_VALUE(ncclRemoteError, 6)
MIXEMU_VALUE(ncclInProgress, 7)
MIXEMU_VALUE(ncclSum, 0)
MIXEMU_VALUE(ncclProd, 1)
MIXEMU_VALUE(ncclMax, 2)
MIXEMU_VALUE(ncclMin, 3)
MIXEMU_VALUE(ncclAvg, 4)
MIXEMU_VALUE(ncclFloat16, 6)
MIXEMU_VALUE(ncclFloat32, 7)
MIXEMU_VALUE(ncclFloat64, 8)
MIXEMU_VALUE(ncclBfloat16, 9)
_Static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId");
_Static_assert(sizeof(ncclResult_t) == 4, "ncclResult_t");

MIXEMU_TYPE(ncclGetUniqueId, ncclResult_t (*)(ncclUniqueId *))
MIXEMU_TYPE(ncclCommInitRank,
            ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int))
MIXEMU_TYPE(ncclCommDestroy, ncclResult_t (*)(ncclComm_t))
MIXEMU_TYPE(ncclCommAbort, ncclResult_t (*)(ncclComm_t))
MIXEMU_TYPE(ncclGetErrorString, const char *(*)(ncclResult_t))
MIXEMU_TYPE(ncclGetLastError, const char *(*)(ncclComm_t))
MIXEMU_TYPE(ncclCommGetAsyncError, ncclResult_t (*)(ncclComm_t, ncclResult_t *))
MIXEMU_TYPE(ncclAllReduce,
            ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t,
                             ncclRedOp_t, ncclComm_t, cudaStream_t))
MIXEMU_TYPE(ncclGroupStart, ncclResult_t (*)(void))
MIXEMU_TYPE(ncclGroupEnd, ncclResult_t (*)(void))
#endif
