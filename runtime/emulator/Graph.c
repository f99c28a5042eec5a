/*===- Graph.c - Stream capture and CUDA graphs ---------------------------===//
 *
 * Between cuStreamBeginCapture and cuStreamEndCapture, the work queued on
 * a stream (launches, device-to-device copies, memsets, cuBLASLt's
 * products) is recorded as the nodes of a graph instead of being run;
 * cuGraphInstantiateWithFlags makes the graph executable, and each
 * cuGraphLaunch runs its nodes in the order they were captured. A node
 * keeps what its call passed by value (a kernel's parameter values, a
 * product's descriptors and scalars): device memory is read when the
 * graph runs, host memory never.
 *
 * What the driver refuses during a capture, the emulator refuses too, so
 * that code checked here captures on a device:
 *  - a copy from or to host memory on a capturing stream (the emulator's
 *    host memory is pageable, which a graph cannot copy);
 *  - synchronizing or querying a capturing stream;
 *  - cuMemAlloc and cuMemFree while a capture not begun in RELAXED mode
 *    is active (they act at once, so a replay would not repeat them);
 *  - work on the legacy stream while another stream captures.
 * The first such call invalidates the capture: cuStreamEndCapture then
 * returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph. Work on a
 * stream that is not capturing still runs at once.
 *
 * A capture forks and joins as on a device: an event recorded on a
 * capturing stream marks its work so far; a stream that is not capturing
 * and waits for such an event joins the capture (its work goes into the
 * same graph); the origin stream (the one cuStreamBeginCapture named)
 * waiting for an event a forked stream recorded after its last work joins
 * that work back. cuStreamEndCapture of the origin fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNJOINED while a forked stream has work the
 * origin did not wait for, and the forked streams stop capturing with it.
 * A replay runs the nodes of every stream in the order the host queued
 * them, one order the dependencies allow.
 *
 *===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  MixEmuNodeFn run;
  void *payload;
} Node;

/* The nodes, shared by a graph and the executable graphs made from it. */
typedef struct {
  Node *nodes;
  size_t count, capacity;
  int references;
} Nodes;

struct CUgraph_st {
  Nodes *nodes;
};

struct CUgraphExec_st {
  Nodes *nodes;
};

/* The streams capturing (the emulator has one thread: a short list): an
   origin stream, and the streams its capture forked into, which share its
   graph. */
typedef struct Capture {
  CUstream stream;
  CUgraph graph;
  CUstreamCaptureMode mode;
  int invalidated;
  uint64_t id;          /* the capture's number, shared by its forks */
  struct Capture *root; /* a forked stream's origin; NULL for the origin */
  uint64_t queued;      /* the work this stream queued in the capture */
  uint64_t joined;      /* how much of it the origin waited for */
  struct Capture *next;
} Capture;

static Capture *captures;
static uint64_t lastCaptureId;

static void release(Nodes *nodes) {
  if (!nodes || --nodes->references > 0)
    return;
  for (size_t i = 0; i < nodes->count; ++i)
    free(nodes->nodes[i].payload);
  free(nodes->nodes);
  free(nodes);
}

static Capture *findCapture(CUstream stream) {
  for (Capture *c = captures; c; c = c->next)
    if (c->stream == stream)
      return c;
  return NULL;
}

static int isLegacy(CUstream stream) {
  return !stream || stream == CU_STREAM_LEGACY;
}

CUresult mixemuCaptureOf(CUstream stream, const char *what, CUgraph *graph) {
  *graph = NULL;
  if (isLegacy(stream)) {
    /* The legacy stream waits for every blocking stream: for a capturing
       one, that would tie the capture to work outside it. */
    if (!captures)
      return CUDA_SUCCESS;
    captures->invalidated = 1;
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                       "%s on the legacy stream while stream %p is "
                       "capturing (its capture is invalidated)",
                       what, (void *)captures->stream);
  }
  Capture *c = findCapture(stream);
  if (!c)
    return CUDA_SUCCESS;
  if (c->invalidated)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                       "%s on stream %p, whose capture an earlier call "
                       "invalidated",
                       what, (void *)stream);
  *graph = c->graph;
  ++c->queued; /* the caller queues its work in the graph */
  return CUDA_SUCCESS;
}

/* Invalidates the capture that records into `graph`, on every stream. */
static void invalidateCaptureOf(CUgraph graph) {
  for (Capture *c = captures; c; c = c->next)
    if (c->graph == graph)
      c->invalidated = 1;
}

static Capture *findCaptureById(uint64_t id, CUstream stream) {
  for (Capture *c = captures; c; c = c->next)
    if (c->id == id && c->stream == stream)
      return c;
  return NULL;
}

CUresult mixemuRecordCaptured(CUstream stream, MixEmuCaptureMark *mark) {
  mark->capture = 0;
  mark->stream = stream;
  mark->queued = 0;
  Capture *c = isLegacy(stream) ? NULL : findCapture(stream);
  if (!c)
    return CUDA_SUCCESS;
  if (c->invalidated)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                       "cuEventRecord on stream %p, whose capture an earlier "
                       "call invalidated",
                       (void *)stream);
  mark->capture = c->id;
  mark->queued = c->queued;
  return CUDA_SUCCESS;
}

