//===- EmitSharedLibrary.cpp - LLVM dialect to a native shared library ----===//
//
// Translates to LLVM IR, splits it into one partition a core, optimises and
// compiles the partitions in parallel for the host CPU, and links the
// objects with the small C support code into a shared library (the
// support code's objects kept in a cache between compiles).
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;
using namespace mlir::mix;

static llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Where compiled support code is kept between compiles:
/// $MIXC_CACHE_DIR (none when it is empty), else $XDG_CACHE_HOME/mixc,
/// else ~/.cache/mixc; none when the directory cannot be made.
static std::optional<std::string> supportCacheDir() {
  llvm::SmallString<256> dir;
  if (const char *env = std::getenv("MIXC_CACHE_DIR")) {
    if (!*env)
      return std::nullopt;
    dir = env;
  } else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = xdg;
    llvm::sys::path::append(dir, "mixc");
  } else if (llvm::sys::path::home_directory(dir)) {
    llvm::sys::path::append(dir, ".cache", "mixc");
  } else {
    return std::nullopt;
  }
  if (llvm::sys::fs::create_directories(dir))
    return std::nullopt;
  return dir.str().str();
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
hostMachine(unsigned optLevel) {
  // Once, whichever thread comes first: this runs on the code generation
  // pool's workers, and LLVM's target registration is not thread-safe. Two
  // workers registering the X86 target at once could leave the registry
  // empty for one of them ("no LLVM target", seen in CI) or link the target
  // to itself, so that lookupTarget never returns (a mixc that spun at 200%
  // CPU while writing its package).
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return error("no LLVM target for " + triple.str() + ": " + err);
  llvm::SubtargetFeatures features;
  for (const auto &[feature, on] : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature, on);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt,
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                      : llvm::CodeGenOptLevel::Default));
  if (!tm)
    return error("cannot create a target machine for " + triple.str());
  return std::move(tm);
}

/// Optimises one partition of the module and writes its object file. Runs
/// on a worker thread, so it parses the partition into a context of its own.
static llvm::Error compilePartition(llvm::StringRef bitcode,
                                    llvm::StringRef objectPath,
                                    unsigned optLevel) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, objectPath), context);
  if (!module)
    return module.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm =
      hostMachine(optLevel);
  if (!tm)
    return tm.takeError();
  (*module)->setDataLayout((*tm)->createDataLayout());
  (*module)->setTargetTriple((*tm)->getTargetTriple());
  if (llvm::Error e =
          makeOptimizingTransformer(optLevel, 0, tm->get())(module->get()))
    return e;
  std::error_code ec;
  llvm::ToolOutputFile out(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return error("cannot write '" + objectPath + "': " + ec.message());
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, out.os(), nullptr,
                                 llvm::CodeGenFileType::ObjectFile))
    return error("the target cannot emit object files");
  pm.run(**module);
  // A write error (a full disk) is reported here; left in the stream, it
  // would abort the process when the stream is destroyed.
  out.os().close();
  if (std::error_code err = out.os().error()) {
    out.os().clear_error();
    return error("cannot write '" + objectPath + "': " + err.message());
  }
  out.keep();
  return llvm::Error::success();
}

