/*===- Nccl.c - The emulated NCCL: all-reduce over shared memory ----------===//
 *
 * Part of the CUDA emulator (runtime/emulator). A data-parallel run of an
 * emulated package (mpirun -np N mix-run grad|train) averages its
 * gradients through the support code's mixrt_nccl_* as on GPUs; this file
 * is the NCCL they call (include/nccl.h), between the ranks' processes on
 * one machine, through a POSIX shared memory segment:
 *  - ncclGetUniqueId names a fresh segment ("/mixemu-nccl-PID-TIME-RANDOM")
 *    in the id's 128 bytes, after a magic string;
 *  - ncclCommInitRank opens (or creates) the segment and maps it; the first
 *    rank to join records the number of ranks, and a rank that disagrees,
 *    or a rank number taken twice, is an error. It waits until every rank
 *    has joined, then unlinks the name, so nothing is left in /dev/shm
 *    whatever happens later (the mappings keep the memory alive);
 *  - ncclAllReduce (ncclFloat32; ncclSum or ncclAvg; in place or not) runs
 *    synchronously, as the emulator's streams do; on a capturing stream it
 *    is checked and recorded as a node of the graph, and runs when the
 *    graph is launched (every rank's graph must then hold the same
 *    collectives in the same order, as with NCCL). The buffers must lie in
 *    live device allocations of the emulator's arena. They go through the
 *    segment in chunks of kChunk floats: each rank copies its chunk into its
 *    staging buffer, waits at a barrier for every rank, and then sums the
 *    ranks' buffers in rank order, so that every rank gets bitwise the same
 *    result and the order of the sum is fixed. ncclAvg multiplies each
 *    rank's values by 1/nranks (as a float) before the sum, as NCCL does for
 *    floating types. Staging is double-buffered (by the barrier's parity),
 *    so one barrier a chunk suffices. In count-only mode
 *    (MIXEMU_COUNT_ONLY=1) it is checked but moves nothing and waits for
 *    no rank;
 *  - the barrier: each rank counts the barriers it has reached in the
 *    segment (an atomic per rank) and waits, with yields and then short
 *    sleeps, until every rank's count reaches its own. It never waits
 *    forever: it fails at once when another rank failed or aborted (the
 *    segment records the first failure and why), or when a rank that has
 *    not arrived destroyed its communicator or its process has exited;
 *    otherwise after MIXRT_RANK_TIMEOUT seconds (the limit the runtime
 *    gives mixrt_nccl_init; 300 by default, as there), naming the ranks
 *    that did not arrive;
 *  - ncclGroupStart/End only count their nesting (the work is done when it
 *    is queued); ncclCommGetAsyncError reports a failed collective or a
 *    peer's failure; ncclCommAbort tells the peers, so that they fail fast;
 *    ncclGetErrorString gives the emulator's message for the last error's
 *    status (the support code's error then says what went wrong), NCCL's
 *    description otherwise; ncclGetLastError gives the last message.
 * mixemu_nccl_library is how the support code finds these functions: the
 * package's own model.so, opened again by path with RTLD_NOLOAD.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* dladdr, RTLD_NOLOAD */

#include "Internal.h"

#include <nccl.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The most ranks a communicator may have (they share one machine). */
enum { kMaxRanks = 64 };
/* The floats of one rank's staging buffer (1 MiB); a segment holds two for
   each rank. */
enum { kChunk = 1 << 18 };
/* The limit on a wait when MIXRT_RANK_TIMEOUT is unset: the runtime's. */
static const double kDefaultTimeout = 300;
/* The start of an id made by ncclGetUniqueId; the segment's name follows. */
static const char kIdMagic[] = "MIXEMU-NCCL-1";
enum { kIdNameOffset = 16 };

_Static_assert(sizeof kIdMagic <= kIdNameOffset, "the id's magic");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_LLONG_LOCK_FREE == 2,
               "the segment's atomics must work between processes");

/* ---- Errors ------------------------------------------------------------ */

static ncclResult_t lastResult = ncclSuccess;
static char lastMessage[1024];

static ncclResult_t failWith(ncclResult_t result, const char *format, ...)
    MIXEMU_PRINTF(2, 3);

