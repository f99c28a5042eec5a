/*===- CPUAttention.c - Causal attention without its score matrix --------===//
 *
 * The CPU packages' fused attention (mix-attention-calls lowers
 * mix.flash_attention_buffers and mix.flash_attention_grad_buffers to these
 * functions), compiled into every CPU package with CPUSupport.c, for the
 * package's CPU.
 *
 * FlashAttention-2 on a CPU: a task is a block of 64 queries of one (batch
 * row, head) in the forward pass, and a whole (batch row, head), or a
 * (stream, head) with prefixes, in the backward pass. The scores of a task
 * exist one 64 x 64 tile at a time, in the thread's cache; the forward pass
 * keeps each query's running maximum and sum (the online softmax) and
 * stores only the log-sum-exp of its scores, from which the backward pass
 * recomputes the probabilities tile by tile. Memory beyond the operands is
 * a few tiles a thread.
 *
 * Layout (MixFusedOps.td): qkv is (B,S,3d) with q, k and v of head h in
 * columns [h dh, (h+1) dh) of their third; out is (B,S,d); lse is
 * (B,heads,S); the prefixes are (P,heads,T_p,dh), batch row b belongs to
 * stream b / (B/P), and every query sees every key of its stream's prefix.
 * Scores are q.k / sqrt(dh); all arithmetic is float32.
 *
 *===----------------------------------------------------------------------===*/
#include "mixrt/PackageABI.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libgomp's team, which the rest of the package runs on. */
extern void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                          unsigned flags);

enum { kRows = 64 };

/*===-- Tile arithmetic --------------------------------------------------===*/

/* The register tile of gemm: kTileRows rows of C by kTileCols (or 16)
   columns, kept in vector registers: 8 of them, 4 x 32 floats with
   AVX-512 (measured here: 1.2x 8 x 32 forward and backward) and 4 x 16
   with AVX2. */
#if defined(__AVX512F__)
enum { kTileRows = 4, kTileCols = 32 };
#else
enum { kTileRows = 4, kTileCols = 16 };
#endif

/* Rows [i, i + kTileRows) by columns [j, j + W) of C = or += op(A) B: op(A)
   is A (m x k, row stride lda), or with TRANS_A A^T of A (k x m). */
#define MIX_GEMM_TILE(NAME, W, TRANS_A)                                        \
  static inline void NAME(int64_t i, int64_t j, int64_t k,                     \
                          const float *restrict a, int64_t lda,                \
                          const float *restrict b, int64_t ldb,                \
                          float *restrict c, int64_t ldc, int accumulate) {    \
    float acc[kTileRows][W];                                                   \
    for (int r = 0; r < kTileRows; ++r)                                        \
      for (int x = 0; x < W; ++x)                                              \
        acc[r][x] = accumulate ? c[(i + r) * ldc + j + x] : 0.0f;              \
    for (int64_t p = 0; p < k; ++p) {                                          \
      const float *row = b + p * ldb + j;                                      \
      for (int r = 0; r < kTileRows; ++r) {                                    \
        float s = TRANS_A ? a[p * lda + i + r] : a[(i + r) * lda + p];         \
        for (int x = 0; x < W; ++x)                                            \
          acc[r][x] += s * row[x];                                             \
      }                                                                        \
    }                                                                          \
    for (int r = 0; r < kTileRows; ++r)                                        \
      for (int x = 0; x < W; ++x)                                              \
        c[(i + r) * ldc + j + x] = acc[r][x];                                  \
  }
MIX_GEMM_TILE(gemmTileWide, kTileCols, 0)
MIX_GEMM_TILE(gemmTileNarrow, 16, 0)
MIX_GEMM_TILE(gemmTileWideT, kTileCols, 1)
MIX_GEMM_TILE(gemmTileNarrowT, 16, 1)
#undef MIX_GEMM_TILE

/* C (m x n, row stride ldc) = or += op(A) B (B: k x n, row stride ldb),
   with n a multiple of 16 and m of kTileRows. */
