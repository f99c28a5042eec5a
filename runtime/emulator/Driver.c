/*===- Driver.c - The emulated CUDA driver: errors, device, streams -------===//
 *
 * Part of the CUDA emulator (runtime/emulator), which runs a CUDA package's
 * host code and kernels on the CPU (mixc --target cuda --emulate). This
 * file is the driver API's frame around the memory (Memory.c), kernels
 * (Launch.c) and products (CublasLt.c):
 *  - errors: each failing call records a message, which cuGetErrorString
 *    gives for that status, so that the support code's checkCu carries
 *    the emulator's diagnosis (which kernel, which allocation) into the
 *    package's error. A fault in a kernel is sticky: every later call
 *    fails with it, as a device's context does;
 *  - the devices of an HGX H200 node, 0 to 7, each an H200 as far as its
 *    attributes go (compute capability 9.0, its launch limits), with its
 *    primary context; a process uses one (each rank of a data-parallel
 *    run its local rank's), and they share the one arena of Memory.c; calls
 *    that need the context check that cuInit ran and a context is
 *    current, as the driver does, so that the support code's order of
 *    calls is checked too;
 *  - streams: handles only. All work is synchronous, so synchronizing is
 *    a no-op and a query always finds the stream idle;
 *  - count-only mode (MIXEMU_COUNT_ONLY=1, mixemu/Emulator.h): read by
 *    cuInit, which refuses a value other than 0 or 1.
 *
 *===----------------------------------------------------------------------===*/

#include "Internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Errors ------------------------------------------------------------ */

enum { kMessageSize = 1024 };

static CUresult lastStatus = CUDA_SUCCESS;
static char lastMessage[kMessageSize];
static int lastFromLibrary; /* lastMessage is a library's, not a status' */
static CUresult sticky = CUDA_SUCCESS;
static char stickyMessage[kMessageSize];

CUresult mixemuError(CUresult status, const char *format, ...) {
  lastStatus = status;
  lastFromLibrary = 0;
  lastMessage[0] = 0;
  if (format) {
    va_list args;
    va_start(args, format);
    vsnprintf(lastMessage, sizeof lastMessage, format, args);
    va_end(args);
  }
  return status;
}

void mixemuLibraryError(const char *format, ...) {
  lastStatus = CUDA_ERROR_UNKNOWN;
  lastFromLibrary = 1;
  va_list args;
  va_start(args, format);
  vsnprintf(lastMessage, sizeof lastMessage, format, args);
  va_end(args);
  fprintf(stderr, "mixemu: %s\n", lastMessage);
}

void mixemuSetSticky(CUresult status, const char *message) {
  char text[kMessageSize]; /* message may be lastMessage */
  snprintf(text, sizeof text, "%s", message);
  if (sticky == CUDA_SUCCESS) {
    sticky = status;
    snprintf(stickyMessage, sizeof stickyMessage, "%s", text);
  }
  mixemuError(status, "%s", text);
}

const char *mixemu_last_error(void) {
  return lastStatus == CUDA_SUCCESS ? "" : lastMessage;
}

typedef struct {
  CUresult status;
  const char *name, *text;
} ErrorInfo;

