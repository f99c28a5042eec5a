//===- gemm_bench.cu - cuBLASLt's dense GEMM, the device check's baseline -===//
//
// Times C = A B (M x K times K x N, float32 storage, float32 accumulation)
// through cuBLASLt with TF32 or BF16 tensor cores: the dense GEMM a fused
// mixture layer of the same FLOPs is compared with. Built on the device
// machine by scripts/device-check.sh with nvcc.
//
// Usage: gemm_bench M N K tf32|bf16 [REPEATS]
// Prints: gemm M N K PRECISION median_ms TFLOP/s
//
//===----------------------------------------------------------------------===//

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "gemm_bench: %s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                                \
    }                                                                          \
  } while (0)
#define CHECK_LT(x)                                                            \
  do {                                                                         \
    cublasStatus_t s = (x);                                                    \
    if (s != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "gemm_bench: %s: status %d\n", #x, int(s));         \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: gemm_bench M N K tf32|bf16 [REPEATS]\n");
    return 2;
  }
  long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  bool bf16 = std::strcmp(argv[4], "bf16") == 0;
  int repeats = argc > 5 ? std::atoi(argv[5]) : 20;
  if (m <= 0 || n <= 0 || k <= 0 || repeats <= 0) {
    std::fprintf(stderr, "gemm_bench: sizes and repeats must be positive\n");
    return 2;
  }
  float *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, sizeof(float) * m * k));
  CHECK_CUDA(cudaMalloc(&b, sizeof(float) * k * n));
  CHECK_CUDA(cudaMalloc(&c, sizeof(float) * m * n));
  CHECK_CUDA(cudaMemset(a, 0, sizeof(float) * m * k));
  CHECK_CUDA(cudaMemset(b, 0, sizeof(float) * k * n));
  void *workspace;
  size_t wsSize = 32u << 20;
  CHECK_CUDA(cudaMalloc(&workspace, wsSize));
  cublasLtHandle_t lt;
  CHECK_LT(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CHECK_LT(cublasLtMatmulDescCreate(
      &desc, bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F_FAST_TF32,
      CUDA_R_32F));
  // Column-major: C (m x n) = A (m x k) B (k x n).
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref;
  CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_LT(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsSize, sizeof wsSize));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1,
                                          &result, &found));
  if (!found) {
    std::fprintf(stderr, "gemm_bench: no cuBLASLt algorithm\n");
    return 1;
  }
  const float one = 1, zero = 0;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int i = 0; i < repeats + 3; ++i) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_LT(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc,
                            &result.algo, workspace, wsSize, 0));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (i >= 3)
      times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  double tflops = 2.0 * m * n * k / (median * 1e-3) / 1e12;
  std::printf("gemm %ld %ld %ld %s %.4f %.1f\n", m, n, k, bf16 ? "bf16" : "tf32",
              median, tflops);
  return 0;
}