/* Returns result after recording it with its message, which
   ncclGetErrorString then gives for that result. */
static ncclResult_t failWith(ncclResult_t result, const char *format, ...) {
  char text[sizeof lastMessage]; /* an argument may be lastMessage */
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  memcpy(lastMessage, text, sizeof text);
  lastResult = result;
  return result;
}

/* NCCL's own descriptions (without its NCCL_DEBUG hints). */
static const char *describe(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error";
  case ncclSystemError:
    return "unhandled system error";
  case ncclInternalError:
    return "internal error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclInvalidUsage:
    return "invalid usage";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "unknown result code";
  }
}

const char *ncclGetErrorString(ncclResult_t result) {
  if (result != ncclSuccess && result == lastResult && lastMessage[0])
    return lastMessage;
  return describe(result);
}

const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return lastResult == ncclSuccess ? "" : lastMessage;
}

/* ---- The shared segment ------------------------------------------------ */

/* What the segment holds for each rank. */
typedef struct {
  _Atomic uint64_t arrivals; /* barriers reached; 1: joined */
  _Atomic int32_t pid;       /* the rank's process, to see it exit */
  _Atomic uint32_t taken;    /* a process has joined as this rank */
  _Atomic uint32_t left;     /* it destroyed or aborted its communicator */
} RankState;

/* The segment's header (zero when created); the staging buffers follow,
   page-aligned: [parity][rank][kChunk] floats. */
typedef struct {
  _Atomic uint32_t nranks;  /* set by the first rank to join */
  _Atomic uint32_t failing; /* claimed by the first rank to fail */
  _Atomic uint32_t failed;  /* then 1 + that rank, once reason is written */
  char reason[512];
  RankState ranks[kMaxRanks];
} Segment;

static size_t stagingOffset(void) {
  return (sizeof(Segment) + 4095) / 4096 * 4096;
}

static size_t segmentSize(int nranks) {
  return stagingOffset() + 2 * (size_t)nranks * kChunk * sizeof(float);
}

struct ncclComm {
  struct ncclComm *next; /* the live communicators */
  Segment *segment;
  size_t size; /* mapped */
  int rank, nranks;
  double timeout;          /* seconds a wait may take */
  uint64_t barriers;       /* barriers this rank has reached */
  ncclResult_t asyncError; /* a collective failed: the communicator is dead */
};

static struct ncclComm *comms;

static float *staging(ncclComm_t comm, uint64_t parity, int rank) {
  float *first = (float *)((char *)comm->segment + stagingOffset());
  return first +
         ((size_t)(parity % 2) * (size_t)comm->nranks + (size_t)rank) * kChunk;
}

/* Records the first failure among the ranks and why, so that the others
   fail at once instead of waiting out their deadline. */
static void markFailed(ncclComm_t comm, const char *reason) {
  Segment *s = comm->segment;
  uint32_t expected = 0;
  if (!atomic_compare_exchange_strong(&s->failing, &expected, 1))
    return;
  snprintf(s->reason, sizeof s->reason, "%s", reason);
  atomic_store_explicit(&s->failed, (uint32_t)comm->rank + 1,
                        memory_order_release);
}

/* ---- Waiting for the other ranks --------------------------------------- */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The limit on one wait: MIXRT_RANK_TIMEOUT, which the runtime also gives
   mixrt_nccl_init (and has checked by then), else its default. */
static double rankTimeout(void) {
  const char *value = getenv("MIXRT_RANK_TIMEOUT");
  if (!value || !*value)
    return kDefaultTimeout;
  char *end = NULL;
  double seconds = strtod(value, &end);
  return *end == 0 && seconds > 0 && seconds < 1e9 ? seconds : kDefaultTimeout;
}

