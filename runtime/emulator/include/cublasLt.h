/*===- cublasLt.h - cuBLASLt, as the emulator provides it ---------*- C -*-===//
 *
 * The subset of cuBLASLt (and of the cublas_api.h and library_types.h it
 * includes in the toolkit) that the packages' support code
 * (runtime/support/CUDASupport.c) calls for its matrix products, declared
 * for the CUDA emulator (runtime/emulator/CublasLt.c), which computes them
 * on the CPU with the tensor cores' rounding of the inputs.
 *
 * Enumerators, struct layouts and signatures match the toolkit's headers
 * (CUDA 13; HeaderCheck.c asserts the values against both). The
 * descriptors (matmul, layout, preference) are opaque here: the toolkit's
 * are 64- or 256-byte blobs the library fills, which the support code
 * never looks inside. cublasLtMatmulAlgo_t and the heuristic result keep
 * the toolkit's layout because the support code holds them by value.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MIXEMU_CUBLASLT_H
#define MIXEMU_CUBLASLT_H

#include <cuda.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library_types.h --------------------------------------------------- */

typedef enum cudaDataType_t {
  CUDA_R_32F = 0,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14
} cudaDataType;
typedef enum cudaDataType_t cudaDataType_t;

/* The runtime API's stream is the driver's (driver_types.h). */
typedef struct CUstream_st *cudaStream_t;

/* ---- cublas_api.h ------------------------------------------------------ */

typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_MAPPING_ERROR = 11,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_INTERNAL_ERROR = 14,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;

typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2
} cublasOperation_t;

typedef enum {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77
} cublasComputeType_t;

/* ---- cublasLt.h -------------------------------------------------------- */

typedef struct cublasLtContext *cublasLtHandle_t;

typedef struct cublasLtMatmulDescOpaque_t cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;
typedef struct cublasLtMatrixLayoutOpaque_t cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;
typedef struct cublasLtMatmulPreferenceOpaque_t
    cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;

typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0, /* int32_t (cublasComputeType_t) */
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,   /* int32_t (cudaDataType_t) */
  CUBLASLT_MATMUL_DESC_TRANSA = 3,       /* int32_t (cublasOperation_t) */
  CUBLASLT_MATMUL_DESC_TRANSB = 4,       /* int32_t (cublasOperation_t) */
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,     /* uint32_t (cublasLtEpilogue_t) */
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8, /* const void *, device memory */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11, /* void *, device memory */
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12       /* int64_t */
} cublasLtMatmulDescAttributes_t;

/* The epilogues the emulator computes: none, a bias (one float per row of
   D, added to each of its columns), a bias gradient (the sums of op(B)'s
   columns over k, one float per column of D), the GELU's gradient (D
   times the tanh-approximated GELU's derivative at the auxiliary matrix,
   laid out as D), and a bias then the GELU (the sum before the GELU
   written to the auxiliary matrix). */
typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 32 | 128 | 4,
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  CUBLASLT_EPILOGUE_BGRADB = 512
} cublasLtEpilogue_t;

typedef enum {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                /* uint32_t */
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,               /* int32_t */
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                /* uint64_t */
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,                /* uint64_t */
  CUBLASLT_MATRIX_LAYOUT_LD = 4,                  /* int64_t */
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,         /* int32_t */
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 /* int64_t, elements */
} cublasLtMatrixLayoutAttribute_t;

typedef enum {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,        /* uint32_t */
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 /* uint64_t */
} cublasLtMatmulPreferenceAttributes_t;

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle);
cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType,
                                        cudaDataType_t scaleType);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                               cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t sizeInBytes);

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                 cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t sizeInBytes);

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t sizeInBytes);

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
    int *returnAlgoCount);

/* D = alpha op(A) op(B) + beta C, column-major, alpha and beta on the
   host. */
cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                              cublasLtMatmulDesc_t computeDesc,
                              const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B,
                              cublasLtMatrixLayout_t Bdesc, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cdesc,
                              void *D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSizeInBytes, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MIXEMU_CUBLASLT_H */
