/*===- CPUSupport.c - The support code of every CPU package --------------===//
 *
 * Compiled into every CPU package's shared library (mixc embeds this file
 * and compiles it with the package), and into the runtime's tests:
 *  - the matrix products the lowered code calls (mixrt_matmul and its
 *    forms, PackageABI.h), through oneDNN's matmul primitive made once per
 *    call site, dnnl_sgemm or loops;
 *  - memrefCopy, for strided copies;
 *  - mix_parallel_for, which runs a threaded loop nest on libgomp's team;
 *  - the stream-parallel collectives the runtime connects
 *    (mix_set_communicator);
 *  - MIXRT_PROFILE=1's per-site timings.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include "mixrt/PackageABI.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <oneapi/dnnl/dnnl.h>

/* MIXRT_PROFILE=1: each matrix-product site and each threaded loop nest
   adds up its wall time, printed to stderr when the package is unloaded
   (docs/performance.md, "Where the time goes"). */
static int profiling = -1;
static int isProfiling(void) {
  if (profiling < 0) {
    const char *v = getenv("MIXRT_PROFILE");
    profiling = v && *v && strcmp(v, "0") != 0;
  }
  return profiling;
}
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* The threaded loop nests' times, by function (open addressing). */
enum { kLoopSlots = 4096 };
typedef struct { void *fn; int64_t calls; double seconds; } LoopTime;
static LoopTime loopTimes[kLoopSlots];
static void addLoopTime(void *fn, double seconds) {
  size_t h = ((uintptr_t)fn >> 4) % kLoopSlots;
  for (size_t i = 0; i < kLoopSlots; ++i, h = (h + 1) % kLoopSlots)
    if (!loopTimes[h].fn || loopTimes[h].fn == fn) {
      loopTimes[h].fn = fn;
      ++loopTimes[h].calls;
      loopTimes[h].seconds += seconds;
      return;
    }
}

/* C = A B + beta C for row-major views given as (ptr, offset, sizes,
   strides), beta 0 or 1 (with 0, C is not read). oneDNN's sgemm takes a
   view whose inner or outer stride is 1 (the other then a leading
   dimension, possibly transposed); anything else is looped. */
static int leading(int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                   char *trans, int64_t *ld) {
  if (s1 == 1 && s0 >= (cols > 1 ? cols : 1)) {
    *trans = 'N';
    *ld = s0;
    return 1;
  }
  if (s0 == 1 && s1 >= (rows > 1 ? rows : 1)) {
    *trans = 'T';
    *ld = s1;
    return 1;
  }
  return 0;
}

static void gemm(const float *a, int64_t as0, int64_t as1, const float *b,
                 int64_t bs0, int64_t bs1, float *c, int64_t cs0, int64_t cs1,
                 int64_t m, int64_t n, int64_t k, float beta) {
  char ta, tb, tc;
  int64_t lda, ldb, ldc;
  if (m > 0 && n > 0 && k > 0 && leading(m, k, as0, as1, &ta, &lda) &&
      leading(k, n, bs0, bs1, &tb, &ldb) &&
      leading(m, n, cs0, cs1, &tc, &ldc) && tc == 'N' &&
      dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc) ==
          dnnl_success)
    return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = beta == 0.0f ? 0.0f : c[i * cs0 + j * cs1];
      for (int64_t p = 0; p < k; ++p)
        acc += a[i * as0 + p * as1] * b[p * bs0 + j * bs1];
      c[i * cs0 + j * cs1] = acc;
    }
}

/* A product's operands: A (b0, b1, m, k), B (b0, b1, k, n) and
   C (b0, b1, m, n) as views of rank 2 (b0 = b1 = 1), 3 (b0 = 1) or 4 (two
   batch dimensions: the attention's batch and heads, read in place from
   the (batch, sequence, heads, head size) layout by mix-head-products);
   strides in the order b0, b1, row, column. */
typedef struct {
  int64_t rank, b0, b1, m, n, k;
  int64_t as[4], bs[4], cs[4];
} Shape;
/* What a site's primitive was made for (compared whole, with memcmp: no
   padding). */
typedef struct {
  Shape shape;
  int64_t bf16, accumulate, biasStride, kind;
} Key;

/* Each call site of a matrix product keeps a oneDNN matmul primitive,
   created on its first call for the site's (static) sizes and strides,
   with a sum post-op: C += A B. Where oneDNN has no primitive for a layout,
   the site falls back to sgemm or loops. The lowered code runs on one
   thread at a time, so the cache needs no lock. */
typedef struct Site {
  /* 0: not yet created, 1: primitive, 2: sgemm or loops; bf16 products
     without a bf16 primitive: 3: widened to f32 for an f32 primitive,
     4: widened for sgemm or loops; 5: blocks of rows (matmulTriangle). */
  int state;
  Key key;
  dnnl_primitive_t primitive;
  dnnl_memory_t memory[4]; /* A, B, C, bias */
  /* A product that skips a triangle (state 5): one site a block of rows. */
  struct Site *blocks;
  int64_t numBlocks;
  /* MIXRT_PROFILE: the calls after the first, and the first apart (it
     creates the primitive, or takes it from oneDNN's cache). */
  int64_t calls;
  double seconds, firstSeconds;
  int called;
  /* State 2 because prefersSgemm chose sgemm (the profile says so). */
  int sgemmByRule;
} Site;
static Site *sites;
static int64_t numSites;
static dnnl_engine_t engine;
static dnnl_stream_t stream;

