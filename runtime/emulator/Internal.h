/*===- Internal.h - What the CUDA emulator's files share ----------*- C -*-===//
 *
 * The emulator (runtime/emulator) is split by API area: Driver.c (errors,
 * the device, its context and streams), Memory.c (the device memory
 * arena and copies), Launch.c (modules, kernel lookup and launches),
 * Fibers.c (a block's threads as fibers, for barriers and shuffles),
 * Graph.c (stream capture and graphs) and CublasLt.c (matrix products). This
 *header is their common state: the error and context checks every driver call
 *starts with, the arena's queries, count-only mode, and the profile counters.
 *Not installed; not part of any ABI.
 *
 * The emulator is single-threaded: the support code calls it from one
 * thread, and everything it runs is synchronous (a stream is only a
 * handle: work is done before the call that queues it returns, unless the
 * stream is capturing: then it is recorded and runs when the graph is
 * launched).
 *
 *===----------------------------------------------------------------------===*/

#ifndef MIXEMU_INTERNAL_H
#define MIXEMU_INTERNAL_H

#include "mixemu/Emulator.h"

#include <cuda.h>

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define MIXEMU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MIXEMU_NORETURN __attribute__((noreturn))
#else
#define MIXEMU_PRINTF(f, a)
#define MIXEMU_NORETURN
#endif

/* ---- Errors (Driver.c) ------------------------------------------------- */

/* Returns status after recording it with its message (format may be NULL:
   no details), which cuGetErrorString then gives for that status. */
CUresult mixemuError(CUresult status, const char *format, ...)
    MIXEMU_PRINTF(2, 3);

/* Records the message of a failed call of a library over the driver
   (cuBLASLt), which returns only a status, for mixemu_last_error, and
   prints it to stderr: the status alone would not say what went wrong. */
void mixemuLibraryError(const char *format, ...) MIXEMU_PRINTF(1, 2);

/* Makes the context fail every later call with status and message, as a
   device's does after a fault in a kernel. Keeps the first such error. */
void mixemuSetSticky(CUresult status, const char *message);

/* CUDA_SUCCESS when a call that needs the context may run: the driver is
   initialized, a context is current and alive, and no fault is sticky.
   Otherwise the error, recorded. */
CUresult mixemuCheckContext(void);

/* Whether the driver is initialized (cuInit). */
int mixemuInitialized(void);

/* CUDA_SUCCESS for a live stream (or a special one); else the error. */
CUresult mixemuCheckStream(CUstream stream, const char *what);

/* Whether the emulator only counts (MIXEMU_COUNT_ONLY=1, read at the first
   query, or mixemu_set_count_only): launches, products, copies, memsets
   and all-reduces are checked and counted, but not run, and device memory
   is never made accessible. */
int mixemuCountOnly(void);

/* ---- Device memory (Memory.c) ------------------------------------------ */

typedef struct {
  uintptr_t base;
  size_t size;     /* as asked for */
  size_t mapped;   /* committed: size rounded up to pages */
  uint64_t serial; /* numbers the allocations from 1, for messages */
} MixEmuAllocation;

/* The live allocation containing address p, or NULL. */
const MixEmuAllocation *mixemuFindAllocation(uintptr_t p);

/* Whether p lies in the device arena (live, freed or never allocated). */
int mixemuInArena(uintptr_t p);

/* The device memory allocated now: the live allocations, each rounded up
   to whole pages. */
uint64_t mixemuDeviceBytes(void);

/* CUDA_SUCCESS when [p, p + n) lies inside one live allocation; otherwise
   CUDA_ERROR_INVALID_VALUE with a message naming `what` and the
   allocation. n == 0 is always in range. */
CUresult mixemuCheckRange(uintptr_t p, size_t n, const char *what);

/* Describes p for a message ("allocation #3 of 1024 bytes at 0x..., byte
   12", "12 bytes past the end of allocation #3 ...", "not device memory"). */
void mixemuDescribeAddress(uintptr_t p, char *out, size_t size);

/* Makes the live allocations accessible (on != 0), for the emulator's own
   work on device memory (copies, memsets, kernels, products), or
   inaccessible again (on == 0), so that host code that dereferences a
   device pointer between those calls faults; a handler of SIGSEGV then
   reports the address and its allocation before the fault takes its
   course. MIXEMU_HOST_ACCESS_CHECK=0 leaves the memory accessible (for a
   debugger). */
void mixemuDeviceAccess(int on);

