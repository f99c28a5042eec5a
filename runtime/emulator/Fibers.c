/*===- Fibers.c - A block's threads as fibers, for barriers and shuffles --===//
 *
 * Part of the CUDA emulator (runtime/emulator). The threads of a kernel
 * marked MIXEMU_KERNEL_SYNCHRONIZES wait for each other, at barriers
 * (__syncthreads) and warp shuffles, so they cannot run one after another
 * as the other kernels' do. Here each thread of a block runs as a fiber
 * (ucontext: makecontext and swapcontext, on a stack of its own), and a
 * scheduler on the launch's own stack switches between them:
 *  - it runs each fiber that can run, in the order of the threads' linear
 *    ids (x fastest), until it waits at a barrier or a shuffle, or
 *    returns;
 *  - when none can run, it completes, warp by warp, each shuffle that
 *    every lane it needs has reached, and runs them again; when no thread
 *    waits at a shuffle, the barrier that every thread left waits at lets
 *    them all go on; when every thread has returned, the block is done;
 *  - a barrier or shuffle that can never complete (a thread it needs has
 *    returned, or waits at another barrier or shuffle) ends the launch
 *    with CUDA_ERROR_LAUNCH_FAILED and a message naming the kernel, the
 *    block, the threads and the barrier's place in the source, as a
 *    device would hang or do something undefined there.
 * The stacks (kStackBytes each, with an inaccessible guard page below, so
 * that an overflow faults instead of overwriting a neighbour) are mapped
 * as blocks first need them and kept for every later block and launch. A
 * failure inside a fiber (mixemu_fail) switches back to the scheduler,
 * which leaves the launch from its own stack (mixemuLeaveLaunch); the
 * fiber, whose frames are generated code holding no resources, is
 * abandoned, and its stack reused.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, MAP_STACK */

#include "Internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

/* Under AddressSanitizer every switch of stacks is announced to it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MIXEMU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(MIXEMU_ASAN)
#define MIXEMU_ASAN 1
#endif
#ifdef MIXEMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

enum {
  kMaxThreads = 1024, /* a block's, as cuLaunchKernel checks */
  kWarpSize = 32,
  kStackBytes = 128 * 1024, /* a fiber's stack */
  kGuardBytes = 4096,       /* below it, inaccessible */
  kSiteChars = 200          /* of a barrier's place, in messages */
};

typedef enum {
  kRunnable,
  kAtBarrier,
  kAtShuffle,
  kReturned,
  kFailed /* mixemu_fail: abandoned */
} FiberState;

typedef struct {
  ucontext_t context;
  unsigned char *stack; /* kStackBytes above a guard page */
  MixEmuThread thread;
  FiberState state;
  const char *site; /* the barrier or shuffle it waits at */
  /* At a shuffle: what the lane asks for and gives, then what it gets (as
     mixemu_shuffle returns it). */
  int32_t mode, offset, width;
  uint32_t value;
  int64_t result;
  /* At an exchange (mode kExchange): what it gives and where it gets. */
  const float *give;
  float *all;
  int32_t count;
#ifdef MIXEMU_ASAN
  void *fakeStack;
#endif
} Fiber;

/* The block being run. */
static struct {
  Fiber *fibers;    /* kMaxThreads of them, allocated at the first use */
  unsigned stacks;  /* how many have their stacks */
  unsigned threads; /* the block's */
  Fiber *current;   /* the fiber running; NULL on the scheduler */
  ucontext_t scheduler;
  mixemu_launch_fn launch;
  void **params;
#ifdef MIXEMU_ASAN
  void *schedulerFakeStack;
  const void *schedulerStack;
  size_t schedulerStackSize;
#endif
} block;

/* ---- Switching --------------------------------------------------------- */

/* From the scheduler to fiber f, until it switches back. */
static void switchToFiber(Fiber *f) {
#ifdef MIXEMU_ASAN
  __sanitizer_start_switch_fiber(&block.schedulerFakeStack, f->stack,
                                 kStackBytes);
#endif
  swapcontext(&block.scheduler, &f->context);
#ifdef MIXEMU_ASAN
  __sanitizer_finish_switch_fiber(block.schedulerFakeStack, NULL, NULL);
#endif
}

