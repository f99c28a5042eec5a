//===- Communicator.cpp - The one-rank communicator and the factory -------===//
//
// A process alone is rank 0 of 1 and its collectives are the identity. The
// factory picks MPI when the runtime has it and an MPI launcher started the
// process; a launcher's environment without MPI in the runtime is an error,
// since R copies of a one-rank run would each train alone.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Communicator.h"

#include "Mpi.h"
#include "mixrt/Error.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace mixrt;

Communicator::~Communicator() = default;

namespace {
class SingleProcess final : public Communicator {
public:
  int getRank() const override { return 0; }
  int getSize() const override { return 1; }
  int getLocalSize() const override { return 1; }
  int getLocalRank() const override { return 0; }
  std::string getName() const override { return "single process"; }
  void allReduceSum(float *, size_t, const std::string &) override {}
  void allReduceSum(double *, size_t, const std::string &) override {}
  void allReduceMax(int64_t *, size_t, const std::string &) override {}
  void broadcast(void *, size_t, const std::string &) override {}
  [[noreturn]] void abort(int status) override { std::_Exit(status); }
  std::unique_ptr<Communicator> split(int) override {
    return std::make_unique<SingleProcess>();
  }
};

/// The number of ranks an MPI launcher says it started, or 0 if none did.
int getLauncherSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                           "MPI_LOCALNRANKS", "SLURM_NTASKS"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  // PMIx without a size variable (OpenMPI 5, some srun setups).
  if (std::getenv("PMIX_RANK"))
    return 2;
  return 0;
}
} // namespace

Communicator &mixrt::getSingleProcess() {
  static SingleProcess single;
  return single;
}

double mixrt::getRankTimeout() {
  const char *value = std::getenv("MIXRT_RANK_TIMEOUT");
  if (!value || !*value)
    return kDefaultRankTimeout;
  char *end = nullptr;
  double seconds = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(seconds) || seconds <= 0)
    fail("MIXRT_RANK_TIMEOUT is ", quote(value),
         ", expected a positive number of seconds");
  return seconds;
}

std::unique_ptr<Communicator> mixrt::createCommunicator(int *argc, char ***argv,
                                                        double timeoutSeconds) {
  int launched = getLauncherSize();
  if (launched <= 1)
    return std::make_unique<SingleProcess>();
#ifdef MIXRT_HAVE_MPI
  return createMpiCommunicator(argc, argv, timeoutSeconds);
#else
  (void)argc;
  (void)argv;
  (void)timeoutSeconds;
  fail("started as one of ", launched,
       " ranks by an MPI launcher, but this mix-run was built without MPI "
       "(expected a build configured with MPI found: install libopenmpi-dev "
       "and rebuild, or run without mpirun)");
#endif
}

RankGrid mixrt::makeRankGrid(Communicator &world, int64_t streamShards,
                             const std::string &package) {
  int size = world.getSize();
  if (streamShards > 1 && size % streamShards != 0)
    fail(package, " shards its streams over ", streamShards,
         " ranks (mixc --stream-shards ", streamShards,
         "): run it under mpirun -np with a multiple of ", streamShards,
         " (each group of ", streamShards,
         " ranks takes a data-parallel share of the batch), not ", size,
         size == 1 ? " process" : " ranks");
  RankGrid grid;
  if (streamShards <= 1) {
    grid.streams = &getSingleProcess();
    grid.data = &world;
  } else if (streamShards == size) {
    grid.streams = &world;
    grid.data = &getSingleProcess();
  } else {
    int rank = world.getRank(), s = int(streamShards);
    // Both splits, in the same order on every rank.
    grid.ownedStreams = world.split(rank / s);
    grid.ownedData = world.split(rank % s);
    grid.streams = grid.ownedStreams.get();
    grid.data = grid.ownedData.get();
  }
  return grid;
}
