/*===- CublasLt.c - The emulated cuBLASLt: matrix products on the CPU -----===//
 *
 * Part of the CUDA emulator (runtime/emulator). The packages' support code
 * computes every matrix product with cublasLtMatmul; here it is computed
 * on the CPU with the numerics of the tensor cores it would run on:
 *   D = alpha op(A) op(B) + beta C
 * in cuBLASLt's terms (column-major; each operand a rows x cols layout
 * with a leading dimension, optionally a strided batch; op transposes per
 * the descriptor's TRANSA/TRANSB), where before multiplying A and B are
 * rounded as the compute type lets the device round them:
 *  - CUBLAS_COMPUTE_32F_FAST_TF32: to TF32, 10 mantissa bits, to nearest
 *    with ties away from zero (as cvt.rna.tf32.f32). Whether cuBLAS uses
 *    tensor cores, and so rounds, for a given shape is not documented;
 *    rounding always is the conservative bound;
 *  - CUBLAS_COMPUTE_32F_FAST_16BF: to bfloat16, 7 mantissa bits, to
 *    nearest even;
 *  - CUBLAS_COMPUTE_32F and _PEDANTIC: not at all.
 * A and B are both CUDA_R_32F, or both CUDA_R_16BF (bfloat16 in memory, as
 * --precision bf16 stores a product's operands; widened exactly, with the
 * 32F or 32F_PEDANTIC compute type only). C and D have one type:
 * CUDA_R_32F, or CUDA_R_16BF with CUDA_R_16BF operands (the result
 * rounded to nearest even as it is stored).
 * The products are accumulated in float, over k in order. When beta is
 * zero C is not read (as in BLAS). C may be D (the support code
 * accumulates in place).
 * The epilogue computes in float; its vector and auxiliary matrix have D's
 * type (cuBLASLt's default outside FP8 and integer kernels; their
 * DATA_TYPE attributes are not emulated). With the BIAS epilogue, D =
 * alpha op(A) op(B) + beta C + bias, the bias one element per row of D
 * (the pointer the descriptor holds, read from device memory). With BGRADB
 * (unbatched products), the same pointer's n elements get the sums over k
 * of op(B)'s columns, a bias gradient: of the operand as the tensor cores
 * read it (rounded), added in float in order of k. With DGELU, D = (alpha
 * op(A) op(B) + beta C) gelu'(X), X the auxiliary matrix
 * (EPILOGUE_AUX_POINTER, m x n with EPILOGUE_AUX_LD) and gelu' the
 * derivative of 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed
 * in float. With GELU_AUX_BIAS, X = alpha op(A) op(B) + beta C + bias is
 * written to the auxiliary matrix and D = gelu(X), of X before it is
 * stored (rounded, when bf16).
 * The descriptors hold what the support code sets (the transposes, the
 * epilogue and its bias, a layout's batch count and stride, the workspace
 * limit); any other attribute is CUBLAS_STATUS_NOT_SUPPORTED, so that a
 * new use is noticed.
 * An operand reaching outside its allocation faults as a kernel would:
 * the call succeeds (the device would only fault later) and the context's
 * sticky CUDA_ERROR_ILLEGAL_ADDRESS, whose message names the operand and
 * the allocation, fails the next driver call. Bad arguments return their
 * status and print why (mixemuLibraryError). In count-only mode
 * (MIXEMU_COUNT_ONLY=1) a product is checked (its descriptors and
 * operands) and counted, but not computed.
 *
 *===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <cublasLt.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cublasLtContext {
  float *scratch; /* the rounded operands of a product */
  size_t scratchFloats;
};

struct cublasLtMatmulDescOpaque_t {
  cublasComputeType_t compute;
  cublasOperation_t trans[2]; /* A's, B's */
  uint32_t epilogue; /* CUBLASLT_EPILOGUE_DEFAULT, _BIAS, _BGRADB, _DGELU,
                        _GELU_AUX_BIAS */
  const void *bias;  /* the row BIAS adds, or where BGRADB writes (D's type) */
  const void *aux;   /* the pre-activation DGELU reads, GELU_AUX_BIAS writes
                        (D's type) */
  int64_t auxLd;
};