static void gemm(int64_t m, int64_t n, int64_t k, const float *restrict a,
                 int64_t lda, int transA, const float *restrict b, int64_t ldb,
                 float *restrict c, int64_t ldc, int accumulate) {
  int64_t j = 0;
  for (; j + kTileCols <= n; j += kTileCols)
    for (int64_t i = 0; i < m; i += kTileRows)
      (transA ? gemmTileWideT : gemmTileWide)(i, j, k, a, lda, b, ldb, c, ldc,
                                              accumulate);
  for (; j < n; j += 16)
    for (int64_t i = 0; i < m; i += kTileRows)
      (transA ? gemmTileNarrowT : gemmTileNarrow)(i, j, k, a, lda, b, ldb, c,
                                                  ldc, accumulate);
}

/* exp(x) to about 2 ulp for x >= -87 (Cody and Waite's reduction and
   Cephes' polynomial), 0 below: branch-free, so that loops of it
   vectorize. */
static inline float expApprox(float x) {
  float z = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
  float n = __builtin_floorf(z * 1.44269504f + 0.5f);
  float r = z - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  union {
    int32_t i;
    float f;
  } scale = {((int32_t)n + 127) << 23};
  return x < -87.0f ? 0.0f : p * scale.f;
}

/* One call's operands (qkv and the prefixes) and sizes. */
typedef struct {
  const float *qkv;
  const float *prefixK, *prefixV;
  int64_t batch, seq, heads, dh, streams, prefix;
  int64_t width, pad; /* d; dh rounded up to 16 */
  float scale;
} Shape;

/* The first n rows of dh floats at `base`, `rowStride` apart (a head's q,
   k or v in qkv, a prefix's keys or values, dout), times `factor`, into
   the rows of `out` (kRows x pad; rows past n and columns past dh zero).
   With `transposed`, into the columns of `out` (pad x kRows) instead. */
static void loadRows(const Shape *s, const float *base, int64_t rowStride,
                     int64_t n, float factor, int transposed, float *out) {
  if (transposed)
    memset(out, 0, sizeof(float) * (size_t)(s->pad * kRows));
  else
    memset(out, 0, sizeof(float) * (size_t)(kRows * s->pad));
  for (int64_t r = 0; r < n; ++r) {
    const float *row = base + r * rowStride;
    if (transposed)
      for (int64_t c = 0; c < s->dh; ++c)
        out[c * kRows + r] = factor * row[c];
    else
      for (int64_t c = 0; c < s->dh; ++c)
        out[r * s->pad + c] = factor * row[c];
  }
}

/* A block of keys: the first `count` rows from `base`, `stride` apart;
   `first` is the position of its first key in the sequence, or -1 for a
   prefix (seen by every query). */
typedef struct {
  const float *k, *v;
  int64_t stride, count, first;
} KeyBlock;

/* The i-th key block of (b, h): the prefix's blocks, then the sequence's. */
static int64_t keyBlocks(const Shape *s) {
  return (s->prefix + kRows - 1) / kRows + (s->seq + kRows - 1) / kRows;
}
static KeyBlock keyBlock(const Shape *s, int64_t b, int64_t h, int64_t i) {
  KeyBlock kb;
  int64_t prefixBlocks = (s->prefix + kRows - 1) / kRows;
  if (i < prefixBlocks) {
    int64_t stream = b / (s->batch / s->streams);
    int64_t at = ((stream * s->heads + h) * s->prefix + i * kRows) * s->dh;
    kb.k = s->prefixK + at;
    kb.v = s->prefixV + at;
    kb.stride = s->dh;
    kb.count = s->prefix - i * kRows < kRows ? s->prefix - i * kRows : kRows;
    kb.first = -1;
    return kb;
  }
  int64_t first = (i - prefixBlocks) * kRows;
  const float *row = s->qkv + (b * s->seq + first) * 3 * s->width + h * s->dh;
  kb.k = row + s->width;
  kb.v = row + 2 * s->width;
  kb.stride = 3 * s->width;
  kb.count = s->seq - first < kRows ? s->seq - first : kRows;
  kb.first = first;
  return kb;
}

/* Whether query `q` sees key `c` of block `kb`. */
static inline int visible(const KeyBlock *kb, int64_t q, int64_t c) {
  return c < kb->count && (kb->first < 0 || kb->first + c <= q);
}

/* Whether any query of [q0, q0 + kRows) sees a key of `kb`. */
static inline int blockVisible(const KeyBlock *kb, int64_t q0) {
  return kb->first < 0 || kb->first <= q0 + kRows - 1;
}