/* On a fiber, just switched to (first or again). */
static void arrivedOnFiber(Fiber *f) {
#ifdef MIXEMU_ASAN
  __sanitizer_finish_switch_fiber(f->fakeStack, &block.schedulerStack,
                                  &block.schedulerStackSize);
#else
  (void)f;
#endif
}

/* From fiber f back to the scheduler, until the scheduler runs f again. */
static void switchToScheduler(Fiber *f) {
#ifdef MIXEMU_ASAN
  __sanitizer_start_switch_fiber(&f->fakeStack, block.schedulerStack,
                                 block.schedulerStackSize);
#endif
  swapcontext(&f->context, &block.scheduler);
  arrivedOnFiber(f);
}

/* From the running fiber back to the scheduler for good (it returned or
   failed). */
static void leaveFiber(void) MIXEMU_NORETURN;
static void leaveFiber(void) {
#ifdef MIXEMU_ASAN
  __sanitizer_start_switch_fiber(NULL, block.schedulerStack,
                                 block.schedulerStackSize);
#endif
  setcontext(&block.scheduler);
  abort(); /* setcontext does not return */
}

/* Every fiber starts here, as the thread the scheduler switched to. */
static void fiberMain(void) {
  Fiber *f = block.current;
#ifdef MIXEMU_ASAN
  f->fakeStack = NULL;
#endif
  arrivedOnFiber(f);
  block.launch(block.params, &f->thread);
  f->state = kReturned;
  leaveFiber();
}

int mixemuOnFiber(void) { return block.current != NULL; }

void mixemuAbandonFiber(void) {
  block.current->state = kFailed;
  leaveFiber();
}

/* ---- Messages ---------------------------------------------------------- */

/* Which threads (or lanes) a message names. */
static unsigned char picked[kMaxThreads];

/* picked[first .. first + n) as ranges of indices from 0: "0-3, 7". */
static void describePicked(char *out, size_t size, unsigned first, unsigned n) {
  size_t used = 0;
  int ranges = 0;
  out[0] = 0;
  for (unsigned i = 0; i < n && used < size; ++i) {
    if (!picked[first + i])
      continue;
    unsigned last = i;
    while (last + 1 < n && picked[first + last + 1])
      ++last;
    if (++ranges > 8) {
      snprintf(out + used, size - used, ", ...");
      return;
    }
    const char *comma = ranges > 1 ? ", " : "";
    int w = last == i
                ? snprintf(out + used, size - used, "%s%u", comma, i)
                : snprintf(out + used, size - used, "%s%u-%u", comma, i, last);
    used += w > 0 ? (size_t)w : 0;
    i = last;
  }
}

/* "block 3" in a one-dimensional grid, else "block (x, y, z)"; then, in a
   block of more than one dimension, a note that threads are numbered by
   their linear ids. */
static void describeBlock(char *out, size_t size, const char *threads) {
  const int64_t *id = block.fibers[0].thread.ids;
  int oneDimensional = id[MIXEMU_ID_BDIM_Y] == 1 && id[MIXEMU_ID_BDIM_Z] == 1;
  if (id[MIXEMU_ID_GDIM_Y] == 1 && id[MIXEMU_ID_GDIM_Z] == 1)
    snprintf(out, size, "%s of block %lld%s", threads,
             (long long)id[MIXEMU_ID_BID_X],
             oneDimensional ? "" : " (linear ids, x fastest)");
  else
    snprintf(out, size, "%s of block (%lld, %lld, %lld)%s", threads,
             (long long)id[MIXEMU_ID_BID_X], (long long)id[MIXEMU_ID_BID_Y],
             (long long)id[MIXEMU_ID_BID_Z],
             oneDimensional ? "" : " (linear ids, x fastest)");
}

/* " at loc(...)" for a barrier or shuffle with a site, else "". */
static void describeSite(char *out, size_t size, const char *site) {
  if (site)
    snprintf(out, size, " at %.*s", (int)kSiteChars, site);
  else
    out[0] = 0;
}

/* Ends the launch with CUDA_ERROR_LAUNCH_FAILED and message (the kernel's
   name is put before it). */
static void divergence(const char *format, ...) MIXEMU_NORETURN
    MIXEMU_PRINTF(1, 2);
