//===- SupportCode.cpp - C support code linked into every package ---------===//
//
// The package's small C runtime: the matrix-product entry points the
// lowered code calls (through oneDNN), and `memrefCopy` for strided copies,
// compiled into every package so the runtime needs no MLIR library.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"

// `memrefCopy` is the function the memref lowering calls for copies between
// non-contiguous views, as libmlir_c_runner_utils implements it.
const char *mlir::mix::getSupportSource() {
  return R"c(
#include <stdint.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

/* C += A B for row-major views given as (ptr, offset, sizes, strides).
   oneDNN's sgemm takes a view whose inner or outer stride is 1 (the other
   then a leading dimension, possibly transposed); anything else is looped. */
static int leading(int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                   char *trans, int64_t *ld) {
  if (s1 == 1 && s0 >= (cols > 1 ? cols : 1)) { *trans = 'N'; *ld = s0; return 1; }
  if (s0 == 1 && s1 >= (rows > 1 ? rows : 1)) { *trans = 'T'; *ld = s1; return 1; }
  return 0;
}

static void gemm(const float *a, int64_t as0, int64_t as1, const float *b,
                 int64_t bs0, int64_t bs1, float *c, int64_t cs0, int64_t cs1,
                 int64_t m, int64_t n, int64_t k) {
  char ta, tb, tc;
  int64_t lda, ldb, ldc;
  if (m > 0 && n > 0 && k > 0 && leading(m, k, as0, as1, &ta, &lda) &&
      leading(k, n, bs0, bs1, &tb, &ldb) &&
      leading(m, n, cs0, cs1, &tc, &ldc) && tc == 'N' &&
      dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc) ==
          dnnl_success)
    return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = c[i * cs0 + j * cs1];
      for (int64_t p = 0; p < k; ++p)
        acc += a[i * as0 + p * as1] * b[p * bs0 + j * bs1];
      c[i * cs0 + j * cs1] = acc;
    }
}

/* Each operand comes as base pointer, offset, sizes, strides. */
void mixrt_matmul(float *a, int64_t ao, int64_t am, int64_t ak, int64_t as0,
                  int64_t as1, float *b, int64_t bo, int64_t bk, int64_t bn,
                  int64_t bs0, int64_t bs1, float *c, int64_t co, int64_t cm,
                  int64_t cn, int64_t cs0, int64_t cs1) {
  (void)bk; (void)cm; (void)cn;
  gemm(a + ao, as0, as1, b + bo, bs0, bs1, c + co, cs0, cs1, am, bn, ak);
}

void mixrt_batch_matmul(float *a, int64_t ao, int64_t ab, int64_t am,
                        int64_t ak, int64_t asb, int64_t as0, int64_t as1,
                        float *b, int64_t bo, int64_t bb, int64_t bk,
                        int64_t bn, int64_t bsb, int64_t bs0, int64_t bs1,
                        float *c, int64_t co, int64_t cb, int64_t cm,
                        int64_t cn, int64_t csb, int64_t cs0, int64_t cs1) {
  (void)bb; (void)bk; (void)cb; (void)cm; (void)cn;
  for (int64_t i = 0; i < ab; ++i)
    gemm(a + ao + i * asb, as0, as1, b + bo + i * bsb, bs0, bs1,
         c + co + i * csb, cs0, cs1, am, bn, ak);
}
typedef struct { int64_t rank; void *descriptor; } UnrankedMemRef;
typedef struct { char *allocated; char *aligned; int64_t offset;
                 int64_t rest[]; } Descriptor;
void memrefCopy(int64_t elemSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  Descriptor *s = (Descriptor *)src->descriptor;
  Descriptor *d = (Descriptor *)dst->descriptor;
  const int64_t *sizes = s->rest, *sStrides = s->rest + rank,
                *dStrides = d->rest + rank;
  char *sp = s->aligned + s->offset * elemSize;
  char *dp = d->aligned + d->offset * elemSize;
  if (rank == 0) { memcpy(dp, sp, elemSize); return; }
  int64_t index[rank];
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0) return;
    index[i] = 0;
  }
  for (;;) {
    memcpy(dp, sp, elemSize);
    int64_t axis = rank - 1;
    for (; axis >= 0; --axis) {
      ++index[axis];
      sp += sStrides[axis] * elemSize;
      dp += dStrides[axis] * elemSize;
      if (index[axis] < sizes[axis]) break;
      sp -= sizes[axis] * sStrides[axis] * elemSize;
      dp -= sizes[axis] * dStrides[axis] * elemSize;
      index[axis] = 0;
    }
    if (axis < 0) return;
  }
}
)c";
}