/* Sets the scores (kRows x kRows, a row a query; with `transposed`, a row
   a key) of the first `rows` queries of [q0, q0 + kRows) that do not see
   a key of `kb` to -inf, and every score of the other queries (past the
   sequence). Most tiles are wholly visible and left alone. */
static void maskScores(const KeyBlock *kb, int64_t q0, int64_t rows,
                       int transposed, float *scores) {
  int wholly = kb->count == kRows && rows == kRows &&
               (kb->first < 0 || kb->first + kRows - 1 <= q0);
  if (wholly)
    return;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kRows; ++c)
      if (r >= rows || !visible(kb, q0 + r, c))
        scores[transposed ? c * kRows + r : r * kRows + c] = -INFINITY;
}

/*===-- Work sharing and profile -----------------------------------------===*/

typedef struct {
  const Shape *s;
  void *args;
  int64_t tasks;
  int64_t next; /* atomically incremented */
  void (*run)(const Shape *, void *, int64_t task, float *scratch);
  size_t scratchFloats;
} Job;

static void worker(void *data) {
  Job *j = (Job *)data;
  float *scratch = (float *)aligned_alloc(
      64, ((j->scratchFloats * sizeof(float) + 63) / 64) * 64);
  /* A thread without scratch leaves the tasks to the others. */
  if (!scratch)
    return;
  for (;;) {
    int64_t t = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
    if (t >= j->tasks)
      break;
    j->run(j->s, j->args, t, scratch);
  }
  free(scratch);
}

static void runTasks(Job *j) {
  GOMP_parallel(worker, j, 0, 0);
  if (__atomic_load_n(&j->next, __ATOMIC_RELAXED) < j->tasks) {
    fprintf(stderr, "mixrt: out of memory for the attention's tiles\n");
    abort();
  }
}

/* MIXRT_PROFILE=1: the attention's calls, time and useful FLOPs, each
   way, printed to stderr when the package is unloaded. */
static int profiling = -1;
static double seconds[2], flops[2];
static int64_t calls[2];
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int isProfiling(void) {
  if (profiling < 0) {
    const char *v = getenv("MIXRT_PROFILE");
    profiling = v && *v && strcmp(v, "0") != 0;
  }
  return profiling;
}
/* Visible (query, key) pairs of the whole call. */
static double pairs(const Shape *s) {
  double perRow = (double)s->seq * (double)(s->seq + 1) / 2 +
                  (double)s->seq * (double)s->prefix;
  return perRow * (double)(s->batch * s->heads);
}
static void record(int way, const Shape *s, double start) {
  seconds[way] += now() - start;
  /* Two products forward, five backward, 2 dh FLOPs a pair each. */
  flops[way] += pairs(s) * 2.0 * (double)s->dh * (way == 0 ? 2 : 5);
  ++calls[way];
}
__attribute__((destructor)) static void printAttentionProfile(void) {
  if (profiling != 1 || !(calls[0] + calls[1]))
    return;
  const char *names[2] = {"forward", "backward"};
  for (int w = 0; w < 2; ++w)
    if (calls[w])
      fprintf(stderr,
              "mixrt profile: attention %-8s %6lld calls %9.4f s %7.1f "
              "GFLOP/s\n",
              names[w], (long long)calls[w], seconds[w],
              seconds[w] > 0 ? flops[w] / seconds[w] * 1e-9 : 0.0);
}

static Shape makeShape(const float *qkv, const float *prefixK,
                       const float *prefixV, int64_t batch, int64_t seq,
                       int64_t heads, int64_t dh, int64_t streams,
                       int64_t prefix) {
  Shape s = {qkv,
             prefixK,
             prefixV,
             batch,
             seq,
             heads,
             dh,
             streams,
             prefix,
             heads * dh,
             (dh + 15) / 16 * 16,
             0};
  s.scale = 1.0f / sqrtf((float)dh);
  return s;
}

/*===-- Forward ----------------------------------------------------------===*/

typedef struct {
  float *out, *lse;
} ForwardArgs;

/* Scratch of a forward task: q^T (pad x kRows), k and v (kRows x pad),
   the scores (kRows x kRows), the accumulator (kRows x pad) and four
   statistics a query (kRows each). */
static size_t forwardScratch(const Shape *s) {
  return (size_t)(4 * kRows * s->pad + kRows * kRows + 4 * kRows);
}

