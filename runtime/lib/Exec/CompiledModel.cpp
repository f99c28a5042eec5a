//===- CompiledModel.cpp - Calling a package's compiled code --------------===//
//
// dlopen of the package library, entry point lookup, and the packed
// argument arrays of the forward and gradient functions.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Json.h"
#include "mixrt/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <iostream>
#include <malloc.h>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <thread>

using namespace mixrt;

/// Checks the library file before dlopen sees it: dlopen maps the segments
/// an ELF header describes without comparing them with the file's size, so
/// a truncated library is a SIGBUS, not an error. Also compares the file
/// with the checksum the manifest records, which catches any corruption.
static void checkLibraryFile(const std::string &path,
                             const Manifest &manifest) {
  const char *recompile = "; recompile the package with mixc";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
    fail(path, ": the package's compiled code is missing", recompile);
  std::string bytes = readFile(path);
  if (manifest.libraryChecksum) {
    char actual[17];
    std::snprintf(actual, sizeof actual, "%016" PRIx64, fnv1a64(bytes));
    if (*manifest.libraryChecksum != actual)
      fail(path,
           ": the compiled code is corrupted or was replaced: its "
           "FNV-1a checksum is ",
           actual, ", expected ", *manifest.libraryChecksum, " (",
           manifest.manifestPath, ")", recompile);
  }
  Elf64_Ehdr header;
  if (bytes.size() < sizeof header ||
      std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    fail(path, ": not a shared library (", bytes.size(),
         " bytes without an ELF header)", recompile);
  // Other classes and byte orders are dlopen's to reject, with its message.
  if (bytes[EI_CLASS] != ELFCLASS64)
    return;
  std::memcpy(&header, bytes.data(), sizeof header);
  auto within = [&](uint64_t offset, uint64_t count, uint64_t size) {
    uint64_t end;
    return !__builtin_mul_overflow(count, size, &end) &&
           !__builtin_add_overflow(offset, end, &end) && end <= bytes.size();
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !within(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)) ||
      !within(header.e_shoff, header.e_shnum, header.e_shentsize))
    fail(path,
         ": the compiled code is truncated or corrupted (its ELF "
         "header describes tables past the end of the ",
         bytes.size(), "-byte file)", recompile);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    std::memcpy(&segment, bytes.data() + header.e_phoff + i * sizeof segment,
                sizeof segment);
    if (!within(segment.p_offset, 1, segment.p_filesz))
      fail(path, ": the compiled code is truncated: segment ", i,
           " ends at byte ", segment.p_offset + segment.p_filesz,
           ", past the end of the ", bytes.size(), "-byte file", recompile);
  }
}

/// The packed arguments every entry point starts with: the parameters, the
/// tokens and the targets, then the three loss terms.
static std::vector<void *> packInputs(const std::vector<const float *> &params,
                                      const int32_t *tokens,
                                      const int32_t *targets, LossValues *out) {
  std::vector<void *> args;
  for (const float *p : params)
    args.push_back(const_cast<float *>(p));
  args.push_back(const_cast<int32_t *>(tokens));
  args.push_back(const_cast<int32_t *>(targets));
  if (out) {
    args.push_back(&out->loss);
    args.push_back(&out->ce);
    args.push_back(&out->aux);
  }
  return args;
}

/// The device runtime a cuda package's support code exports
/// (lib/Target/CUDA/SupportCode.cpp), and one device buffer an argument of
/// each entry point, allocated at its first call.
struct CompiledModel::Device {
  void (*begin)(int);
  int (*end)();
  const char *(*error)();
  void *(*alloc)(uint64_t);
  void (*free)(void *);
  int (*upload)(void *, const void *, uint64_t);
  int (*download)(void *, const void *, uint64_t);
  int (*ncclUniqueId)(void *);
  int (*ncclInit)(const void *, int, int, double);
  int (*ncclAverage)(void *const *, const uint64_t *, int);
  std::map<std::string, std::vector<void *>> buffers;

  ~Device() {
    for (auto &[name, list] : buffers)
      for (void *b : list)
        free(b);
  }

