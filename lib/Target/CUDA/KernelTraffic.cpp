//===- KernelTraffic.cpp - Each kernel's estimated memory traffic ---------===//
//
// The profile of a CUDA package (MIXRT_CUDA_PROFILE=1) reports the bytes
// each kernel moves, and mix-run's H200 estimate divides them by the
// device's bandwidth. Neither the device nor the emulator can count them
// (the host passes bare pointers), so the compiler estimates them, per
// launch, from the kernels it made, and records them in the package.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Target/CUDA/Passes.h"

#include "mixrt/PackageABI.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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

/// How often one thread runs \p op: the trip counts of the loops around it
/// inside \p kernel.
double timesPerThread(Operation *op, gpu::GPUFuncOp kernel,
                      const KnownArguments &known) {
  double times = 1;
  for (Operation *parent = op->getParentOp(); parent && parent != kernel;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      std::optional<int64_t> lb =
          constantOf(loop.getLowerBound(), kernel, known);
      std::optional<int64_t> ub =
          constantOf(loop.getUpperBound(), kernel, known);
      std::optional<int64_t> step = constantOf(loop.getStep(), kernel, known);
      if (!lb || !ub || !step || *step <= 0)
        return kUnknown;
      times *= *ub > *lb ? double((*ub - *lb + *step - 1) / *step) : 0.0;
    } else if (isa<LoopLikeOpInterface>(parent)) {
      return kUnknown;
    }
  }
  return times;
}

/// What the kernel does with one memref argument.
struct ArgTraffic {
  double readFootprint = 0, writeFootprint = 0; // distinct bytes touched
  double readAccesses = 0, writeAccesses = 0;   // bytes of the accesses
  bool opaque = false; // used by an op not understood: all of it, both ways

  double read(double fullBytes) const {
    return opaque ? fullBytes : std::min(readFootprint, readAccesses);
  }
  double written(double fullBytes) const {
    return opaque ? fullBytes : std::min(writeFootprint, writeAccesses);
  }
};

/// Follows \p arg through the views taken of it to its loads and stores.
ArgTraffic traceArgument(Value arg, gpu::GPUFuncOp kernel, double threads,
                         const KnownArguments &known) {
  ArgTraffic t;
  SmallVector<Value> worklist{arg};
  auto note = [&](bool write, Value view, Type element, Operation *op) {
    double footprint = viewBytes(cast<MemRefType>(view.getType()));
    double bytes =
        accessBytes(element) * timesPerThread(op, kernel, known) * threads;
    (write ? t.writeFootprint : t.readFootprint) =
        std::max(write ? t.writeFootprint : t.readFootprint, footprint);
    (write ? t.writeAccesses : t.readAccesses) += bytes;
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == v) {
        worklist.push_back(user->getResult(0));
      } else if (auto load = dyn_cast<memref::LoadOp>(user)) {
        note(false, v, load.getType(), user);
      } else if (auto store = dyn_cast<memref::StoreOp>(user);
                 store && store.getMemRef() == v) {
        note(true, v, store.getValueToStore().getType(), user);
      } else if (auto load = dyn_cast<vector::LoadOp>(user)) {
        note(false, v, load.getVectorType(), user);
      } else if (auto store = dyn_cast<vector::StoreOp>(user);
                 store && store.getBase() == v) {
        note(true, v, store.getVectorType(), user);
      } else if (auto read = dyn_cast<vector::TransferReadOp>(user)) {
        note(false, v, read.getVectorType(), user);
      } else if (auto write = dyn_cast<vector::TransferWriteOp>(user);
                 write && write.getBase() == v) {
        note(true, v, write.getVectorType(), user);
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

/// A byte count for the table: -1 when unknown.
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
      double read = 0, written = 0;
      for (BlockArgument arg : kernel.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!type)
          continue;
        ArgTraffic t = traceArgument(arg, kernel, threads, known);
        read += t.read(viewBytes(type));
        written += t.written(viewBytes(type));
      }
      table += (kernel.getName() + " " + llvm::Twine(tableValue(read)) + " " +
                llvm::Twine(tableValue(written)) + "\n")
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