llvm::Error mlir::mix::emitSharedLibrary(ModuleOp module, llvm::StringRef path,
                                         unsigned optLevel, TimingScope &timing,
                                         const SupportCode &supportCode) {
  TimingScope translateTimer = timing.nest("translate to LLVM IR");
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "mixpkg");
  if (!llvmModule)
    return error("translating the lowered model to LLVM IR failed");
  scopeCallAllocas(*llvmModule, supportCode.nonCapturingCalls);
  // Unwind tables, as clang emits by default on x86-64: a backtrace taken
  // in the compiled code (mix-run's crash report, a debugger) walks on
  // through it to its caller.
  llvmModule->setUwtable(llvm::UWTableKind::Async);
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration())
      f.setUWTableKind(llvm::UWTableKind::Async);
  translateTimer.stop();

  // The functions are independent (loop nests and optnone glue; nothing is
  // inlined across them), so the module is split into one partition a core
  // and each is optimised and compiled on its own thread.
  TimingScope splitTimer = timing.nest("split into partitions");
  unsigned threads =
      std::min(8u, llvm::hardware_concurrency().compute_thread_count());
  std::vector<llvm::SmallString<0>> bitcodes;
  llvm::SplitModule(
      *llvmModule, std::max(1u, threads),
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::SmallString<0> &bitcode = bitcodes.emplace_back();
        llvm::raw_svector_ostream os(bitcode);
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  llvmModule.reset();
  splitTimer.stop();

  // The objects and the support source go next to the library, then away.
  TimingScope compileTimer = timing.nest("optimise and generate code");
  std::vector<std::string> objects;
  for (size_t i = 0; i < bitcodes.size(); ++i)
    objects.push_back((path + "." + llvm::Twine(i) + ".o").str());
  llvm::scope_exit removeObjects([&] {
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
  });
  std::vector<std::string> errors(bitcodes.size());
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (size_t i = 0; i < bitcodes.size(); ++i)
      pool.async([&, i] {
        if (llvm::Error e = compilePartition(bitcodes[i], objects[i], optLevel))
          errors[i] = llvm::toString(std::move(e));
      });
    pool.wait();
  }
  for (const std::string &e : errors)
    if (!e.empty())
      return error(e);
  compileTimer.stop();

  TimingScope linkTimer = timing.nest("link with the support code");
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("clang-22");
  if (!cc)
    cc = llvm::sys::findProgramByName("clang");
  if (!cc)
    return error("cannot link the package: clang-22 is not on PATH (run "
                 "scripts/setup.sh)");
  // The support code's files, its headers among them, in a directory next
  // to the library for as long as the link takes.
  llvm::SmallString<256> supportDir(path);
  supportDir += ".support";
  llvm::scope_exit removeSupportDir(
      [&] { llvm::sys::fs::remove_directories(supportDir); });
  auto writeFile = [&](llvm::StringRef dir, llvm::StringRef name,
                       llvm::StringRef text) -> llvm::Expected<std::string> {
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, name);
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(file)))
      return error("cannot create '" + llvm::sys::path::parent_path(file) +
                   "': " + ec.message());
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (ec)
      return error("cannot write '" + file + "': " + ec.message());
    os << text;
    os.close();
    if (std::error_code err = os.error()) {
      os.clear_error();
      return error("cannot write '" + file + "': " + err.message());
    }
    return file.str().str();
  };
  llvm::SmallString<256> includeDir(supportDir);
  llvm::sys::path::append(includeDir, "include");
  for (const auto &[name, text] : supportCode.headers)
    if (llvm::Expected<std::string> file = writeFile(includeDir, name, text);
        !file)
      return file.takeError();
  std::vector<std::pair<std::string, std::string>> cFiles{
      {"support.c", supportCode.source}};
  cFiles.insert(cFiles.end(), supportCode.sources.begin(),
                supportCode.sources.end());
  std::vector<std::string> flags{"-fPIC", "-O2"};
  if (!supportCode.headers.empty())
    flags.push_back(("-I" + includeDir).str());
  flags.insert(flags.end(), supportCode.compileFlags.begin(),
               supportCode.compileFlags.end());

  // The support code is the same for every package a mixc makes with the
  // same flags: its objects are compiled once into the cache (each under
  // a hash of the compiler, the flags and every file it reads), and later
  // packages link those. Without a cache, each package compiles them.
  std::optional<std::string> cache = supportCacheDir();
  std::string hashed = *cc;
  auto mix = [&](llvm::StringRef text) {
    hashed += (llvm::Twine(text.size()) + ":" + text).str();
  };
  for (const std::string &flag : supportCode.compileFlags)
    mix(flag);
  for (const auto &[name, text] : supportCode.headers) {
    mix(name);
    mix(text);
  }
  for (const auto &[name, text] : cFiles) {
    mix(name);
    mix(text);
  }
  uint64_t key = llvm::xxh3_64bits(hashed);
  std::vector<std::string> supportObjects;
  for (auto [i, file] : llvm::enumerate(cFiles)) {
    std::string object;
    if (cache)
      object = (*cache + "/support-" + llvm::utohexstr(key) + "-" +
                llvm::Twine(i) + ".o")
                   .str();
    if (cache && llvm::sys::fs::exists(object)) {
      supportObjects.push_back(object);
      continue;
    }
    llvm::Expected<std::string> source =
        writeFile(supportDir, file.first, file.second);
    if (!source)
      return source.takeError();
    // Compiled beside the library, then moved into the cache whole (a
    // rename), so that a concurrent mixc never links half an object.
    std::string compiled = *source + ".o";
    llvm::SmallVector<llvm::StringRef> args{*cc, "-c"};
    args.append(flags.begin(), flags.end());
    args.append({*source, "-o", compiled});
    std::string message;
    if (llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                  &message) != 0)
      return error("compiling the support code '" + file.first + "' failed" +
                   (message.empty() ? "" : ": " + message));
    if (cache && !llvm::sys::fs::rename(compiled, object)) {
      supportObjects.push_back(object);
      continue;
    }
    supportObjects.push_back(compiled);
  }

  // The package's own source (its manifest), compiled at the link.
  llvm::Expected<std::string> manifest =
      writeFile(supportDir, "package.c", supportCode.extraSource);
  if (!manifest)
    return manifest.takeError();
  std::string out = path.str();
  llvm::SmallVector<llvm::StringRef> args{*cc, "-shared"};
  args.append(flags.begin(), flags.end());
  args.append(objects.begin(), objects.end());
  args.append(supportObjects.begin(), supportObjects.end());
  args.push_back(*manifest);
  args.append({"-o", out});
  args.append(supportCode.linkFlags.begin(), supportCode.linkFlags.end());
  args.push_back("-lm");
  // Every symbol the code and the support code call must resolve now: a
  // routine the lowering calls that the support code lacks fails the
  // compile, not the first dlopen.
  args.push_back("-Wl,--no-undefined");
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return error("linking '" + out + "' failed" +
                 (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}