  [[noreturn]] void failWith(const Manifest &manifest, const char *what) {
    const char *why = error();
    fail(manifest.packagePath, ": ", what,
         " on the CUDA device failed: ", why && *why ? why : "unknown error");
  }
};

/// The compiled code allocates its step's buffers with malloc at each call
/// and frees them before returning, the same sizes every step. glibc hands
/// large blocks back to the kernel when they are freed (munmap, or trimming
/// the heap), so every step faulted them in again, zeroed page by page:
/// about 5% of a small training step in the kernel. Keeping freed memory
/// for reuse costs nothing in peak size, which the step sets anyway.
static void keepFreedMemory() {
  static bool done = [] {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
    return true;
  }();
  (void)done;
}

/// Sorts every object's members by key, so that two documents that differ
/// only in the order of their keys write the same.
static void sortKeys(json::Value &value) {
  if (value.isArray())
    for (json::Value &element : value.getArray())
      sortKeys(element);
  if (!value.isObject())
    return;
  json::Value::Object &members = value.getObject();
  for (json::Member &member : members)
    sortKeys(member.value);
  std::stable_sort(members.begin(), members.end(),
                   [](const json::Member &a, const json::Member &b) {
                     return a.key < b.key;
                   });
}

/// The manifest without the library's checksum (which mixc adds after
/// compiling the library), as compact JSON with sorted keys.
static std::string withoutChecksum(json::Value value) {
  if (value.isObject()) {
    json::Value::Object &members = value.getObject();
    members.erase(std::remove_if(members.begin(), members.end(),
                                 [](const json::Member &m) {
                                   return m.key == "library_fnv1a64";
                                 }),
                  members.end());
  }
  sortKeys(value);
  return json::write(value);
}

void CompiledModel::checkEmbeddedManifest(const std::string &path) {
  const char *embedded =
      static_cast<const char *>(::dlsym(handle, "mix_package_manifest"));
  std::string why;
  if (!embedded)
    why = "has no manifest compiled in (an older mixc made it)";
  else {
    try {
      if (withoutChecksum(json::parse(embedded)) !=
          withoutChecksum(json::parse(manifest.text)))
        why = concat("was compiled for another manifest than ",
                     manifest.manifestPath,
                     " (was the manifest edited after mixc wrote it?)");
    } catch (const json::ParseError &e) {
      why = concat("has a malformed manifest compiled in: ", e.what());
    }
  }
  if (why.empty())
    return;
  ::dlclose(handle);
  handle = nullptr;
  fail(path, " ", why, "; compile the package again with mixc");
}

CompiledModel::CompiledModel(const Manifest &manifest) : manifest(manifest) {
  keepFreedMemory();
  if (!manifest.library)
    fail(manifest.packagePath,
         " has no compiled code (library missing from manifest)");
  if (manifest.target != "cpu" && manifest.target != "cuda")
    fail(manifest.packagePath, " is compiled for target '", manifest.target,
         "'; this runtime runs cpu and cuda packages");
  bool cuda = manifest.target == "cuda";
  if (cuda)
    for (const char *name : {"forward", "grad", "adamw", "logits"})
      if (!manifest.entryArgs.count(name))
        fail(manifest.manifestPath, ": entries.", name,
             ".arg_bytes is missing (a cuda package records its entry "
             "points' argument sizes; recompile it with mixc)");
  std::string path = manifest.packagePath + "/" + *manifest.library;
  checkLibraryFile(path, manifest);
  handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    fail(path, ": cannot load the compiled code: ", why ? why : "unknown error",
         cuda ? " (a cuda package needs the NVIDIA driver's libcuda.so.1 and "
                "the CUDA toolkit's libcublasLt: run it on a machine with an "
                "NVIDIA GPU, or compile with --target cpu)"
              : "");
  }
  checkEmbeddedManifest(path);
  if (cuda) {
    device = std::make_unique<Device>();
    auto symbol = [&](const char *name) {
      void *fn = ::dlsym(handle, name);
      if (!fn) {
        ::dlclose(handle);
        handle = nullptr;
        fail(path, ": the cuda package's code has no '", name, "'");
      }
      return fn;
    };
    device->begin =
        reinterpret_cast<void (*)(int)>(symbol("mixrt_device_begin"));
    device->end = reinterpret_cast<int (*)()>(symbol("mixrt_device_end"));
    device->error =
        reinterpret_cast<const char *(*)()>(symbol("mixrt_device_error"));
    device->alloc =
        reinterpret_cast<void *(*)(uint64_t)>(symbol("mixrt_device_alloc"));
    device->free =
        reinterpret_cast<void (*)(void *)>(symbol("mixrt_device_free"));
    device->upload = reinterpret_cast<int (*)(void *, const void *, uint64_t)>(
        symbol("mixrt_device_upload"));
    device->download =
        reinterpret_cast<int (*)(void *, const void *, uint64_t)>(
            symbol("mixrt_device_download"));
    device->ncclUniqueId =
        reinterpret_cast<int (*)(void *)>(symbol("mixrt_nccl_unique_id"));
    device->ncclInit =
        reinterpret_cast<int (*)(const void *, int, int, double)>(
            symbol("mixrt_nccl_init"));
    device->ncclAverage =
        reinterpret_cast<int (*)(void *const *, const uint64_t *, int)>(
            symbol("mixrt_nccl_average"));
  }
  forwardEntry = lookup("mix_forward");
  gradEntry = lookup("mix_grad");
  adamwEntry = lookup("mix_adamw");
  logitsEntry = lookup("mix_logits");
}

