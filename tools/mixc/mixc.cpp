//===- mixc.cpp - Model spec to compiled package --------------------------===//
//
// The user-facing compiler: reads a model spec, builds the model in the mix
// dialect, proves and applies the mixture rewrites, and writes a package.
//
//===----------------------------------------------------------------------===//

#include "mix/Conversion/Passes.h"
#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Frontend/InputFiles.h"
#include "mix/Frontend/ModelBuilder.h"
#include "mix/Frontend/Package.h"
#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CPU/Passes.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mix;

namespace cl = llvm::cl;

static cl::OptionCategory category("mixc options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("MODEL.json"),
                                      cl::Required, cl::cat(category));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size B"), cl::Required,
                              cl::cat(category));
static cl::opt<int64_t> seq("seq", cl::desc("Sequence length S"), cl::Required,
                            cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::desc("Output package"),
                                       cl::value_desc("MODEL.mixpkg"),
                                       cl::cat(category));
enum class Target { CPU, CUDA };
static cl::opt<Target>
    target("target", cl::desc("Code generation target"),
           cl::values(clEnumValN(Target::CPU, "cpu", "the host CPU"),
                      clEnumValN(Target::CUDA, "cuda", "NVIDIA sm_90")),
           cl::init(Target::CPU), cl::cat(category));
enum class Stage {
  None,
  Model,
  Proved,
  Decomposed,
  Training,
  Lowered,
  Buffers,
  GPU,
  PTX,
  LLVM
};
static cl::opt<Stage> emit(
    "emit", cl::desc("Print the IR after a stage and stop"),
    cl::values(
        clEnumValN(Stage::Model, "model", "the model as built from the spec"),
        clEnumValN(Stage::Proved, "proved",
                   "after proving and applying the mixture rewrites "
                   "and choosing mixing orders"),
        clEnumValN(Stage::Decomposed, "decomposed",
                   "the model as primitive mix ops"),
        clEnumValN(Stage::Training, "training",
                   "the training graph: forward and gradient"),
        clEnumValN(Stage::Lowered, "lowered", "lowered to linalg on tensors"),
        clEnumValN(Stage::Buffers, "buffers",
                   "--target cpu: on buffers, with each buffer freed after "
                   "its last use (--remarks gives the peak)"),
        clEnumValN(Stage::GPU, "gpu",
                   "--target cuda: kernels in NVVM, host code on the GPU "
                   "dialect"),
        clEnumValN(Stage::PTX, "ptx", "--target cuda: the kernels' PTX"),
        clEnumValN(Stage::LLVM, "llvm", "the LLVM dialect (host code)")),
    cl::init(Stage::None), cl::cat(category));
static cl::opt<unsigned> optLevel("O",
                                  cl::desc("LLVM optimisation level (0-3)"),
                                  cl::Prefix, cl::init(2), cl::cat(category));
static cl::opt<bool> remarks("remarks",
                             cl::desc("Print the passes' remarks (proofs, "
                                      "refusals, cost estimates)"),
                             cl::cat(category));

static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("--target cuda: the CUDA toolkit (bin/ptxas, include, "
                      "lib64; default $CUDA_HOME or /usr/local/cuda)"),
             cl::value_desc("DIR"), cl::cat(category));
static cl::opt<MatmulPrecision> gpuMatmul(
    "gpu-matmul",
    cl::desc("--target cuda: the tensor-core precision of matrix products "
             "(float32 accumulation either way)"),
    cl::values(clEnumValN(MatmulPrecision::TF32, "tf32", "TF32 (default)"),
               clEnumValN(MatmulPrecision::BF16, "bf16", "BF16")),
    cl::init(MatmulPrecision::TF32), cl::cat(category));

/// The arithmetic of the training step's matrix products.
enum class Precision { FP32, BF16 };
static cl::opt<Precision> precision(
    "precision",
    cl::desc("The matrix products of the training step: fp32, or bf16 "
             "operands with fp32 accumulation (parameters, optimizer state, "
             "normalizations, softmax and loss stay fp32)"),
    cl::values(clEnumValN(Precision::FP32, "fp32", "float32 (default)"),
               clEnumValN(Precision::BF16, "bf16",
                          "bfloat16 operands, float32 accumulation")),
    cl::init(Precision::FP32), cl::cat(category));

static cl::opt<int64_t>
    streamShards("stream-shards",
                 cl::desc("Shard cMoLLM's stream kernels over R ranks (stream "
                          "parallelism): run the package with mpirun -np R"),
                 cl::value_desc("R"), cl::init(1), cl::cat(category));

