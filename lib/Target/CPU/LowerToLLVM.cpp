//===- LowerToLLVM.cpp - Bufferize and lower to the LLVM dialect ----------===//
//
// The pass pipeline from linalg on tensors to the LLVM dialect, and the
// packed entry points the runtime calls.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CPU/CPUCodegen.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::mix;

std::string mlir::mix::entryPointSymbol(llvm::StringRef name) {
  return ("mix_" + name).str();
}

// Compute what is materialized in a destination (updateArgumentsInPlace)
// in that destination where the reads allow, bufferize with identity
// layouts at function boundaries, turn results into out-parameters, free
// what is allocated, and lower linalg to loops.
static constexpr const char *kToLoops =
    "eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map "
    "allow-return-allocs-from-loops},"
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline,"
    "convert-bufferization-to-memref,"
    // The deallocation helper takes dynamically sized lists; inlined, its
    // sizes become static, as the bare-pointer calling convention needs.
    "inline,"
    "canonicalize";

// Then everything to the LLVM dialect: first to control flow and math
// calls, then (after expandArith) arithmetic and the rest.
static constexpr const char *kToControlFlow = "expand-strided-metadata,"
                                              "lower-affine,"
                                              "convert-scf-to-cf,"
                                              "convert-math-to-llvm,"
                                              "convert-math-to-libm";
static constexpr const char *kToLLVM =
    "convert-arith-to-llvm,"
    "convert-index-to-llvm,"
    "finalize-memref-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv},"
    "convert-cf-to-llvm,"
    "reconcile-unrealized-casts,"
    "canonicalize";

void mlir::mix::registerCPUCodegenDialects(DialectRegistry &registry) {
  registry
      .insert<affine::AffineDialect, arith::ArithDialect,
              bufferization::BufferizationDialect, cf::ControlFlowDialect,
              func::FuncDialect, index::IndexDialect, LLVM::LLVMDialect,
              linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, tensor::TensorDialect>();
  func::registerInlinerExtension(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  registerCollectiveBufferization(registry);
}

/// Registers the upstream passes the pipeline names, once.
static void registerPipelinePasses() {
  static bool done = [] {
    registerLinalgPasses();
    registerCanonicalizerPass();
    registerInlinerPass();
    bufferization::registerBufferizationPasses();
    bufferization::registerBufferizationPipelines();
    registerConversionPasses();
    memref::registerMemRefPasses();
    return true;
  }();
  (void)done;
}

LogicalResult mlir::mix::runPipeline(ModuleOp module, llvm::StringRef pipeline,
                                     TimingScope &timing) {
  registerPipelinePasses();
  PassManager pm(module.getContext());
  pm.enableTiming(timing);
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(pipeline, pm, os))) {
    module.emitError() << "internal error: bad lowering pipeline: " << error;
    return failure();
  }
  return pm.run(module);
}

LogicalResult mlir::mix::bufferizeForCodegen(ModuleOp module,
                                             EntryPointTypes &entryTypes,
                                             TimingScope &timing) {
  TimingScope accumulateTimer = timing.nest("fold sums into accumulators");
  if (failed(foldSumsIntoAccumulators(module)))
    return failure();
  accumulateTimer.stop();
  TimingScope headTimer = timing.nest("attention products on the heads");
  foldHeadTransposesIntoProducts(module);
  headTimer.stop();
  TimingScope fuseTimer = timing.nest("fuse elementwise ops");
  if (failed(fuseElementwiseOps(module)))
    return failure();
  fuseTimer.stop();
  TimingScope rematerializeTimer = timing.nest("rematerialize");
  rematerialize(module);
  rematerializeTimer.stop();
  if (failed(updateArgumentsInPlace(module)))
    return failure();
  if (failed(runPipeline(module, kToLoops, timing)))
    return failure();
  TimingScope transposeTimer = timing.nest("transposed operands in place");
  readTransposedOperandsInPlace(module);
  transposeTimer.stop();
  // After the transposes: bufferization may reuse a result's buffer for
  // earlier temporaries (transposed copies among them), which
  // mix-transposed-operands only turns into views while they are
  // allocations of their own.
  writeResultsInPlace(module);
  TimingScope freeTimer = timing.nest("buffer lifetimes");
  allocateAtFirstUse(module);
  freeAfterLastUse(module);
  freeTimer.stop();
  reportPeakMemory(module);
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isDeclaration())
      entryTypes[f.getSymName()] =
          SmallVector<Type>(f.getFunctionType().getInputs());
  return success();
}

/// Replaces exp, log and tanh by MLIR's polynomial approximations (a few
/// ulp of float32): inline arithmetic that LLVM vectorizes with the rest
/// of the loop, where a libm call (what convert-math-to-libm would emit)
/// runs one element at a time and keeps the loop scalar. Measured before
/// this: 14% of a training step in libm's expf/tanhf/logf.
static LogicalResult approximateMath(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  // The predicate sees operation names ("math.exp").
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    name.consume_front("math.");
    return name == "exp" || name == "log" || name == "tanh";
  });
  return applyPatternsGreedily(module, std::move(patterns));
}

