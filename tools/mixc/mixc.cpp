//===- mixc.cpp - Model spec to compiled package --------------------------===//
//
// The user-facing compiler: reads a model spec, builds the model in the mix
// dialect, proves and applies the mixture rewrites, and writes a package.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Frontend/InputFiles.h"
#include "mix/Frontend/ModelBuilder.h"
#include "mix/Package/Package.h"
#include "mix/Pipelines/Pipelines.h"
#include "mix/Target/CPU/CPUCodegen.h"
#include "mix/Target/CUDA/CUDACodegen.h"
#include "mix/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mix;

namespace cl = llvm::cl;

static cl::OptionCategory category("mixc options");
static cl::opt<std::string>
    inputFile(cl::Positional,
              cl::desc("MODEL.json (or MODEL.mlir with --emit)"), cl::Required,
              cl::cat(category));
// Required for a spec; IR has its shapes (checked after parsing).
static cl::opt<int64_t> batch("batch", cl::desc("Batch size B"),
                              cl::cat(category));
static cl::opt<int64_t> seq("seq", cl::desc("Sequence length S"),
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
static cl::opt<bool> emulate(
    "emulate",
    cl::desc("--target cuda: the kernels as host functions, the package "
             "run by the CUDA emulator on the CPU (needs no toolkit)"),
    cl::cat(category));
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

/// How each dynamic convolution mixes its streams (mix-select-mixing-order).
static cl::opt<std::string> mixingOrder(
    "mixing-order",
    cl::desc("How each mixture's dynamic convolution is lowered: auto (the "
             "cost model's choice, the default), apply_then_mix, "
             "stack_then_mix or mix_then_apply (--remarks shows the "
             "estimates)"),
    cl::value_desc("order"), cl::init("auto"), cl::cat(category));

/// How the CPU package computes causal attention.
enum class AttentionMode { Fused, Decomposed };
static cl::opt<AttentionMode> attentionMode(
    "attention",
    cl::desc("--target cpu: causal attention fused (tiles of scores with an "
             "online softmax, memory linear in the sequence) or decomposed "
             "into products and a softmax over the whole score matrix (the "
             "code before fusing, kept for comparison)"),
    cl::values(clEnumValN(AttentionMode::Fused, "fused", "fused (default)"),
               clEnumValN(AttentionMode::Decomposed, "decomposed",
                          "score matrices in memory")),
    cl::init(AttentionMode::Fused), cl::cat(category));

static cl::opt<int64_t>
    streamShards("stream-shards",
                 cl::desc("Shard cMoLLM's stream kernels over R ranks (stream "
                          "parallelism): run the package with mpirun -np R"),
                 cl::value_desc("R"), cl::init(1), cl::cat(category));

static cl::opt<int64_t> decodeBatch(
    "decode-batch",
    cl::desc("Sequences one call of the decode step advances (the @decode "
             "entry point with a key-value cache that mix-run generate "
             "samples with; default 1, 0 for none)"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));

static cl::opt<int64_t> prefillChunk(
    "prefill-chunk",
    cl::desc("Positions one call of the prefill step (@prefill: the decode "
             "step for C tokens a sequence, which mix-run generate reads a "
             "prompt with) takes; default 64 or n_positions if smaller, 0 "
             "or 1 for none"),
    cl::value_desc("C"), cl::init(64), cl::cat(category));

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

static cl::opt<bool> timePhases(
    "time-phases",
    cl::desc("Print the time each phase and pass took (to stderr); the same "
             "as --mlir-timing"),
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

/// The inputs of each entry point, counted on the training graph (while
/// results are still results), and the inputs the step writes over
/// (mix.updates), which a cuda package copies back from the device too.
static std::map<std::string, PackageContents::EntryArgs>
countEntryInputs(ModuleOp module) {
  std::map<std::string, PackageContents::EntryArgs> entryArgs;
  std::vector<std::string> names = getPackageEntryPoints();
  names.push_back("decode");
  names.push_back("prefill");
  for (const std::string &name : names)
    if (auto fn = module.lookupSymbol<func::FuncOp>(name)) {
      PackageContents::EntryArgs &args = entryArgs[name];
      args.numInputs = fn.getNumArguments();
      for (unsigned r = 0, e = fn.getNumResults(); r < e; ++r)
        if (auto index = fn.getResultAttrOfType<IntegerAttr>(r, kUpdatesAttr))
          args.updated.push_back(index.getInt());
      llvm::sort(args.updated);
    }
  return entryArgs;
}

/// The hyperparameters @adamw was built with (kAdamWHyperparametersAttr).
static FailureOr<PackageContents::AdamW>
getAdamWHyperparameters(ModuleOp module) {
  auto adamw = module.lookupSymbol<func::FuncOp>("adamw");
  auto dict =
      adamw ? adamw->getAttrOfType<DictionaryAttr>(kAdamWHyperparametersAttr)
            : DictionaryAttr();
  if (!dict)
    return module.emitError("no @adamw with its hyperparameters (")
           << kAdamWHyperparametersAttr << ")";
  PackageContents::AdamW result;
  for (auto [name, value] :
       {std::pair<llvm::StringRef, double *>{"beta1", &result.beta1},
        {"beta2", &result.beta2},
        {"epsilon", &result.epsilon},
        {"weight_decay", &result.weightDecay},
        {"max_grad_norm", &result.maxGradNorm}}) {
    auto attr = dict.getAs<FloatAttr>(name);
    if (!attr)
      return adamw.emitError("@adamw's ")
             << kAdamWHyperparametersAttr << " has no " << name;
    *value = attr.getValueAsDouble();
  }
  return result;
}

/// The bytes of each argument of each packed entry point (its recorded
/// memref signature).
static LogicalResult
countEntryBytes(ModuleOp module,
                std::map<std::string, PackageContents::EntryArgs> &entryArgs) {
  for (auto &[name, args] : entryArgs) {
    Operation *entry = module.lookupSymbol(entryPointSymbol(name));
    FailureOr<SmallVector<MemRefType>> signature = failure();
    if (entry)
      signature = getEntrySignature(entry);
    if (failed(signature))
      return module.emitError("no packed entry point @")
             << entryPointSymbol(name) << " with a recorded signature";
    for (MemRefType memref : *signature)
      args.bytes.push_back(memref.getNumElements() *
                           memref.getElementTypeBitWidth() / 8);
  }
  return success();
}

static int compile(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's debugging options: --mlir-print-ir-after-all and the rest of
  // the IR printing, --mlir-pass-pipeline-crash-reproducer, --mlir-timing.
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-") && !name.starts_with("mlir-disable") &&
        !name.starts_with("mlir-very-unsafe"))
      option->setHiddenFlag(cl::NotHidden);
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << ::mix::versionLine("mixc") << "\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "mixc: compile a model spec into a package\n\n"
      "  mixc MODEL.json --batch B --seq S [--target cpu|cuda] -o "
      "MODEL.mixpkg\n\n"
      "Each phase is a pass pipeline (mix-opt --mix-training-pipeline, "
      "--mix-cpu-codegen-pipeline,\n--mix-cuda-codegen-pipeline), and "
      "MLIR's --mlir-* debugging options apply to them.\n");

  // MODEL.mlir: the model as IR (what --emit=model prints, or written by
  // hand), run through the same phases to an --emit stage. A package needs
  // the spec, which IR does not carry.
  bool irInput = llvm::StringRef(inputFile).ends_with(".mlir");
  if (!irInput) {
    bool missing = false;
    for (cl::opt<int64_t> *option : {&batch, &seq})
      if (!option->getNumOccurrences()) {
        llvm::errs() << "mixc: for the --" << option->ArgStr
                     << " option: must be specified at least once!\n";
        missing = true;
      }
    if (missing)
      return 1;
  }
  if (!llvm::is_contained(
          {"auto", "apply_then_mix", "stack_then_mix", "mix_then_apply"},
          mixingOrder.getValue()))
    return fail("--mixing-order must be auto, apply_then_mix, stack_then_mix "
                "or mix_then_apply, not '" +
                mixingOrder.getValue() + "'");
  if (llvm::Error e = checkReadableInput(inputFile))
    return fail(llvm::toString(std::move(e)));
  auto buffer = llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  std::optional<ModelSpec> spec;
  if (irInput) {
    if (emit == Stage::None)
      return fail("'" + inputFile +
                  "' is IR: mixc compiles it to an --emit stage only (a "
                  "package needs the model spec, MODEL.json)");
    if (batch.getNumOccurrences() || seq.getNumOccurrences() ||
        streamShards.getNumOccurrences() || decodeBatch.getNumOccurrences() ||
        prefillChunk.getNumOccurrences())
      return fail("--batch, --seq, --stream-shards, --decode-batch and "
                  "--prefill-chunk are the spec's; IR input has its shapes");
    if (llvm::Error e = checkNesting((*buffer)->getBuffer(), inputFile))
      return fail(llvm::toString(std::move(e)));
  } else {
    std::vector<std::string> notes;
    llvm::Expected<ModelSpec> parsed =
        parseModelSpec((*buffer)->getBuffer(), inputFile, &notes);
    for (const std::string &note : notes)
      llvm::errs() << "mixc: note: " << note << "\n";
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    spec = std::move(*parsed);
    if (llvm::Error e = checkShapes(*spec, batch, seq))
      return fail(llvm::toString(std::move(e)));
  }
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
  if (emulate && target != Target::CUDA)
    return fail("--emulate needs --target cuda");
  if (emulate && emit == Stage::PTX)
    return fail("--emulate compiles the kernels for the host: there is no "
                "PTX (--emit=gpu or --emit=llvm show them)");
  if (decodeBatch < 0 || decodeBatch > 4096)
    return fail("--decode-batch must be between 0 and 4096, got " +
                llvm::Twine(decodeBatch));
  if (prefillChunk < 0)
    return fail("--prefill-chunk must be at least 0, got " +
                llvm::Twine(prefillChunk));
  if (spec && prefillChunk > spec->nPositions) {
    if (prefillChunk.getNumOccurrences())
      return fail("--prefill-chunk " + llvm::Twine(prefillChunk) +
                  " exceeds n_positions = " + llvm::Twine(spec->nPositions) +
                  " in '" + inputFile + "'");
    prefillChunk = spec->nPositions;
  }
  if (decodeBatch == 0)
    prefillChunk = 0;
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
  }
  if (target == Target::CUDA && emit == Stage::Buffers)
    return fail("--emit buffers is the CPU target's stage; the CUDA target "
                "plans one pool instead (--emit gpu shows its host code)");
  CUDAOptions cuda;
  if (target == Target::CUDA) {
    // The emulated kernels are compiled for the host: no ptxas.
    if (!emulate) {
      llvm::Expected<std::string> toolkit = findCUDAToolkit(cudaPath);
      if (!toolkit)
        return fail(llvm::toString(toolkit.takeError()));
      cuda.toolkitPath = *toolkit;
    }
    if (attentionMode == AttentionMode::Decomposed)
      return fail("--attention decomposed is for --target cpu: cuda packages "
                  "always fuse attention");
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
  applyDefaultTimingManagerCLOptions(timing);
  if (timePhases)
    timing.setEnabled(true);
  TimingScope root = timing.getRootScope();
  TimingScope buildTimer = root.nest("build the model");
  OwningOpRef<ModuleOp> module;
  if (irInput) {
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sources, &context);
    if (!module)
      return fail("cannot parse '" + inputFile + "' as MLIR");
  } else {
    module = buildModel(&context, *spec, batch, seq, streamShards, decodeBatch,
                        prefillChunk);
  }
  buildTimer.stop();
  if (failed(verify(*module)))
    return fail(irInput ? "'" + inputFile + "' does not verify"
                        : "internal error: the model built from '" + inputFile +
                              "' does not verify");
  auto stop = [&](Stage stage) {
    if (emit != stage)
      return false;
    module->print(llvm::outs(), printFlags());
    return true;
  };
  if (stop(Stage::Model))
    return 0;

  // Each phase is a pipeline of lib/Pipelines run to the end, so that
  // --emit can print the IR between any two.
  auto phase = [&](const char *name, auto build) {
    TimingScope timer = root.nest(name);
    return runPipeline(*module, build, timer);
  };
  // The CPU target keeps apply-then-mix where the model would stack: on
  // the CPU the stacked form ran no faster (docs/proving.md).
  if (failed(phase("prove and rewrite", [&](OpPassManager &pm) {
        buildMixProvePipeline(pm, mixingOrder, target == Target::CUDA);
      })))
    return fail("compiling '" + inputFile + "' failed");
  if (stop(Stage::Proved))
    return 0;
  // The package keeps the proved model as readable IR.
  OwningOpRef<ModuleOp> proved = module->clone();
  TrainingPipelineOptions training;
  // On cuda, bf16 operands in memory; --gpu-matmul bf16 alone rounds f32
  // ones on the tensor cores.
  training.bf16Matmuls = precision == Precision::BF16;
  training.fuseOps = target == Target::CUDA;
  training.fuseAttention = attentionMode == AttentionMode::Fused;
  training.positionsOnDevice = target == Target::CUDA;
  training.stackMixtures = target == Target::CUDA;
  if (failed(phase("decompose", [&](OpPassManager &pm) {
        buildMixDecomposePipeline(pm, training);
      })))
    return fail("decomposing '" + inputFile + "' failed");
  if (stop(Stage::Decomposed))
    return 0;
  if (failed(phase("differentiate", [&](OpPassManager &pm) {
        buildMixDifferentiatePipeline(pm, training);
      })))
    return fail("differentiating '" + inputFile + "' failed");
  if (stop(Stage::Training))
    return 0;
  std::map<std::string, PackageContents::EntryArgs> entryArgs =
      countEntryInputs(*module);
  FailureOr<PackageContents::AdamW> adamw = getAdamWHyperparameters(*module);
  if (failed(adamw))
    return fail("differentiating '" + inputFile + "' failed");
  if (failed(phase("lower to linalg", [&](OpPassManager &pm) {
        buildMixLowerToLinalgPipeline(pm, training);
      })))
    return fail("lowering '" + inputFile + "' failed");
  if (stop(Stage::Lowered))
    return 0;
  if (failed(phase("bufferize", [&](OpPassManager &pm) {
        buildBufferizePipeline(pm, target == Target::CUDA
                                       ? BufferizePipelineOptions::forCUDA()
                                       : BufferizePipelineOptions());
      })))
    return fail("bufferizing '" + inputFile + "' failed");
  if (stop(Stage::Buffers))
    return 0;

  std::string ptx, cubin;
  if (target == Target::CUDA) {
    CUDACodegenPipelineOptions options;
    options.toolkit = cuda.toolkitPath;
    options.chip = cuda.chip;
    options.features = cuda.features;
    options.emulate = emulate;
    options.attentionRounding =
        cuda.matmul == MatmulPrecision::BF16 ? "bf16" : "tf32";
    if (failed(phase(
            emulate ? "lower to kernels (emulated)" : "lower to kernels (NVVM)",
            [&](OpPassManager &pm) { buildCUDAKernelsPipeline(pm, options); })))
      return fail("lowering '" + inputFile + "' to GPU kernels failed");
    if (stop(Stage::GPU))
      return 0;
    if (!emulate && (failed(phase("kernels to PTX and cubin",
                                  [&](OpPassManager &pm) {
                                    buildCUDAAssemblePipeline(pm, options);
                                  })) ||
                     failed(getKernelImages(*module, ptx, cubin))))
      return fail("compiling the kernels of '" + inputFile + "' failed");
    if (emit == Stage::PTX) {
      llvm::outs() << ptx;
      return 0;
    }
    if (failed(phase("lower the host code", buildCUDAHostToLLVMPipeline)))
      return fail("lowering the host code of '" + inputFile + "' failed");
    if (emulate && failed(phase("the emulator's kernel entry points",
                                buildCUDAEmulatorLaunchersPipeline)))
      return fail("lowering the host code of '" + inputFile + "' failed");
  } else {
    if (failed(phase("lower to the LLVM dialect", buildCPULowerToLLVMPipeline)))
      return fail("lowering '" + inputFile + "' to LLVM failed");
  }
  if (stop(Stage::LLVM))
    return 0;

  // Only a spec gets here: IR input stops at an --emit stage.
  PackageContents contents{*spec,   batch,
                           seq,     target == Target::CUDA ? "cuda" : "cpu",
                           *proved, "model.so"};
  contents.adamw = *adamw;
  contents.decodeBatch = decodeBatch;
  contents.prefillChunk = prefillChunk > 1 ? int64_t(prefillChunk) : 0;
  contents.streamShards = streamShards;
  contents.operands = precision == Precision::BF16 ? "bf16" : "fp32";
  if (target == Target::CUDA) {
    contents.emulated = emulate;
    contents.entryArgs = std::move(entryArgs);
    contents.precision = cuda.matmul == MatmulPrecision::BF16 ? "bf16" : "tf32";
  } else {
    contents.precision = precision == Precision::BF16 ? "bf16" : "fp32";
  }
  if (failed(phase("pack the entry points", [&](OpPassManager &pm) {
        buildPackEntryPointsPipeline(pm, getPackageEntryPoints(),
                                     /*optnone=*/target == Target::CPU);
      })))
    return fail("lowering '" + inputFile + "' to LLVM failed");
  if (target == Target::CUDA &&
      failed(countEntryBytes(*module, contents.entryArgs)))
    return fail("lowering the host code of '" + inputFile + "' failed");

  TimingScope packageTimer = root.nest("write the package");
  if (llvm::Error e =
          writePackage(outputPath, contents, [&](llvm::StringRef dir) {
            SupportCode support = target == Target::CPU ? getCPUSupportCode()
                                  : emulate ? getCUDAEmulatorSupportCode(cuda)
                                            : getCUDASupportCode(cuda);
            if (target == Target::CUDA && !emulate) {
              if (llvm::Error e = writeFile(dir + "/kernels.ptx", ptx))
                return e;
              if (llvm::Error e = writeFile(dir + "/kernels.cubin", cubin))
                return e;
            }
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