void CompiledModel::logits(const std::vector<const float *> &params,
                           const int32_t *tokens, float *out) const {
  // The entry takes targets too (the same signature as forward); unused.
  std::vector<void *> args = packInputs(params, tokens, tokens, nullptr);
  args.push_back(out);
  call(logitsEntry, "logits", 3, args.data(), args.size());
}

float CompiledModel::adamw(const std::vector<float *> &params,
                           const std::vector<const float *> &grads,
                           const std::vector<float *> &m,
                           const std::vector<float *> &v,
                           const float hyper[3]) const {
  size_t n = manifest.params.size();
  if (params.size() != n || grads.size() != n || m.size() != n || v.size() != n)
    fail("internal error: adamw takes ", n,
         " parameters, gradients and "
         "moments; got ",
         params.size(), ", ", grads.size(), ", ", m.size(), " and ", v.size());
  // params, grads, m, v, hyper, then the gradient norm; params, m and v are
  // written over (entries.adamw.updated_inputs).
  float norm = 0;
  std::vector<void *> args(params.begin(), params.end());
  for (const float *g : grads)
    args.push_back(const_cast<float *>(g));
  args.insert(args.end(), m.begin(), m.end());
  args.insert(args.end(), v.begin(), v.end());
  args.push_back(const_cast<float *>(hyper));
  args.push_back(&norm);
  call(adamwEntry, "adamw", 2, args.data(), args.size());
  return norm;
}

/// The stream-parallel collective the package's code calls (through
/// mix_set_communicator): the in-place sum over the ranks. It runs inside
/// the compiled code, so nothing may be thrown through it: a failure ends
/// every rank.
static void sumOverRanks(void *context, float *data, int64_t count) {
  auto *comm = static_cast<Communicator *>(context);
  try {
    comm->allReduceSum(data, size_t(count),
                       "the partial sums of the sharded streams");
  } catch (const std::exception &e) {
    std::cerr << "mix-run: " << e.what() << "\n";
    comm->abort(1);
  }
}

void CompiledModel::connect(Communicator &comm) {
  if (manifest.streamShards == 1)
    return;
  if (comm.getSize() != manifest.streamShards)
    fail(manifest.packagePath, " shards its streams over ",
         manifest.streamShards, " ranks (mixc --stream-shards ",
         manifest.streamShards, "): run it under mpirun -np ",
         manifest.streamShards, ", not ", comm.getSize(),
         comm.getSize() == 1 ? " process" : " ranks");
  using Setter = void (*)(void *, int64_t, void (*)(void *, float *, int64_t));
  auto set = reinterpret_cast<Setter>(::dlsym(handle, "mix_set_communicator"));
  if (!set)
    fail(manifest.packagePath, "/", *manifest.library,
         ": the compiled code has no 'mix_set_communicator' (recompile the "
         "package with mixc)");
  set(&comm, comm.getRank(), sumOverRanks);
  streamRank = comm.getRank();
}