CUresult mixemuWaitCaptured(CUstream stream, const MixEmuCaptureMark *mark,
                            const char *what) {
  Capture *waiting = isLegacy(stream) ? NULL : findCapture(stream);
  if (!mark->capture) {
    if (!waiting)
      return CUDA_SUCCESS; /* the event's work has run */
    invalidateCaptureOf(waiting->graph);
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                       "%s: stream %p is capturing and the event was not "
                       "recorded in its capture (the capture is invalidated)",
                       what, (void *)stream);
  }
  Capture *recorder = findCaptureById(mark->capture, mark->stream);
  if (!recorder)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                       "%s: the event was recorded in a capture that has "
                       "ended",
                       what);
  Capture *root = recorder->root ? recorder->root : recorder;
  if (waiting) {
    Capture *waitingRoot = waiting->root ? waiting->root : waiting;
    if (waitingRoot != root) {
      invalidateCaptureOf(waiting->graph);
      invalidateCaptureOf(root->graph);
      return mixemuError(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
                         "%s: stream %p waits for an event of another "
                         "capture (both are invalidated)",
                         what, (void *)stream);
    }
    /* The origin waiting joins back what the event marks. */
    if (waiting == root && recorder->joined < mark->queued)
      recorder->joined = mark->queued;
    return CUDA_SUCCESS;
  }
  if (isLegacy(stream) || stream == CU_STREAM_PER_THREAD) {
    invalidateCaptureOf(root->graph);
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                       "%s: the legacy stream waits for a capture's event "
                       "(the capture is invalidated)",
                       what);
  }
  /* A stream outside the capture forks from it. */
  Capture *fork = (Capture *)malloc(sizeof *fork);
  if (!fork) {
    invalidateCaptureOf(root->graph);
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "%s", what);
  }
  *fork = *root;
  fork->stream = stream;
  fork->root = root;
  fork->queued = fork->joined = 0;
  fork->next = captures;
  captures = fork;
  return CUDA_SUCCESS;
}

CUresult mixemuAddNode(CUgraph graph, MixEmuNodeFn run, void *payload,
                       const char *what) {
  Nodes *n = graph->nodes;
  if (n->count == n->capacity) {
    size_t next = n->capacity ? 2 * n->capacity : 64;
    Node *grown = (Node *)realloc(n->nodes, next * sizeof(Node));
    if (!grown) {
      free(payload);
      invalidateCaptureOf(graph);
      return mixemuError(CUDA_ERROR_OUT_OF_MEMORY,
                         "%s: no host memory to record it in the graph", what);
    }
    n->nodes = grown;
    n->capacity = next;
  }
  Node node = {run, payload};
  n->nodes[n->count++] = node;
  return CUDA_SUCCESS;
}

CUresult mixemuCheckUnsafeCall(const char *what) {
  for (Capture *c = captures; c; c = c->next) {
    if (c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
      continue;
    c->invalidated = 1;
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                       "%s while stream %p is capturing (mode %d, not "
                       "RELAXED): a replay of the graph would not repeat it "
                       "(the capture is invalidated)",
                       what, (void *)c->stream, (int)c->mode);
  }
  return CUDA_SUCCESS;
}

CUresult mixemuCheckNotCapturing(CUstream stream, const char *what) {
  Capture *c = isLegacy(stream) ? NULL : findCapture(stream);
  if (!c)
    return CUDA_SUCCESS;
  invalidateCaptureOf(c->graph);
  return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                     "%s of stream %p, which is capturing: nothing of the "
                     "capture has run (the capture is invalidated)",
                     what, (void *)stream);
}

/* Takes the forked streams of `root` out of the capture. */
static void endForks(const Capture *root) {
  for (Capture **link = &captures; *link;)
    if ((*link)->root == root) {
      Capture *fork = *link;
      *link = fork->next;
      free(fork);
    } else {
      link = &(*link)->next;
    }
}

void mixemuForgetCapture(CUstream stream) {
  for (Capture **link = &captures; *link; link = &(*link)->next)
    if ((*link)->stream == stream) {
      Capture *c = *link;
      *link = c->next;
      if (c->root) { /* a forked stream: its origin cannot join it now */
        invalidateCaptureOf(c->graph);
      } else {
        endForks(c);
        cuGraphDestroy(c->graph);
      }
      free(c);
      return;
    }
}

static CUgraph newGraph(void) {
  CUgraph graph = (CUgraph)malloc(sizeof *graph);
  Nodes *nodes = (Nodes *)calloc(1, sizeof *nodes);
  if (!graph || !nodes) {
    free(graph);
    free(nodes);
    return NULL;
  }
  nodes->references = 1;
  graph->nodes = nodes;
  return graph;
}

