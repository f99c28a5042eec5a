//===- KernelTraffic.cpp - Each kernel's estimated memory traffic ---------===//
//
// The profile of a CUDA package (MIXRT_CUDA_PROFILE=1) reports the bytes
// each kernel moves and the floating-point operations it performs (on the
// CUDA cores, and on the tensor cores: mma.sync), and mix-run's H200
// estimate divides them by the device's bandwidth and its float32 and
// tf32 throughputs. Neither the device nor the emulator can count them
// (the host passes bare pointers; the emulator counts launches only), so
// the compiler estimates them, per launch, from the kernels it made, and
// records them in the package.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mixrt/PackageABI.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/MapVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXRECORDKERNELTRAFFICPASS
#include "mix/Target/CUDA/Passes.h.inc"
} // namespace mlir::mix

namespace {
/// Byte counts that may be unknown (infinite): a dynamic size, a loop
/// without a constant trip count, a kernel without known launch sizes.
constexpr double kUnknown = std::numeric_limits<double>::infinity();

/// The distinct bytes of a view: its elements, however strided.
double viewBytes(MemRefType type) {
  if (!type.hasStaticShape())
    return kUnknown;
  unsigned bits = type.getElementTypeBitWidth();
  return double(type.getNumElements()) * double((bits + 7) / 8);
}

/// The bytes one execution of an access of \p type moves: an element or a
/// vector of them.
double accessBytes(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return double(vector.getNumElements()) *
           double((vector.getElementTypeBitWidth() + 7) / 8);
  return double((type.getIntOrFloatBitWidth() + 7) / 8);
}

/// The integer arguments of a kernel that every launch passes the same
/// constant (loop bounds the outlining left as arguments), by position.
using KnownArguments = llvm::DenseMap<unsigned, int64_t>;

/// \p v as a constant: a constant op, or a known kernel argument.
std::optional<int64_t> constantOf(Value v, gpu::GPUFuncOp kernel,
                                  const KnownArguments &known) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &kernel.getBody().front())
    return std::nullopt;
  auto it = known.find(arg.getArgNumber());
  if (it == known.end())
    return std::nullopt;
  return it->second;
}

/// The values an index may take, [lo, hi]; unknown when either bound is
/// infinite.
struct Range {
  double lo = -kUnknown, hi = kUnknown;
  bool known() const { return std::isfinite(lo) && std::isfinite(hi); }
  double mid() const { return (lo + hi) / 2; }
};

/// The split of a merged kernel (mix-merge-independent-kernels) that \p op
/// is in, if \p parent is one: its attribute's value, and whether \p op is
/// in the branch below it (the then-branch).
std::optional<std::pair<int64_t, bool>>
getSplit(Operation *parent, Operation *op, StringRef attr) {
  auto split = dyn_cast<scf::IfOp>(parent);
  auto value = split ? split->getAttrOfType<IntegerAttr>(attr) : nullptr;
  if (!value)
    return std::nullopt;
  return std::make_pair(
      value.getInt(), split.getThenRegion().isAncestor(op->getParentRegion()));
}