static Site *getSite(int64_t id) {
  if (id < 0)
    return NULL;
  if (id >= numSites) {
    int64_t n = id + 64;
    Site *grown = (Site *)realloc(sites, n * sizeof(Site));
    if (!grown)
      return NULL;
    memset(grown + numSites, 0, (n - numSites) * sizeof(Site));
    sites = grown;
    numSites = n;
  }
  return &sites[id];
}

/* A primitive for the shape, with A and B of type `input` and strides
   `strides` (A's, B's, C's: 4 each), or the shape's own when null. */
static int createPrimitive(Site *s, const Shape *x, const int64_t *strides,
                           dnnl_data_type_t input, int accumulate,
                           int64_t biasStride) {
  if (!engine) {
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
      return 0;
    if (dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
        dnnl_success)
      return 0;
  }
  const int64_t dims[3][4] = {{x->b0, x->b1, x->m, x->k},
                              {x->b0, x->b1, x->k, x->n},
                              {x->b0, x->b1, x->m, x->n}};
  const int64_t *own[3] = {x->as, x->bs, x->cs};
  int rank = (int)x->rank;
  dnnl_memory_desc_t md[4];
  for (int i = 0; i < 3; ++i) {
    dnnl_dims_t d, st;
    for (int j = 0; j < rank; ++j) {
      d[j] = dims[i][4 - rank + j];
      st[j] = strides ? strides[i * 4 + 4 - rank + j] : own[i][4 - rank + j];
    }
    if (dnnl_memory_desc_init_by_strides(&md[i], rank, d,
                                         i < 2 ? input : dnnl_f32, st) !=
        dnnl_success)
      return 0;
  }
  /* The bias, a row vector (1 x n) added to every row of C. */
  if (biasStride) {
    dnnl_dims_t d = {1, x->n}, st = {x->n * biasStride, biasStride};
    if (rank != 2 || dnnl_memory_desc_init_by_strides(&md[3], 2, d, dnnl_f32,
                                                      st) != dnnl_success)
      return 0;
  }
  dnnl_matmul_desc_t desc;
  if (dnnl_matmul_desc_init(&desc, &md[0], &md[1], biasStride ? &md[3] : NULL,
                            &md[2]) != dnnl_success)
    return 0;
  dnnl_primitive_attr_t attr;
  dnnl_post_ops_t ops;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success)
    return 0;
  int ok = dnnl_post_ops_create(&ops) == dnnl_success;
  if (accumulate)
    ok = ok && dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
  dnnl_primitive_desc_t pd = NULL;
  ok = ok && dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL) ==
                 dnnl_success;
  if (ops)
    dnnl_post_ops_destroy(ops);
  dnnl_primitive_attr_destroy(attr);
  if (!ok)
    return 0;
  ok = dnnl_primitive_create(&s->primitive, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  for (int i = 0; ok && i < (biasStride ? 4 : 3); ++i)
    ok = dnnl_memory_create(&s->memory[i], &md[i], engine,
                            DNNL_MEMORY_NONE) == dnnl_success;
  return ok;
}

/* Frees the cached primitives when the package is unloaded, so that a
   process that loads many packages does not accumulate them. */
static int bySeconds(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}
/* The multiply-adds of a site's calls, times 2. */
static double siteFlops(const Site *s) {
  const Shape *x = &s->key.shape;
  return 2.0 * (double)s->calls * (double)(x->b0 * x->b1) * (double)x->m *
         (double)x->n * (double)x->k;
}
/* A view's strides, batch strides first (rank 3: 0 for a broadcast). */
static void formatStrides(char *out, size_t size, int64_t rank,
                          const int64_t *st) {
  if (rank == 4)
    snprintf(out, size, "%lld,%lld,%lld,%lld", (long long)st[0],
             (long long)st[1], (long long)st[2], (long long)st[3]);
  else
    snprintf(out, size, "%lld,%lld,%lld", (long long)st[1], (long long)st[2],
             (long long)st[3]);
}
/* The MIXRT_PROFILE report: the products by site, slowest first, with
   their shapes ([batch x] m x n x k) and strides, then the threaded loop
   nests by function. */