static void forwardTask(const Shape *s, void *data, int64_t task,
                        float *scratch) {
  const ForwardArgs *a = (const ForwardArgs *)data;
  int64_t queryBlocks = (s->seq + kRows - 1) / kRows;
  /* The costliest (last) query blocks first. */
  int64_t qb = queryBlocks - 1 - task % queryBlocks;
  int64_t bh = task / queryBlocks, b = bh / s->heads, h = bh % s->heads;
  int64_t q0 = qb * kRows;
  int64_t rows = s->seq - q0 < kRows ? s->seq - q0 : kRows;
  int64_t pad = s->pad;
  float *qt = scratch, *k = qt + pad * kRows, *v = k + kRows * pad;
  float *st = v + kRows * pad, *acc = st + kRows * kRows;
  float *runMax = acc + kRows * pad, *runSum = runMax + kRows;
  float *blockMax = runSum + kRows, *blockSum = blockMax + kRows;

  /* The tile's scores transposed, S^T = K Q^T (a row a key, a column a
     query): q is transposed once, each tile of keys and values is copied
     as it is, and the softmax's reductions over keys run down the columns,
     a query a vector lane. */
  const float *qRows = s->qkv + (b * s->seq + q0) * 3 * s->width + h * s->dh;
  loadRows(s, qRows, 3 * s->width, rows, s->scale, 1, qt);
  memset(acc, 0, sizeof(float) * (size_t)(kRows * pad));
  for (int64_t r = 0; r < kRows; ++r) {
    runMax[r] = -INFINITY;
    runSum[r] = 0;
  }
  for (int64_t i = 0, n = keyBlocks(s); i < n; ++i) {
    KeyBlock kb = keyBlock(s, b, h, i);
    if (!blockVisible(&kb, q0))
      break;
    loadRows(s, kb.k, kb.stride, kb.count, 1.0f, 0, k);
    loadRows(s, kb.v, kb.stride, kb.count, 1.0f, 0, v);
    gemm(kRows, kRows, pad, k, pad, 0, qt, kRows, st, kRows, 0);
    maskScores(&kb, q0, kRows, 1, st);
    for (int64_t r = 0; r < kRows; ++r)
      blockMax[r] = runMax[r];
    for (int64_t c = 0; c < kRows; ++c)
      for (int64_t r = 0; r < kRows; ++r)
        blockMax[r] = __builtin_fmaxf(blockMax[r], st[c * kRows + r]);
    for (int64_t r = 0; r < kRows; ++r) {
      /* Every query sees its own key and the tiles before it: the
         maximum is finite (but keep a query that has seen nothing yet out
         of inf - inf). */
      blockMax[r] = blockMax[r] == -INFINITY ? 0.0f : blockMax[r];
      blockSum[r] = 0;
    }
    /* Masked scores are -inf: their exponential is 0. */
    for (int64_t c = 0; c < kRows; ++c)
      for (int64_t r = 0; r < kRows; ++r) {
        float e = expApprox(st[c * kRows + r] - blockMax[r]);
        st[c * kRows + r] = e;
        blockSum[r] += e;
      }
    for (int64_t r = 0; r < kRows; ++r) {
      float correction = expApprox(runMax[r] - blockMax[r]);
      runSum[r] = runSum[r] * correction + blockSum[r];
      runMax[r] = blockMax[r];
      for (int64_t c = 0; c < pad; ++c)
        acc[r * pad + c] *= correction;
    }
    /* acc += P v, with P = (S^T)^T. */
    gemm(kRows, pad, kRows, st, kRows, 1, v, pad, acc, pad, 1);
  }
  float *outRows = a->out + (b * s->seq + q0) * s->width + h * s->dh;
  float *lse = a->lse + (b * s->heads + h) * s->seq + q0;
  for (int64_t r = 0; r < rows; ++r) {
    float inverse = 1.0f / runSum[r];
    for (int64_t c = 0; c < s->dh; ++c)
      outRows[r * s->width + c] = acc[r * pad + c] * inverse;
    lse[r] = runMax[r] + logf(runSum[r]);
  }
}

