/*===- enospc.c - A disk that fills up, for LD_PRELOAD ----------------------===
 *
 * Interposes write(2): once more than $MIX_ENOSPC_AFTER bytes have gone to
 * files whose path contains $MIX_ENOSPC_MATCH, the rest of the write is
 * refused with ENOSPC (after a short write up to the limit), as a full
 * disk would. Everything else is written normally.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t written;

ssize_t write(int fd, const void *buf, size_t count) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real)
    real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  const char *match = getenv("MIX_ENOSPC_MATCH");
  const char *after = getenv("MIX_ENOSPC_AFTER");
  if (match && after) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len > 0) {
      path[len] = '\0';
      if (strstr(path, match)) {
        size_t limit = strtoull(after, NULL, 10);
        if (written >= limit) {
          errno = ENOSPC;
          return -1;
        }
        if (count > limit - written)
          count = limit - written;
        written += count;
      }
    }
  }
  return real(fd, buf, count);
}