struct cublasLtMatrixLayoutOpaque_t {
  cudaDataType type; /* CUDA_R_32F or CUDA_R_16BF */
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride; /* elements between batches */
};

struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t maxWorkspace;
};

/* The one algorithm's tag in cublasLtMatmulAlgo_t.data[0]: "MIXEMU" */
static const uint64_t kAlgoTag = 0x554d45584d49ull;

/* ---- Rounding ---------------------------------------------------------- */

typedef enum { kRoundNone, kRoundTF32, kRoundBF16 } Rounding;

/* To 10 mantissa bits, to nearest, ties away from zero (cvt.rna.tf32). */
static float roundTF32(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) /* inf and nan stay */
    return x;
  u = (u + 0x1000u) & 0xffffe000u; /* half an ulp more in magnitude */
  memcpy(&x, &u, sizeof x);
  return x;
}

/* To 7 mantissa bits, to nearest, ties to even. */
static float roundBF16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) /* nan stays */
    return x;
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  memcpy(&x, &u, sizeof x);
  return x;
}

static float roundAs(Rounding rounding, float x) {
  return rounding == kRoundTF32   ? roundTF32(x)
         : rounding == kRoundBF16 ? roundBF16(x)
                                  : x;
}

/* ---- Handles and descriptors ------------------------------------------- */

static cublasStatus_t fail(cublasStatus_t status, const char *what) {
  char text[1024]; /* what may be the last message, which this replaces */
  snprintf(text, sizeof text, "%s", what);
  mixemuLibraryError("cuBLASLt: %s", text);
  return status;
}

/* An attribute's value, `size` bytes at `buf`, into `out` if it has the
   `want` bytes its type has; else INVALID_VALUE with `what` as the reason. */