/// The bounds of \p v, used by \p user, in \p kernel: constants and known
/// arguments exactly, thread and block ids within the launch's sizes (and
/// within the part of a merged kernel \p user is in), and sums,
/// differences, products, quotients, remainders and minima of those.
Range rangeOf(Value v, Operation *user, gpu::GPUFuncOp kernel,
              const KnownArguments &known) {
  if (std::optional<int64_t> c = constantOf(v, kernel, known))
    return {double(*c), double(*c)};
  Operation *op = v.getDefiningOp();
  if (!op)
    return {};
  auto idRange = [&](std::optional<ArrayRef<int32_t>> sizes, gpu::Dimension dim,
                     StringRef splitAttr) -> Range {
    if (!sizes)
      return {};
    Range r{0.0, double((*sizes)[static_cast<unsigned>(dim)] - 1)};
    if (dim != gpu::Dimension::x)
      return r;
    for (Operation *p = user->getParentOp(); p && p != kernel;
         p = p->getParentOp())
      if (auto split = getSplit(p, user, splitAttr)) {
        if (split->second)
          r.hi = std::min(r.hi, double(split->first - 1));
        else
          r.lo = std::max(r.lo, double(split->first));
      }
    return r;
  };
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
    return idRange(kernel.getKnownBlockSize(), id.getDimension(),
                   kThreadSplitAttr);
  if (auto id = dyn_cast<gpu::BlockIdOp>(op))
    return idRange(kernel.getKnownGridSize(), id.getDimension(),
                   kBlockSplitAttr);
  if (op->getNumOperands() != 2)
    return {};
  Range a = rangeOf(op->getOperand(0), user, kernel, known);
  Range b = rangeOf(op->getOperand(1), user, kernel, known);
  if (!a.known() || !b.known())
    return {};
  if (isa<arith::AddIOp>(op))
    return {a.lo + b.lo, a.hi + b.hi};
  if (isa<arith::SubIOp>(op))
    return {a.lo - b.hi, a.hi - b.lo};
  if (isa<arith::MulIOp>(op) && a.lo >= 0 && b.lo >= 0)
    return {a.lo * b.lo, a.hi * b.hi};
  if (isa<arith::DivUIOp, arith::DivSIOp>(op) && a.lo >= 0 && b.lo > 0)
    return {std::floor(a.lo / b.hi), std::floor(a.hi / b.lo)};
  if (isa<arith::RemUIOp, arith::RemSIOp>(op) && a.lo >= 0 && b.lo > 0)
    return a.hi < b.lo ? a : Range{0.0, b.hi - 1};
  if (isa<arith::MinUIOp, arith::MinSIOp>(op))
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  if (isa<arith::MaxUIOp, arith::MaxSIOp>(op))
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  return {};
}

/// How often one thread runs \p op: the trip counts of the loops around it
/// inside \p kernel. A loop whose bounds vary over the launch's threads
/// (a strided loop from the thread's id, a causal walk up to the block's
/// last row) counts the trips of its bounds' midpoints: the average thread
/// for bounds linear in the ids.
double timesPerThread(Operation *op, gpu::GPUFuncOp kernel,
                      const KnownArguments &known) {
  double times = 1;
  for (Operation *parent = op->getParentOp(); parent && parent != kernel;
       parent = parent->getParentOp()) {
    // A branch of a merged kernel runs in its share of the blocks (or of a
    // block's threads): an average thread runs it that often.
    for (auto [attr, sizes] :
         {std::pair{kBlockSplitAttr, kernel.getKnownGridSize()},
          std::pair{kThreadSplitAttr, kernel.getKnownBlockSize()}})
      if (auto split = getSplit(parent, op, attr)) {
        if (!sizes)
          return kUnknown;
        double all = double((*sizes)[0]), below = double(split->first);
        times *= (split->second ? below : all - below) / all;
      }
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      std::optional<int64_t> lb =
          constantOf(loop.getLowerBound(), kernel, known);
      std::optional<int64_t> ub =
          constantOf(loop.getUpperBound(), kernel, known);
      std::optional<int64_t> step = constantOf(loop.getStep(), kernel, known);
      if (!step || *step <= 0)
        return kUnknown;
      if (lb && ub) {
        times *= *ub > *lb ? double((*ub - *lb + *step - 1) / *step) : 0.0;
        continue;
      }
      Range lower = rangeOf(loop.getLowerBound(), loop, kernel, known);
      Range upper = rangeOf(loop.getUpperBound(), loop, kernel, known);
      if (!lower.known() || !upper.known())
        return kUnknown;
      times *= std::max(0.0, std::ceil((upper.mid() - lower.mid()) / *step));
    } else if (isa<LoopLikeOpInterface>(parent)) {
      return kUnknown;
    }
  }
  return times;
}