CUresult cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode) {
  const char *what = "cuStreamBeginCapture";
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckStream(hStream, what)) != CUDA_SUCCESS)
    return status;
  if (isLegacy(hStream) || hStream == CU_STREAM_PER_THREAD)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: the emulator captures created streams only, not "
                       "the legacy or per-thread stream",
                       what);
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
      mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: mode %d", what,
                       (int)mode);
  if (findCapture(hStream))
    return mixemuError(CUDA_ERROR_ILLEGAL_STATE,
                       "%s: stream %p is capturing already", what,
                       (void *)hStream);
  Capture *c = (Capture *)malloc(sizeof *c);
  CUgraph graph = c ? newGraph() : NULL;
  if (!graph) {
    free(c);
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "%s", what);
  }
  c->stream = hStream;
  c->graph = graph;
  c->mode = mode;
  c->invalidated = 0;
  c->id = ++lastCaptureId;
  c->root = NULL;
  c->queued = c->joined = 0;
  c->next = captures;
  captures = c;
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
  const char *what = "cuStreamEndCapture";
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckStream(hStream, what)) != CUDA_SUCCESS)
    return status;
  if (!phGraph)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: no result", what);
  *phGraph = NULL;
  Capture **link = &captures;
  while (*link && (*link)->stream != hStream)
    link = &(*link)->next;
  if (!*link)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                       "%s: stream %p is not capturing", what, (void *)hStream);
  Capture *c = *link;
  if (c->root)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
                       "%s: stream %p joined the capture of stream %p, which "
                       "ends it",
                       what, (void *)hStream, (void *)c->root->stream);
  const Capture *unjoined = NULL;
  for (const Capture *f = captures; f && !unjoined; f = f->next)
    if (f->root == c && f->queued > f->joined)
      unjoined = f;
  CUstream unjoinedStream = unjoined ? unjoined->stream : NULL;
  *link = c->next;
  endForks(c);
  int invalidated = c->invalidated;
  if (invalidated || unjoinedStream)
    cuGraphDestroy(c->graph);
  else
    *phGraph = c->graph;
  free(c);
  if (unjoinedStream && !invalidated)
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
                       "%s: stream %p joined the capture of stream %p and "
                       "queued work that stream never waited for",
                       what, (void *)unjoinedStream, (void *)hStream);
  return invalidated ? mixemuError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                                   "%s: a call during the capture of stream "
                                   "%p invalidated it (see that call's error)",
                                   what, (void *)hStream)
                     : CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream,
                             CUstreamCaptureStatus *captureStatus) {
  const char *what = "cuStreamIsCapturing";
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckStream(hStream, what)) != CUDA_SUCCESS)
    return status;
  if (!captureStatus)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: no result", what);
  Capture *c = isLegacy(hStream) ? NULL : findCapture(hStream);
  *captureStatus = !c               ? CU_STREAM_CAPTURE_STATUS_NONE
                   : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                    : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  return CUDA_SUCCESS;
}

static int isCapturedGraph(CUgraph graph) {
  for (Capture *c = captures; c; c = c->next)
    if (c->graph == graph)
      return 1;
  return 0;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags) {
  const char *what = "cuGraphInstantiateWithFlags";
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!phGraphExec || !hGraph)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: %s", what,
                       hGraph ? "no result" : "no graph");
  if (flags != 0)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: flags 0x%llx (the emulator takes none)", what,
                       flags);
  if (isCapturedGraph(hGraph))
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "%s: the graph is still being captured", what);
  CUgraphExec exec = (CUgraphExec)malloc(sizeof *exec);
  if (!exec)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "%s", what);
  exec->nodes = hGraph->nodes;
  ++exec->nodes->references;
  *phGraphExec = exec;
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  const char *what = "cuGraphLaunch";
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS ||
      (status = mixemuCheckStream(hStream, what)) != CUDA_SUCCESS)
    return status;
  if (!hGraphExec)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: no graph", what);
  CUgraph capturing;
  if ((status = mixemuCaptureOf(hStream, what, &capturing)) != CUDA_SUCCESS)
    return status;
  if (capturing) {
    invalidateCaptureOf(capturing);
    return mixemuError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                       "%s on a capturing stream: the emulator does not "
                       "nest graphs (the capture is invalidated)",
                       what);
  }
  /* In order, as the capture queued them; a node that fails (a kernel's
     fault, sticky) ends the launch with its error. */
  const Nodes *n = hGraphExec->nodes;
  for (size_t i = 0; i < n->count; ++i)
    if ((status = n->nodes[i].run(n->nodes[i].payload)) != CUDA_SUCCESS)
      return status;
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  if (!hGraphExec)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuGraphExecDestroy: no graph");
  release(hGraphExec->nodes);
  free(hGraphExec);
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph) {
  if (!hGraph)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "cuGraphDestroy: no graph");
  if (isCapturedGraph(hGraph))
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuGraphDestroy: the graph is still being captured "
                       "(end the capture first)");
  release(hGraph->nodes);
  free(hGraph);
  return CUDA_SUCCESS;
}