static cublasStatus_t readAttribute(const void *buf, size_t size, void *out,
                                    size_t want, const char *what) {
  if (size != want)
    return fail(CUBLAS_STATUS_INVALID_VALUE, what);
  memcpy(out, buf, want);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
  if (!lightHandle)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtCreate: no result");
  if (!mixemuInitialized())
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtCreate before cuInit");
  struct cublasLtContext *h = (struct cublasLtContext *)calloc(1, sizeof *h);
  if (!h)
    return CUBLAS_STATUS_ALLOC_FAILED;
  *lightHandle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  if (!lightHandle)
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: no handle");
  free(lightHandle->scratch);
  free(lightHandle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                        cublasComputeType_t computeType,
                                        cudaDataType_t scaleType) {
  if (!matmulDesc)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulDescCreate: no result");
  if (computeType != CUBLAS_COMPUTE_32F &&
      computeType != CUBLAS_COMPUTE_32F_PEDANTIC &&
      computeType != CUBLAS_COMPUTE_32F_FAST_TF32 &&
      computeType != CUBLAS_COMPUTE_32F_FAST_16BF)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatmulDescCreate: the emulator computes in 32F, "
                "32F_PEDANTIC, 32F_FAST_TF32 or 32F_FAST_16BF");
  if (scaleType != CUDA_R_32F)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatmulDescCreate: the scale type must be "
                "CUDA_R_32F");
  cublasLtMatmulDesc_t d = (cublasLtMatmulDesc_t)malloc(sizeof *d);
  if (!d)
    return CUBLAS_STATUS_ALLOC_FAILED;
  d->compute = computeType;
  d->trans[0] = d->trans[1] = CUBLAS_OP_N;
  d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  d->bias = NULL;
  *matmulDesc = d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  free(matmulDesc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                               cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t sizeInBytes) {
  if (!matmulDesc || !buf)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulDescSetAttribute: no descriptor or value");
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE) {
    uint32_t epilogue;
    if (readAttribute(buf, sizeInBytes, &epilogue, sizeof epilogue,
                      "cublasLtMatmulDescSetAttribute: an epilogue is 4 "
                      "bytes") != CUBLAS_STATUS_SUCCESS)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT &&
        epilogue != CUBLASLT_EPILOGUE_BIAS &&
        epilogue != CUBLASLT_EPILOGUE_BGRADB &&
        epilogue != CUBLASLT_EPILOGUE_DGELU &&
        epilogue != CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
      return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                  "cublasLtMatmulDescSetAttribute: only the DEFAULT, BIAS, "
                  "BGRADB, DGELU and GELU_AUX_BIAS epilogues are emulated");
    matmulDesc->epilogue = epilogue;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr == CUBLASLT_MATMUL_DESC_BIAS_POINTER)
    return readAttribute(buf, sizeInBytes, &matmulDesc->bias,
                         sizeof matmulDesc->bias,
                         "cublasLtMatmulDescSetAttribute: BIAS_POINTER is a "
                         "pointer");
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER)
    return readAttribute(buf, sizeInBytes, &matmulDesc->aux,
                         sizeof matmulDesc->aux,
                         "cublasLtMatmulDescSetAttribute: EPILOGUE_AUX_POINTER "
                         "is a pointer");
  if (attr == CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD)
    return readAttribute(buf, sizeInBytes, &matmulDesc->auxLd,
                         sizeof matmulDesc->auxLd,
                         "cublasLtMatmulDescSetAttribute: EPILOGUE_AUX_LD is "
                         "an int64_t");
  if (attr != CUBLASLT_MATMUL_DESC_TRANSA &&
      attr != CUBLASLT_MATMUL_DESC_TRANSB)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatmulDescSetAttribute: only TRANSA, TRANSB, "
                "EPILOGUE, BIAS_POINTER, EPILOGUE_AUX_POINTER and "
                "EPILOGUE_AUX_LD are emulated");
  int32_t op;
  if (readAttribute(buf, sizeInBytes, &op, sizeof op,
                    "cublasLtMatmulDescSetAttribute: a transpose is 4 "
                    "bytes") != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (op != CUBLAS_OP_N && op != CUBLAS_OP_T)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulDescSetAttribute: a real product's operation "
                "is CUBLAS_OP_N or CUBLAS_OP_T");
  matmulDesc->trans[attr == CUBLASLT_MATMUL_DESC_TRANSB] =
      (cublasOperation_t)op;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (!matLayout)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatrixLayoutCreate: no result");
  if (type != CUDA_R_32F && type != CUDA_R_16BF)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatrixLayoutCreate: the emulator's matrices are "
                "CUDA_R_32F or CUDA_R_16BF");
  cublasLtMatrixLayout_t l = (cublasLtMatrixLayout_t)malloc(sizeof *l);
  if (!l)
    return CUBLAS_STATUS_ALLOC_FAILED;
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  l->batch = 1;
  l->stride = 0;
  *matLayout = l;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  free(matLayout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                 cublasLtMatrixLayoutAttribute_t attr,
                                 const void *buf, size_t sizeInBytes) {
  if (!matLayout || !buf)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatrixLayoutSetAttribute: no layout or value");
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) {
    int32_t batch;
    if (readAttribute(buf, sizeInBytes, &batch, sizeof batch,
                      "cublasLtMatrixLayoutSetAttribute: BATCH_COUNT is 4 "
                      "bytes") != CUBLAS_STATUS_SUCCESS)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (batch < 1)
      return fail(CUBLAS_STATUS_INVALID_VALUE,
                  "cublasLtMatrixLayoutSetAttribute: a batch count below 1");
    matLayout->batch = batch;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
    return readAttribute(buf, sizeInBytes, &matLayout->stride,
                         sizeof matLayout->stride,
                         "cublasLtMatrixLayoutSetAttribute: "
                         "STRIDED_BATCH_OFFSET is 8 bytes");
  return fail(CUBLAS_STATUS_NOT_SUPPORTED,
              "cublasLtMatrixLayoutSetAttribute: only BATCH_COUNT and "
              "STRIDED_BATCH_OFFSET are emulated");
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  if (!pref)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulPreferenceCreate: no result");
  cublasLtMatmulPreference_t p = (cublasLtMatmulPreference_t)malloc(sizeof *p);
  if (!p)
    return CUBLAS_STATUS_ALLOC_FAILED;
  p->maxWorkspace = 0;
  *pref = p;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  free(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr,
                                     const void *buf, size_t sizeInBytes) {
  if (!pref || !buf)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulPreferenceSetAttribute: no preference or "
                "value");
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "cublasLtMatmulPreferenceSetAttribute: only "
                "MAX_WORKSPACE_BYTES is emulated");
  return readAttribute(buf, sizeInBytes, &pref->maxWorkspace,
                       sizeof pref->maxWorkspace,
                       "cublasLtMatmulPreferenceSetAttribute: "
                       "MAX_WORKSPACE_BYTES is 8 bytes");
}