static void divergence(const char *format, ...) {
  char message[900];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  block.threads = 0;
  mixemuEndLaunch(CUDA_ERROR_LAUNCH_FAILED, message, /*withThread=*/0);
}

/* ---- Barriers ---------------------------------------------------------- */

/* With no thread able to run and none at a shuffle: lets the threads
   waiting at a barrier go on, when every thread that has not returned
   waits at that barrier. Returns 0 when every thread has returned. */
static int releaseBarrier(void) {
  unsigned n = block.threads;
  const Fiber *lead = NULL;
  for (unsigned t = 0; t < n && !lead; ++t)
    if (block.fibers[t].state == kAtBarrier)
      lead = &block.fibers[t];
  if (!lead)
    return 0;
  char site[kSiteChars + 8], who[400], where[512];
  describeSite(site, sizeof site, lead->site);
  /* Threads that returned never reach it. */
  int returned = 0;
  for (unsigned t = 0; t < n; ++t)
    returned |= picked[t] = block.fibers[t].state == kReturned;
  if (returned) {
    describePicked(who, sizeof who, 0, n);
    describeBlock(where, sizeof where, who);
    divergence("a barrier%s that threads %s did not reach (they returned)",
               site, where);
  }
  /* Nor do threads that wait at another one. */
  const Fiber *other = NULL;
  for (unsigned t = 0; t < n && !other; ++t)
    if (block.fibers[t].site != lead->site)
      other = &block.fibers[t]; /* every thread waits at a barrier */
  if (other) {
    char otherSite[kSiteChars + 8], otherWho[400];
    for (unsigned t = 0; t < n; ++t)
      picked[t] = block.fibers[t].site == lead->site;
    describePicked(who, sizeof who, 0, n);
    for (unsigned t = 0; t < n; ++t)
      picked[t] = block.fibers[t].site == other->site;
    describePicked(otherWho, sizeof otherWho, 0, n);
    describeBlock(where, sizeof where, who);
    describeSite(otherSite, sizeof otherSite, other->site);
    divergence("threads %s wait at a barrier%s, threads %s at another%s", where,
               site, otherWho, otherSite);
  }
  for (unsigned t = 0; t < n; ++t)
    block.fibers[t].state = kRunnable;
  return 1;
}

/* The kernel calls `what` but runs its threads one after another. */
static void notOnFiber(const char *what) MIXEMU_NORETURN;
static void notOnFiber(const char *what) {
  char message[256];
  snprintf(message, sizeof message, "%s outside a kernel", what);
  if (!mixemuRunningKernel())
    mixemu_fail(message); /* aborts */
  snprintf(message, sizeof message,
           "%s in a kernel not marked MIXEMU_KERNEL_SYNCHRONIZES, whose "
           "threads run one after another",
           what);
  mixemuEndLaunch(CUDA_ERROR_LAUNCH_FAILED, message, /*withThread=*/1);
}

void mixemu_barrier(const char *site) {
  Fiber *f = block.current;
  if (!f)
    notOnFiber("a barrier");
  f->state = kAtBarrier;
  f->site = site;
  switchToScheduler(f);
}

/* ---- Shuffles ---------------------------------------------------------- */

/* mixemu_exchange waits as a shuffle of width 32 in this mode. */
enum { kExchange = -1 };

/* Checks the shuffle that lane lead of warp `warp` (lanes threads from
   `first`) waits at: every lane it needs is there, and no other.
   Otherwise ends the launch. */