/* The names and the driver's own descriptions of the errors declared. */
static const ErrorInfo errorInfo[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
     "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "the capture was not initiated in this stream"},
    {CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
     "the capture sequence contains a fork that was not joined to the "
     "primary stream"},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking "
     "stream"},
    {CUDA_ERROR_CAPTURED_EVENT, "CUDA_ERROR_CAPTURED_EVENT",
     "operation not permitted on an event last recorded in a capturing "
     "stream"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const ErrorInfo *findError(CUresult status) {
  for (size_t i = 0; i < sizeof errorInfo / sizeof errorInfo[0]; ++i)
    if (errorInfo[i].status == status)
      return &errorInfo[i];
  return NULL;
}

CUresult cuGetErrorName(CUresult error, const char **pStr) {
  const ErrorInfo *info = findError(error);
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  *pStr = info ? info->name : NULL;
  return info ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The emulator's message for the error when it is the last one (or the
   sticky one); else the driver's description. */
CUresult cuGetErrorString(CUresult error, const char **pStr) {
  const ErrorInfo *info = findError(error);
  if (!pStr)
    return CUDA_ERROR_INVALID_VALUE;
  if (error != CUDA_SUCCESS && error == lastStatus && !lastFromLibrary &&
      lastMessage[0])
    *pStr = lastMessage;
  else if (error != CUDA_SUCCESS && error == sticky)
    *pStr = stickyMessage;
  else
    *pStr = info ? info->text : NULL;
  return *pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- The device and its primary context -------------------------------- */

/* The devices: a node's, so that each local rank of a data-parallel run
   finds its own (mix-run picks the local rank's). */
enum { kDevices = 8 };

struct CUctx_st {
  int retained; /* cuDevicePrimaryCtxRetain minus Release */
  CUdevice device;
};

static int initialized;
static struct CUctx_st primary[kDevices];
static CUcontext current;

int mixemuInitialized(void) { return initialized; }

static CUresult checkInitialized(void) {
  return initialized ? CUDA_SUCCESS
                     : mixemuError(CUDA_ERROR_NOT_INITIALIZED,
                                   "the driver is used before cuInit");
}

static CUresult checkDevice(CUdevice dev) {
  CUresult status = checkInitialized();
  if (status != CUDA_SUCCESS)
    return status;
  return dev >= 0 && dev < kDevices
             ? CUDA_SUCCESS
             : mixemuError(CUDA_ERROR_INVALID_DEVICE,
                           "device %d: the emulator has devices 0 to %d", dev,
                           kDevices - 1);
}

CUresult mixemuCheckContext(void) {
  CUresult status = checkInitialized();
  if (status != CUDA_SUCCESS)
    return status;
  if (sticky != CUDA_SUCCESS)
    return mixemuError(sticky, "%s", stickyMessage);
  if (!current)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "no context is current (cuCtxSetCurrent)");
  if (!current->retained)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "the current context is the primary context, which "
                       "was released");
  return CUDA_SUCCESS;
}

/* ---- Count-only mode --------------------------------------------------- */

static int countOnly = -1;       /* -1: MIXEMU_COUNT_ONLY not read yet */
static const char *badCountOnly; /* its value, when neither 0 nor 1 */

/* Says once that nothing is computed. */
static void warnCountOnly(void) {
  static int warned;
  if (warned)
    return;
  warned = 1;
  fprintf(stderr, "CUDA emulator: MIXEMU_COUNT_ONLY=1: nothing is computed; "
                  "the results are not the model's\n");
}

int mixemuCountOnly(void) {
  if (countOnly < 0) {
    const char *env = getenv("MIXEMU_COUNT_ONLY");
    countOnly = env && strcmp(env, "1") == 0;
    if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0)
      badCountOnly = env;
    if (countOnly)
      warnCountOnly();
  }
  return countOnly;
}

int mixemu_count_only(void) { return mixemuCountOnly(); }

void mixemu_set_count_only(int on) {
  int was = mixemuCountOnly();
  countOnly = on != 0;
  badCountOnly = NULL;
  if (countOnly)
    warnCountOnly();
  else if (was)
    mixemuRestoreAccess();
}

CUresult cuInit(unsigned int Flags) {
  if (Flags != 0)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, "cuInit: flags must be 0");
  mixemuCountOnly();
  if (badCountOnly)
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "MIXEMU_COUNT_ONLY is '%s', expected 1 (check and "
                       "count launches, products and copies without running "
                       "them) or 0",
                       badCountOnly);
  initialized = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  CUresult status = checkDevice(ordinal);
  if (status != CUDA_SUCCESS)
    return status;
  if (!device)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  *device = ordinal;
  return CUDA_SUCCESS;
}

