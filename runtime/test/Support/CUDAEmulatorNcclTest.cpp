//===- CUDAEmulatorNcclTest.cpp - The emulated NCCL, between processes ----===//
//
// The CUDA emulator's NCCL (runtime/emulator/Nccl.c), with ranks that are
// processes forked here, as mpirun's are, each with its own emulated device:
//  - three ranks average one buffer in place and sum another out of place,
//    in one group, over more than two staging chunks: every rank reads back
//    bitwise the values computed here in rank order (which differ from the
//    reverse order's, so the order is checked), and the segment's name is
//    gone from /dev/shm once all have joined;
//  - a rank that never arrives makes the other's all-reduce fail after
//    MIXRT_RANK_TIMEOUT naming it; one that exits, destroys or aborts its
//    communicator makes it fail at once; ranks that disagree on the number
//    of ranks, or claim the same rank, fail to join;
//  - on one rank: the arguments the emulation rejects (another type or
//    reduction, host memory, a range past its allocation, overlapping
//    buffers, a dead communicator, a foreign id), each with its message
//    through ncclGetErrorString.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/// Floats in one staging chunk of Nccl.c (kChunk).
constexpr size_t kChunk = size_t(1) << 18;

/// What a rank tells the test, through memory shared with it.
struct Report {
  int result;         // the ncclResult_t of the call under test
  double seconds;     // how long that call took
  uint64_t hashes[2]; // of the buffers read back after a collective
  int nameGone;       // the segment's name was unlinked after the join
  char message[1024];
};

/// The emulated device, current on the calling process.
bool setUpDevice() {
  CUcontext context = nullptr;
  return cuInit(0) == CUDA_SUCCESS &&
         cuDevicePrimaryCtxRetain(&context, 0) == CUDA_SUCCESS &&
         cuCtxSetCurrent(context) == CUDA_SUCCESS;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

uint64_t fnv1a(const std::vector<float> &values) {
  uint64_t hash = 1469598103934665603ull;
  const auto *bytes = reinterpret_cast<const unsigned char *>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(float); ++i)
    hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

/// Rank r's i-th input: signs and magnitudes over 2^-8 to 2^7, so that the
/// order of a sum shows in its rounding.
float input(int rank, size_t i) {
  uint32_t h = uint32_t(i) * 2654435761u ^ uint32_t(rank + 1) * 0x9E3779B9u;
  h ^= h >> 15;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  float mantissa = float(int(h % 20001) - 10000) / 10000.0f;
  return std::ldexp(mantissa, int((h >> 16) % 16) - 8);
}

/// The reduction over `ranks` ranks of element i, in the given rank order,
/// each input multiplied by `scale` first (ncclAvg's 1/ranks, or 1), one
/// rounding a step (separate statements: nothing is contracted to an FMA).
float reduced(int ranks, size_t i, float scale, bool reverse) {
  float sum = 0;
  for (int k = 0; k < ranks; ++k) {
    float term = input(reverse ? ranks - 1 - k : k, i);
    term = term * scale;
    sum = k == 0 ? term : sum + term;
  }
  return sum;
}

/// Runs body(rank, report) in `ranks` forked processes, which share the
/// reports with the test, and returns them once rank 0 has ended: the
/// others too when othersEnd, else they are killed then (a rank made to
/// stall). A process that ends is reaped at once, so that its peers can
/// see it gone. Nothing outlives the call.
std::vector<Report> runRanks(int ranks,
                             const std::function<void(int, Report &)> &body,
                             bool othersEnd = true) {
  size_t bytes = sizeof(Report) * size_t(ranks);
  void *shared = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(shared, MAP_FAILED);
  auto *reports = static_cast<Report *>(shared);
  std::memset(reports, 0, bytes);
  for (int r = 0; r < ranks; ++r)
    reports[r].result = -1;
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      body(r, reports[r]);
      _exit(0);
    }
    pids.push_back(pid);
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<bool> ended(size_t(ranks), false);
  auto allEnded = [&] {
    for (int r = 0; r < ranks; ++r)
      if (!ended[size_t(r)] && (r == 0 || othersEnd))
        return false;
    return true;
  };
  while (!allEnded()) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    for (int r = 0; r < ranks; ++r)
      if (pid == pids[size_t(r)]) {
        ended[size_t(r)] = true;
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "rank " << r << " ended with status " << status;
      }
    if (pid <= 0) {
      if (secondsSince(start) > 120) {
        ADD_FAILURE() << "the ranks still run after 120 s";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (int r = 0; r < ranks; ++r)
    if (!ended[size_t(r)]) {
      kill(pids[size_t(r)], SIGKILL);
      waitpid(pids[size_t(r)], nullptr, 0);
    }
  std::vector<Report> out(reports, reports + ranks);
  munmap(shared, bytes);
  return out;
}

/// Joins the communicator of `ranks` as `rank`, with MIXRT_RANK_TIMEOUT
/// set to timeout; records a failure in report and returns nullptr.
ncclComm_t join(const ncclUniqueId &id, int ranks, int rank,
                const char *timeout, Report &report) {
  setenv("MIXRT_RANK_TIMEOUT", timeout, 1);
  if (!setUpDevice()) {
    std::snprintf(report.message, sizeof report.message, "no device");
    return nullptr;
  }
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, ranks, id, rank);
  if (result != ncclSuccess) {
    report.result = result;
    std::snprintf(report.message, sizeof report.message, "%s",
                  ncclGetErrorString(result));
    return nullptr;
  }
  return comm;
}

/// One all-reduce (ncclAvg in place) of n floats of rank-dependent values
/// by this rank, timed, into report.
void averageOnce(ncclComm_t comm, int rank, size_t n, Report &report) {
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = input(rank, i);
  CUdeviceptr buffer = 0;
  if (cuMemAlloc(&buffer, n * sizeof(float)) != CUDA_SUCCESS ||
      cuMemcpyHtoDAsync(buffer, host.data(), n * sizeof(float), nullptr) !=
          CUDA_SUCCESS) {
    std::snprintf(report.message, sizeof report.message, "device memory");
    return;
  }
  auto *p = reinterpret_cast<void *>(uintptr_t(buffer));
  auto start = std::chrono::steady_clock::now();
  ncclResult_t result =
      ncclAllReduce(p, p, n, ncclFloat32, ncclAvg, comm, nullptr);
  report.seconds = secondsSince(start);
  report.result = result;
  std::snprintf(report.message, sizeof report.message, "%s",
                ncclGetErrorString(result));
}

ncclUniqueId makeId() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  return id;
}

