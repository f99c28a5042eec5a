//===- ReportPeakMemory.cpp - Remark on each function's buffer peak ------===//
//
// Walks each function's body in program order, adding the bytes of every
// statically shaped memref.alloc and subtracting them at the memref.dealloc
// of the function's block that frees the buffer, and reports the peak with
// the largest buffers live at it. The allocations' locations are those of
// the tensor operations they were bufferized from, which name the model's
// layers, so the notes say what the peak is made of.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXREPORTPEAKMEMORYPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The bytes of \p alloc's buffer; 0 when its size is not static or its
/// elements are not numbers.
static int64_t bufferBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  Type element = type.getElementType();
  if (!type.hasStaticShape() || !(element.isIntOrFloat() || element.isIndex()))
    return 0;
  int64_t bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

static std::string formatBytes(int64_t bytes) {
  if (bytes >= (1 << 20))
    return llvm::formatv("{0:F1} MiB", bytes / double(1 << 20)).str();
  if (bytes >= (1 << 10))
    return llvm::formatv("{0:F1} KiB", bytes / double(1 << 10)).str();
  return llvm::formatv("{0} B", bytes).str();
}

static void reportPeak(func::FuncOp func, unsigned largest) {
  Block &body = func.getBody().front();
  llvm::MapVector<Operation *, int64_t> live;
  int64_t current = 0, peak = 0;
  Operation *peakOp = nullptr;
  SmallVector<std::pair<Operation *, int64_t>> atPeak;
  unsigned allocations = 0;
  for (Operation &op : body) {
    // Allocations nested in op's regions are live while op runs.
    int64_t nested = 0;
    SmallVector<std::pair<Operation *, int64_t>> inside;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      int64_t bytes = bufferBytes(alloc);
      live.insert({alloc, bytes});
      current += bytes;
      ++allocations;
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (auto *alloc = dealloc.getMemref().getDefiningOp();
          alloc && live.count(alloc)) {
        current -= live.lookup(alloc);
        live.erase(alloc);
      }
    } else if (op.getNumRegions()) {
      op.walk([&](memref::AllocOp alloc) {
        int64_t bytes = bufferBytes(alloc);
        nested += bytes;
        inside.push_back({alloc, bytes});
        ++allocations;
      });
    }
    if (current + nested > peak) {
      peak = current + nested;
      peakOp = &op;
      atPeak.assign(live.begin(), live.end());
      atPeak.append(inside);
    }
  }
  if (!peakOp)
    return;
  llvm::stable_sort(
      atPeak, [](const auto &a, const auto &b) { return a.second > b.second; });
  InFlightDiagnostic diag = func.emitRemark();
  diag << llvm::formatv("peak of {0} in {1} live buffers (of {2} allocated)",
                        formatBytes(peak), atPeak.size(), allocations);
  diag.attachNote(peakOp->getLoc())
      << "the peak is reached here, at '" << peakOp->getName() << "'";
  for (auto [alloc, bytes] : ArrayRef(atPeak).take_front(largest)) {
    std::string type;
    llvm::raw_string_ostream(type) << cast<memref::AllocOp>(alloc).getType();
    diag.attachNote(alloc->getLoc()) << formatBytes(bytes) << ": " << type;
  }
}

void mlir::mix::reportPeakMemory(FunctionOpInterface function,
                                 unsigned largest) {
  auto func = dyn_cast<func::FuncOp>(function.getOperation());
  if (func && !func.isDeclaration())
    reportPeak(func, largest);
}

namespace {
struct MixReportPeakMemoryPass
    : mlir::mix::impl::MixReportPeakMemoryPassBase<MixReportPeakMemoryPass> {
  using Base::Base;
  void runOnOperation() override { reportPeakMemory(getOperation(), largest); }
};
} // namespace