/* An H200's (sm_90) answers. */
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
                              CUdevice dev) {
  CUresult status = checkDevice(dev);
  if (status != CUDA_SUCCESS)
    return status;
  if (!pi)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *pi = 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *pi = 64;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *pi = 2147483647;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *pi = 65535;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *pi = 48 * 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *pi = 32;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *pi = 132;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *pi = 9;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *pi = 0;
    return CUDA_SUCCESS;
  }
  return mixemuError(CUDA_ERROR_INVALID_VALUE,
                     "cuDeviceGetAttribute: attribute %d is not emulated",
                     (int)attrib);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  CUresult status = checkDevice(dev);
  if (status != CUDA_SUCCESS)
    return status;
  if (!pctx)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  primary[dev].device = dev;
  ++primary[dev].retained;
  *pctx = &primary[dev];
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  CUresult status = checkDevice(dev);
  if (status != CUDA_SUCCESS)
    return status;
  if (!primary[dev].retained)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "cuDevicePrimaryCtxRelease: the primary context is not "
                       "retained");
  --primary[dev].retained;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  CUresult status = checkInitialized();
  if (status != CUDA_SUCCESS)
    return status;
  int known = !ctx;
  for (int d = 0; d < kDevices; ++d)
    known |= ctx == &primary[d];
  if (!known)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "cuCtxSetCurrent: not a context of the emulator");
  if (ctx && !ctx->retained)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "cuCtxSetCurrent: the primary context is not retained");
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  CUresult status = checkInitialized();
  if (status != CUDA_SUCCESS)
    return status;
  if (!current)
    return mixemuError(CUDA_ERROR_INVALID_CONTEXT,
                       "cuCtxGetDevice: no context is current");
  if (!device)
    return mixemuError(CUDA_ERROR_INVALID_VALUE, NULL);
  *device = current->device;
  return CUDA_SUCCESS;
}

/* ---- Streams ----------------------------------------------------------- */

struct CUstream_st {
  unsigned flags;
  struct CUstream_st *next; /* the live streams */
};

static struct CUstream_st *streams;

CUresult mixemuCheckStream(CUstream stream, const char *what) {
  if (!stream || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD)
    return CUDA_SUCCESS;
  for (struct CUstream_st *s = streams; s; s = s->next)
    if (s == stream)
      return CUDA_SUCCESS;
  return mixemuError(CUDA_ERROR_INVALID_HANDLE,
                     "%s: stream %p is not a live stream (destroyed?)", what,
                     (void *)stream);
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuStreamCreate: flags must be 0 or "
                       "CU_STREAM_NON_BLOCKING");
  struct CUstream_st *s = (struct CUstream_st *)malloc(sizeof *s);
  if (!s)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuStreamCreate");
  s->flags = Flags;
  s->next = streams;
  streams = s;
  *phStream = s;
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream hStream) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  for (struct CUstream_st **link = &streams; *link; link = &(*link)->next)
    if (*link == hStream) {
      *link = hStream->next;
      mixemuForgetCapture(hStream);
      free(hStream);
      return CUDA_SUCCESS;
    }
  return mixemuError(CUDA_ERROR_INVALID_HANDLE,
                     "cuStreamDestroy: %p is not a live stream",
                     (void *)hStream);
}

CUresult cuStreamSynchronize(CUstream hStream) {
  const char *what = "cuStreamSynchronize";
  CUresult status = mixemuCheckContext();
  if (status == CUDA_SUCCESS)
    status = mixemuCheckStream(hStream, what);
  return status != CUDA_SUCCESS ? status
                                : mixemuCheckNotCapturing(hStream, what);
}

/* Work is done when it is queued: a stream is always idle. */
CUresult cuStreamQuery(CUstream hStream) {
  const char *what = "cuStreamQuery";
  CUresult status = mixemuCheckContext();
  if (status == CUDA_SUCCESS)
    status = mixemuCheckStream(hStream, what);
  return status != CUDA_SUCCESS ? status
                                : mixemuCheckNotCapturing(hStream, what);
}

/* ---- Events ------------------------------------------------------------ */

/* Work is done when it is queued: an event is complete once recorded. The
   checks are the ones a device makes (a live event, a live stream). On a
   capturing stream an event marks the capture's work instead, for the
   streams that wait for it to fork from the capture or join it
   (Graph.c). */
struct CUevent_st {
  unsigned flags;
  int recorded;
  MixEmuCaptureMark mark;  /* where it was last recorded */
  struct CUevent_st *next; /* the live events */
};

static struct CUevent_st *events;