static void checkShuffle(unsigned warp, unsigned first, unsigned lanes,
                         const Fiber *lead) {
  const Fiber *lane = &block.fibers[first];
  char site[kSiteChars + 8], who[400], where[512];
  describeSite(site, sizeof site, lead->site);
  int32_t width = lead->width;
  if (width < 1 || width > kWarpSize) {
    snprintf(who, sizeof who, "warp %u", warp);
    describeBlock(where, sizeof where, who);
    divergence("a shuffle%s of width %d in %s (a width is 1 to %d)", site,
               (int)width, where, (int)kWarpSize);
  }
  const Fiber *other = NULL;
  for (unsigned l = 0; l < lanes && !other; ++l)
    if (lane[l].state == kAtShuffle && lane[l].site != lead->site)
      other = &lane[l];
  if (other) {
    char otherSite[kSiteChars + 8], otherWho[400], lanesOf[420];
    for (unsigned l = 0; l < lanes; ++l)
      picked[first + l] =
          lane[l].state == kAtShuffle && lane[l].site == lead->site;
    describePicked(who, sizeof who, first, lanes);
    for (unsigned l = 0; l < lanes; ++l)
      picked[first + l] =
          lane[l].state == kAtShuffle && lane[l].site == other->site;
    describePicked(otherWho, sizeof otherWho, first, lanes);
    snprintf(lanesOf, sizeof lanesOf, "lanes %s of warp %u", who, warp);
    describeBlock(where, sizeof where, lanesOf);
    describeSite(otherSite, sizeof otherSite, other->site);
    divergence("%s wait at a shuffle%s, lanes %s at another%s", where, site,
               otherWho, otherSite);
  }
  for (unsigned l = 0; l < lanes; ++l)
    if (lane[l].state == kAtShuffle && lane[l].width != width) {
      snprintf(who, sizeof who, "warp %u", warp);
      describeBlock(where, sizeof where, who);
      divergence("the lanes of %s run a shuffle%s with widths %d and %d", where,
                 site, (int)width, (int)lane[l].width);
    }
  /* On a device the lanes below the width make the shuffle's mask. */
  int beyond = 0;
  for (unsigned l = 0; l < lanes; ++l)
    beyond |= picked[first + l] =
        lane[l].state == kAtShuffle && l >= (unsigned)width;
  if (beyond) {
    char lanesOf[420];
    describePicked(who, sizeof who, first, lanes);
    snprintf(lanesOf, sizeof lanesOf, "lanes %s of warp %u", who, warp);
    describeBlock(where, sizeof where, lanesOf);
    divergence("%s run a shuffle%s of width %d, which only the lanes below "
               "its width may run",
               where, site, (int)width);
  }
  if (lanes < (unsigned)width) {
    snprintf(who, sizeof who, "warp %u", warp);
    describeBlock(where, sizeof where, who);
    divergence("a shuffle%s of width %d in %s, which has %u lanes", site,
               (int)width, where, lanes);
  }
  int missing = 0, returned = 0, atBarrier = 0;
  for (unsigned l = 0; l < (unsigned)width; ++l) {
    int absent = lane[l].state != kAtShuffle;
    picked[first + l] = absent;
    missing |= absent;
    returned |= lane[l].state == kReturned;
    atBarrier |= lane[l].state == kAtBarrier;
  }
  for (unsigned l = width; l < lanes; ++l)
    picked[first + l] = 0;
  if (missing) {
    char lanesOf[420];
    describePicked(who, sizeof who, first, lanes);
    snprintf(lanesOf, sizeof lanesOf, "lanes %s of warp %u", who, warp);
    describeBlock(where, sizeof where, lanesOf);
    divergence("a shuffle%s that %s did not reach (%s)", site, where,
               !atBarrier  ? "they returned"
               : !returned ? "they wait at a barrier"
                           : "some returned, some wait at a barrier");
  }
}

/* With no thread able to run: completes, in each warp, the shuffle its
   lanes wait at. Returns whether any was. */