static void printProfile(void) {
  enum { kShown = 30 };
  double total = 0, flops = 0, first = 0;
  int64_t used = 0;
  for (int64_t i = 0; i < numSites; ++i)
    if (sites[i].called) {
      total += sites[i].seconds;
      first += sites[i].firstSeconds;
      flops += siteFlops(&sites[i]);
      ++used;
    }
  fprintf(stderr,
          "mixrt profile: %lld product sites, %.3f s, %.1f GFLOP/s (first "
          "calls, which create the primitives, apart: %.3f s)\n"
          "  %5s %6s %9s %7s  %-20s %-22s %-22s %-22s %s\n",
          (long long)used, total, total > 0 ? flops / total * 1e-9 : 0.0,
          first, "site", "calls", "seconds", "GFLOP/s", "batch,m,n,k",
          "A strides", "B strides", "C strides", "C=");
  /* (seconds, site) pairs, sorted. */
  double *order = (double *)malloc((size_t)(2 * (used + 1)) * sizeof(double));
  int64_t n = 0;
  for (int64_t i = 0; order && i < numSites; ++i)
    if (sites[i].called) {
      order[2 * n] =
          sites[i].calls ? sites[i].seconds : sites[i].firstSeconds;
      order[2 * n + 1] = (double)i;
      ++n;
    }
  if (order)
    qsort(order, (size_t)n, 2 * sizeof(double), bySeconds);
  for (int64_t r = 0; order && r < n; ++r) {
    const Site *s = &sites[(int64_t)order[2 * r + 1]];
    const Shape *x = &s->key.shape;
    char shape[64], batch[32], sa[64], sb[64], sc[64];
    if (x->rank == 4)
      snprintf(batch, sizeof batch, "%lldx%lld", (long long)x->b0,
               (long long)x->b1);
    else
      snprintf(batch, sizeof batch, "%lld", (long long)x->b1);
    snprintf(shape, sizeof shape, "%s,%lld,%lld,%lld", batch,
             (long long)x->m, (long long)x->n, (long long)x->k);
    formatStrides(sa, sizeof sa, x->rank, x->as);
    formatStrides(sb, sizeof sb, x->rank, x->bs);
    formatStrides(sc, sizeof sc, x->rank, x->cs);
    /* A site called once shows its first call. */
    Site once = *s;
    if (!s->calls) {
      once.calls = 1;
      once.seconds = s->firstSeconds;
    }
    double f = siteFlops(&once);
    fprintf(stderr,
            "  %5lld %6lld %9.4f %7.1f  %-20s %-22s %-22s %-22s %s%s%s\n",
            (long long)order[2 * r + 1], (long long)s->calls, once.seconds,
            once.seconds > 0 ? f / once.seconds * 1e-9 : 0.0, shape, sa, sb,
            sc,
            s->key.accumulate   ? "C+AB"
            : s->key.biasStride ? "AB+bias"
                                : "AB",
            s->state == 1   ? ""
            : s->state == 5 ? " (triangle skipped)"
            : s->sgemmByRule ? " (sgemm by rule)"
                            : " (fallback)",
            s->calls ? "" : " (first call only)");
  }
  free(order);
  double loops = 0;
  int64_t count = 0;
  for (int i = 0; i < kLoopSlots; ++i)
    if (loopTimes[i].fn) {
      loops += loopTimes[i].seconds;
      ++count;
    }
  fprintf(stderr, "mixrt profile: %lld threaded loop nests, %.3f s\n",
          (long long)count, loops);
  LoopTime sorted[kLoopSlots];
  int m = 0;
  for (int i = 0; i < kLoopSlots; ++i)
    if (loopTimes[i].fn)
      sorted[m++] = loopTimes[i];
  for (int i = 0; i < m; ++i) {
    int best = i;
    for (int j = i + 1; j < m; ++j)
      if (sorted[j].seconds > sorted[best].seconds)
        best = j;
    LoopTime t = sorted[i];
    sorted[i] = sorted[best];
    sorted[best] = t;
    Dl_info info;
    const char *name = dladdr(sorted[i].fn, &info) && info.dli_sname
                           ? info.dli_sname : "?";
    fprintf(stderr, "  %-24s %6lld %9.4f\n", name,
            (long long)sorted[i].calls, sorted[i].seconds);
  }
}

static void releaseSite(Site *s) {
  if (s->primitive)
    dnnl_primitive_destroy(s->primitive);
  for (int j = 0; j < 4; ++j)
    if (s->memory[j])
      dnnl_memory_destroy(s->memory[j]);
  for (int64_t i = 0; i < s->numBlocks; ++i)
    releaseSite(&s->blocks[i]);
  free(s->blocks);
}

__attribute__((destructor)) static void releaseSites(void) {
  if (profiling > 0)
    printProfile();
  for (int64_t i = 0; i < numSites; ++i)
    releaseSite(&sites[i]);
  free(sites);
  sites = NULL;
  numSites = 0;
  if (stream)
    dnnl_stream_destroy(stream);
  if (engine)
    dnnl_engine_destroy(engine);
  stream = NULL;
  engine = NULL;
}

/* Runs the site's primitive on (a, b, c) and the bias, if any; 0 if it
   could not. */