/// The floating-point operations one execution of \p op performs: an
/// add, multiply, divide, min or max, or a math function, counted one an
/// element (a fused multiply-add two); 0 for anything else.
double arithmetic(Operation *op) {
  if (op->getNumResults() != 1)
    return 0;
  Type type = op->getResult(0).getType();
  double elements = 1;
  if (auto vector = dyn_cast<VectorType>(type)) {
    elements = double(vector.getNumElements());
    type = vector.getElementType();
  }
  if (!isa<FloatType>(type))
    return 0;
  if (isa<math::FmaOp>(op))
    return 2 * elements;
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
          arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
          arith::MinNumFOp>(op) ||
      isa<math::MathDialect>(op->getDialect()))
    return elements;
  return 0;
}

/// The tensor cores' operations of \p op for one lane: a warp's
/// `nvgpu.mma.sync` or `nvvm.mma.sync` of shape m x n x k is 2 m n k FLOPs,
/// a 32nd of them a lane.
double tensorCoreArithmetic(Operation *op) {
  double flops = 2;
  if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    for (int64_t size : mma.getMmaShapeAsArray())
      flops *= double(size);
  } else if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
    NVVM::MMAShapeAttr shape = mma.getShape();
    flops *= double(shape.getM()) * shape.getN() * shape.getK();
  } else {
    return 0;
  }
  return flops / 32;
}

/// What one kernel's code (the whole kernel, or one of the kernels a merged
/// kernel runs) does with one memref argument.
struct PartTraffic {
  double readFootprint = 0, writeFootprint = 0; // distinct bytes touched
  double readAccesses = 0, writeAccesses = 0;   // bytes of the accesses
};

/// What the kernel does with one memref argument: the sum over the kernels
/// merged into it (each moves its own bytes, as it did alone).
struct ArgTraffic {
  llvm::MapVector<Region *, PartTraffic> parts;
  bool opaque = false; // used by an op not understood: all of it, both ways

  double read(double fullBytes) const {
    double bytes = 0;
    for (const auto &[region, p] : parts)
      bytes += std::min(p.readFootprint, p.readAccesses);
    return opaque ? fullBytes : bytes;
  }
  double written(double fullBytes) const {
    double bytes = 0;
    for (const auto &[region, p] : parts)
      bytes += std::min(p.writeFootprint, p.writeAccesses);
    return opaque ? fullBytes : bytes;
  }
};

/// The region of the merged kernel's part \p op is in (the innermost
/// branch of a block split), or null when the kernel is not merged.
Region *getPart(Operation *op, gpu::GPUFuncOp kernel) {
  for (Operation *parent = op->getParentOp(); parent && parent != kernel;
       op = parent, parent = parent->getParentOp())
    if (auto split = dyn_cast<scf::IfOp>(parent);
        split && split->hasAttr(kBlockSplitAttr))
      return op->getParentRegion();
  return nullptr;
}

