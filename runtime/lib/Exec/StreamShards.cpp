//===- StreamShards.cpp - A package's streams sharded over ranks ----------===//
//
// Stream parallelism (mixc --stream-shards): each rank's code computes its
// part of the stream kernels and sums the partial values over the ranks
// through the communicator the runtime connects (on the CPU, the runtime's
// MPI sum; in a cuda package, an NCCL communicator of the group that the
// support code sums over on the device); the runtime passes each sharded
// parameter's part, and gathers whole tensors back.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"

#include "Device.h"

#include "mixrt/Error.h"
#include "mixrt/Init.h"
#include "mixrt/PackageABI.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <iostream>

using namespace mixrt;

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
  if (device) {
    device->streamRankLabel =
        concat("stream rank ", comm.getRank(), " of ", comm.getSize());
    device->joinStreamGroup(manifest, comm);
    streamRank = comm.getRank();
    return;
  }
  auto set = reinterpret_cast<decltype(&mix_set_communicator)>(
      ::dlsym(handle, MIX_SET_COMMUNICATOR_SYMBOL));
  if (!set)
    fail(manifest.packagePath, "/", *manifest.library,
         ": the compiled code has no 'mix_set_communicator' (recompile the "
         "package with mixc)");
  set(&comm, comm.getRank(), sumOverRanks);
  streamRank = comm.getRank();
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

/// Where each run of one pointer a parameter starts among the arguments of
/// entry point \p name, for \p n parameters (PackageABI.h's layout).
static std::vector<size_t> parameterRuns(const char *name, size_t n) {
  // grad: the parameters, then the gradients after the batch inputs and
  // the loss outputs.
  if (std::strcmp(name, "grad") == 0)
    return {0, n + MIX_NUM_BATCH_INPUTS + MIX_NUM_LOSS_OUTPUTS};
  // adamw: the parameters, gradients, first and second moments.
  if (std::strcmp(name, "adamw") == 0)
    return {0, n, 2 * n, 3 * n};
  return {0};
}

std::vector<void *> CompiledModel::localArgs(const char *name, void **args,
                                             size_t numArgs) const {
  size_t n = manifest.params.size();
  std::vector<void *> local(args, args + numArgs);
  for (size_t start : parameterRuns(name, n))
    for (size_t i = 0; i < n; ++i)
      local[start + i] =
          static_cast<float *>(local[start + i]) + getShardOffset(i);
  return local;
}