/* Whether process pid is gone (it cannot be signalled: ESRCH). */
static int exited(int32_t pid) {
  return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Lets the ranks being waited for run: yields at first, then sleeps
   briefly (the ranks may share fewer cores than there are of them). */
static void backOff(unsigned polls) {
  if (polls < 200) {
    sched_yield();
    return;
  }
  struct timespec t = {0, polls < 2000 ? 20000 : 200000};
  nanosleep(&t, NULL);
}

/* Whether rank r has reached barrier `target`. */
static int arrived(const Segment *s, int r, uint64_t target) {
  return atomic_load_explicit(&s->ranks[r].arrivals, memory_order_acquire) >=
         target;
}

/* Waits until every rank has reached barrier `target`, or fails with
   ncclRemoteError: another rank failed (its reason is given), a rank that
   has not arrived left its communicator or exited, or some did not arrive
   within the timeout (they are named). `what` names the call. */
static ncclResult_t waitForRanks(ncclComm_t comm, uint64_t target,
                                 const char *what) {
  const Segment *s = comm->segment;
  double start = now(), checked = start;
  for (unsigned polls = 0;; ++polls) {
    int missing = 0;
    for (int r = 0; r < comm->nranks; ++r)
      missing += !arrived(s, r, target);
    if (!missing)
      return ncclSuccess;
    uint32_t failed = atomic_load_explicit(&s->failed, memory_order_acquire);
    if (failed)
      return failWith(ncclRemoteError, "%s: rank %u of %d failed: %s", what,
                      failed - 1, comm->nranks, s->reason);
    double t = now();
    if (t - checked > 0.05) {
      checked = t;
      for (int r = 0; r < comm->nranks; ++r) {
        if (arrived(s, r, target))
          continue;
        int left =
            atomic_load_explicit(&s->ranks[r].left, memory_order_acquire) != 0;
        int32_t pid =
            atomic_load_explicit(&s->ranks[r].pid, memory_order_acquire);
        /* It may have arrived, passed the barrier and gone since the
           first look: only a rank still missing now is at fault. */
        if ((left || exited(pid)) && !arrived(s, r, target))
          return failWith(ncclRemoteError,
                          "%s: rank %d of %d %s without reaching it", what, r,
                          comm->nranks,
                          left ? "destroyed its communicator"
                               : "exited (its process is gone)");
      }
    }
    if (t - start > comm->timeout) {
      char ranks[256] = "";
      size_t used = 0;
      for (int r = 0; r < comm->nranks && used < sizeof ranks - 16; ++r)
        if (!arrived(s, r, target))
          used += (size_t)snprintf(ranks + used, sizeof ranks - used, "%s%d",
                                   used ? ", " : "", r);
      return failWith(ncclRemoteError,
                      "%s: rank%s %s of %d did not %s within %g s (died or "
                      "stalled; MIXRT_RANK_TIMEOUT sets the limit)%s",
                      what, missing > 1 ? "s" : "", ranks, comm->nranks,
                      target == 1 ? "join" : "arrive", comm->timeout,
                      target == 1 ? "; the emulated NCCL joins the processes "
                                    "of one machine only"
                                  : "");
    }
    backOff(polls);
  }
}

/* ---- Communicators ----------------------------------------------------- */

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId)
    return failWith(ncclInvalidArgument, "ncclGetUniqueId: no result pointer");
  uint64_t random = 0;
  if (getrandom(&random, sizeof random, GRND_NONBLOCK) != sizeof random)
    random = (uint64_t)(uintptr_t)&random ^ (uint64_t)clock();
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  memset(uniqueId, 0, sizeof *uniqueId);
  memcpy(uniqueId->internal, kIdMagic, sizeof kIdMagic);
  snprintf(uniqueId->internal + kIdNameOffset,
           sizeof uniqueId->internal - kIdNameOffset,
           "/mixemu-nccl-%ld-%lld%09ld-%016llx", (long)getpid(),
           (long long)t.tv_sec, (long)t.tv_nsec, (unsigned long long)random);
  return ncclSuccess;
}

static void unmap(ncclComm_t comm) {
  munmap(comm->segment, comm->size);
  free(comm);
}

/* Ends a join that failed after mapping the segment: the others are told,
   and no one else may join (the name goes). */