/* After count-only mode ends (mixemu_set_count_only(0)): gives the
   allocations made in it, whose pages were left inaccessible, the access
   every allocation has now. */
void mixemuRestoreAccess(void);

/* ---- Launches (Launch.c) and fibers (Fibers.c) ------------------------- */

/* The name of the kernel being run, or NULL outside a launch. */
const char *mixemuRunningKernel(void);

/* The thread whose code runs now, named in the messages of failures. */
void mixemuSetRunningThread(const MixEmuThread *thread);

/* Ends the running launch with status: message (prefixed with the
   kernel's name unless it starts with it; followed by the running
   thread's block and thread if withThread) becomes the context's sticky
   error. From a fiber it switches to the scheduler first, which then
   leaves the launch; from the launch's own stack it leaves at once. */
void mixemuEndLaunch(CUresult status, const char *message,
                     int withThread) MIXEMU_NORETURN;

/* Leaves the running launch, whose error is recorded, from the launch's
   own stack (the scheduler's, never a fiber's): cuLaunchKernel returns. */
void mixemuLeaveLaunch(void) MIXEMU_NORETURN;

/* Runs every thread of one block as a fiber of its own, switching at
   barriers and shuffles, until all have returned. `first` holds the
   block's ids (the thread ids are set here), sizes and shared memory;
   threads is their number. A divergent barrier or shuffle, or a failure
   in a thread, ends the launch (mixemuEndLaunch). */
void mixemuRunBlockOnFibers(mixemu_launch_fn launch, void **params,
                            const MixEmuThread *first, unsigned threads);

/* Whether a fiber of mixemuRunBlockOnFibers is running (not its
   scheduler), and, from one, the switch back to the scheduler after a
   failure: the fiber is abandoned and the launch ends. */
int mixemuOnFiber(void);
void mixemuAbandonFiber(void) MIXEMU_NORETURN;

/* ---- Stream capture (Graph.c) ------------------------------------------ */

/* A node of a graph: does what the call it records would have done, with
   the arguments that call copied when it was captured (payload, malloc'd
   and owned by the graph). Returns what the call would have. */
typedef CUresult (*MixEmuNodeFn)(void *payload);

/* The start of every call that queues work on `stream` (named `what` in
   messages): CUDA_SUCCESS with *graph the graph `stream` is capturing
   into (NULL: not capturing, run the work now), or the error: the
   stream's capture was invalidated, or `stream` is the legacy stream
   while another stream captures (an implicit dependency, which
   invalidates that capture). */
CUresult mixemuCaptureOf(CUstream stream, const char *what, CUgraph *graph);

/* Appends a node to `graph`, which takes `payload` (freed if this fails:
   out of memory, which invalidates the capture). */
CUresult mixemuAddNode(CUgraph graph, MixEmuNodeFn run, void *payload,
                       const char *what);

/* The start of a call that does not queue on a stream but acts at once
   (cuMemAlloc, cuMemFree): while a capture not begun in RELAXED mode is
   active, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is
   invalidated (its graph would not replay the call); else CUDA_SUCCESS. */
CUresult mixemuCheckUnsafeCall(const char *what);

/* The start of a call that waits for or queries `stream` (a
   synchronization): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, invalidating
   the capture, if `stream` is capturing; else CUDA_SUCCESS. */
CUresult mixemuCheckNotCapturing(CUstream stream, const char *what);

/* Ends the capture of a stream being destroyed, if any. */
void mixemuForgetCapture(CUstream stream);

/* Where an event was recorded: in which capture (0: none, its work has
   run), on which stream, after how much of that stream's captured work. */
typedef struct {
  uint64_t capture;
  CUstream stream;
  uint64_t queued;
} MixEmuCaptureMark;

/* cuEventRecord's part in captures: marks the work `stream` has queued in
   its capture, if it captures. */
CUresult mixemuRecordCaptured(CUstream stream, MixEmuCaptureMark *mark);

/* cuStreamWaitEvent's: a stream outside a capture that waits for an event
   recorded in it joins the capture; the origin stream waiting joins back
   what the event marks; a capturing stream may wait only for its own
   capture's events (CUDA_ERROR_STREAM_CAPTURE_ISOLATION). */
CUresult mixemuWaitCaptured(CUstream stream, const MixEmuCaptureMark *mark,
                            const char *what);

/* ---- Profile ----------------------------------------------------------- */

extern MixEmuProfile mixemuProfileCounters;

#endif /* MIXEMU_INTERNAL_H */