/// Whether the shared memory object of an id exists.
bool nameExists(const ncclUniqueId &id) {
  int fd = shm_open(id.internal + 16, O_RDONLY, 0);
  if (fd >= 0)
    close(fd);
  return fd >= 0;
}

//===----------------------------------------------------------------------===//
// The arithmetic
//===----------------------------------------------------------------------===//

TEST(CUDAEmulatorNccl, ThreeRanksReduceInRankOrder) {
  constexpr int kRanks = 3;
  // Two chunks and a part: the chunking and the double buffering run.
  const size_t n = 2 * kChunk + 1000;
  const float third = float(1.0 / kRanks);
  std::vector<float> average(n), sum(n);
  size_t orderShows = 0;
  for (size_t i = 0; i < n; ++i) {
    average[i] = reduced(kRanks, i, third, false);
    sum[i] = reduced(kRanks, i, 1.0f, false);
    orderShows += reduced(kRanks, i, 1.0f, true) != sum[i];
  }
  // Otherwise the test could not tell rank order from another.
  ASSERT_GT(orderShows, n / 100);

  ncclUniqueId id = makeId();
  std::vector<Report> reports = runRanks(kRanks, [&](int rank, Report &report) {
    ncclComm_t comm = join(id, kRanks, rank, "60", report);
    if (!comm)
      return;
    report.nameGone = !nameExists(id);
    std::vector<float> a(n), b(n);
    for (size_t i = 0; i < n; ++i)
      a[i] = b[i] = input(rank, i);
    CUdeviceptr da = 0, db = 0, dc = 0;
    size_t bytes = n * sizeof(float);
    if (cuMemAlloc(&da, bytes) != CUDA_SUCCESS ||
        cuMemAlloc(&db, bytes) != CUDA_SUCCESS ||
        cuMemAlloc(&dc, bytes) != CUDA_SUCCESS ||
        cuMemcpyHtoDAsync(da, a.data(), bytes, nullptr) != CUDA_SUCCESS ||
        cuMemcpyHtoDAsync(db, b.data(), bytes, nullptr) != CUDA_SUCCESS)
      return;
    auto *pa = reinterpret_cast<void *>(uintptr_t(da));
    auto *pb = reinterpret_cast<void *>(uintptr_t(db));
    auto *pc = reinterpret_cast<void *>(uintptr_t(dc));
    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess)
      result = ncclAllReduce(pa, pa, n, ncclFloat32, ncclAvg, comm, nullptr);
    if (result == ncclSuccess)
      result = ncclAllReduce(pb, pc, n, ncclFloat32, ncclSum, comm, nullptr);
    ncclResult_t ended = ncclGroupEnd();
    report.result = result != ncclSuccess ? result : ended;
    std::snprintf(report.message, sizeof report.message, "%s",
                  ncclGetErrorString(ncclResult_t(report.result)));
    if (cuMemcpyDtoHAsync(a.data(), da, bytes, nullptr) != CUDA_SUCCESS ||
        cuMemcpyDtoHAsync(b.data(), dc, bytes, nullptr) != CUDA_SUCCESS)
      return;
    report.hashes[0] = fnv1a(a);
    report.hashes[1] = fnv1a(b);
    ncclCommDestroy(comm);
  });
  for (int r = 0; r < kRanks; ++r) {
    const Report &report = reports[size_t(r)];
    EXPECT_EQ(report.result, ncclSuccess)
        << "rank " << r << ": " << report.message;
    EXPECT_TRUE(report.nameGone) << "rank " << r;
    EXPECT_EQ(report.hashes[0], fnv1a(average)) << "rank " << r << ": ncclAvg";
    EXPECT_EQ(report.hashes[1], fnv1a(sum)) << "rank " << r << ": ncclSum";
  }
  EXPECT_FALSE(nameExists(id));
}

