//===- CUDACodegen.h - Linalg on tensors to sm_90 kernels -------*- C++ -*-===//
//
// The CUDA back end: the CPU back end's bufferization, then every linalg op
// that is not a matrix product becomes a kernel (gpu.launch, outlined into
// one gpu.module, lowered to NVVM, PTX 8.0 for sm_90 and a cubin by the
// toolkit's ptxas), matrix products become cuBLASLt calls, and the host
// side (allocations, launches, calls) is compiled into the package's shared
// library with a small runtime over the CUDA driver API.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_TARGET_CUDA_CUDACODEGEN_H
#define MIX_TARGET_CUDA_CUDACODEGEN_H

#include "mix/Codegen/Codegen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <array>
#include <string>

namespace mlir::linalg {
class GenericOp;
} // namespace mlir::linalg

namespace mlir {
namespace mix {

/// The gpu.module every kernel ends up in.
constexpr const char *kKernelModuleName = "mix_kernels";

/// --emulate: the object of gpu.binary @mix_kernels, where the device has a
/// cubin; the emulator's cuModuleLoadData recognises it.
constexpr const char *kEmulatorMarker = "MIXEMU01";
/// --emulate: kernel `k` as a host function `__mixemu_k`, marked with the
/// kernel's name.
constexpr llvm::StringLiteral kEmulatedKernelPrefix = "__mixemu_";
constexpr llvm::StringLiteral kEmulatedKernelAttr = "mix.emulated_kernel";
/// --emulate, on `__mixemu_k`: the kernel's static shared memory in bytes
/// (absent: none), and whether it has barriers or shuffles (its threads
/// wait for each other, so the emulator runs them as fibers).
constexpr llvm::StringLiteral kEmulatedSharedBytesAttr =
    "mix.shared_memory_bytes";
constexpr llvm::StringLiteral kEmulatedUsesBarrierAttr = "mix.uses_barrier";
constexpr llvm::StringLiteral kEmulatedUsesShuffleAttr = "mix.uses_shuffle";

/// On an `scf.if` of a kernel that mix-merge-independent-kernels made: the
/// condition is `block id x < S` (kBlockSplitAttr = S: the then-branch is
/// the first merged kernel's S blocks, the else-branch the rest's) or
/// `thread id x < T` (kThreadSplitAttr = T: a smaller block's threads).
/// The traffic estimate counts each branch for its share of the launch.
constexpr llvm::StringLiteral kBlockSplitAttr = "mix.block_split";
constexpr llvm::StringLiteral kThreadSplitAttr = "mix.thread_split";

/// How cuBLASLt computes the matrix products (float32 accumulation always).
enum class MatmulPrecision { TF32, BF16 };

struct CUDAOptions {
  /// The CUDA toolkit: bin/ptxas, include/, lib64/, nvvm/libdevice.
  std::string toolkitPath = "/usr/local/cuda";
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  MatmulPrecision matmul = MatmulPrecision::TF32;
};

/// Finds the CUDA toolkit: \p requested if not empty, else $CUDA_HOME,
/// $CUDA_PATH, /usr/local/cuda; it must hold bin/ptxas. Returns an error
/// naming where it looked.
llvm::Expected<std::string> findCUDAToolkit(llvm::StringRef requested);

/// Adds the dialects and interfaces the CUDA back end needs.
void registerCUDACodegenDialects(DialectRegistry &registry);

/// Whether buffers of \p type are the host's own bookkeeping (i1 and index
/// elements: the ownership flags and pointer lists of the deallocation
/// lowering), which stay in host memory. Model data is f32 and i32.
bool isHostBookkeeping(MemRefType type);

/// memref.alloc/alloca/dealloc/copy/get_global of the host functions to
/// device allocations, kernels and copies (mix-memory-to-device).
LogicalResult moveMemoryToDevice(ModuleOp module);

/// Whether \p op copies its one f32 input into its one bf16 output of the
/// same shape, element by element, rounded (`arith.truncf`): a product
/// operand's rounding (mix-bf16-matmuls, on buffers).
bool isRoundingToBF16(linalg::GenericOp op);

/// The buffer \p v is a view of (through reshapes, casts and subviews).
inline Value viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// A gpu.alloc of \p type (static shapes only) on a stream of its own,
/// waited for, as mix-memory-to-device makes them; and its gpu.dealloc.
Value allocOnDevice(OpBuilder &b, Location loc, MemRefType type);
void deallocOnDevice(OpBuilder &b, Location loc, Value memref);
/// The operations that free one of \p roots, if \p op is such a
/// deallocation: a `memref.dealloc`, or a `gpu.dealloc` with the waits that
/// start and end its stream (`deallocOnDevice`); empty otherwise.
SmallVector<Operation *> getDeallocation(Operation *op, ArrayRef<Value> roots);
/// The operations that make \p alloc's buffer, users first: a
/// `memref.alloc`, or a `gpu.alloc` with the waits that end and start its
/// stream (`allocOnDevice`).
SmallVector<Operation *> getAllocation(Operation *alloc);

/// Moves the device work no scf.parallel carries into launches
/// (mix-launch-serial-ops): linalg ops without a parallel loop, and host
/// loop nests that read or write device memory directly (one thread, or
/// one thread an inner iteration where the nest provably allows it).
LogicalResult launchSerialOps(ModuleOp module);

/// Each top-level scf.parallel of a host function to a flat 1-D gpu.launch
/// (mix-parallel-loops-to-gpu).
LogicalResult convertParallelLoopsToGPU(ModuleOp module);

/// Moves every kernel into the gpu.module @mix_kernels
/// (mix-merge-gpu-modules).
LogicalResult mergeGPUModules(ModuleOp module);

/// Creates a gpu.launch of \p blocks x \p threads (1-D) at \p b's insertion
/// point, its body holding only the terminator.
gpu::LaunchOp createFlatLaunch(OpBuilder &b, Location loc, int64_t blocks,
                               int64_t threads);

/// Creates a gpu.launch of \p grid blocks of \p block threads (x, y, z)
/// with the workgroup (shared) buffers \p workgroup and the per-thread
/// buffers \p priv, its body holding only the terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc,
                           std::array<int64_t, 3> grid,
                           std::array<int64_t, 3> block,
                           TypeRange workgroup, TypeRange priv = {});

/// The type of a launch's workgroup (shared memory) buffer.
MemRefType workgroupBuffer(ArrayRef<int64_t> shape, Type type);
/// The type of a launch's per-thread (private) buffer.
MemRefType privateBuffer(ArrayRef<int64_t> shape, Type type);

/// The last block of a launch to finish does what needs every block's
/// results (a split reduction's fold of its partial values), in the same
/// launch rather than a second one. The blocks count themselves on a
/// counter in device memory: a zero-initialised `memref<1xi32>` global of
/// \p module named \p prefix (made unique), which the last block sets back
/// to zero for the next launch. Returns the counter's `memref.get_global`,
/// made at \p b's point (inside the launch).
Value createBlockCounter(OpBuilder &b, Location loc, ModuleOp module,
                         StringRef prefix);

/// At \p b's point in \p launch's body, which every thread reaches after
/// storing what its block leaves for the last one: fences those stores at
/// device scope, synchronizes the block, takes thread 0's ticket from
/// \p counter and broadcasts through \p flag (a workgroup `memref<1xi32>`)
/// whether it is the last of the launch's \p blocks blocks; then an
/// `scf.if` that only the last block enters, whose body begins with an
/// acquire fence and ends with thread 0 resetting the counter. Sets \p b
/// inside that body, after the fence. Each block must take one ticket.
void createLastBlockSection(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                            Value counter, Value flag, int64_t blocks);

/// Threads a block of a flat launch.
constexpr int64_t kFlatBlockSize = 256;

/// Creates a flat launch with one thread an index of [0, count) (blocks of
/// kFlatBlockSize) and sets \p b inside `if (t < count)`, t the thread's
/// flat index, which it returns. \p count must fit one launch's grid.
Value createGuardedFlatLaunch(OpBuilder &b, Location loc, int64_t count);

/// On gpu.binary @mix_kernels after mix-assemble-kernels: the PTX its
/// cubin was assembled from.
inline constexpr llvm::StringLiteral kPTXAttr = "mix.ptx";

/// The PTX and cubin of @mix_kernels after mix-assemble-kernels (both empty
/// when the module has no kernel); an error if the kernels were not
/// assembled.
LogicalResult getKernelImages(ModuleOp module, std::string &ptx,
                              std::string &cubin);

/// The CUDA package's support code: the mgpu* runtime the lowered launches
/// call, the device memory plan, cuBLASLt matrix products, and the
/// mixrt_device_* functions the runtime moves data with.
SupportCode getCUDASupportCode(const CUDAOptions &options);
/// --emulate: the same support code over the CUDA emulator
/// (runtime/emulator), which stands in for the driver, cuBLASLt and NCCL;
/// no toolkit is needed.
SupportCode getCUDAEmulatorSupportCode(const CUDAOptions &options);

} // namespace mix
} // namespace mlir

#endif // MIX_TARGET_CUDA_CUDACODEGEN_H