static cl::opt<bool> printLocations(
    "print-locations",
    cl::desc("With --emit: print each operation's location, the part of "
             "the model it comes from (\"h.0.mlp\")"),
    cl::cat(category));

static OpPrintingFlags printFlags() {
  OpPrintingFlags flags;
  if (printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/true);
  return flags;
}

static cl::opt<bool>
    timePhases("time-phases",
               cl::desc("Print the time each phase and pass took (to stderr)"),
               cl::cat(category));

/// Prints \p diag as `location: severity: message` on stderr, a layer's
/// name standing for its location.
static void printDiagnostic(Diagnostic &diag) {
  if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
    llvm::errs() << name.getName().getValue();
  else
    diag.getLocation().print(llvm::errs());
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    llvm::errs() << ": error: ";
    break;
  case DiagnosticSeverity::Warning:
    llvm::errs() << ": warning: ";
    break;
  case DiagnosticSeverity::Remark:
    llvm::errs() << ": remark: ";
    break;
  case DiagnosticSeverity::Note:
    llvm::errs() << ": note: ";
    break;
  }
  llvm::errs() << diag << "\n";
}

static int fail(const llvm::Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "mixc") << msg << "\n";
  return 1;
}

static const std::string kEntryPoints[] = {"forward", "grad", "adamw",
                                           "logits"};

/// Writes \p text to \p path, or returns an error naming it.
static llvm::Error writeFile(const llvm::Twine &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path.str(), ec);
  if (!ec) {
    os << text;
    os.close();
    ec = os.error();
    os.clear_error();
  }
  if (ec)
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  return llvm::Error::success();
}