static CUresult checkEvent(CUevent event, const char *what) {
  for (struct CUevent_st *e = events; e; e = e->next)
    if (e == event)
      return CUDA_SUCCESS;
  return mixemuError(CUDA_ERROR_INVALID_HANDLE,
                     "%s: event %p is not a live event (destroyed?)", what,
                     (void *)event);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  if (!phEvent || (Flags & ~(unsigned)CU_EVENT_DISABLE_TIMING))
    return mixemuError(CUDA_ERROR_INVALID_VALUE,
                       "cuEventCreate: flags must be 0 or "
                       "CU_EVENT_DISABLE_TIMING");
  struct CUevent_st *e = (struct CUevent_st *)malloc(sizeof *e);
  if (!e)
    return mixemuError(CUDA_ERROR_OUT_OF_MEMORY, "cuEventCreate");
  e->flags = Flags;
  e->recorded = 0;
  memset(&e->mark, 0, sizeof e->mark);
  e->next = events;
  events = e;
  *phEvent = e;
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent hEvent) {
  CUresult status = mixemuCheckContext();
  if (status != CUDA_SUCCESS)
    return status;
  for (struct CUevent_st **link = &events; *link; link = &(*link)->next)
    if (*link == hEvent) {
      *link = hEvent->next;
      free(hEvent);
      return CUDA_SUCCESS;
    }
  return mixemuError(CUDA_ERROR_INVALID_HANDLE,
                     "cuEventDestroy: %p is not a live event", (void *)hEvent);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  const char *what = "cuEventRecord";
  CUresult status = mixemuCheckContext();
  if (status == CUDA_SUCCESS)
    status = checkEvent(hEvent, what);
  if (status == CUDA_SUCCESS)
    status = mixemuCheckStream(hStream, what);
  if (status == CUDA_SUCCESS)
    status = mixemuRecordCaptured(hStream, &hEvent->mark);
  if (status == CUDA_SUCCESS)
    hEvent->recorded = 1;
  return status;
}

CUresult cuEventSynchronize(CUevent hEvent) {
  const char *what = "cuEventSynchronize";
  CUresult status = mixemuCheckContext();
  if (status == CUDA_SUCCESS)
    status = checkEvent(hEvent, what);
  /* An event recorded in a capture marks work that has not run (and may
     never): the driver refuses to wait for it until it is recorded again
     outside one. */
  if (status == CUDA_SUCCESS && hEvent->mark.capture)
    status = mixemuError(CUDA_ERROR_CAPTURED_EVENT,
                         "%s: the event was last recorded in a capture", what);
  return status;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
                           unsigned int Flags) {
  const char *what = "cuStreamWaitEvent";
  CUresult status = mixemuCheckContext();
  if (status == CUDA_SUCCESS)
    status = checkEvent(hEvent, what);
  if (status == CUDA_SUCCESS)
    status = mixemuCheckStream(hStream, what);
  if (status == CUDA_SUCCESS && Flags != 0)
    status = mixemuError(CUDA_ERROR_INVALID_VALUE, "%s: flags must be 0", what);
  return status != CUDA_SUCCESS
             ? status
             : mixemuWaitCaptured(hStream, &hEvent->mark, what);
}

/* ---- Profile ----------------------------------------------------------- */

MixEmuProfile mixemuProfileCounters;

const MixEmuProfile *mixemu_profile(void) { return &mixemuProfileCounters; }

void mixemu_profile_reset(void) {
  memset(&mixemuProfileCounters, 0, sizeof mixemuProfileCounters);
  mixemuProfileCounters.peakDeviceBytes = mixemuDeviceBytes();
}

/* A count-only run's one measure of the device: the memory it needed. */
__attribute__((destructor)) static void reportPeakMemory(void) {
  if (countOnly != 1 || !mixemuProfileCounters.peakDeviceBytes)
    return;
  double gib = (double)mixemuProfileCounters.peakDeviceBytes / (1 << 30);
  fprintf(stderr,
          "CUDA emulator: MIXEMU_COUNT_ONLY=1: at most %llu bytes of device "
          "memory were allocated at once (%.2f GiB; an H200 has 140.40 "
          "GiB)\n",
          (unsigned long long)mixemuProfileCounters.peakDeviceBytes, gib);
}