/// Whether a cuda package run on \p ranks data-parallel ranks averages its
/// gradients with NCCL: MIXRT_NCCL=1 always, 0 never, unset when there is
/// more than one rank.
static bool useNccl(int ranks) {
  const char *value = std::getenv("MIXRT_NCCL");
  if (!value || !*value)
    return ranks > 1;
  if (std::strcmp(value, "0") != 0 && std::strcmp(value, "1") != 0)
    fail("MIXRT_NCCL is ", quote(value),
         ", expected 1 (average the gradients on the GPUs with NCCL) or 0 "
         "(on the host over MPI)");
  return *value == '1';
}

void CompiledModel::connectDevices(Communicator &data) {
  // The variable is checked for every package: a typo is an error even
  // where it would not matter.
  bool nccl = useNccl(data.getSize());
  if (!device || !nccl)
    return;
  char id[128] = {};
  if (data.isRoot() && device->ncclUniqueId(id) != 0)
    device->failWith(manifest, "making the NCCL communicator's id");
  data.broadcast(id, sizeof id, "the NCCL communicator's id");
  // ncclCommInitRank waits for every rank to join and has no deadline of
  // its own: a watchdog ends this rank (and so the launcher ends the run)
  // if they do not.
  double timeout = getRankTimeout();
  std::mutex mutex;
  std::condition_variable joinedCondition;
  bool joined = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (joinedCondition.wait_for(lock, std::chrono::duration<double>(timeout),
                                 [&] { return joined; }))
      return;
    std::fprintf(stderr,
                 "mix-run: error: rank %d of %d: the other ranks did not "
                 "join the NCCL communicator in %g s (a rank died or stalled; "
                 "MIXRT_RANK_TIMEOUT sets the limit); ending the run\n",
                 data.getRank(), data.getSize(), timeout);
    std::fflush(stderr);
    std::_Exit(1);
  });
  int status = device->ncclInit(id, data.getSize(), data.getRank(), timeout);
  {
    std::lock_guard<std::mutex> lock(mutex);
    joined = true;
  }
  joinedCondition.notify_one();
  watchdog.join();
  if (status != 0)
    device->failWith(manifest, "joining the NCCL communicator");
  ncclRanks = data.getSize();
}

size_t CompiledModel::getShardOffset(size_t i) const {
  const ParamInfo &p = manifest.params[i];
  if (p.streamShards == 1 || streamRank < 0)
    return 0;
  return size_t(streamRank) *
         (getNumElements(p.shape) / size_t(p.streamShards));
}

void CompiledModel::gatherShards(Communicator &comm,
                                 std::vector<std::vector<float>> &tensors,
                                 const std::string &what) const {
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const ParamInfo &p = manifest.params[i];
    if (p.streamShards == 1)
      continue;
    std::vector<float> &t = tensors[i];
    size_t begin = getShardOffset(i), end = begin + t.size() / p.streamShards;
    std::fill(t.begin(), t.begin() + begin, 0.0f);
    std::fill(t.begin() + end, t.end(), 0.0f);
    comm.allReduceSum(t.data(), t.size(), what);
  }
}

std::vector<void *> CompiledModel::localArgs(const char *name, void **args,
                                             size_t numArgs) const {
  size_t n = manifest.params.size();
  // Where groups of one pointer a parameter start: the parameters (and, for
  // grad, the gradients after tokens, targets and three losses; for adamw,
  // params, grads, m, v before hyper and the gradient norm).
  std::vector<size_t> groups{0};
  if (std::strcmp(name, "grad") == 0)
    groups.push_back(n + 5);
  if (std::strcmp(name, "adamw") == 0)
    groups = {0, n, 2 * n, 3 * n};
  std::vector<void *> local(args, args + numArgs);
  for (size_t start : groups)
    for (size_t i = 0; i < n; ++i)
      local[start + i] =
          static_cast<float *>(local[start + i]) + getShardOffset(i);
  return local;
}