/// Follows \p arg through the views taken of it, and the selects that
/// choose it or another buffer (a multi-tensor kernel's block picking its
/// tensor), to its loads and stores. A view's footprint is bounded by the
/// argument's: a dynamically shaped view of it cannot touch more.
ArgTraffic traceArgument(Value arg, gpu::GPUFuncOp kernel, double threads,
                         const KnownArguments &known) {
  ArgTraffic t;
  SmallVector<std::pair<Value, double>> worklist{
      {arg, viewBytes(cast<MemRefType>(arg.getType()))}};
  auto note = [&](bool write, Value view, double bound, Type element,
                  Operation *op) {
    double footprint =
        std::min(bound, viewBytes(cast<MemRefType>(view.getType())));
    double bytes =
        accessBytes(element) * timesPerThread(op, kernel, known) * threads;
    PartTraffic &p = t.parts[getPart(op, kernel)];
    (write ? p.writeFootprint : p.readFootprint) =
        std::max(write ? p.writeFootprint : p.readFootprint, footprint);
    (write ? p.writeAccesses : p.readAccesses) += bytes;
  };
  while (!worklist.empty()) {
    auto [v, bound] = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        worklist.emplace_back(user->getResult(0), bound);
      } else if (auto select = dyn_cast<arith::SelectOp>(user);
                 select && select.getCondition() != v) {
        worklist.emplace_back(select.getResult(), bound);
      } else if (auto load = dyn_cast<memref::LoadOp>(user)) {
        note(false, v, bound, load.getType(), user);
      } else if (auto store = dyn_cast<memref::StoreOp>(user);
                 store && store.getMemRef() == v) {
        note(true, v, bound, store.getValueToStore().getType(), user);
      } else if (auto load = dyn_cast<vector::LoadOp>(user)) {
        note(false, v, bound, load.getVectorType(), user);
      } else if (auto store = dyn_cast<vector::StoreOp>(user);
                 store && store.getBase() == v) {
        note(true, v, bound, store.getVectorType(), user);
      } else if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
        note(false, v, bound, read.getVectorType(), user);
      } else if (auto write = dyn_cast<vector::TransferWriteOp>(user);
                 write && write.getBase() == v) {
        note(true, v, bound, write.getVectorType(), user);
      } else if (isa<memref::DimOp, memref::ExtractStridedMetadataOp>(user)) {
        // Metadata only.
      } else {
        t.opaque = true;
      }
    }
  }
  return t;
}

/// The product of a launch-size attribute's entries, or kUnknown.
double product(std::optional<ArrayRef<int32_t>> sizes) {
  if (!sizes)
    return kUnknown;
  double n = 1;
  for (int32_t s : *sizes)
    n *= double(s);
  return n;
}

/// A count for the table: -1 when unknown.
long long tableValue(double bytes) {
  return std::isfinite(bytes) ? (long long)bytes : -1;
}

struct MixRecordKernelTrafficPass
    : mlir::mix::impl::MixRecordKernelTrafficPassBase<
          MixRecordKernelTrafficPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    if (!kernels || module.lookupSymbol(MIXRT_KERNEL_TRAFFIC_SYMBOL))
      return;
    // Every launch of each kernel.
    llvm::StringMap<SmallVector<gpu::LaunchFuncOp>> launches;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName().getValue() == kKernelModuleName)
        launches[launch.getKernelName().getValue()].push_back(launch);
    });
    std::string table;
    for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      KnownArguments known;
      auto sites = launches.find(kernel.getName());
      for (unsigned i = 0;
           sites != launches.end() && i < kernel.getNumArguments(); ++i) {
        std::optional<int64_t> value;
        bool same = true;
        for (gpu::LaunchFuncOp launch : sites->second) {
          std::optional<int64_t> c =
              getConstantIntValue(launch.getKernelOperands()[i]);
          same = same && c && (!value || *value == *c);
          value = c;
        }
        if (same && value)
          known[i] = *value;
      }
      double threads = product(kernel.getKnownBlockSize()) *
                       product(kernel.getKnownGridSize());
      double read = 0, written = 0, flops = 0, mmaFlops = 0;
      for (BlockArgument arg : kernel.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type)
          continue;
        ArgTraffic t = traceArgument(arg, kernel, threads, known);
        read += t.read(viewBytes(type));
        written += t.written(viewBytes(type));
      }
      kernel.walk([&](Operation *op) {
        if (double n = arithmetic(op))
          flops += n * timesPerThread(op, kernel, known) * threads;
        if (double n = tensorCoreArithmetic(op))
          mmaFlops += n * timesPerThread(op, kernel, known) * threads;
      });
      table += (kernel.getName() + " " + llvm::Twine(tableValue(read)) + " " +
                llvm::Twine(tableValue(written)) + " " +
                llvm::Twine(tableValue(flops)) + " " +
                llvm::Twine(tableValue(mmaFlops)) + "\n")
                   .str();
    }
    table.push_back('\0');
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(&getContext(), 8),
                                         table.size());
    LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                           LLVM::Linkage::External, MIXRT_KERNEL_TRAFFIC_SYMBOL,
                           b.getStringAttr(table));
  }
};
} // namespace