//===----------------------------------------------------------------------===//
// Ranks that fail
//===----------------------------------------------------------------------===//

TEST(CUDAEmulatorNccl, RankThatNeverArrivesTimesOut) {
  ncclUniqueId id = makeId();
  std::vector<Report> reports = runRanks(
      2,
      [&](int rank, Report &report) {
        ncclComm_t comm = join(id, 2, rank, "1", report);
        if (!comm)
          return;
        if (rank == 1) // joins, then stalls: killed when rank 0 is done
          std::this_thread::sleep_for(std::chrono::seconds(60));
        averageOnce(comm, rank, 100, report);
      },
      /*othersEnd=*/false);
  EXPECT_EQ(reports[0].result, ncclRemoteError);
  EXPECT_STREQ(reports[0].message,
               "ncclAllReduce: rank 1 of 2 did not arrive within 1 s (died "
               "or stalled; MIXRT_RANK_TIMEOUT sets the limit)");
  EXPECT_GE(reports[0].seconds, 1.0);
  EXPECT_LT(reports[0].seconds, 20.0);
}

TEST(CUDAEmulatorNccl, RankThatExitsFailsAtOnce) {
  ncclUniqueId id = makeId();
  std::vector<Report> reports = runRanks(2, [&](int rank, Report &report) {
    ncclComm_t comm = join(id, 2, rank, "60", report);
    if (!comm || rank == 1) // rank 1 ends without a word, as if killed
      return;
    averageOnce(comm, rank, 100, report);
  });
  EXPECT_EQ(reports[0].result, ncclRemoteError);
  EXPECT_STREQ(reports[0].message, "ncclAllReduce: rank 1 of 2 exited (its "
                                   "process is gone) without reaching it");
  EXPECT_LT(reports[0].seconds, 20.0); // not the 60 s timeout
}

TEST(CUDAEmulatorNccl, RankThatDestroysOrAbortsFailsAtOnce) {
  for (bool abort : {false, true}) {
    ncclUniqueId id = makeId();
    std::vector<Report> reports = runRanks(
        2,
        [&](int rank, Report &report) {
          ncclComm_t comm = join(id, 2, rank, "60", report);
          if (!comm)
            return;
          if (rank == 1) {
            if (abort)
              ncclCommAbort(comm);
            else
              ncclCommDestroy(comm);
            std::this_thread::sleep_for(std::chrono::seconds(60));
          }
          averageOnce(comm, rank, 100, report);
        },
        /*othersEnd=*/false);
    EXPECT_EQ(reports[0].result, ncclRemoteError);
    EXPECT_STREQ(reports[0].message,
                 abort ? "ncclAllReduce: rank 1 of 2 failed: rank 1 aborted "
                         "its communicator (ncclCommAbort)"
                       : "ncclAllReduce: rank 1 of 2 destroyed its "
                         "communicator without reaching it");
    EXPECT_LT(reports[0].seconds, 20.0);
  }
}

TEST(CUDAEmulatorNccl, RanksMustAgreeToJoin) {
  // Rank 1 thinks there are 3 ranks.
  ncclUniqueId id = makeId();
  std::vector<Report> reports = runRanks(2, [&](int rank, Report &report) {
    join(id, rank == 1 ? 3 : 2, rank, "60", report);
  });
  std::string both =
      std::string(reports[0].message) + "\n" + reports[1].message;
  EXPECT_NE(reports[0].result, ncclSuccess) << both;
  EXPECT_NE(reports[1].result, ncclSuccess) << both;
  // The second to join is refused, and the first is told why.
  bool secondWasRank1 =
      both.find("ncclCommInitRank: rank 1 joins a communicator of 3 ranks, "
                "but another rank joined it with 2") != std::string::npos;
  bool secondWasRank0 =
      both.find("ncclCommInitRank: rank 0 joins a communicator of 2 ranks, "
                "but another rank joined it with 3") != std::string::npos;
  EXPECT_NE(secondWasRank1, secondWasRank0) << both;
  EXPECT_FALSE(nameExists(id));

  // Two processes claim rank 0.
  id = makeId();
  reports =
      runRanks(2, [&](int, Report &report) { join(id, 2, 0, "20", report); });
  both = std::string(reports[0].message) + "\n" + reports[1].message;
  EXPECT_NE(reports[0].result, ncclSuccess) << both;
  EXPECT_NE(reports[1].result, ncclSuccess) << both;
  EXPECT_NE(both.find("ncclCommInitRank: two processes joined as rank 0 of 2"),
            std::string::npos)
      << both;
  EXPECT_FALSE(nameExists(id));
}

