/*===- PackageABI.h - The one interface of compiler and runtime --*- C -*-===//
 *
 * What a package's shared library exports and what its compiled code calls,
 * spelled once for every side: mixc (the symbols its passes call and the
 * entry points it packs), the support code compiled into every package
 * (runtime/support/CPUSupport.c and CUDASupport.c, which define the
 * routines declared here), the runtime that dlopens the library
 * (mixrt::CompiledModel), and the tests.
 *
 * Plain C: the support code is compiled as C into each package.
 *
 *===----------------------------------------------------------------------===*/

#ifndef MIXRT_PACKAGEABI_H
#define MIXRT_PACKAGEABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- The package ------------------------------------------------------===*/

/* The manifest format: mixc writes it, mix-run reads exactly it. */
#define MIX_PACKAGE_FORMAT_VERSION 4

/* Each entry point of the compiled module is `void mix_<name>(void **args)`:
 * args holds one pointer a memref argument (inputs, then outputs), in the
 * order of the function's signature (mix-pack-entry-points). */
#define MIX_ENTRY_POINT_PREFIX "mix_"
#define MIX_FORWARD_SYMBOL "mix_forward"
#define MIX_GRAD_SYMBOL "mix_grad"
#define MIX_ADAMW_SYMBOL "mix_adamw"
#define MIX_LOGITS_SYMBOL "mix_logits"
#define MIX_DECODE_SYMBOL "mix_decode"
#define MIX_PREFILL_SYMBOL "mix_prefill"
typedef void (*mix_entry_point_fn)(void **args);

/* The arguments of each entry point, for a model of N parameters (in the
 * manifest's order), each one pointer to contiguous row-major data:
 *   mix_forward: the N parameters, the batch inputs (tokens, targets: int32,
 *     (B, S)), then the loss outputs (loss, ce, aux: one float each);
 *   mix_grad: as mix_forward, then the N gradients;
 *   mix_logits: as mix_forward's inputs, then the logits (B, S, V);
 *   mix_adamw: the N parameters, N gradients, N first and N second moments,
 *     hyper ([lr, 1 - beta1^t, 1 - beta2^t]), then the gradient norm; the
 *     parameters and moments are written over in place;
 *   mix_decode (optional: entries.decode in the manifest): the N
 *     parameters, the tokens (int32, (Bd, 1)), the position (one int32),
 *     the decode state (entries.decode.state, float32), then the logits
 *     (Bd, 1, V); the state is written over in place;
 *   mix_prefill (optional: entries.prefill): as mix_decode for C tokens a
 *     sequence ((Bd, C) in, (Bd, C, V) out), C = entries.prefill.chunk. */
#define MIX_NUM_BATCH_INPUTS 2
#define MIX_NUM_LOSS_OUTPUTS 3

/* The manifest compiled into the library, less its checksum: the runtime
 * refuses a manifest.json that differs from it. */
#define MIX_PACKAGE_MANIFEST_SYMBOL "mix_package_manifest"

/*===-- Stream parallelism (both targets) --------------------------------===*/

/* The runtime connects a package compiled with --stream-shards to its
 * communicator; the compiled code then sums partial values over the ranks
 * in place (mix.all_reduce). Unconnected, a package is rank 0 of one. A
 * cuda package has no mix_set_communicator: its sums run on the device
 * over NCCL (mixrt_nccl_init_streams below), on device pointers. */
typedef void (*mix_all_reduce_fn)(void *context, float *data, int64_t count);
void mix_set_communicator(void *context, int64_t rank, mix_all_reduce_fn sum);
int64_t mix_comm_rank(void);
void mix_comm_all_reduce(float *base, int64_t offset, int64_t count);
#define MIX_SET_COMMUNICATOR_SYMBOL "mix_set_communicator"
#define MIX_COMM_ALL_REDUCE_SYMBOL "mix_comm_all_reduce"
#define MIX_COMM_RANK_SYMBOL "mix_comm_rank"

/*===-- The CPU target ---------------------------------------------------===*/

/* Matrix products, C (+)= A B, with a call site number and each operand as
 * base pointer, offset, sizes and strides (mix-matmuls-to-library-calls).
 * The routines are named <prefix><form>: the prefix is "mixrt_" on the CPU
 * and "mixrt_cuda_" on CUDA; the forms are matmul (rank 2), batch_matmul
 * (3: one batch dimension) and batch2_matmul (4: two), each with the
 * suffixes _set (C = A B), _bf16 (bf16 A and B), _tri (mix.triangle: kind
 * and diagonal last), and matmul_bias[_bf16] (C = A B + a bias row). */
