//===- MpiCommunicator.cpp - Collectives over MPI with a deadline ---------===//
//
// Each collective is started non-blocking and polled against a deadline, so
// a rank that died without the launcher noticing, or that stalls, makes
// the others report the operation they were waiting in and abort the whole
// run (MPI_Abort) instead of hanging in MPI_Allreduce.
//
//===----------------------------------------------------------------------===//

#include "Mpi.h"

#include "mixrt/Error.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace mixrt;

namespace {
class MpiCommunicator final : public Communicator {
public:
  /// The world: every rank of the run. Finalizes MPI when destroyed.
  explicit MpiCommunicator(double timeoutSeconds)
      : timeout(timeoutSeconds), comm(MPI_COMM_WORLD) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm local;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                        &local);
    MPI_Comm_size(local, &localSize);
    MPI_Comm_rank(local, &localRank);
    MPI_Comm_free(&local);
  }
  /// A part of \p parent (split): keeps the parent's view of the machine.
  MpiCommunicator(const MpiCommunicator &parent, MPI_Comm part)
      : timeout(parent.timeout), comm(part), localSize(parent.localSize),
        localRank(parent.localRank) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
  }
  ~MpiCommunicator() override {
    if (comm == MPI_COMM_WORLD)
      MPI_Finalize();
    else
      MPI_Comm_free(&comm);
  }

  std::unique_ptr<Communicator> split(int color) override {
    MPI_Comm part;
    if (MPI_Comm_split(comm, color, rank, &part) != MPI_SUCCESS)
      fail("MPI_Comm_split failed");
    return std::make_unique<MpiCommunicator>(*this, part);
  }

  int getRank() const override { return rank; }
  int getSize() const override { return size; }
  int getLocalSize() const override { return localSize; }
  int getLocalRank() const override { return localRank; }
  std::string getName() const override { return "MPI"; }

  void allReduceSum(float *data, size_t count,
                    const std::string &what) override {
    allReduce(data, count, MPI_FLOAT, MPI_SUM, what);
  }
  void allReduceSum(double *data, size_t count,
                    const std::string &what) override {
    allReduce(data, count, MPI_DOUBLE, MPI_SUM, what);
  }
  void allReduceMax(int64_t *data, size_t count,
                    const std::string &what) override {
    allReduce(data, count, MPI_INT64_T, MPI_MAX, what);
  }

  void broadcast(void *data, size_t bytes, const std::string &what) override {
    constexpr size_t kChunk = size_t(1) << 30;
    char *begin = static_cast<char *>(data);
    for (size_t done = 0; done < bytes; done += kChunk) {
      MPI_Request request;
      MPI_Ibcast(begin + done, int(std::min(kChunk, bytes - done)), MPI_BYTE, 0,
                 comm, &request);
      wait(request, what);
    }
  }

  [[noreturn]] void abort(int status) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
  }

private:
  void allReduce(void *data, size_t count, MPI_Datatype type, MPI_Op op,
                 const std::string &what) {
    // MPI counts are int: reduce in chunks of at most 2^30 elements.
    constexpr size_t kChunk = size_t(1) << 30;
    int typeSize = 0;
    MPI_Type_size(type, &typeSize);
    char *bytes = static_cast<char *>(data);
    for (size_t done = 0; done < count; done += kChunk) {
      int n = int(std::min(kChunk, count - done));
      MPI_Request request;
      MPI_Iallreduce(MPI_IN_PLACE, bytes + done * size_t(typeSize), n, type, op,
                     comm, &request);
      wait(request, what);
    }
  }

  /// Polls \p request until it completes or the deadline passes; then
  /// every rank is ended.
  void wait(MPI_Request &request, const std::string &what) {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    auto deadline = start + std::chrono::duration<double>(timeout);
    for (int polls = 0;; ++polls) {
      int done = 0;
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        return;
      if (Clock::now() > deadline) {
        std::fprintf(stderr,
                     "mix-run: error: rank %d of %d: no reply from the other "
                     "ranks in %s after %g s (a rank died or stalled; "
                     "MIXRT_RANK_TIMEOUT sets the limit); ending the run\n",
                     rank, size, what.c_str(), timeout);
        abort(1);
      }
      // Spin briefly for a fast reply, then yield the core to the ranks
      // still computing.
      if (polls > 1000)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  double timeout;
  MPI_Comm comm;
  int rank = 0, size = 1, localSize = 1, localRank = 0;
};
} // namespace

std::unique_ptr<Communicator>
mixrt::createMpiCommunicator(int *argc, char ***argv, double timeoutSeconds) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(argc, argv) != MPI_SUCCESS)
    fail("MPI_Init failed (expected to be started by mpirun or srun)");
  return std::make_unique<MpiCommunicator>(timeoutSeconds);
}