static int execute(Site *s, void *a, void *b, float *c, const float *bias) {
  if (dnnl_memory_set_data_handle(s->memory[0], a) != dnnl_success ||
      dnnl_memory_set_data_handle(s->memory[1], b) != dnnl_success ||
      dnnl_memory_set_data_handle(s->memory[2], c) != dnnl_success ||
      (bias && dnnl_memory_set_data_handle(
                   s->memory[3], (void *)(uintptr_t)bias) != dnnl_success))
    return 0;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, s->memory[0]},
                             {DNNL_ARG_WEIGHTS, s->memory[1]},
                             {DNNL_ARG_DST, s->memory[2]},
                             {DNNL_ARG_BIAS, s->memory[3]}};
  return dnnl_primitive_execute(s->primitive, stream, bias ? 4 : 3, args) ==
             dnnl_success &&
         dnnl_stream_wait(stream) == dnnl_success;
}
/* libgomp, which oneDNN runs on: the package splits its own loops over the
   same team. */
extern void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                          unsigned flags);
extern int omp_get_thread_num(void);
extern int omp_get_num_threads(void);
typedef struct {
  const uint16_t *x;
  const int64_t *xs;           /* b0, b1, row and column strides */
  int64_t b1, rows, cols, total; /* total = b0 * b1 * rows */
  float *out;
} WidenJob;
static void widenRows(void *data) {
  const WidenJob *j = (const WidenJob *)data;
  int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  int64_t lo = j->total * t / threads, hi = j->total * (t + 1) / threads;
  for (int64_t r = lo; r < hi; ++r) {
    int64_t i = r / j->rows;
    const uint16_t *row = j->x + (i / j->b1) * j->xs[0] +
                          (i % j->b1) * j->xs[1] + (r % j->rows) * j->xs[2];
    float *out = j->out + r * j->cols;
    for (int64_t c = 0; c < j->cols; ++c) {
      uint32_t bits = (uint32_t)row[c * j->xs[3]] << 16;
      memcpy(out + c, &bits, sizeof bits);
    }
  }
}
/* A (b0, b1, rows, cols) view of bf16 values as a new packed f32 array
   (bf16 is the high half of an f32: widening is exact), rows split over
   the OpenMP team. */
static float *widen(const uint16_t *x, const int64_t *xs, int64_t b0,
                    int64_t b1, int64_t rows, int64_t cols) {
  int64_t total = b0 * b1 * rows;
  float *w = (float *)malloc((size_t)(total * cols) * sizeof(float));
  if (!w)
    return NULL;
  WidenJob job = {x, xs, b1, rows, cols, total, w};
  /* As for the loop nests (kMinParallelWork): small ones on one thread. */
  GOMP_parallel(widenRows, &job, total * cols < 16384 ? 1 : 0, 0);
  return w;
}
/* C = 0, or the bias in every row, for a (b0, b1, m, n) view, before a
   fallback that accumulates. */
static void zero(float *c, const int64_t *cs, int64_t b0, int64_t b1,
                 int64_t m, int64_t n, const float *bias, int64_t biasStride) {
  for (int64_t i0 = 0; i0 < b0; ++i0)
    for (int64_t i1 = 0; i1 < b1; ++i1)
      for (int64_t r = 0; r < m; ++r) {
        float *row = c + i0 * cs[0] + i1 * cs[1] + r * cs[2];
        if (!bias && cs[3] == 1) {
          memset(row, 0, (size_t)n * sizeof(float));
          continue;
        }
        for (int64_t j = 0; j < n; ++j)
          row[j * cs[3]] = bias ? bias[j * biasStride] : 0.0f;
      }
}
/* C = A B + beta C for every batch index, through sgemm or loops. */
static void gemmEach(const Shape *x, const float *a, const int64_t *as,
                     const float *b, const int64_t *bs, float *c,
                     float beta) {
  const int64_t *cs = x->cs;
  for (int64_t i0 = 0; i0 < x->b0; ++i0)
    for (int64_t i1 = 0; i1 < x->b1; ++i1)
      gemm(a + i0 * as[0] + i1 * as[1], as[2], as[3],
           b + i0 * bs[0] + i1 * bs[1], bs[2], bs[3],
           c + i0 * cs[0] + i1 * cs[1], cs[2], cs[3], x->m, x->n, x->k,
           beta);
}
/* Whether an f32 product runs faster through oneDNN's sgemm than through
   its matmul primitive. oneDNN 2.6's brgemm matmul, given A and B both
   row-major and C wider than the contraction, runs 20-25% below sgemm in
   the training step, though not when timed alone: the wide model's
   C = dY W (1024 x 3072 x 768, the FFN's down-projection backward) at
   150-165 GFLOP/s against 200-208 (MIXRT_PROFILE with and without
   MIXRT_MATMUL=sgemm; docs/performance.md). Every other layout the
   models use runs as fast or faster as a primitive. A fixed rule, not a
   timed choice: which routine computes a product changes its rounding,
   and a run must reproduce itself bit for bit. */
static int prefersSgemm(const Shape *x, int64_t biasStride) {
  /* Row-major with leading dimensions sgemm takes (no broadcast rows). */
  return x->b0 == 1 && x->b1 == 1 && !biasStride && x->as[3] == 1 &&
         x->as[2] >= x->k && x->bs[3] == 1 && x->bs[2] >= x->n &&
         x->cs[3] == 1 && x->cs[2] >= x->n && x->n > x->k;
}
/* C += A B, or C = A B when `accumulate` is 0 (plus the bias in every row
   when `bias` is not null), for the shape `x` (A and B hold f32, or bf16
   when `bf16` is set; C is f32 either way). */