static ncclResult_t abandonJoin(ncclComm_t comm, const char *name,
                                ncclResult_t result) {
  markFailed(comm, lastMessage);
  atomic_store_explicit(&comm->segment->ranks[comm->rank].left, 1,
                        memory_order_release);
  shm_unlink(name);
  unmap(comm);
  return result;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId commId,
                              int rank) {
  const char *what = "ncclCommInitRank";
  if (!out)
    return failWith(ncclInvalidArgument, "%s: no result pointer", what);
  *out = NULL;
  if (nranks < 1 || nranks > kMaxRanks)
    return failWith(ncclInvalidArgument,
                    "%s: %d ranks: the emulated NCCL takes 1 to %d", what,
                    nranks, kMaxRanks);
  if (rank < 0 || rank >= nranks)
    return failWith(ncclInvalidArgument, "%s: rank %d of %d", what, rank,
                    nranks);
  const char *name = commId.internal + kIdNameOffset;
  if (memcmp(commId.internal, kIdMagic, sizeof kIdMagic) != 0 ||
      name[0] != '/' ||
      !memchr(name, 0, sizeof commId.internal - kIdNameOffset))
    return failWith(ncclInvalidArgument,
                    "%s: the id was not made by the emulated NCCL's "
                    "ncclGetUniqueId",
                    what);
  char path[sizeof commId.internal];
  snprintf(path, sizeof path, "%s", name);

  int fd = shm_open(path, O_RDWR | O_CREAT, 0600);
  if (fd < 0)
    return failWith(ncclSystemError, "%s: shm_open(\"%s\"): %s", what, path,
                    strerror(errno));
  /* The segment only grows (posix_fallocate never shrinks it), and a
     full /dev/shm is an error now rather than a SIGBUS later. */
  size_t size = segmentSize(nranks);
  int error = posix_fallocate(fd, 0, (off_t)size);
  void *mapped =
      error ? MAP_FAILED
            : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED && !error)
    error = errno;
  close(fd);
  if (error) {
    shm_unlink(path);
    return failWith(ncclSystemError,
                    "%s: the shared memory segment %s (%zu bytes): %s", what,
                    path, size, strerror(error));
  }
  ncclComm_t comm = (ncclComm_t)calloc(1, sizeof *comm);
  if (!comm) {
    munmap(mapped, size);
    return failWith(ncclSystemError, "%s: out of memory", what);
  }
  comm->segment = (Segment *)mapped;
  comm->size = size;
  comm->rank = rank;
  comm->nranks = nranks;
  comm->timeout = rankTimeout();
  Segment *s = comm->segment;

  uint32_t recorded = 0;
  if (!atomic_compare_exchange_strong(&s->nranks, &recorded,
                                      (uint32_t)nranks) &&
      recorded != (uint32_t)nranks) {
    failWith(ncclInvalidUsage,
             "%s: rank %d joins a communicator of %d ranks, but another "
             "rank joined it with %u",
             what, rank, nranks, recorded);
    return abandonJoin(comm, path, ncclInvalidUsage);
  }
  uint32_t taken = 0;
  if (!atomic_compare_exchange_strong(&s->ranks[rank].taken, &taken, 1)) {
    failWith(ncclInvalidUsage, "%s: two processes joined as rank %d of %d",
             what, rank, nranks);
    return abandonJoin(comm, path, ncclInvalidUsage);
  }
  atomic_store_explicit(&s->ranks[rank].pid, (int32_t)getpid(),
                        memory_order_release);
  comm->barriers = 1;
  atomic_store_explicit(&s->ranks[rank].arrivals, 1, memory_order_release);
  ncclResult_t result = waitForRanks(comm, 1, what);
  if (result != ncclSuccess)
    return abandonJoin(comm, path, result);
  /* Every rank has the segment mapped: the name can go (each rank tries;
     the first succeeds). */
  shm_unlink(path);
  comm->next = comms;
  comms = comm;
  *out = comm;
  return ncclSuccess;
}

/* ncclSuccess for a live communicator; else the error. */
static ncclResult_t checkComm(ncclComm_t comm, const char *what) {
  for (struct ncclComm *c = comms; c; c = c->next)
    if (c == comm)
      return ncclSuccess;
  return failWith(ncclInvalidArgument,
                  "%s: %p is not a live communicator (destroyed, aborted or "
                  "never made?)",
                  what, (void *)comm);
}

/* Takes the communicator off the live list and unmaps it; the peers see
   that it left (and, when aborting, that it failed). */