/* ---- The product ------------------------------------------------------- */

/* A product's sizes, once its descriptors are checked. */
typedef struct {
  uint64_t m, n, k;
  int32_t batch;
  Rounding rounding;
} Shape;

/* Checks that the descriptors describe a product cuBLASLt would run. */
static cublasStatus_t checkShape(cublasLtMatmulDesc_t d,
                                 cublasLtMatrixLayout_t a,
                                 cublasLtMatrixLayout_t b,
                                 cublasLtMatrixLayout_t c,
                                 cublasLtMatrixLayout_t dl, Shape *shape) {
  char why[256];
  if (!d || !a || !b || !c || !dl)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "a product without a descriptor");
  int ta = d->trans[0] == CUBLAS_OP_T, tb = d->trans[1] == CUBLAS_OP_T;
  uint64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
  uint64_t kb = tb ? b->cols : b->rows, n = tb ? b->rows : b->cols;
  const uint64_t kMax = (uint64_t)1 << 31;
  const cublasLtMatrixLayout_t layouts[4] = {a, b, c, dl};
  for (int i = 0; i < 4; ++i) {
    const struct cublasLtMatrixLayoutOpaque_t *layout = layouts[i];
    unsigned long long rows = layout->rows, cols = layout->cols;
    long long ld = layout->ld, stride = layout->stride;
    const long long kMaxStep = (long long)1 << 40;
    if (rows == 0 || cols == 0 || rows > kMax || cols > kMax ||
        ld < (long long)rows || ld > kMaxStep || stride > kMaxStep ||
        stride < -kMaxStep) {
      const char *names = "ABCD";
      snprintf(why, sizeof why,
               "operand %c is %llu x %llu with ld %lld and batch stride "
               "%lld: empty, too large, or ld below its rows",
               names[i], rows, cols, ld, stride);
      return fail(CUBLAS_STATUS_INVALID_VALUE, why);
    }
  }
  if (kb != k || c->rows != m || c->cols != n || dl->rows != m ||
      dl->cols != n) {
    snprintf(why, sizeof why,
             "op(A) is %llu x %llu, op(B) %llu x %llu, C %llu x %llu and D "
             "%llu x %llu: not a product",
             (unsigned long long)m, (unsigned long long)k,
             (unsigned long long)kb, (unsigned long long)n,
             (unsigned long long)c->rows, (unsigned long long)c->cols,
             (unsigned long long)dl->rows, (unsigned long long)dl->cols);
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  }
  /* float32 results of float32 or bfloat16 operands (both the same), or
     bfloat16 results of bfloat16 operands. */
  if (a->type != b->type || c->type != dl->type ||
      (dl->type == CUDA_R_16BF && a->type != CUDA_R_16BF))
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "A and B must be both CUDA_R_32F or both CUDA_R_16BF, and C "
                "and D both CUDA_R_32F or (of CUDA_R_16BF operands) both "
                "CUDA_R_16BF");
  if (a->type == CUDA_R_16BF && d->compute != CUBLAS_COMPUTE_32F &&
      d->compute != CUBLAS_COMPUTE_32F_PEDANTIC)
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "CUDA_R_16BF operands are emulated with the 32F or "
                "32F_PEDANTIC compute type");
  if (a->batch != b->batch || a->batch != c->batch || a->batch != dl->batch) {
    snprintf(why, sizeof why,
             "the batch counts of A, B, C and D differ (%d, %d, %d, %d)",
             (int)a->batch, (int)b->batch, (int)c->batch, (int)dl->batch);
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  }
  shape->m = m;
  shape->n = n;
  shape->k = k;
  shape->batch = a->batch;
  shape->rounding = d->compute == CUBLAS_COMPUTE_32F_FAST_TF32   ? kRoundTF32
                    : d->compute == CUBLAS_COMPUTE_32F_FAST_16BF ? kRoundBF16
                                                                 : kRoundNone;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
    cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
    int *returnAlgoCount) {
  if (!lightHandle || !preference || requestedAlgoCount < 1 ||
      !heuristicResultsArray || !returnAlgoCount)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulAlgoGetHeuristic: a missing argument");
  *returnAlgoCount = 0;
  Shape shape;
  if (checkShape(operationDesc, Adesc, Bdesc, Cdesc, Ddesc, &shape) !=
      CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_SUPPORTED; /* no algorithm for it */
  cublasLtMatmulHeuristicResult_t *r = &heuristicResultsArray[0];
  memset(r, 0, sizeof *r);
  r->algo.data[0] = kAlgoTag;
  r->workspaceSize = 0;
  r->state = CUBLAS_STATUS_SUCCESS;
  r->wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

/* The bytes of one of an operand's elements. */
static int64_t elementSize(cublasLtMatrixLayout_t l) {
  return l->type == CUDA_R_16BF ? 2 : 4;
}

/* Element `i` of an operand of `type`, as a float (bf16 is the high half
   of a float: exact). */
static float loadElement(const void *p, cudaDataType type, int64_t i) {
  if (type != CUDA_R_16BF)
    return ((const float *)p)[i];
  uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Stores `x` as element `i` of an operand of `type` (bf16: rounded to
   nearest even). */
static void storeElement(void *p, cudaDataType type, int64_t i, float x) {
  if (type != CUDA_R_16BF) {
    ((float *)p)[i] = x;
    return;
  }
  x = roundBF16(x);
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
}

/* The element offsets an operand spans, lowest and one past the highest. */
static void operandSpan(cublasLtMatrixLayout_t l, int64_t *lo, int64_t *hi) {
  int64_t last = ((int64_t)l->cols - 1) * l->ld + (int64_t)l->rows - 1;
  int64_t batches = ((int64_t)l->batch - 1) * l->stride;
  *lo = batches < 0 ? batches : 0;
  *hi = (batches > 0 ? batches : 0) + last + 1;
}

/* Whether an operand lies in one allocation; if not, faults the context
   (the call itself succeeds, as a kernel's launch would). */
static int operandInRange(char which, const void *p, cublasLtMatrixLayout_t l) {
  int64_t lo, hi;
  operandSpan(l, &lo, &hi);
  char what[160];
  snprintf(what, sizeof what,
           "cublasLtMatmul: operand %c (%llu x %llu, ld %lld, %d batches "
           "%lld apart)",
           which, (unsigned long long)l->rows, (unsigned long long)l->cols,
           (long long)l->ld, (int)l->batch, (long long)l->stride);
  uintptr_t start = (uintptr_t)p + (uintptr_t)(lo * elementSize(l));
  if (mixemuCheckRange(start, (size_t)((hi - lo) * elementSize(l)), what) ==
      CUDA_SUCCESS)
    return 1;
  char message[1024];
  snprintf(message, sizeof message, "%s", mixemu_last_error());
  mixemuSetSticky(CUDA_ERROR_ILLEGAL_ADDRESS, message);
  return 0;
}

/* Whether an epilogue's `rows` elements of `size` bytes (its vector or
   auxiliary matrix) lie in one allocation; if not, faults the context as
   operandInRange does. */
static int biasInRange(const void *bias, uint64_t rows, int64_t size,
                       const char *name) {
  char what[96];
  snprintf(what, sizeof what, "cublasLtMatmul: the %s (%llu %s)", name,
           (unsigned long long)rows, size == 2 ? "bf16 values" : "floats");
  if (mixemuCheckRange((uintptr_t)bias, rows * (uint64_t)size, what) ==
      CUDA_SUCCESS)
    return 1;
  char message[1024];
  snprintf(message, sizeof message, "%s", mixemu_last_error());
  mixemuSetSticky(CUDA_ERROR_ILLEGAL_ADDRESS, message);
  return 0;
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float. */
static float gelu(float x) {
  const float c = 0.7978845608f, a = 0.044715f;
  return 0.5f * x * (1.0f + tanhf(c * (x + a * x * x * x)));
}

/* d/dx of 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float. */
static float geluDerivative(float x) {
  const float c = 0.7978845608f, a = 0.044715f;
  float t = tanhf(c * (x + a * x * x * x));
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * a * x * x);
}

static cublasStatus_t
emuMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
          const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
          const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
          const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
          cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
          void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream,
          int compute) {
  (void)workspace; /* the emulator needs none */
  (void)workspaceSizeInBytes;
  if (!lightHandle || !alpha || !beta || !A || !B || !D)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmul: a missing argument");
  if (algo && algo->data[0] != kAlgoTag)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmul: an algorithm not from "
                "cublasLtMatmulAlgoGetHeuristic");
  CUresult context = mixemuCheckContext();
  if (context == CUDA_ERROR_ILLEGAL_ADDRESS ||
      context == CUDA_ERROR_LAUNCH_FAILED)
    return CUBLAS_STATUS_SUCCESS; /* the next driver call reports the fault */
  if (context != CUDA_SUCCESS ||
      mixemuCheckStream((CUstream)stream, "cublasLtMatmul") != CUDA_SUCCESS)
    return fail(CUBLAS_STATUS_EXECUTION_FAILED, mixemu_last_error());
  Shape s;
  if (checkShape(computeDesc, Adesc, Bdesc, Cdesc, Ddesc, &s) !=
      CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_INVALID_VALUE;
  float a, b;
  memcpy(&a, alpha, sizeof a);
  memcpy(&b, beta, sizeof b);
  if (b != 0.0f && !C)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmul: beta is not zero and C is null");
  /* The epilogue's operands: a bias row (BIAS, GELU_AUX_BIAS), where the
     bias gradient goes (BGRADB), the pre-activation (DGELU reads it,
     GELU_AUX_BIAS writes it). */
  uint32_t epilogue = computeDesc->epilogue;
  int addsBias = epilogue == CUBLASLT_EPILOGUE_BIAS ||
                 epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  int sumsB = epilogue == CUBLASLT_EPILOGUE_BGRADB;
  int geluAux = epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  int usesAux = geluAux || epilogue == CUBLASLT_EPILOGUE_DGELU;
  const char *name = epilogue == CUBLASLT_EPILOGUE_BIAS    ? "BIAS"
                     : sumsB                               ? "BGRADB"
                     : geluAux                             ? "GELU_AUX_BIAS"
                     : epilogue == CUBLASLT_EPILOGUE_DGELU ? "DGELU"
                                                           : "DEFAULT";
  char why[160];
  if ((addsBias || sumsB) && !computeDesc->bias) {
    snprintf(why, sizeof why,
             "cublasLtMatmul: the %s epilogue without a bias pointer", name);
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  }
  int64_t auxLd = computeDesc->auxLd;
  if (usesAux && (!computeDesc->aux || auxLd < (int64_t)s.m || auxLd % 8)) {
    snprintf(why, sizeof why,
             "cublasLtMatmul: the %s epilogue without an EPILOGUE_AUX_POINTER, "
             "or its EPILOGUE_AUX_LD below D's rows or not a multiple of 8",
             name);
    return fail(CUBLAS_STATUS_INVALID_VALUE, why);
  }
  if ((sumsB || usesAux) && s.batch != 1) {
    snprintf(why, sizeof why,
             "cublasLtMatmul: %s of a batched product is not emulated", name);
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, why);
  }
  /* The epilogue's vector and matrix have D's type. */
  const cudaDataType dtype = Ddesc->type;
  const int64_t dsize = elementSize(Ddesc);
  const void *bias = addsBias ? computeDesc->bias : NULL;
  void *biasGrad = sumsB ? (void *)(uintptr_t)computeDesc->bias : NULL;
  void *aux = usesAux ? (void *)(uintptr_t)computeDesc->aux : NULL;
  if (!operandInRange('A', A, Adesc) || !operandInRange('B', B, Bdesc) ||
      (b != 0.0f && !operandInRange('C', C, Cdesc)) ||
      !operandInRange('D', D, Ddesc) ||
      (bias && !biasInRange(bias, s.m, dsize, "bias")) ||
      (biasGrad && !biasInRange(biasGrad, s.n, dsize, "bias gradient")) ||
      (aux && !biasInRange(aux, ((uint64_t)s.n - 1) * (uint64_t)auxLd + s.m,
                           dsize, "pre-activation")))
    return CUBLAS_STATUS_SUCCESS;
  if (!compute) /* captured: checked, computed when the graph runs */
    return CUBLAS_STATUS_SUCCESS;
  if (mixemuCountOnly()) { /* checked, counted, not computed */
    ++mixemuProfileCounters.matmuls;
    mixemuProfileCounters.matmulFlops +=
        2 * s.m * s.n * s.k * (uint64_t)s.batch;
    return CUBLAS_STATUS_SUCCESS;
  }

  /* op(A) rounded, as m rows of k; op(B) rounded, as n columns of k. */
  size_t need = (size_t)(s.m + s.n) * (size_t)s.k;
  if (need > lightHandle->scratchFloats) {
    float *grown = (float *)realloc(lightHandle->scratch, need * sizeof(float));
    if (!grown)
      return fail(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmul: no memory");
    lightHandle->scratch = grown;
    lightHandle->scratchFloats = need;
  }
  float *ra = lightHandle->scratch, *rb = ra + s.m * s.k;
  int ta = computeDesc->trans[0] == CUBLAS_OP_T;
  int tb = computeDesc->trans[1] == CUBLAS_OP_T;
  for (int32_t batch = 0; batch < s.batch; ++batch) {
    const char *pa =
        (const char *)A + batch * Adesc->stride * elementSize(Adesc);
    const char *pb =
        (const char *)B + batch * Bdesc->stride * elementSize(Bdesc);
    const char *pc =
        b != 0.0f ? (const char *)C + batch * Cdesc->stride * elementSize(Cdesc)
                  : NULL;
    char *pd = (char *)D + batch * Ddesc->stride * dsize;
    for (uint64_t i = 0; i < s.m; ++i) /* op(A)(i, p) */
      for (uint64_t p = 0; p < s.k; ++p)
        ra[i * s.k + p] =
            roundAs(s.rounding, loadElement(pa, Adesc->type,
                                            ta ? (int64_t)(p + i * Adesc->ld)
                                               : (int64_t)(i + p * Adesc->ld)));
    for (uint64_t j = 0; j < s.n; ++j) /* op(B)(p, j) */
      for (uint64_t p = 0; p < s.k; ++p)
        rb[j * s.k + p] =
            roundAs(s.rounding, loadElement(pb, Bdesc->type,
                                            tb ? (int64_t)(j + p * Bdesc->ld)
                                               : (int64_t)(p + j * Bdesc->ld)));
    if (biasGrad)
      for (uint64_t j = 0; j < s.n; ++j) {
        float sum = 0.0f;
        for (uint64_t p = 0; p < s.k; ++p)
          sum += rb[j * s.k + p];
        storeElement(biasGrad, dtype, (int64_t)j, sum);
      }
    for (uint64_t j = 0; j < s.n; ++j)
      for (uint64_t i = 0; i < s.m; ++i) {
        const float *x = ra + i * s.k, *y = rb + j * s.k;
        float sum = 0.0f;
        for (uint64_t p = 0; p < s.k; ++p)
          sum += x[p] * y[p];
        float result = a * sum;
        if (pc)
          result +=
              b * loadElement(pc, Cdesc->type, (int64_t)(i + j * Cdesc->ld));
        if (bias)
          result += loadElement(bias, dtype, (int64_t)i);
        int64_t at = (int64_t)(i + j * (uint64_t)auxLd);
        if (geluAux) {
          storeElement(aux, dtype, at, result);
          result = gelu(result);
        } else if (aux) {
          result *= geluDerivative(loadElement(aux, dtype, at));
        }
        storeElement(pd, dtype, (int64_t)(i + j * Ddesc->ld), result);
      }
  }
  ++mixemuProfileCounters.matmuls;
  mixemuProfileCounters.matmulFlops += 2 * s.m * s.n * s.k * (uint64_t)s.batch;
  return CUBLAS_STATUS_SUCCESS;
}

/* A product recorded by a capture: its arguments, with the descriptors
   and scalars copied (the support code may change or destroy them before
   the graph runs; cuBLASLt reads host scalars when the call is made). */
typedef struct {
  cublasLtHandle_t handle;
  struct cublasLtMatmulDescOpaque_t desc;
  struct cublasLtMatrixLayoutOpaque_t layouts[4]; /* A, B, C, D */
  cublasLtMatmulAlgo_t algo;
  int haveAlgo;
  float alpha, beta;
  const void *A, *B, *C;
  void *D, *workspace;
  size_t workspaceSize;
} MatmulNode;

static CUresult runMatmulNode(void *payload) {
  MatmulNode *n = (MatmulNode *)payload;
  mixemuDeviceAccess(1);
  cublasStatus_t status = emuMatmul(
      n->handle, &n->desc, &n->alpha, n->A, &n->layouts[0], n->B,
      &n->layouts[1], &n->beta, n->C, &n->layouts[2], n->D, &n->layouts[3],
      n->haveAlgo ? &n->algo : NULL, n->workspace, n->workspaceSize, NULL,
      /*compute=*/1);
  mixemuDeviceAccess(0);
  if (status == CUBLAS_STATUS_SUCCESS)
    return mixemuCheckContext(); /* a fault it left is sticky */
  return mixemuError(CUDA_ERROR_LAUNCH_FAILED,
                     "a cublasLtMatmul node of the graph failed with cuBLASLt "
                     "status %d",
                     (int)status);
}

static cublasStatus_t
captureMatmul(CUgraph graph, cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
              const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
              const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
              const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
              void *workspace, size_t workspaceSize) {
  MatmulNode *n = (MatmulNode *)calloc(1, sizeof *n);
  if (!n)
    return fail(CUBLAS_STATUS_ALLOC_FAILED, "cublasLtMatmul: no memory");
  n->handle = handle;
  n->desc = *desc;
  n->layouts[0] = *Adesc;
  n->layouts[1] = *Bdesc;
  n->layouts[2] = *(Cdesc ? Cdesc : Ddesc);
  n->layouts[3] = *Ddesc;
  if ((n->haveAlgo = algo != NULL))
    n->algo = *algo;
  memcpy(&n->alpha, alpha, sizeof n->alpha);
  memcpy(&n->beta, beta, sizeof n->beta);
  n->A = A;
  n->B = B;
  n->C = C;
  n->D = D;
  n->workspace = workspace;
  n->workspaceSize = workspaceSize;
  if (mixemuAddNode(graph, runMatmulNode, n, "cublasLtMatmul") != CUDA_SUCCESS)
    return fail(CUBLAS_STATUS_ALLOC_FAILED, mixemu_last_error());
  return CUBLAS_STATUS_SUCCESS;
}

/* The product reads and writes device memory; the host may not. */
cublasStatus_t
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
               const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
               const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
               const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
               cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
               void *workspace, size_t workspaceSizeInBytes,
               cudaStream_t stream) {
  CUgraph graph;
  if (mixemuCaptureOf((CUstream)stream, "cublasLtMatmul", &graph) !=
      CUDA_SUCCESS)
    return fail(CUBLAS_STATUS_EXECUTION_FAILED, mixemu_last_error());
  mixemuDeviceAccess(1);
  cublasStatus_t status = emuMatmul(
      lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D,
      Ddesc, algo, workspace, workspaceSizeInBytes, stream, !graph);
  mixemuDeviceAccess(0);
  if (status != CUBLAS_STATUS_SUCCESS || !graph)
    return status;
  return captureMatmul(graph, lightHandle, computeDesc, alpha, A, Adesc, B,
                       Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                       workspaceSizeInBytes);
}