/// The rest of the compile for --target cuda: kernels to PTX and a cubin,
/// the host code to the package's library.
static int compileForCUDA(ModuleOp module, ModuleOp proved,
                          const ModelSpec &spec, const CUDAOptions &cuda,
                          EntryPointTypes &entryTypes, TimingScope &root) {
  // The entry points' inputs, counted while results are still results.
  std::map<std::string, PackageContents::EntryArgs> entryArgs;
  for (const std::string &name : kEntryPoints)
    if (auto fn = module.lookupSymbol<func::FuncOp>(name)) {
      PackageContents::EntryArgs &args = entryArgs[name];
      args.numInputs = fn.getNumArguments();
      // The inputs the step writes over (mix-update-arguments-in-place),
      // which the runtime copies back from the device too.
      for (unsigned r = 0, e = fn.getNumResults(); r < e; ++r)
        if (auto index = fn.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
          args.updated.push_back(index.getInt());
      llvm::sort(args.updated);
    }
  TimingScope gpuTimer = root.nest("lower to kernels (NVVM)");
  if (failed(lowerToGPUDialect(module, entryTypes, cuda, gpuTimer)))
    return fail("lowering '" + inputFile + "' to GPU kernels failed");
  gpuTimer.stop();
  if (emit == Stage::GPU) {
    module.print(llvm::outs());
    return 0;
  }
  TimingScope serializeTimer = root.nest("kernels to PTX and cubin");
  std::string ptx, cubin;
  if (failed(serializeKernels(module, cuda, ptx, cubin, serializeTimer)))
    return fail("compiling the kernels of '" + inputFile + "' failed");
  serializeTimer.stop();
  if (emit == Stage::PTX) {
    llvm::outs() << ptx;
    return 0;
  }
  TimingScope hostTimer = root.nest("lower the host code");
  if (failed(lowerHostToLLVMDialect(module, hostTimer)))
    return fail("lowering the host code of '" + inputFile + "' failed");
  if (emit == Stage::LLVM) {
    module.print(llvm::outs());
    return 0;
  }
  if (failed(addPackedEntryPoints(module, kEntryPoints, entryTypes)))
    return fail("lowering the host code of '" + inputFile + "' failed");
  hostTimer.stop();

  TimingScope packageTimer = root.nest("write the package");
  for (auto &[name, args] : entryArgs)
    for (Type type : entryTypes[name]) {
      auto memref = cast<MemRefType>(type);
      args.bytes.push_back(memref.getNumElements() *
                           memref.getElementTypeBitWidth() / 8);
    }
  PackageContents contents{spec,   batch,      seq,      "cuda",
                           proved, "model.so", entryArgs};
  contents.precision = cuda.matmul == MatmulPrecision::BF16 ? "bf16" : "tf32";
  if (llvm::Error e =
          writePackage(outputPath, contents, [&](llvm::StringRef dir) {
            if (llvm::Error e = writeFile(dir + "/kernels.ptx", ptx))
              return e;
            if (llvm::Error e = writeFile(dir + "/kernels.cubin", cubin))
              return e;
            SupportCode support = getCUDASupportCode(cuda);
            support.extraSource = getManifestSource(contents);
            return emitSharedLibrary(module, (dir + "/model.so").str(),
                                     optLevel, packageTimer, support);
          }))
    return fail(llvm::toString(std::move(e)));
  return 0;
}

static int compile(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "mixc: compile a model spec (SPEC.md §1) into a package\n\n"
      "  mixc MODEL.json --batch B --seq S [--target cpu|cuda] -o "
      "MODEL.mixpkg\n");

  if (llvm::Error e = checkReadableInput(inputFile))
    return fail(llvm::toString(std::move(e)));
  auto buffer = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  llvm::Expected<ModelSpec> spec =
      parseModelSpec((*buffer)->getBuffer(), inputFile);
  if (!spec)
    return fail(llvm::toString(spec.takeError()));
  if (llvm::Error e = checkShapes(*spec, batch, seq))
    return fail(llvm::toString(std::move(e)));
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3, got " + llvm::Twine(optLevel));
  if (emit == Stage::None && outputPath.empty())
    return fail("no output: give -o MODEL.mixpkg (or --emit=STAGE to print "
                "IR)");
  // Before the compile, not after it: a refused -o costs nothing.
  if (emit == Stage::None)
    if (llvm::Error e = checkPackageDestination(outputPath))
      return fail(llvm::toString(std::move(e)));
  if (target != Target::CUDA && (emit == Stage::GPU || emit == Stage::PTX))
    return fail("--emit=gpu and --emit=ptx need --target cuda");
  if (target != Target::CUDA &&
      (gpuMatmul.getNumOccurrences() || cudaPath.getNumOccurrences()))
    return fail("--gpu-matmul and --cuda-path need --target cuda");
  if (streamShards < 1)
    return fail("--stream-shards must be at least 1, got " +
                llvm::Twine(streamShards));
  if (streamShards > 1) {
    if (spec->arch != Arch::CMoLLM)
      return fail("--stream-shards shards cMoLLM's stream kernels; '" +
                  inputFile + "' is not a cmollm model");
    if (spec->cmollm.streams % streamShards != 0)
      return fail("--stream-shards " + llvm::Twine(streamShards) +
                  " does not divide cmollm.streams = " +
                  llvm::Twine(spec->cmollm.streams) + " in '" + inputFile +
                  "'");
    if (target == Target::CUDA)
      return fail("--stream-shards is not yet supported with --target cuda "
                  "(the collectives are CPU-only)");
  }
  if (target == Target::CUDA && emit == Stage::Buffers)
    return fail("--emit buffers is the CPU target's stage; the CUDA target "
                "plans one pool instead (--emit gpu shows its host code)");
  CUDAOptions cuda;
  if (target == Target::CUDA) {
    llvm::Expected<std::string> toolkit = findCUDAToolkit(cudaPath);
    if (!toolkit)
      return fail(llvm::toString(toolkit.takeError()));
    cuda.toolkitPath = *toolkit;
    cuda.matmul = gpuMatmul;
    // On the GPU the products' operands are rounded by the tensor cores.
    if (precision == Precision::BF16) {
      if (gpuMatmul.getNumOccurrences() && gpuMatmul != MatmulPrecision::BF16)
        return fail("--precision bf16 contradicts --gpu-matmul tf32");
      cuda.matmul = MatmulPrecision::BF16;
    }
  }

  DialectRegistry registry;
  registry.insert<MixDialect>();
  registerCUDACodegenDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the layer; printing the whole function would bury it.
  context.printOpOnDiagnostic(false);
  // Errors always reach the user; remarks only when asked for.
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark && !remarks)
      return success();
    printDiagnostic(diag);
    for (Diagnostic &note : diag.getNotes())
      printDiagnostic(note);
    return success();
  });

  DefaultTimingManager timing;
  timing.setEnabled(timePhases);
  TimingScope root = timing.getRootScope();
  TimingScope buildTimer = root.nest("build the model");
  OwningOpRef<ModuleOp> module =
      buildModel(&context, *spec, batch, seq, streamShards);
  buildTimer.stop();
  if (failed(verify(*module)))
    return fail("internal error: the model built from '" + inputFile +
                "' does not verify");
  if (emit == Stage::Model) {
    module->print(llvm::outs(), printFlags());
    return 0;
  }

  PassManager pm(&context);
  TimingScope proveTimer = root.nest("prove and rewrite");
  pm.enableTiming(proveTimer);
  pm.addPass(createMixProveDynamicConvPass());
  pm.addPass(createMixMoEToDynamicConvPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createMixSelectMixingOrderPass());
  if (failed(pm.run(*module)))
    return fail("compiling '" + inputFile + "' failed");
  proveTimer.stop();
  if (emit == Stage::Proved) {
    module->print(llvm::outs(), printFlags());
    return 0;
  }

  // The package keeps the proved model as readable IR.
  OwningOpRef<ModuleOp> proved = module->clone();

  auto stop = [&](Stage stage) {
    if (emit != stage)
      return false;
    module->print(llvm::outs(), printFlags());
    return true;
  };
  PassManager decompose(&context);
  TimingScope decomposeTimer = root.nest("decompose");
  decompose.enableTiming(decomposeTimer);
  decompose.addPass(createMixDecomposePass());
  decompose.addPass(createCanonicalizerPass());
  if (failed(decompose.run(*module)))
    return fail("decomposing '" + inputFile + "' failed");
  if (stop(Stage::Decomposed))
    return 0;
  decomposeTimer.stop();
  PassManager training(&context);
  TimingScope trainingTimer = root.nest("differentiate");
  training.enableTiming(trainingTimer);
  training.addPass(createMixAutodiffPass());
  training.addPass(createMixAppendAdamWPass());
  training.addPass(createCanonicalizerPass());
  training.addPass(createCSEPass());
  training.addPass(createMixSimplifySoftmaxGradPass());
  training.addPass(createCSEPass());
  training.addPass(createMixCausalProductsPass());
  if (failed(training.run(*module)))
    return fail("differentiating '" + inputFile + "' failed");
  if (stop(Stage::Training))
    return 0;
  // Parameter names live in the manifest; the code needs only positions.
  module->walk([](func::FuncOp f) {
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i) {
      f.removeArgAttr(i, kParamNameAttr);
      f.removeArgAttr(i, kStreamShardsAttr);
    }
  });
  trainingTimer.stop();
  PassManager lower(&context);
  TimingScope lowerTimer = root.nest("lower to linalg");
  lower.enableTiming(lowerTimer);
  lower.addPass(createConvertMixToLinalgPass());
  lower.addPass(createCanonicalizerPass());
  lower.addPass(createCSEPass());
  if (precision == Precision::BF16 && target != Target::CUDA)
    lower.addPass(createMixBF16MatmulsPass());
  if (failed(lower.run(*module)))
    return fail("lowering '" + inputFile + "' failed");
  if (stop(Stage::Lowered))
    return 0;
  lowerTimer.stop();
  EntryPointTypes entryTypes;
  if (target == Target::CUDA)
    return compileForCUDA(*module, *proved, *spec, cuda, entryTypes, root);
  TimingScope llvmDialectTimer = root.nest("lower to the LLVM dialect");
  if (failed(bufferizeForCodegen(*module, entryTypes, llvmDialectTimer)))
    return fail("bufferizing '" + inputFile + "' failed");
  if (stop(Stage::Buffers))
    return 0;
  if (failed(lowerBuffersToLLVMDialect(*module, entryTypes, llvmDialectTimer)))
    return fail("lowering '" + inputFile + "' to LLVM failed");
  if (stop(Stage::LLVM))
    return 0;
  if (failed(addPackedEntryPoints(*module, kEntryPoints, entryTypes)))
    return fail("lowering '" + inputFile + "' to LLVM failed");
  llvmDialectTimer.stop();

  TimingScope packageTimer = root.nest("write the package");
  PackageContents contents{*spec, batch, seq, "cpu", *proved, "model.so"};
  contents.streamShards = streamShards;
  contents.precision = precision == Precision::BF16 ? "bf16" : "fp32";
  if (llvm::Error e =
          writePackage(outputPath, contents, [&](llvm::StringRef dir) {
            SupportCode support = getCPUSupportCode();
            support.extraSource = getManifestSource(contents);
            return emitSharedLibrary(*module, (dir + "/model.so").str(),
                                     optLevel, packageTimer, support);
          }))
    return fail(llvm::toString(std::move(e)));
  return 0;
}

int main(int argc, char **argv) {
  int rc = compile(argc, argv);
  // IR printed with --emit to a full disk or a closed pipe: an error, not
  // the abort raw_fd_ostream makes of an unchecked one at exit.
  llvm::outs().flush();
  if (std::error_code ec = llvm::outs().error()) {
    llvm::outs().clear_error();
    llvm::errs() << "mixc: error: cannot write the output: " << ec.message()
                 << "\n";
    return 1;
  }
  return rc;
}