//===----------------------------------------------------------------------===//
// One rank: what the emulation rejects
//===----------------------------------------------------------------------===//

/// Prints the result and message of a call for the death test's pattern.
void show(const char *what, ncclResult_t result) {
  std::fprintf(stderr, "%s: %d %s\n", what, int(result),
               ncclGetErrorString(result));
}

/// Runs the rejected calls on one rank, printing each one's result and
/// message (a death test's child: errors stay in the emulator).
void rejectedArguments() {
  if (!setUpDevice())
    std::exit(1);
  ncclUniqueId id = makeId();
  ncclComm_t comm = nullptr;
  show("join", ncclCommInitRank(&comm, 1, id, 0));
  // One rank: the sum is the input, the average too.
  float values[3] = {1.5f, -2.25f, 1e30f}, back[3] = {};
  CUdeviceptr d = 0;
  cuMemAlloc(&d, sizeof values);
  cuMemcpyHtoDAsync(d, values, sizeof values, nullptr);
  auto *p = reinterpret_cast<float *>(uintptr_t(d));
  show("avg", ncclAllReduce(p, p, 3, ncclFloat32, ncclAvg, comm, nullptr));
  cuMemcpyDtoHAsync(back, d, sizeof back, nullptr);
  std::fprintf(stderr, "values: %s\n",
               std::memcmp(values, back, sizeof back) ? "differ" : "same");
  show("int", ncclAllReduce(p, p, 3, ncclInt32, ncclSum, comm, nullptr));
  show("max", ncclAllReduce(p, p, 3, ncclFloat32, ncclMax, comm, nullptr));
  show("host",
       ncclAllReduce(values, values, 3, ncclFloat32, ncclSum, comm, nullptr));
  show("past", ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comm, nullptr));
  show("overlap",
       ncclAllReduce(p, p + 1, 2, ncclFloat32, ncclSum, comm, nullptr));
  show("group", ncclGroupEnd());
  show("destroy", ncclCommDestroy(comm));
  show("dead", ncclAllReduce(p, p, 3, ncclFloat32, ncclSum, comm, nullptr));
  ncclUniqueId foreign = {};
  show("foreign", ncclCommInitRank(&comm, 1, foreign, 0));
  show("ranks", ncclCommInitRank(&comm, 0, id, 0));
  std::exit(0);
}

TEST(CUDAEmulatorNcclDeathTest, RejectedArguments) {
  EXPECT_EXIT(
      rejectedArguments(), ::testing::ExitedWithCode(0),
      "join: 0 no error\n"
      "avg: 0 no error\n"
      "values: same\n"
      "int: 4 ncclAllReduce: datatype 2: the emulated NCCL reduces "
      "ncclFloat32 \\(7\\) only\n"
      "max: 4 ncclAllReduce: reduction 2: the emulated NCCL does ncclSum "
      "\\(0\\) and ncclAvg \\(4\\) only\n"
      "host: 4 ncclAllReduce send buffer: 0x[0-9a-f]+ is not in a live "
      "device allocation: it is host memory, not device memory\n"
      "past: 4 ncclAllReduce send buffer: bytes \\[0, 16\\) of allocation "
      "#[0-9]+ \\(12 bytes at 0x[0-9a-f]+\\): the range ends 4 bytes past "
      "the allocation's end\n"
      "overlap: 4 ncclAllReduce: the send and receive buffers overlap "
      "without being the same \\(in place\\)\n"
      "group: 5 ncclGroupEnd without ncclGroupStart\n"
      "destroy: 0 no error\n"
      "dead: 4 ncclAllReduce: 0x[0-9a-f]+ is not a live communicator "
      "\\(destroyed, aborted or never made\\?\\)\n"
      "foreign: 4 ncclCommInitRank: the id was not made by the emulated "
      "NCCL's ncclGetUniqueId\n"
      "ranks: 4 ncclCommInitRank: 0 ranks: the emulated NCCL takes 1 to 64");
}

} // namespace