void CompiledModel::call(Entry entry, const char *name, int index, void **args,
                         size_t numArgs) const {
  std::vector<void *> local;
  if (manifest.streamShards > 1) {
    if (streamRank < 0)
      fail(manifest.packagePath, " shards its streams over ",
           manifest.streamShards,
           " ranks; internal error: the model was not connected to them");
    local = localArgs(name, args, numArgs);
    args = local.data();
  }
  if (!device) {
    entry(args);
    return;
  }
  const Manifest::EntryArgs &sizes = manifest.entryArgs.at(name);
  if (numArgs != 0 && numArgs != sizes.bytes.size())
    fail(manifest.manifestPath, ": entries.", name, ".arg_bytes has ",
         sizes.bytes.size(), " arguments, but the entry point takes ", numArgs,
         " (recompile the package with mixc)");
  std::vector<void *> &buffers = device->buffers[name];
  if (buffers.empty())
    for (uint64_t bytes : sizes.bytes) {
      void *b = device->alloc(bytes);
      if (!b)
        device->failWith(manifest, "allocating the arguments");
      buffers.push_back(b);
    }
  for (size_t i = 0; i < sizes.numInputs; ++i)
    if (device->upload(buffers[i], args[i], sizes.bytes[i]) != 0)
      device->failWith(manifest, "copying the inputs");
  device->begin(index);
  entry(buffers.data());
  if (device->end() != 0)
    device->failWith(manifest, concat("the ", name, " step").c_str());
  if (ncclRanks > 0 && std::strcmp(name, "grad") == 0) {
    // Every output of grad (the three loss terms, then the gradients) is
    // averaged over the ranks before it leaves the device.
    std::vector<void *> outputs(buffers.begin() + sizes.numInputs,
                                buffers.end());
    std::vector<uint64_t> floats;
    for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
      floats.push_back(sizes.bytes[i] / sizeof(float));
    if (device->ncclAverage(outputs.data(), floats.data(),
                            int(outputs.size())) != 0)
      device->failWith(manifest, "averaging the gradients over the ranks");
  }
  for (size_t i = sizes.numInputs; i < sizes.bytes.size(); ++i)
    if (device->download(args[i], buffers[i], sizes.bytes[i]) != 0)
      device->failWith(manifest, "copying the outputs");
  for (size_t i : sizes.updated)
    if (device->download(args[i], buffers[i], sizes.bytes[i]) != 0)
      device->failWith(manifest, "copying the updated inputs");
}

CompiledModel::~CompiledModel() {
  // The device buffers are freed by the library's code.
  device.reset();
  if (handle)
    ::dlclose(handle);
}

CompiledModel::Entry CompiledModel::lookup(const char *symbol) const {
  void *fn = ::dlsym(handle, symbol);
  if (!fn) {
    ::dlclose(handle);
    fail(manifest.packagePath, "/", *manifest.library,
         ": the compiled code has no entry point '", symbol, "'");
  }
  return reinterpret_cast<Entry>(fn);
}

LossValues CompiledModel::forward(const std::vector<const float *> &params,
                                  const int32_t *tokens,
                                  const int32_t *targets) const {
  LossValues out;
  std::vector<void *> args = packInputs(params, tokens, targets, &out);
  call(forwardEntry, "forward", 0, args.data(), args.size());
  return out;
}

LossValues CompiledModel::grad(const std::vector<const float *> &params,
                               const int32_t *tokens, const int32_t *targets,
                               const std::vector<float *> &grads) const {
  if (grads.size() != params.size())
    fail("internal error: ", grads.size(), " gradient buffers for ",
         params.size(), " parameters");
  LossValues out;
  std::vector<void *> args = packInputs(params, tokens, targets, &out);
  for (float *g : grads)
    args.push_back(g);
  call(gradEntry, "grad", 1, args.data(), args.size());
  return out;
}
