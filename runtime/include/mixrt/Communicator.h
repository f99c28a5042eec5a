//===- Communicator.h - Ranks of a data-parallel run ------------*- C++ -*-===//
//
// The collective operations a data-parallel run needs (sums and maxima of
// small and large buffers across ranks) behind one interface: a single
// process is the one-rank communicator; a run under `mpirun` gets the MPI
// communicator when the runtime is built with MPI. Every collective is
// bounded in time: a rank that died or stalls makes the others stop with an
// error naming the operation, never hang (docs/training.md, "Ranks").
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_COMMUNICATOR_H
#define MIXRT_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mixrt {

class Communicator {
public:
  virtual ~Communicator();

  /// This process's rank in [0, getSize()).
  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  /// The ranks running on this machine (for sharing its cores), and this
  /// rank's place among them (its GPU, one a rank).
  virtual int getLocalSize() const = 0;
  virtual int getLocalRank() const = 0;
  /// "MPI" or "single process".
  virtual std::string getName() const = 0;

  /// Replaces \p data on every rank by its sum over the ranks. \p what
  /// names the operation in a timeout's message ("the gradients of step
  /// 12").
  virtual void allReduceSum(float *data, size_t count,
                            const std::string &what) = 0;
  virtual void allReduceSum(double *data, size_t count,
                            const std::string &what) = 0;
  /// Replaces \p data on every rank by its maximum over the ranks.
  virtual void allReduceMax(int64_t *data, size_t count,
                            const std::string &what) = 0;
  /// Replaces the \p bytes bytes at \p data on every rank by rank 0's.
  virtual void broadcast(void *data, size_t bytes, const std::string &what) = 0;

  /// Ends every rank of the run at once with exit status \p status (after
  /// this rank reported why on stderr).
  [[noreturn]] virtual void abort(int status) = 0;

  /// The ranks of this communicator with the same \p color, ordered by
  /// rank, as a communicator of their own (MPI_Comm_split). Collective:
  /// every rank calls it. A timeout or abort in it still ends the whole
  /// run.
  virtual std::unique_ptr<Communicator> split(int color) = 0;

  bool isRoot() const { return getRank() == 0; }
};

/// The communicator of this process: MPI's when the runtime has MPI and
/// the process was started by an MPI launcher (mpirun, srun), else the
/// one-rank communicator. \p timeoutSeconds bounds every collective.
/// Throws Error if MPI fails to start.
std::unique_ptr<Communicator> createCommunicator(int *argc, char ***argv,
                                                 double timeoutSeconds);

/// The two ways ranks divide a run whose package shards its streams over
/// S ranks (mixc --stream-shards S; S = 1 otherwise): R = D x S ranks, rank
/// r being stream rank r % S of data rank r / S. The ranks of one data
/// rank share its batch rows and sum their streams' parts over `streams`;
/// the ranks of one stream rank hold the same shards and average their
/// gradients over `data`.
struct RankGrid {
  Communicator *streams = nullptr, *data = nullptr;
  /// Owns the split communicators (when neither is the world or a single
  /// process).
  std::unique_ptr<Communicator> ownedStreams, ownedData;
};

/// Splits \p world into the grid for \p streamShards; fails (naming
/// \p package) unless the world's size is a multiple of it.
RankGrid makeRankGrid(Communicator &world, int64_t streamShards,
                      const std::string &package);

/// The collective timeout: MIXRT_RANK_TIMEOUT (seconds) if set, else
/// kDefaultRankTimeout. Throws Error on a malformed value.
double getRankTimeout();
constexpr double kDefaultRankTimeout = 300;

/// The one-rank communicator, for code that runs alone.
Communicator &getSingleProcess();

} // namespace mixrt

#endif // MIXRT_COMMUNICATOR_H