static void matmulAt(Site *s, const Shape *x, void *a, void *b, float *c,
                     int bf16, int accumulate, const float *bias,
                     int64_t biasStride) {
  int64_t b0 = x->b0, b1 = x->b1, m = x->m, n = x->n, k = x->k;
  if (b0 == 0 || b1 == 0 || m == 0 || n == 0)
    return;
  if (!bias)
    biasStride = 0;
  else if (biasStride != 1) {
    /* A broadcast scalar (stride 0) or a strided vector: oneDNN 2.6's
       matmul reads its bias as contiguous whatever the strides given, so
       C starts as the bias in every row and the product accumulates. */
    zero(c, x->cs, b0, b1, m, n, bias, biasStride);
    bias = NULL;
    biasStride = 0;
    accumulate = 1;
  }
  if (k == 0) {
    if (!accumulate)
      zero(c, x->cs, b0, b1, m, n, bias, biasStride);
    return;
  }
  Key key;
  memset(&key, 0, sizeof key);
  key.shape = *x;
  key.bf16 = bf16;
  key.accumulate = accumulate;
  key.biasStride = biasStride;
  key.kind = -1;
  /* The strides of widened (packed) A and B, and C's own. */
  int64_t packed[12] = {b1 * m * k, m * k, k, 1, b1 * k * n, k * n,
                        n,          1,     x->cs[0], x->cs[1], x->cs[2],
                        x->cs[3]};
  if (s && s->state == 0) {
    s->key = key;
    /* For comparisons, MIXRT_MATMUL=sgemm skips the primitives and
       MIXRT_MATMUL=primitive uses them wherever oneDNN has one. */
    const char *choice = getenv("MIXRT_MATMUL");
    int sgemm = choice && strcmp(choice, "sgemm") == 0;
    int rule = !(choice && strcmp(choice, "primitive") == 0);
    s->sgemmByRule = !bf16 && !sgemm && rule && prefersSgemm(x, biasStride);
    if (!bf16)
      s->state = !sgemm && !s->sgemmByRule &&
                         createPrimitive(s, x, NULL, dnnl_f32, accumulate,
                                         biasStride)
                     ? 1 : 2;
    else if (!sgemm && createPrimitive(s, x, NULL, dnnl_bf16, accumulate,
                                       biasStride))
      s->state = 1;
    else {
      /* No bf16 matmul here (oneDNN has one with AVX-512 BF16 or AMX):
         the operands are widened to f32, which computes the same
         products (a product of two bf16 values is exact in f32). */
      s->state = !sgemm && createPrimitive(s, x, packed, dnnl_f32, accumulate,
                                           biasStride)
                     ? 3 : 4;
    }
  }
  int same = s && memcmp(&s->key, &key, sizeof key) == 0;
  if (same && s->state == 1 && execute(s, a, b, c, bias))
    return;
  if (bf16) {
    float *wa = widen((const uint16_t *)a, x->as, b0, b1, m, k);
    float *wb = widen((const uint16_t *)b, x->bs, b0, b1, k, n);
    if (!wa || !wb) {
      free(wa);
      free(wb);
      abort(); /* out of memory: nothing sensible to compute */
    }
    if (!(same && s->state == 3 && execute(s, wa, wb, c, bias))) {
      if (!accumulate && bias)
        zero(c, x->cs, b0, b1, m, n, bias, biasStride);
      gemmEach(x, wa, packed, wb, packed + 4, c,
               accumulate || bias ? 1.0f : 0.0f);
    }
    free(wa);
    free(wb);
    return;
  }
  if (!accumulate && bias)
    zero(c, x->cs, b0, b1, m, n, bias, biasStride);
  gemmEach(x, (const float *)a, x->as, (const float *)b, x->bs, c,
           accumulate || bias ? 1.0f : 0.0f);
}
/* The mix.triangle kinds (mix-causal-products): A[i, k] = 0 for k > i + p
   (0) or for k < i - p (1); C[i, j] for j > i + p not needed (2). */
enum { kLhsLower = 0, kLhsUpper = 1, kResultLower = 2 };
/* A product that skips a triangle: rows in blocks of 64 or more (at most
   8 blocks), each block a product of its own over the contraction range
   (kinds 0 and 1) or the columns (kind 2) the triangle leaves; a skipped
   part of C is zeroed when the product overwrites C. */
