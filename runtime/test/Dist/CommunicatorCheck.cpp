//===- CommunicatorCheck.cpp - The collectives across real ranks ---------===//
//
// mixrt-communicator-check runs every collective of the Communicator on the
// ranks it was started with (alone, or under mpirun) and checks the results
// against what each rank can compute on its own: sums and maxima of values
// that depend on the rank, rank 0's bytes after a broadcast (the NCCL
// communicator's id travels that way), and the same on the parts of a
// split. Prints one line a rank; exits 1 if any check failed.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Communicator.h"
#include "mixrt/Error.h"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

using namespace mixrt;

namespace {
struct Checker {
  int rank;
  int checks = 0, failures = 0;
  void expect(bool ok, const std::string &what) {
    ++checks;
    if (!ok) {
      ++failures;
      std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    }
  }
};

/// Every collective on \p comm, whose ranks are \p worldRanks of the world.
void checkCollectives(Communicator &comm, Checker &c, const char *name) {
  int n = comm.getSize(), r = comm.getRank();
  std::string on = std::string(" on ") + name;

  // A sum of 3 + 2^20 floats (past one chunk of a small message): element i
  // of rank r is r + i % 7, so the sum is n(n-1)/2 + n (i % 7).
  std::vector<float> values(3 + (size_t(1) << 20));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(r) + float(i % 7);
  comm.allReduceSum(values.data(), values.size(), "the float sum check");
  bool sumOk = true;
  for (size_t i = 0; i < values.size(); ++i)
    sumOk &= values[i] == float(n * (n - 1) / 2 + n * int(i % 7));
  c.expect(sumOk, "allReduceSum(float)" + on);

  double d[2] = {0.5 * r, -1.0};
  comm.allReduceSum(d, 2, "the double sum check");
  c.expect(d[0] == 0.25 * n * (n - 1) && d[1] == -double(n),
           "allReduceSum(double)" + on);

  int64_t m[2] = {int64_t(r) * 1000, -int64_t(r)};
  comm.allReduceMax(m, 2, "the max check");
  c.expect(m[0] == int64_t(n - 1) * 1000 && m[1] == 0, "allReduceMax" + on);

  // 300 bytes (not a multiple of any word): rank 0's pattern arrives.
  std::vector<unsigned char> bytes(300);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = r == 0 ? (unsigned char)(i * 37 + 11) : (unsigned char)(r + i);
  comm.broadcast(bytes.data(), bytes.size(), "the broadcast check");
  bool broadcastOk = true;
  for (size_t i = 0; i < bytes.size(); ++i)
    broadcastOk &= bytes[i] == (unsigned char)(i * 37 + 11);
  c.expect(broadcastOk, "broadcast" + on);
  comm.broadcast(nullptr, 0, "the empty broadcast check");
}
} // namespace

int main(int argc, char **argv) {
  try {
    std::unique_ptr<Communicator> world =
        createCommunicator(&argc, &argv, getRankTimeout());
    Checker c{world->getRank()};
    checkCollectives(*world, c, "the world");
    // Even and odd ranks: parts of sizes ceil(n/2) and floor(n/2), each
    // with its own rank 0.
    std::unique_ptr<Communicator> part = world->split(world->getRank() % 2);
    int n = world->getSize();
    c.expect(part->getSize() == (world->getRank() % 2 ? n / 2 : (n + 1) / 2) &&
                 part->getRank() == world->getRank() / 2,
             "split's sizes and ranks");
    checkCollectives(*part, c, "a split");
    std::printf("rank %d of %d (%s): %d of %d checks passed\n",
                world->getRank(), n, world->getName().c_str(),
                c.checks - c.failures, c.checks);
    std::fflush(stdout);
    return c.failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mixrt-communicator-check: %s\n", e.what());
    return 1;
  }
}
