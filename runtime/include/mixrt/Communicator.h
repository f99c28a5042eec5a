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

  /// Ends every rank of the run at once with exit status \p status (after
  /// this rank reported why on stderr).
  [[noreturn]] virtual void abort(int status) = 0;

  bool isRoot() const { return getRank() == 0; }
};

/// The communicator of this process: MPI's when the runtime has MPI and
/// the process was started by an MPI launcher (mpirun, srun), else the
/// one-rank communicator. \p timeoutSeconds bounds every collective.
/// Throws Error if MPI fails to start.
std::unique_ptr<Communicator> createCommunicator(int *argc, char ***argv,
                                                 double timeoutSeconds);

/// The collective timeout: MIXRT_RANK_TIMEOUT (seconds) if set, else
/// kDefaultRankTimeout. Throws Error on a malformed value.
double getRankTimeout();
constexpr double kDefaultRankTimeout = 300;

/// The one-rank communicator, for code that runs alone.
Communicator &getSingleProcess();

} // namespace mixrt

#endif // MIXRT_COMMUNICATOR_H