static int completeShuffles(void) {
  int completed = 0;
  for (unsigned first = 0; first < block.threads; first += kWarpSize) {
    unsigned lanes = block.threads - first < kWarpSize ? block.threads - first
                                                       : (unsigned)kWarpSize;
    Fiber *lane = &block.fibers[first];
    const Fiber *lead = NULL;
    for (unsigned l = 0; l < lanes && !lead; ++l)
      if (lane[l].state == kAtShuffle)
        lead = &lane[l];
    if (!lead)
      continue;
    checkShuffle(first / kWarpSize, first, lanes, lead);
    int64_t width = lead->width;
    if (lead->mode == kExchange) {
      /* Every lane at the same site runs the same exchange. */
      for (int64_t k = 0; k < width; ++k)
        for (int64_t j = 0; j < width; ++j)
          memcpy(lane[k].all + j * lane[j].count, lane[j].give,
                 sizeof(float) * (size_t)lane[j].count);
      for (int64_t k = 0; k < width; ++k)
        lane[k].state = kRunnable;
      completed = 1;
      continue;
    }
    for (int64_t k = 0; k < width; ++k) {
      Fiber *f = &lane[k];
      int64_t j;
      switch (f->mode) {
      case MIXEMU_SHUFFLE_XOR:
        j = k ^ (int64_t)(uint32_t)f->offset;
        break;
      case MIXEMU_SHUFFLE_DOWN:
        j = k + f->offset;
        break;
      case MIXEMU_SHUFFLE_UP:
        j = k - f->offset;
        break;
      case MIXEMU_SHUFFLE_IDX:
        j = f->offset;
        break;
      default:
        divergence("a shuffle of mode %d, which is none of "
                   "MIXEMU_SHUFFLE_*",
                   (int)f->mode);
      }
      int valid = j >= 0 && j < width;
      uint32_t value = valid ? lane[j].value : f->value;
      f->result = (int64_t)value | (int64_t)valid << 32;
    }
    for (int64_t k = 0; k < width; ++k)
      lane[k].state = kRunnable;
    completed = 1;
  }
  return completed;
}

int64_t mixemu_shuffle(const char *site, int32_t mode, int32_t value,
                       int32_t offset, int32_t width) {
  Fiber *f = block.current;
  if (!f)
    notOnFiber("a shuffle");
  f->mode = mode;
  f->offset = offset;
  f->width = width;
  f->value = (uint32_t)value;
  f->state = kAtShuffle;
  f->site = site;
  switchToScheduler(f);
  return f->result;
}

void mixemu_exchange(const char *site, const float *give, int32_t count,
                     float *all) {
  Fiber *f = block.current;
  if (!f)
    notOnFiber("an exchange");
  f->mode = kExchange;
  f->offset = 0;
  f->width = kWarpSize;
  f->give = give;
  f->all = all;
  f->count = count;
  f->state = kAtShuffle;
  f->site = site;
  switchToScheduler(f);
}

/* x with its 13 lowest mantissa bits cleared: what the tensor cores read of
   a tf32 operand. */
static float tf32Bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits &= 0xffffe000u;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* The floats a lane gives to a warp's product: 4 of A, 2 of B. */
enum { kGiven = 6 };

/* Gives the lane's 4 A and 2 B floats, each through `read` (what the tensor
   cores read of them), and gets every lane's at `all` (kGiven a lane).
   Returns the lane. */
static int exchangeOperands(const char *site, const float *a, const float *b,
                            float (*read)(float), float *all) {
  Fiber *f = block.current;
  if (!f)
    notOnFiber("a tensor-core product");
  float give[kGiven];
  for (int i = 0; i < 4; ++i)
    give[i] = read(a[i]);
  for (int i = 0; i < 2; ++i)
    give[4 + i] = read(b[i]);
  mixemu_exchange(site, give, kGiven, all);
  /* Fibers are indexed by the thread's linear id. */
  return (int)((f - block.fibers) % kWarpSize);
}

void mixemu_mma_m16n8k8_tf32(const char *site, const float *a, const float *b,
                             float *cd) {
  float all[kWarpSize * kGiven];
  int lane = exchangeOperands(site, a, b, tf32Bits, all);
  int g = lane / 4, t = lane % 4;
  for (int v = 0; v < 4; ++v) {
    float acc = cd[v];
    for (int k = 0; k < 8; ++k) {
      /* A[g + 8 (v / 2)][k]: lane 4 g + k % 4's a[v / 2 + 2 (k / 4)];
         B[k][2 t + v % 2]: lane 4 (2 t + v % 2) + k % 4's b[k / 4]. */
      float x = all[(4 * g + k % 4) * kGiven + v / 2 + 2 * (k / 4)];
      float y = all[(8 * t + 4 * (v % 2) + k % 4) * kGiven + 4 + k / 4];
      float product = x * y;
      acc = acc + product;
    }
    cd[v] = acc;
  }
}

/* The bf16 in half `half` (0: the low 16 bits) of the register whose bits
   `reg` holds, as a float (exactly). */