#define MIXRT_CPU_MATMUL_PREFIX "mixrt_"
#define MIXRT_CUDA_MATMUL_PREFIX "mixrt_cuda_"

#define MIXRT_OPERANDS_2_INTO(T, TC)                                           \
  int64_t site, T *a, int64_t ao, int64_t am, int64_t ak, int64_t as0,         \
      int64_t as1, T *b, int64_t bo, int64_t bk, int64_t bn, int64_t bs0,      \
      int64_t bs1, TC *c, int64_t co, int64_t cm, int64_t cn, int64_t cs0,     \
      int64_t cs1
#define MIXRT_OPERANDS_2(T) MIXRT_OPERANDS_2_INTO(T, float)
#define MIXRT_OPERANDS_3(T)                                                    \
  int64_t site, T *a, int64_t ao, int64_t ab, int64_t am, int64_t ak,          \
      int64_t asb, int64_t as0, int64_t as1, T *b, int64_t bo, int64_t bb,     \
      int64_t bk, int64_t bn, int64_t bsb, int64_t bs0, int64_t bs1,           \
      float *c, int64_t co, int64_t cb, int64_t cm, int64_t cn, int64_t csb,   \
      int64_t cs0, int64_t cs1
#define MIXRT_OPERANDS_4(T)                                                    \
  int64_t site, T *a, int64_t ao, int64_t ab0, int64_t ab1, int64_t am,        \
      int64_t ak, int64_t asb0, int64_t asb1, int64_t as0, int64_t as1, T *b,  \
      int64_t bo, int64_t bb0, int64_t bb1, int64_t bk, int64_t bn,            \
      int64_t bsb0, int64_t bsb1, int64_t bs0, int64_t bs1, float *c,          \
      int64_t co, int64_t cb0, int64_t cb1, int64_t cm, int64_t cn,            \
      int64_t csb0, int64_t csb1, int64_t cs0, int64_t cs1
#define MIXRT_BIAS_OF(T) T *bias, int64_t biaso, int64_t biasn, int64_t biass
#define MIXRT_BIAS MIXRT_BIAS_OF(float)
#define MIXRT_TRIANGLE int64_t kind, int64_t p
#define MIXRT_AUX_OF(T)                                                        \
  T *aux, int64_t auxo, int64_t auxm, int64_t auxn, int64_t auxs0, int64_t auxs1
#define MIXRT_AUX MIXRT_AUX_OF(float)

/* bf16 values are passed as their bits. */
typedef uint16_t mixrt_bf16;