void mixrt_flash_attention(float *qkv, int64_t qkvOffset, float *prefixK,
                           int64_t prefixKOffset, float *prefixV,
                           int64_t prefixVOffset, float *out, int64_t outOffset,
                           float *lse, int64_t lseOffset, int64_t batch,
                           int64_t seq, int64_t heads, int64_t dh,
                           int64_t streams, int64_t prefix) {
  double start = isProfiling() ? now() : 0;
  Shape s = makeShape(qkv + qkvOffset, prefixK + prefixKOffset,
                      prefixV + prefixVOffset, batch, seq, heads, dh, streams,
                      prefix);
  ForwardArgs args = {out + outOffset, lse + lseOffset};
  Job job = {&s, &args,       batch * heads * ((seq + kRows - 1) / kRows),
             0,  forwardTask, forwardScratch(&s)};
  runTasks(&job);
  if (profiling == 1)
    record(0, &s, start);
}

/*===-- Backward ---------------------------------------------------------===*/

typedef struct {
  const float *out, *lse, *dout;
  float *dqkv, *dprefixK, *dprefixV;
} BackwardArgs;

/* Scratch of a backward task: per key block, k (kRows x pad), k^T and v^T
   (pad x kRows) and the accumulators dk and dv (kRows x pad); per query
   block, q, dout and dq (kRows x pad each) and the tiles P and dP
   (kRows x kRows); D = rowsum(dout * out) of every query. */
static size_t backwardScratch(const Shape *s) {
  return (size_t)(8 * kRows * s->pad + 2 * kRows * kRows + s->seq);
}

/* The gradients of batch row b, head h: dq into dqkv; dk and dv of the
   sequence's keys into dqkv, of the prefix's added to dprefix. */
static void backwardRow(const Shape *s, const BackwardArgs *a, int64_t b,
                        int64_t h, float *scratch) {
  int64_t pad = s->pad, d = s->width;
  float *k = scratch, *kt = k + kRows * pad, *vt = kt + pad * kRows;
  float *dk = vt + pad * kRows, *dv = dk + kRows * pad;
  float *q = dv + kRows * pad, *dout = q + kRows * pad;
  float *dq = dout + kRows * pad, *p = dq + kRows * pad;
  float *dp = p + kRows * kRows, *rowDot = dp + kRows * kRows;

  const float *lse = a->lse + (b * s->heads + h) * s->seq;
  float *dqRows = a->dqkv + b * s->seq * 3 * d + h * s->dh;
  for (int64_t r = 0; r < s->seq; ++r) {
    const float *o = a->out + (b * s->seq + r) * d + h * s->dh;
    const float *g = a->dout + (b * s->seq + r) * d + h * s->dh;
    float sum = 0;
    for (int64_t c = 0; c < s->dh; ++c)
      sum += o[c] * g[c];
    rowDot[r] = sum;
    memset(dqRows + r * 3 * d, 0, sizeof(float) * (size_t)s->dh);
  }
  int64_t queryBlocks = (s->seq + kRows - 1) / kRows;
  for (int64_t i = 0, n = keyBlocks(s); i < n; ++i) {
    KeyBlock kb = keyBlock(s, b, h, i);
    loadRows(s, kb.k, kb.stride, kb.count, 1.0f, 0, k);
    loadRows(s, kb.k, kb.stride, kb.count, 1.0f, 1, kt);
    loadRows(s, kb.v, kb.stride, kb.count, 1.0f, 1, vt);
    memset(dk, 0, sizeof(float) * (size_t)(2 * kRows * pad));
    int64_t firstQuery = kb.first < 0 ? 0 : kb.first / kRows;
    for (int64_t qb = firstQuery; qb < queryBlocks; ++qb) {
      int64_t q0 = qb * kRows;
      int64_t rows = s->seq - q0 < kRows ? s->seq - q0 : kRows;
      const float *qRows = s->qkv + (b * s->seq + q0) * 3 * d + h * s->dh;
      loadRows(s, qRows, 3 * d, rows, s->scale, 0, q);
      loadRows(s, a->dout + (b * s->seq + q0) * d + h * s->dh, d, rows, 1.0f, 0,
               dout);
      /* P, then dS = P (dP - D) in place of dP. */
      gemm(kRows, kRows, pad, q, pad, 0, kt, kRows, p, kRows, 0);
      gemm(kRows, kRows, pad, dout, pad, 0, vt, kRows, dp, kRows, 0);
      maskScores(&kb, q0, rows, 0, p);
      for (int64_t r = 0; r < kRows; ++r) {
        float *pr = p + r * kRows, *dpr = dp + r * kRows;
        float l = r < rows ? lse[q0 + r] : 0;
        float dot = r < rows ? rowDot[q0 + r] : 0;
        for (int64_t c = 0; c < kRows; ++c) {
          float prob = expApprox(pr[c] - l);
          pr[c] = prob;
          dpr[c] = prob * (dpr[c] - dot);
        }
      }
      /* dv += P^T dout; dk += dS^T (q / sqrt(dh)); dq = dS k. */
      gemm(kRows, pad, kRows, p, kRows, 1, dout, pad, dv, pad, 1);
      gemm(kRows, pad, kRows, dp, kRows, 1, q, pad, dk, pad, 1);
      gemm(kRows, pad, kRows, dp, kRows, 0, k, pad, dq, pad, 0);
      for (int64_t r = 0; r < rows; ++r) {
        float *row = dqRows + (q0 + r) * 3 * d;
        for (int64_t c = 0; c < s->dh; ++c)
          row[c] += s->scale * dq[r * pad + c];
      }
    }
    if (kb.first < 0) {
      int64_t stream = b / (s->batch / s->streams);
      int64_t at = ((stream * s->heads + h) * s->prefix + i * kRows) * s->dh;
      for (int64_t r = 0; r < kb.count; ++r)
        for (int64_t c = 0; c < s->dh; ++c) {
          a->dprefixK[at + r * s->dh + c] += dk[r * pad + c];
          a->dprefixV[at + r * s->dh + c] += dv[r * pad + c];
        }
      continue;
    }
    float *dkRows = a->dqkv + (b * s->seq + kb.first) * 3 * d + d + h * s->dh;
    for (int64_t r = 0; r < kb.count; ++r)
      for (int64_t c = 0; c < s->dh; ++c) {
        dkRows[r * 3 * d + c] = dk[r * pad + c];
        dkRows[r * 3 * d + d + c] = dv[r * pad + c];
      }
  }
}