static float bf16Half(float reg, int half) {
  uint32_t bits;
  memcpy(&bits, &reg, sizeof bits);
  bits = half ? bits & 0xffff0000u : bits << 16;
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* A register's bits, as given (copies of a float keep them). */
static float registerBits(float x) { return x; }

void mixemu_mma_m16n8k16_bf16(const char *site, const float *a, const float *b,
                              float *cd) {
  float all[kWarpSize * kGiven];
  int lane = exchangeOperands(site, a, b, registerBits, all);
  int g = lane / 4, t = lane % 4;
  for (int v = 0; v < 4; ++v) {
    float acc = cd[v];
    for (int k = 0; k < 16; ++k) {
      /* A[g + 8 (v / 2)][k]: lane 4 g + (k % 8) / 2's element
         4 (k / 8) + 2 (v / 2) + k % 2, half k % 2 of its register
         2 (k / 8) + v / 2; B[k][2 t + v % 2]: lane 4 (2 t + v % 2) +
         (k % 8) / 2's element 2 (k / 8) + k % 2, half k % 2 of its register
         k / 8. */
      float x = bf16Half(
          all[(4 * g + (k % 8) / 2) * kGiven + 2 * (k / 8) + v / 2], k % 2);
      float y = bf16Half(
          all[(8 * t + 4 * (v % 2) + (k % 8) / 2) * kGiven + 4 + k / 8], k % 2);
      /* Exact: two 8-bit significands. */
      float product = x * y;
      acc = acc + product;
    }
    cd[v] = acc;
  }
}

/* ---- Blocks ------------------------------------------------------------ */

/* Fibers with stacks for threads threads. Returns 0 without memory. */
static int reserveFibers(unsigned threads) {
  if (!block.fibers &&
      !(block.fibers = (Fiber *)calloc(kMaxThreads, sizeof(Fiber))))
    return 0;
  while (block.stacks < threads) {
    void *p =
        mmap(NULL, kGuardBytes + kStackBytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
      return 0;
    if (mprotect(p, kGuardBytes, PROT_NONE) != 0) {
      munmap(p, kGuardBytes + kStackBytes);
      return 0;
    }
    block.fibers[block.stacks++].stack = (unsigned char *)p + kGuardBytes;
  }
  return 1;
}

/* Runs fiber f until it waits, returns or fails; a failure leaves the
   launch. */
static void runFiber(Fiber *f) {
  block.current = f;
  mixemuSetRunningThread(&f->thread);
  switchToFiber(f);
  block.current = NULL;
  if (f->state == kFailed) {
    block.threads = 0;
    mixemuLeaveLaunch();
  }
}

void mixemuRunBlockOnFibers(mixemu_launch_fn launch, void **params,
                            const MixEmuThread *first, unsigned threads) {
  if (threads > kMaxThreads || !reserveFibers(threads))
    mixemuEndLaunch(CUDA_ERROR_OUT_OF_MEMORY,
                    "no memory for the fibers of a block", /*withThread=*/0);
  block.launch = launch;
  block.params = params;
  block.threads = threads;
  int64_t sizeX = first->ids[MIXEMU_ID_BDIM_X];
  int64_t sizeY = first->ids[MIXEMU_ID_BDIM_Y];
  for (unsigned t = 0; t < threads; ++t) {
    Fiber *f = &block.fibers[t];
    f->thread = *first;
    f->thread.ids[MIXEMU_ID_TID_X] = t % sizeX;
    f->thread.ids[MIXEMU_ID_TID_Y] = t / sizeX % sizeY;
    f->thread.ids[MIXEMU_ID_TID_Z] = t / sizeX / sizeY;
    f->state = kRunnable;
    f->site = NULL;
    if (getcontext(&f->context) != 0)
      mixemuEndLaunch(CUDA_ERROR_LAUNCH_FAILED, "getcontext failed for a fiber",
                      /*withThread=*/0);
    f->context.uc_stack.ss_sp = f->stack;
    f->context.uc_stack.ss_size = kStackBytes;
    f->context.uc_link = NULL;
    makecontext(&f->context, fiberMain, 0);
  }
  for (;;) {
    for (unsigned t = 0; t < threads; ++t)
      if (block.fibers[t].state == kRunnable)
        runFiber(&block.fibers[t]);
    if (completeShuffles())
      continue;
    if (!releaseBarrier())
      break;
  }
  block.threads = 0;
}