/// Expands what convert-arith-to-llvm does not lower well: bf16 roundings
/// (mix-bf16-matmuls) become integer arithmetic, where LLVM would call a
/// runtime library's __truncsfbf2 on CPUs without AVX-512 BF16, and
/// ceil/floor divisions become plain ones. Not upstream's arith-expand as a
/// whole: it also expands maximumf into compares and selects, and LLVM
/// vectorizes a reduction of llvm.maximum (a softmax's row maximum) but
/// not that chain.
static LogicalResult expandArith(ModuleOp module) {
  RewritePatternSet patterns(module.getContext());
  arith::populateExpandBFloat16Patterns(patterns);
  arith::populateCeilFloorDivExpandOpsPatterns(patterns);
  return applyPatternsGreedily(module, std::move(patterns));
}

LogicalResult mlir::mix::lowerToLLVMDialect(ModuleOp module,
                                            EntryPointTypes &entryTypes,
                                            TimingScope &timing) {
  if (failed(bufferizeForCodegen(module, entryTypes, timing)))
    return failure();
  return lowerBuffersToLLVMDialect(module, entryTypes, timing);
}

LogicalResult mlir::mix::lowerBuffersToLLVMDialect(
    ModuleOp module, const EntryPointTypes &entryTypes, TimingScope &timing) {
  TimingScope matmulTimer = timing.nest("matmuls to library calls");
  convertMatmulsToLibraryCalls(module, "mixrt_", /*overwriteZeros=*/true,
                               /*fuseBias=*/true, /*triangular=*/true);
  matmulTimer.stop();
  // Parallel dimensions become scf.parallel: the outermost of a large
  // enough nest is split over threads.
  if (failed(runPipeline(module, "convert-linalg-to-parallel-loops", timing)))
    return failure();
  TimingScope outlineTimer = timing.nest("outline loop nests");
  outlineLoopNests(module, /*threadRanges=*/true);
  outlineTimer.stop();
  TimingScope mathTimer = timing.nest("approximate exp, log, tanh");
  if (failed(approximateMath(module)))
    return failure();
  mathTimer.stop();
  if (failed(runPipeline(module, kToControlFlow, timing)))
    return failure();
  TimingScope expandTimer = timing.nest("expand bf16 and divisions");
  if (failed(expandArith(module)))
    return failure();
  expandTimer.stop();
  if (failed(runPipeline(module, kToLLVM, timing)))
    return failure();
  TimingScope threadTimer = timing.nest("thread the parallel loop nests");
  parallelizeOutlinedCalls(module);
  threadTimer.stop();
  // What is left in the entry functions is straight-line glue around the
  // outlined loop nests: allocations, descriptors and calls, tens of
  // thousands of instructions for a large model. Optimising it buys nothing
  // and LLVM's passes are superlinear in function size, so don't.
  Builder b(module.getContext());
  for (auto &entry : entryTypes)
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(entry.getKey()))
      fn.setPassthroughAttr(b.getArrayAttr(
          {b.getStringAttr("noinline"), b.getStringAttr("optnone")}));
  return success();
}

LogicalResult
mlir::mix::addPackedEntryPoints(ModuleOp module, ArrayRef<std::string> names,
                                const EntryPointTypes &entryTypes) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  for (const std::string &name : names) {
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    auto types = entryTypes.find(name);
    if (!callee || types == entryTypes.end())
      return module.emitError() << "no lowered function @" << name;
    Location loc = callee.getLoc();
    auto type =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
    if (types->second.size() != callee.getFunctionType().getNumParams())
      return callee.emitError() << "unexpected lowered signature";
    for (auto [i, argType] : llvm::enumerate(types->second)) {
      auto memref = dyn_cast<MemRefType>(argType);
      if (!memref || !memref.hasStaticShape() ||
          !memref.getLayout().isIdentity())
        return callee.emitError()
               << "argument #" << i << " is not a static, contiguous memref";
    }
    // The entry point takes over the function's body, and each argument (a
    // static, identity-layout memref: one pointer under the bare-pointer
    // calling convention) becomes a load from the packed array. A wrapper
    // that called the function would pass hundreds of stack arguments,
    // which sends the DAG combiner's store merging quadratic.
    auto entry = LLVM::LLVMFuncOp::create(b, loc, entryPointSymbol(name), type);
    entry.setPassthroughAttr(callee.getPassthroughAttr());
    entry.getBody().takeBody(callee.getBody());
    Block &block = entry.getBody().front();
    unsigned numArgs = block.getNumArguments();
    Value packed = block.addArgument(ptr, loc);
    // Loaded where used: loads hoisted to the top would be live across the
    // whole glue and keep the register allocator busy spilling them.
    OpBuilder::InsertionGuard guard(b);
    for (unsigned i = 0; i < numArgs; ++i) {
      for (OpOperand &use :
           llvm::make_early_inc_range(block.getArgument(i).getUses())) {
        b.setInsertionPoint(use.getOwner());
        Value slot = LLVM::GEPOp::create(
            b, loc, ptr, ptr, packed,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        use.set(LLVM::LoadOp::create(b, loc, ptr, slot));
      }
    }
    block.eraseArguments(0, numArgs);
    callee.erase();
  }
  return success();
}