static void matmulTriangle(Site *s, const Shape *x, char *a, char *b,
                           float *c, int bf16, int accumulate, int64_t kind,
                           int64_t p) {
  int64_t m = x->m, n = x->n, k = x->k;
  int64_t rows = (m + 7) / 8 > 64 ? (m + 7) / 8 : 64;
  int64_t blocks = (m + rows - 1) / rows;
  if (!s || blocks < 2 || kind < kLhsLower || kind > kResultLower) {
    matmulAt(s, x, a, b, c, bf16, accumulate, NULL, 0);
    return;
  }
  if (s->state == 0) {
    s->blocks = (Site *)calloc((size_t)blocks, sizeof(Site));
    if (!s->blocks) {
      matmulAt(NULL, x, a, b, c, bf16, accumulate, NULL, 0);
      return;
    }
    s->numBlocks = blocks;
    s->state = 5;
    memset(&s->key, 0, sizeof s->key);
    s->key.shape = *x;
    s->key.bf16 = bf16;
    s->key.accumulate = accumulate;
    s->key.kind = kind;
  }
  size_t size = bf16 ? 2 : 4;
  const int64_t *cs = x->cs;
  for (int64_t r = 0; r < blocks && r < s->numBlocks; ++r) {
    int64_t r0 = r * rows, r1 = r0 + rows < m ? r0 + rows : m;
    int64_t k0 = 0, k1 = k, n1 = n;
    if (kind == kLhsLower)
      k1 = r1 + p < k ? r1 + p : k;
    else if (kind == kLhsUpper)
      k0 = r0 - p > 0 ? r0 - p : 0;
    else
      n1 = r1 + p < n ? r1 + p : n;
    float *cr = c + r0 * cs[2];
    if (!accumulate && n1 < n)
      zero(cr + n1 * cs[3], cs, x->b0, x->b1, r1 - r0, n - n1, NULL, 0);
    if (k1 <= k0 || n1 <= 0) {
      if (!accumulate)
        zero(cr, cs, x->b0, x->b1, r1 - r0, n1 > 0 ? n1 : 0, NULL, 0);
      continue;
    }
    Shape block = *x;
    block.m = r1 - r0;
    block.n = n1;
    block.k = k1 - k0;
    matmulAt(&s->blocks[r], &block,
             a + (size_t)(r0 * x->as[2] + k0 * x->as[3]) * size,
             b + (size_t)(k0 * x->bs[2]) * size, cr, bf16, accumulate, NULL,
             0);
  }
}

static void matmul(int64_t id, const Shape *x, void *a, void *b, float *c,
                   int bf16, int accumulate, const float *bias,
                   int64_t biasStride, int64_t kind, int64_t p) {
  /* MIXRT_TRIANGLES=0 computes the whole products, for comparisons. */
  static int triangles = -1;
  if (triangles < 0) {
    const char *v = getenv("MIXRT_TRIANGLES");
    triangles = !(v && strcmp(v, "0") == 0);
  }
  double start = isProfiling() ? now() : 0;
  Site *s = getSite(id);
  if (kind >= 0 && triangles)
    matmulTriangle(s, x, (char *)a, (char *)b, c, bf16, accumulate, kind, p);
  else
    matmulAt(s, x, a, b, c, bf16, accumulate, bias, biasStride);
  if (isProfiling() && s) {
    if (!s->called) {
      s->called = 1;
      s->firstSeconds = now() - start;
    } else {
      ++s->calls;
      s->seconds += now() - start;
    }
  }
}
/* The entry points. Each operand comes as base pointer, offset, sizes and
   strides; `site` numbers the call site. The _set forms overwrite C (the
   compiler dropped a zero fill: mix-matmuls-to-library-calls), the others
   accumulate into it; the _bf16 forms take A and B as bf16. */
#define MIX_SHAPE_2                                                           \
  (void)bk; (void)cm; (void)cn;                                               \
  Shape x = {2, 1, 1, am, bn, ak, {0, 0, as0, as1}, {0, 0, bs0, bs1},         \
             {0, 0, cs0, cs1}};
#define MIX_SHAPE_3                                                           \
  (void)bb; (void)bk; (void)cb; (void)cm; (void)cn;                           \
  Shape x = {3, 1, ab, am, bn, ak, {0, asb, as0, as1}, {0, bsb, bs0, bs1},    \
             {0, csb, cs0, cs1}};
#define MIX_SHAPE_4                                                           \
  (void)bb0; (void)bb1; (void)bk; (void)cb0; (void)cb1; (void)cm; (void)cn;   \
  Shape x = {4, ab0, ab1, am, bn, ak, {asb0, asb1, as0, as1},                 \
             {bsb0, bsb1, bs0, bs1}, {csb0, csb1, cs0, cs1}};
#define MIX_MATMUL(NAME, R, T, BF16, ACC)                                     \
  void NAME(MIXRT_OPERANDS_##R(T)) {                                          \
    MIX_SHAPE_##R                                                             \
    matmul(site, &x, a + ao, b + bo, c + co, BF16, ACC, NULL, 0, -1, 0);      \
  }
/* C = A B + bias, the bias (base pointer, offset, length, stride) added to
   every row. */
#define MIX_MATMUL_BIAS(NAME, T, BF16)                                        \
  void NAME(MIXRT_OPERANDS_2(T), MIXRT_BIAS) {                                \
    MIX_SHAPE_2                                                               \
    (void)biasn;                                                              \
    matmul(site, &x, a + ao, b + bo, c + co, BF16, 0, bias + biaso, biass,    \
           -1, 0);                                                            \
  }