/* A task is (batch row, head) without prefixes and (stream, head) with
   them, so that one task adds up a prefix's gradient over its stream's
   rows. */
static void backwardTask(const Shape *s, void *data, int64_t task,
                         float *scratch) {
  const BackwardArgs *a = (const BackwardArgs *)data;
  int64_t h = task % s->heads, group = task / s->heads;
  if (!s->prefix) {
    backwardRow(s, a, group, h, scratch);
    return;
  }
  int64_t rowsPerStream = s->batch / s->streams;
  int64_t at = (group * s->heads + h) * s->prefix * s->dh;
  memset(a->dprefixK + at, 0, sizeof(float) * (size_t)(s->prefix * s->dh));
  memset(a->dprefixV + at, 0, sizeof(float) * (size_t)(s->prefix * s->dh));
  for (int64_t b = group * rowsPerStream; b < (group + 1) * rowsPerStream; ++b)
    backwardRow(s, a, b, h, scratch);
}

void mixrt_flash_attention_grad(
    float *qkv, int64_t qkvOffset, float *prefixK, int64_t prefixKOffset,
    float *prefixV, int64_t prefixVOffset, float *out, int64_t outOffset,
    float *lse, int64_t lseOffset, float *dout, int64_t doutOffset, float *dqkv,
    int64_t dqkvOffset, float *dprefixK, int64_t dprefixKOffset,
    float *dprefixV, int64_t dprefixVOffset, int64_t batch, int64_t seq,
    int64_t heads, int64_t dh, int64_t streams, int64_t prefix) {
  double start = isProfiling() ? now() : 0;
  Shape s = makeShape(qkv + qkvOffset, prefixK + prefixKOffset,
                      prefixV + prefixVOffset, batch, seq, heads, dh, streams,
                      prefix);
  BackwardArgs args = {out + outOffset,           lse + lseOffset,
                       dout + doutOffset,         dqkv + dqkvOffset,
                       dprefixK + dprefixKOffset, dprefixV + dprefixVOffset};
  Job job = {&s, &args,        (prefix ? streams : batch) * heads,
             0,  backwardTask, backwardScratch(&s)};
  runTasks(&job);
  if (profiling == 1)
    record(1, &s, start);
}