#define MIXRT_DECLARE_MATMULS(NAME, R)                                         \
  void NAME(MIXRT_OPERANDS_##R(float));                                        \
  void NAME##_bf16(MIXRT_OPERANDS_##R(mixrt_bf16));                            \
  void NAME##_set(MIXRT_OPERANDS_##R(float));                                  \
  void NAME##_set_bf16(MIXRT_OPERANDS_##R(mixrt_bf16));                        \
  void NAME##_tri(MIXRT_OPERANDS_##R(float), MIXRT_TRIANGLE);                  \
  void NAME##_tri_bf16(MIXRT_OPERANDS_##R(mixrt_bf16), MIXRT_TRIANGLE);        \
  void NAME##_tri_set(MIXRT_OPERANDS_##R(float), MIXRT_TRIANGLE);              \
  void NAME##_tri_set_bf16(MIXRT_OPERANDS_##R(mixrt_bf16), MIXRT_TRIANGLE);
MIXRT_DECLARE_MATMULS(mixrt_matmul, 2)
MIXRT_DECLARE_MATMULS(mixrt_batch_matmul, 3)
MIXRT_DECLARE_MATMULS(mixrt_batch2_matmul, 4)
void mixrt_matmul_bias(MIXRT_OPERANDS_2(float), MIXRT_BIAS);
void mixrt_matmul_bias_bf16(MIXRT_OPERANDS_2(mixrt_bf16), MIXRT_BIAS);

/* Causal attention a tile of scores at a time (mix-attention-calls;
 * runtime/support/CPUAttention.c). Each buffer comes as its base pointer
 * and offset; without prefixes (streams and prefix 0) the prefixes' places
 * hold qkv's, and the prefix gradients' dqkv's. */
void mixrt_flash_attention(float *qkv, int64_t qkvOffset, float *prefixK,
                           int64_t prefixKOffset, float *prefixV,
                           int64_t prefixVOffset, float *out, int64_t outOffset,
                           float *lse, int64_t lseOffset, int64_t batch,
                           int64_t seq, int64_t heads, int64_t dh,
                           int64_t streams, int64_t prefix);
void mixrt_flash_attention_grad(
    float *qkv, int64_t qkvOffset, float *prefixK, int64_t prefixKOffset,
    float *prefixV, int64_t prefixVOffset, float *out, int64_t outOffset,
    float *lse, int64_t lseOffset, float *dout, int64_t doutOffset, float *dqkv,
    int64_t dqkvOffset, float *dprefixK, int64_t dprefixKOffset,
    float *dprefixV, int64_t dprefixVOffset, int64_t batch, int64_t seq,
    int64_t heads, int64_t dh, int64_t streams, int64_t prefix);

/* Threaded loop nests (mix-parallelize-outlined-calls): fn(t0, t1, args...)
 * runs iterations [t0, t1) of a nest's outer loop, its other arguments
 * (pointers and 64-bit integers) packed as int64; at most
 * MIX_MAX_PARALLEL_ARGS of them (mix-outline-loop-nests). */
#define MIX_PARALLEL_FOR_SYMBOL "mix_parallel_for"
#define MIX_MAX_PARALLEL_ARGS 24
void mix_parallel_for(void *fn, int64_t t0, int64_t t1, int64_t nargs,
                      const int64_t *args);

/* Copies between non-contiguous memrefs, called by the memref lowering (the
 * signature of libmlir_c_runner_utils' memrefCopy). */
typedef struct {
  int64_t rank;
  void *descriptor;
} mixrt_unranked_memref;
void memrefCopy(int64_t elemSize, mixrt_unranked_memref *src,
                mixrt_unranked_memref *dst);

/*===-- The CUDA target --------------------------------------------------===*/

/* cuBLASLt products (float32 operands on TF32 or BF16 tensor cores, or
 * with the _bf16 suffix bf16 operands, as --precision bf16 stores them;
 * C, the bias and aux float32 either way): C += A
 * B, C = A B (_set: beta 0), C = A B + a bias row (_bias: the BIAS
 * epilogue; the row contiguous) and C = A B with the sums of A's rows
 * written to the vector (_set_bgrad: the BGRADB epilogue, a bias gradient;
 * contiguous), C = gelu'(aux) * (A B) (_set_dgelu: the DGELU epilogue,
 * the GELU's backward step, aux the pre-activation, shaped and laid out as
 * C), and C = gelu(A B + bias) with aux = A B + bias (_bias_gelu: the
 * GELU_AUX_BIAS epilogue, a linear layer and its GELU, the pre-activation
 * kept for the backward pass). The _bf16_to_bf16 GELU forms take bf16
 * operands and write C rounded to bf16, their bias and aux bf16 too (as
 * cuBLASLt takes them with a bf16 D): --precision bf16's GELU, whose
 * output only the next products read, rounded. */
void mixrt_cuda_matmul(MIXRT_OPERANDS_2(float));
void mixrt_cuda_matmul_set(MIXRT_OPERANDS_2(float));
void mixrt_cuda_matmul_bias(MIXRT_OPERANDS_2(float), MIXRT_BIAS);
void mixrt_cuda_matmul_set_bgrad(MIXRT_OPERANDS_2(float), MIXRT_BIAS);
void mixrt_cuda_matmul_set_dgelu(MIXRT_OPERANDS_2(float), MIXRT_AUX);
void mixrt_cuda_matmul_bias_gelu(MIXRT_OPERANDS_2(float), MIXRT_BIAS,
                                 MIXRT_AUX);
void mixrt_cuda_batch_matmul(MIXRT_OPERANDS_3(float));
void mixrt_cuda_batch_matmul_set(MIXRT_OPERANDS_3(float));
void mixrt_cuda_batch2_matmul(MIXRT_OPERANDS_4(float));
void mixrt_cuda_batch2_matmul_set(MIXRT_OPERANDS_4(float));
void mixrt_cuda_matmul_bf16(MIXRT_OPERANDS_2(mixrt_bf16));
void mixrt_cuda_matmul_set_bf16(MIXRT_OPERANDS_2(mixrt_bf16));
void mixrt_cuda_matmul_bias_bf16(MIXRT_OPERANDS_2(mixrt_bf16), MIXRT_BIAS);
void mixrt_cuda_matmul_set_bgrad_bf16(MIXRT_OPERANDS_2(mixrt_bf16), MIXRT_BIAS);
void mixrt_cuda_matmul_set_dgelu_bf16(MIXRT_OPERANDS_2(mixrt_bf16), MIXRT_AUX);
void mixrt_cuda_matmul_bias_gelu_bf16(MIXRT_OPERANDS_2(mixrt_bf16), MIXRT_BIAS,
                                      MIXRT_AUX);
void mixrt_cuda_matmul_set_dgelu_bf16_to_bf16(MIXRT_OPERANDS_2_INTO(mixrt_bf16,
                                                                    mixrt_bf16),
                                              MIXRT_AUX_OF(mixrt_bf16));
void mixrt_cuda_matmul_bias_gelu_bf16_to_bf16(MIXRT_OPERANDS_2_INTO(mixrt_bf16,
                                                                    mixrt_bf16),
                                              MIXRT_BIAS_OF(mixrt_bf16),
                                              MIXRT_AUX_OF(mixrt_bf16));
void mixrt_cuda_batch_matmul_bf16(MIXRT_OPERANDS_3(mixrt_bf16));
void mixrt_cuda_batch_matmul_set_bf16(MIXRT_OPERANDS_3(mixrt_bf16));
void mixrt_cuda_batch2_matmul_bf16(MIXRT_OPERANDS_4(mixrt_bf16));
void mixrt_cuda_batch2_matmul_set_bf16(MIXRT_OPERANDS_4(mixrt_bf16));

/* What the runtime, which links no CUDA, moves arguments with. `entry`
 * numbers the entry point whose call begins (its device memory plan). A
 * failure is recorded and reported by mixrt_device_end (nonzero) and
 * mixrt_device_error. */
void mixrt_device_begin(int entry);
int mixrt_device_end(void);
/* mixrt_device_begin for a call whose device arguments are args; then,
 * when the entry's memory is planned (a call of it has ended), either
 * launches the CUDA graph that an earlier call with the same arguments
 * was captured as and returns 1 (the caller must not run the entry's host
 * code), or begins capturing the call (mixrt_device_end then launches the
 * graph) and returns 0. Optional: packages before it lack it. */
int mixrt_device_begin_graph(int entry, void *const *args, uint64_t numArgs);
/* A training step as one CUDA graph: the calls between begin_step and
 * end_step (grad, the gradients' average with mixrt_nccl_average, adamw;
 * each entry point called once before, outside a step, so that its memory
 * is planned) are captured together, keyed by args (every call's device
 * arguments). begin_step returns 1 when it launched the graph an earlier
 * step with the same args was captured as (the caller then makes none of
 * the calls), 0 when it began capturing (the caller makes the calls with
 * mixrt_device_begin and mixrt_device_end, which do not wait, and
 * mixrt_nccl_average), -1 on failure. end_step ends a capture and
 * launches the graph, then waits for the step's work; 0, or -1 with the
 * message in mixrt_device_error. Optional: packages before it lack them. */
int mixrt_device_begin_step(void *const *args, uint64_t numArgs);
int mixrt_device_end_step(void);
const char *mixrt_device_error(void);
uint64_t mixrt_device_pool_bytes(int entry);
void *mixrt_device_alloc(uint64_t size);
void mixrt_device_free(void *ptr);
int mixrt_device_upload(void *device, const void *host, uint64_t size);
int mixrt_device_download(void *host, const void *device, uint64_t size);
/* An input uploaded ahead of the call that reads it, while the package's
 * stream runs the current one: stage copies `size` bytes from `host` into
 * page-locked memory and starts their upload into slot `slot`'s staging
 * buffer (slots 0-7) on a stream of its own. take_staged, as the later
 * call prepares its arguments, copies the staged bytes into `device` on
 * the package's stream once the upload has ended, and returns 1, if the
 * slot holds exactly the `size` bytes now at `host`; else it returns 0
 * (nothing staged there, or something else: the caller uploads). -1 on
 * failure. Optional: packages before them lack them. */
int mixrt_device_stage(int slot, const void *host, uint64_t size);
int mixrt_device_take_staged(int slot, void *device, const void *host,
                             uint64_t size);

/* The gradients' average over data-parallel ranks through NCCL. */
int mixrt_nccl_unique_id(void *id);
int mixrt_nccl_init(const void *id, int ranks, int rank, double timeout);
int mixrt_nccl_average(void *const *buffers, const uint64_t *floats, int count);
/* The same average overlapped with the call that writes the buffers (grad):
 * begin_average, before the call's host code, names the buffers; the
 * compiled code calls mix_gradient_ready on each as soon as nothing later
 * in the call reads or writes it, and once the ready buffers hold at least
 * bucketFloats floats they are averaged, in one NCCL group on a stream of
 * their own that waits for the package's stream there, while the package's
 * stream goes on; end_average, after the host code, averages the buffers
 * not yet sent and makes the package's stream wait for every bucket. In a
 * captured call or step the fork and join are captured with it. 0, or -1
 * with the message in mixrt_device_error. Optional: packages before them
 * lack them (and call mixrt_nccl_average after the call). */
int mixrt_nccl_begin_average(void *const *buffers, const uint64_t *floats,
                             int count, uint64_t bucketFloats);
int mixrt_nccl_end_average(void);
/* Called by the compiled code of grad after the last use of each of its
 * outputs (mix-gradient-ready-points); does nothing unless a
 * begin_average is under way. */
void mix_gradient_ready(void *data);
/* The stream group of a package compiled with --stream-shards R: joins its
 * NCCL communicator (the id from mixrt_nccl_unique_id, made by the group's
 * first rank), after which mix_comm_rank is `rank` and mix_comm_all_reduce
 * sums over the group on the device, on the package's stream (captured in
 * the call's CUDA graph). Optional: packages from before lack it. */
int mixrt_nccl_init_streams(const void *id, int ranks, int rank,
                            double timeout);

/* The per-call profile (MIXRT_CUDA_PROFILE=1 in the environment): what the
 * device did since the last mixrt_device_profile call. Kernel bytes and
 * FLOPs are the compiler's static estimate (mixrt_kernel_traffic below);
 * product FLOPs are 2 m n k a product; copies are counted by direction. */
typedef struct {
  uint64_t launches;           /* kernel launches */
  uint64_t kernelBytesRead;    /* their estimated reads from device memory */
  uint64_t kernelBytesWritten; /* and writes */
  uint64_t memsets, memsetBytes;
  uint64_t matmuls;     /* cuBLASLt products */
  double matmulFlops;   /* 2 m n k batch over them */
  uint64_t matmulBytes; /* A, B (and a bias) read, C read (if accumulating)
                           and written */
  int matmulBF16;       /* 1: BF16 tensor cores; 0: TF32 */
  uint64_t copies[3];   /* host to device, device to host, on the device */
  uint64_t copyBytes[3];
  double kernelFlops;    /* the kernels' estimated float operations */
  double kernelMmaFlops; /* and those on the tensor cores (tf32 mma.sync) */
  uint64_t graphLaunches; /* CUDA graphs launched (calls run as graphs) */
  uint64_t graphNodes;    /* the launches, products, memsets and copies on
                             the device among the above that ran in them */
  /* NCCL all-reduces (the sums over a stream group inside a call, the
     gradients' average over the data ranks after grad): how many NCCL
     launches (the all-reduces of one group are one), their payload, and
     what each rank sends over the links in a ring all-reduce of R ranks
     (2 (R - 1) / R of the payload). Appended: a package from before
     leaves them 0. */
  uint64_t collectives;
  uint64_t collectiveBytes;
  uint64_t collectiveWireBytes;
  /* Each product's H200 roofline, summed, in seconds: the longer of its
     FLOPs at the tensor-core peak of its precision and its bytes
     (matmulBytes' count) at HBM bandwidth, by the figures below. A product
     bound by its bytes takes that long whatever the others' FLOPs.
     Appended: a package from before leaves it 0. */
  double matmulSeconds;
  /* Of the NCCL all-reduces' time by the figures below (their ring's bytes
     over the links and a latency each), the part that ran behind the
     package's own work: an all-reduce of gradients begun during the
     backward pass (mixrt_nccl_begin_average) on its own stream, while the
     kernels and products after it run. The support code weighs that work
     as the runtime's estimate does. Appended: a package from before
     leaves it 0. */
  double collectiveHiddenSeconds;
} mixrt_device_profile_t;

/* The H200 figures of the profile's estimate (SXM, HBM3e): bytes/s and
 * dense tensor-core FLOP/s with float32 accumulation. The support code
 * weighs each product by them (matmulSeconds); the runtime's estimate
 * divides the rest of the counts by them. */
#define MIXRT_H200_MEMORY_BANDWIDTH 4.8e12
#define MIXRT_H200_TF32_FLOPS 494e12
#define MIXRT_H200_BF16_FLOPS 989e12
/* The rest of its figures, assumptions until a device measures them
 * (DeviceProfile.h says where each comes from): float32 on the CUDA
 * cores, FLOP/s; a launch from the host, and one in a CUDA graph, s;
 * NVLink 4 bytes/s a rank sends, and NCCL's latency a collective, s. */
#define MIXRT_H200_FP32_FLOPS 67e12
#define MIXRT_H200_LAUNCH_SECONDS 3e-6
#define MIXRT_H200_GRAPH_NODE_SECONDS 1e-6
#define MIXRT_H200_LINK_BANDWIDTH 450e9
#define MIXRT_H200_COLLECTIVE_SECONDS 10e-6

/* Copies the counts since the last call into *out and starts new ones;
 * with print, first writes them to stderr (by kernel and by product site)
 * under the heading `title`. Returns 0, or -1 when profiling is off
 * (MIXRT_CUDA_PROFILE unset or 0). Optional: packages before it lack it. */
int mixrt_device_profile(mixrt_device_profile_t *out, const char *title,
                         int print);

/* The compiler's estimate of each kernel's memory traffic and arithmetic,
 * one line a kernel: "NAME READ WRITTEN FLOPS MMAFLOPS\n", the bytes, the
 * float operations on the CUDA cores and those on the tensor cores of one
 * launch, -1 where not estimated (NUL-terminated).
 * Exported by CUDA packages (mix-record-kernel-traffic). */
#define MIXRT_KERNEL_TRAFFIC_SYMBOL "mixrt_kernel_traffic"

#define MIXRT_DEVICE_PROFILE_SYMBOL "mixrt_device_profile"
#define MIXRT_DEVICE_BEGIN_SYMBOL "mixrt_device_begin"
#define MIXRT_DEVICE_END_SYMBOL "mixrt_device_end"
#define MIXRT_DEVICE_BEGIN_GRAPH_SYMBOL "mixrt_device_begin_graph"
#define MIXRT_DEVICE_BEGIN_STEP_SYMBOL "mixrt_device_begin_step"
#define MIXRT_DEVICE_END_STEP_SYMBOL "mixrt_device_end_step"
#define MIXRT_DEVICE_ERROR_SYMBOL "mixrt_device_error"
#define MIXRT_DEVICE_ALLOC_SYMBOL "mixrt_device_alloc"
#define MIXRT_DEVICE_FREE_SYMBOL "mixrt_device_free"
#define MIXRT_DEVICE_UPLOAD_SYMBOL "mixrt_device_upload"
#define MIXRT_DEVICE_DOWNLOAD_SYMBOL "mixrt_device_download"
#define MIXRT_DEVICE_STAGE_SYMBOL "mixrt_device_stage"
#define MIXRT_DEVICE_TAKE_STAGED_SYMBOL "mixrt_device_take_staged"
#define MIXRT_NCCL_UNIQUE_ID_SYMBOL "mixrt_nccl_unique_id"
#define MIXRT_NCCL_INIT_SYMBOL "mixrt_nccl_init"
#define MIXRT_NCCL_AVERAGE_SYMBOL "mixrt_nccl_average"
#define MIX_GRADIENT_READY_SYMBOL "mix_gradient_ready"
#define MIXRT_NCCL_BEGIN_AVERAGE_SYMBOL "mixrt_nccl_begin_average"
#define MIXRT_NCCL_END_AVERAGE_SYMBOL "mixrt_nccl_end_average"
#define MIXRT_NCCL_INIT_STREAMS_SYMBOL "mixrt_nccl_init_streams"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MIXRT_PACKAGEABI_H */