static ncclResult_t release(ncclComm_t comm, int aborting, const char *what) {
  if (!comm)
    return ncclSuccess;
  ncclResult_t result = checkComm(comm, what);
  if (result != ncclSuccess)
    return result;
  for (struct ncclComm **link = &comms; *link; link = &(*link)->next)
    if (*link == comm) {
      *link = comm->next;
      break;
    }
  if (aborting) {
    char reason[128];
    snprintf(reason, sizeof reason,
             "rank %d aborted its communicator (ncclCommAbort)", comm->rank);
    markFailed(comm, reason);
  }
  atomic_store_explicit(&comm->segment->ranks[comm->rank].left, 1,
                        memory_order_release);
  unmap(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return release(comm, 0, "ncclCommDestroy");
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return release(comm, 1, "ncclCommAbort");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  const char *what = "ncclCommGetAsyncError";
  ncclResult_t result = checkComm(comm, what);
  if (result != ncclSuccess)
    return result;
  if (!asyncError)
    return failWith(ncclInvalidArgument, "%s: no result pointer", what);
  *asyncError = comm->asyncError;
  uint32_t failed =
      atomic_load_explicit(&comm->segment->failed, memory_order_acquire);
  if (*asyncError == ncclSuccess && failed) {
    failWith(ncclRemoteError, "rank %u of %d failed: %s", failed - 1,
             comm->nranks, comm->segment->reason);
    *asyncError = ncclRemoteError;
  }
  return ncclSuccess;
}

/* ---- Groups ------------------------------------------------------------ */

/* The emulated collectives run when they are called: a group only nests. */
static int groupDepth;

ncclResult_t ncclGroupStart(void) {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (groupDepth == 0)
    return failWith(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  --groupDepth;
  return ncclSuccess;
}

/* ---- All-reduce -------------------------------------------------------- */

/* The reduction of count floats, chunk after chunk, with device memory
   accessible. */
static ncclResult_t reduce(ncclComm_t comm, const float *send, float *recv,
                           size_t count, ncclRedOp_t op) {
  const float scale = (float)(1.0 / comm->nranks);
  for (size_t done = 0; done < count; done += kChunk) {
    size_t n = count - done < kChunk ? count - done : kChunk;
    uint64_t barrier = comm->barriers + 1;
    /* This parity's buffers were last read before barrier - 1, which
       every rank has passed. */
    float *mine = staging(comm, barrier, comm->rank);
    if (op == ncclAvg)
      for (size_t i = 0; i < n; ++i)
        mine[i] = send[done + i] * scale;
    else
      memcpy(mine, send + done, n * sizeof(float));
    comm->barriers = barrier;
    atomic_store_explicit(&comm->segment->ranks[comm->rank].arrivals, barrier,
                          memory_order_release);
    ncclResult_t result = waitForRanks(comm, barrier, "ncclAllReduce");
    if (result != ncclSuccess)
      return result;
    /* In rank order: the same sum, bit for bit, on every rank. */
    float *out = recv + done;
    memcpy(out, staging(comm, barrier, 0), n * sizeof(float));
    for (int r = 1; r < comm->nranks; ++r) {
      const float *theirs = staging(comm, barrier, r);
      for (size_t i = 0; i < n; ++i)
        out[i] += theirs[i];
    }
  }
  return ncclSuccess;
}

/* Runs a checked all-reduce: at once, or as a node of a graph. */
static ncclResult_t runAllReduce(ncclComm_t comm, const void *sendbuff,
                                 void *recvbuff, size_t count, ncclRedOp_t op) {
  if (mixemuCountOnly()) /* checked, not run: no data moves */
    return ncclSuccess;
  if (comm->asyncError != ncclSuccess)
    return failWith(comm->asyncError,
                    "ncclAllReduce: an earlier collective of this "
                    "communicator failed (%s)",
                    describe(comm->asyncError));
  mixemuDeviceAccess(1);
  ncclResult_t result =
      reduce(comm, (const float *)sendbuff, (float *)recvbuff, count, op);
  mixemuDeviceAccess(0);
  if (result != ncclSuccess) {
    comm->asyncError = result;
    markFailed(comm, lastMessage);
  }
  return result;
}

/* An all-reduce recorded by a capture: it runs, with every rank's, when
   the graph is launched (the ranks' graphs must hold their collectives in
   the same order, as with NCCL). */
typedef struct {
  ncclComm_t comm;
  const void *send;
  void *recv;
  size_t count;
  ncclRedOp_t op;
} AllReduceNode;

static CUresult runAllReduceNode(void *payload) {
  AllReduceNode *n = (AllReduceNode *)payload;
  if (runAllReduce(n->comm, n->send, n->recv, n->count, n->op) == ncclSuccess)
    return CUDA_SUCCESS;
  return mixemuError(CUDA_ERROR_LAUNCH_FAILED,
                     "an ncclAllReduce node of the graph failed: %s",
                     lastMessage);
}

static ncclResult_t captureAllReduce(CUgraph graph, ncclComm_t comm,
                                     const void *send, void *recv, size_t count,
                                     ncclRedOp_t op) {
  AllReduceNode *n = (AllReduceNode *)calloc(1, sizeof *n);
  if (!n)
    return failWith(ncclSystemError, "ncclAllReduce: no memory to capture it");
  n->comm = comm;
  n->send = send;
  n->recv = recv;
  n->count = count;
  n->op = op;
  if (mixemuAddNode(graph, runAllReduceNode, n, "ncclAllReduce") !=
      CUDA_SUCCESS)
    return failWith(ncclSystemError, "ncclAllReduce: %s", mixemu_last_error());
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  const char *what = "ncclAllReduce";
  ncclResult_t result = checkComm(comm, what);
  if (result != ncclSuccess)
    return result;
  if (comm->asyncError != ncclSuccess)
    return failWith(comm->asyncError,
                    "%s: an earlier collective of this communicator failed "
                    "(%s); only ncclCommAbort or ncclCommDestroy remain",
                    what, describe(comm->asyncError));
  if (datatype != ncclFloat32)
    return failWith(ncclInvalidArgument,
                    "%s: datatype %d: the emulated NCCL reduces ncclFloat32 "
                    "(7) only",
                    what, (int)datatype);
  if (op != ncclSum && op != ncclAvg)
    return failWith(ncclInvalidArgument,
                    "%s: reduction %d: the emulated NCCL does ncclSum (0) and "
                    "ncclAvg (4) only",
                    what, (int)op);
  if (mixemuCheckContext() != CUDA_SUCCESS ||
      mixemuCheckStream(stream, what) != CUDA_SUCCESS)
    return failWith(ncclUnhandledCudaError, "%s: %s", what,
                    mixemu_last_error());
  CUgraph graph;
  if (mixemuCaptureOf((CUstream)stream, what, &graph) != CUDA_SUCCESS)
    return failWith(ncclUnhandledCudaError, "%s: %s", what,
                    mixemu_last_error());
  if (count == 0)
    return ncclSuccess;
  if (count > SIZE_MAX / sizeof(float))
    return failWith(ncclInvalidArgument, "%s: %zu floats", what, count);
  size_t bytes = count * sizeof(float);
  uintptr_t send = (uintptr_t)sendbuff, recv = (uintptr_t)recvbuff;
  if (mixemuCheckRange(send, bytes, "ncclAllReduce send buffer") !=
          CUDA_SUCCESS ||
      mixemuCheckRange(recv, bytes, "ncclAllReduce receive buffer") !=
          CUDA_SUCCESS)
    return failWith(ncclInvalidArgument, "%s", mixemu_last_error());
  if (send != recv && send < recv + bytes && recv < send + bytes)
    return failWith(ncclInvalidArgument,
                    "%s: the send and receive buffers overlap without being "
                    "the same (in place)",
                    what);
  if (graph)
    return captureAllReduce(graph, comm, sendbuff, recvbuff, count, op);
  return runAllReduce(comm, sendbuff, recvbuff, count, op);
}

/* ---- How the support code finds this library --------------------------- */

void *mixemu_nccl_library(void) {
  Dl_info info;
  if (dladdr((void *)&ncclAllReduce, &info) && info.dli_fname) {
    void *self = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_NOW);
    if (self)
      return self;
  }
  /* The main program cannot be opened by its path: the emulator is linked
     into a program (the unit tests), whose exported symbols dlsym finds
     through the null handle. */
  return dlopen(NULL, RTLD_NOW);
}