/* The _tri forms (mix.triangle): the kind and diagonal p come last. */
#define MIX_MATMUL_TRI(NAME, R, T, BF16, ACC)                                 \
  void NAME(MIXRT_OPERANDS_##R(T), MIXRT_TRIANGLE) {                         \
    MIX_SHAPE_##R                                                             \
    matmul(site, &x, a + ao, b + bo, c + co, BF16, ACC, NULL, 0, kind, p);    \
  }
/* Every form for one rank: matmul (2), batch_matmul (3), batch2_matmul (4:
   two batch dimensions). */
#define MIX_MATMULS(PREFIX, R)                                                \
  MIX_MATMUL(PREFIX, R, float, 0, 1)                                          \
  MIX_MATMUL(PREFIX##_bf16, R, uint16_t, 1, 1)                                \
  MIX_MATMUL(PREFIX##_set, R, float, 0, 0)                                    \
  MIX_MATMUL(PREFIX##_set_bf16, R, uint16_t, 1, 0)                            \
  MIX_MATMUL_TRI(PREFIX##_tri, R, float, 0, 1)                                \
  MIX_MATMUL_TRI(PREFIX##_tri_bf16, R, uint16_t, 1, 1)                        \
  MIX_MATMUL_TRI(PREFIX##_tri_set, R, float, 0, 0)                            \
  MIX_MATMUL_TRI(PREFIX##_tri_set_bf16, R, uint16_t, 1, 0)
MIX_MATMULS(mixrt_matmul, 2)
MIX_MATMULS(mixrt_batch_matmul, 3)
MIX_MATMULS(mixrt_batch2_matmul, 4)
MIX_MATMUL_BIAS(mixrt_matmul_bias, float, 0)
MIX_MATMUL_BIAS(mixrt_matmul_bias_bf16, uint16_t, 1)
typedef struct { char *allocated; char *aligned; int64_t offset;
                 int64_t rest[]; } Descriptor;
void memrefCopy(int64_t elemSize, mixrt_unranked_memref *src,
                mixrt_unranked_memref *dst) {
  int64_t rank = src->rank;
  Descriptor *s = (Descriptor *)src->descriptor;
  Descriptor *d = (Descriptor *)dst->descriptor;
  const int64_t *sizes = s->rest, *sStrides = s->rest + rank,
                *dStrides = d->rest + rank;
  char *sp = s->aligned + s->offset * elemSize;
  char *dp = d->aligned + d->offset * elemSize;
  if (rank == 0) { memcpy(dp, sp, elemSize); return; }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0) return;
  /* Rows contiguous on both sides (a slice of a concatenation) are copied
     a row at a time; the outer dimensions are walked like an odometer. */
  int64_t run = 1, outer = rank;
  if (sStrides[rank - 1] == 1 && dStrides[rank - 1] == 1) {
    run = sizes[rank - 1];
    outer = rank - 1;
  }
  size_t bytes = (size_t)(run * elemSize);
  int64_t index[rank];
  for (int64_t i = 0; i < rank; ++i)
    index[i] = 0;
  for (;;) {
    memcpy(dp, sp, bytes);
    int64_t axis = outer - 1;
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

/* Stream parallelism (mixc --stream-shards): the runtime connects the
   package to its communicator with mix_set_communicator; the lowered code
   asks for this process's stream rank and sums partial values over the
   ranks in place. Unconnected, the package is rank 0 of one. */
static void *mix_comm_context;
static mix_all_reduce_fn mix_comm_sum;
static int64_t mix_comm_this_rank;

void mix_set_communicator(void *context, int64_t rank, mix_all_reduce_fn sum) {
  mix_comm_context = context;
  mix_comm_this_rank = rank;
  mix_comm_sum = sum;
}

int64_t mix_comm_rank(void) { return mix_comm_this_rank; }

void mix_comm_all_reduce(float *base, int64_t offset, int64_t count) {
  if (mix_comm_sum)
    mix_comm_sum(mix_comm_context, base + offset, count);
}

/* Threaded loop nests (parallelizeOutlinedCalls): fn(t0, t1, args...) runs
   the iterations [t0, t1) of a nest's outer parallel loop; its other
   arguments, pointers and 64-bit integers, come packed as int64. The range
   is split into one contiguous part a thread of libgomp's team, the same
   threads oneDNN's matrix products run on (OMP_NUM_THREADS of them). */

typedef struct {
  void *fn;
  int64_t t0, t1, nargs;
  const int64_t *a;
} mix_parallel_job;

/* The argument types and values of a loop nest with N packed arguments. */
#define MIX_TYPES_0 int64_t, int64_t
#define MIX_VALUES_0 lo, hi
#define MIX_TYPES_1 MIX_TYPES_0, int64_t
#define MIX_VALUES_1 MIX_VALUES_0, a[0]
#define MIX_TYPES_2 MIX_TYPES_1, int64_t
#define MIX_VALUES_2 MIX_VALUES_1, a[1]
#define MIX_TYPES_3 MIX_TYPES_2, int64_t
#define MIX_VALUES_3 MIX_VALUES_2, a[2]
#define MIX_TYPES_4 MIX_TYPES_3, int64_t
#define MIX_VALUES_4 MIX_VALUES_3, a[3]
#define MIX_TYPES_5 MIX_TYPES_4, int64_t
#define MIX_VALUES_5 MIX_VALUES_4, a[4]
#define MIX_TYPES_6 MIX_TYPES_5, int64_t
#define MIX_VALUES_6 MIX_VALUES_5, a[5]
#define MIX_TYPES_7 MIX_TYPES_6, int64_t
#define MIX_VALUES_7 MIX_VALUES_6, a[6]
#define MIX_TYPES_8 MIX_TYPES_7, int64_t
#define MIX_VALUES_8 MIX_VALUES_7, a[7]
#define MIX_TYPES_9 MIX_TYPES_8, int64_t
#define MIX_VALUES_9 MIX_VALUES_8, a[8]
#define MIX_TYPES_10 MIX_TYPES_9, int64_t
#define MIX_VALUES_10 MIX_VALUES_9, a[9]
#define MIX_TYPES_11 MIX_TYPES_10, int64_t
#define MIX_VALUES_11 MIX_VALUES_10, a[10]
#define MIX_TYPES_12 MIX_TYPES_11, int64_t
#define MIX_VALUES_12 MIX_VALUES_11, a[11]
#define MIX_TYPES_13 MIX_TYPES_12, int64_t
#define MIX_VALUES_13 MIX_VALUES_12, a[12]
#define MIX_TYPES_14 MIX_TYPES_13, int64_t
#define MIX_VALUES_14 MIX_VALUES_13, a[13]
#define MIX_TYPES_15 MIX_TYPES_14, int64_t
#define MIX_VALUES_15 MIX_VALUES_14, a[14]
#define MIX_TYPES_16 MIX_TYPES_15, int64_t
#define MIX_VALUES_16 MIX_VALUES_15, a[15]
#define MIX_TYPES_17 MIX_TYPES_16, int64_t
#define MIX_VALUES_17 MIX_VALUES_16, a[16]
#define MIX_TYPES_18 MIX_TYPES_17, int64_t
#define MIX_VALUES_18 MIX_VALUES_17, a[17]
#define MIX_TYPES_19 MIX_TYPES_18, int64_t
#define MIX_VALUES_19 MIX_VALUES_18, a[18]
#define MIX_TYPES_20 MIX_TYPES_19, int64_t
#define MIX_VALUES_20 MIX_VALUES_19, a[19]
#define MIX_TYPES_21 MIX_TYPES_20, int64_t
#define MIX_VALUES_21 MIX_VALUES_20, a[20]
#define MIX_TYPES_22 MIX_TYPES_21, int64_t
#define MIX_VALUES_22 MIX_VALUES_21, a[21]
#define MIX_TYPES_23 MIX_TYPES_22, int64_t
#define MIX_VALUES_23 MIX_VALUES_22, a[22]
#define MIX_TYPES_24 MIX_TYPES_23, int64_t
#define MIX_VALUES_24 MIX_VALUES_23, a[23]
#if MIX_MAX_PARALLEL_ARGS != 24
#error "mix_parallel_range has a case for 0 to 24 packed arguments"
#endif

static void mix_parallel_range(const mix_parallel_job *j, int64_t lo,
                               int64_t hi) {
  const int64_t *a = j->a;
  switch (j->nargs) {
  /* case N: ((void (*)(I, I, I...))j->fn)(lo, hi, a[0], ..., a[N-1]) */
#define MIX_CASE(N)                                                           \
  case N:                                                                     \
    ((void (*)(MIX_TYPES_##N))j->fn)(MIX_VALUES_##N);                          \
    break;
  MIX_CASE(0) MIX_CASE(1) MIX_CASE(2) MIX_CASE(3) MIX_CASE(4) MIX_CASE(5)
  MIX_CASE(6) MIX_CASE(7) MIX_CASE(8) MIX_CASE(9) MIX_CASE(10) MIX_CASE(11)
  MIX_CASE(12) MIX_CASE(13) MIX_CASE(14) MIX_CASE(15) MIX_CASE(16)
  MIX_CASE(17) MIX_CASE(18) MIX_CASE(19) MIX_CASE(20) MIX_CASE(21)
  MIX_CASE(22) MIX_CASE(23) MIX_CASE(24)
#undef MIX_CASE
  }
}

static void mix_parallel_worker(void *data) {
  const mix_parallel_job *j = (const mix_parallel_job *)data;
  int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
  int64_t n = j->t1 - j->t0;
  int64_t lo = j->t0 + n * t / threads, hi = j->t0 + n * (t + 1) / threads;
  if (lo < hi)
    mix_parallel_range(j, lo, hi);
}

void mix_parallel_for(void *fn, int64_t t0, int64_t t1, int64_t nargs,
                      const int64_t *args) {
  mix_parallel_job job = {fn, t0, t1, nargs, args};
  if (!isProfiling()) {
    GOMP_parallel(mix_parallel_worker, &job, 0, 0);
    return;
  }
  double start = now();
  GOMP_parallel(mix_parallel_worker, &job, 0, 0);
  addLoopTime(fn, now() - start);
}
