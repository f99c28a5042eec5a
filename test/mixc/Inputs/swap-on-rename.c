/* An LD_PRELOAD interposer for bad-cli.test: plays someone who swaps the
   package directory for a symbolic link while mixc compiles. When mixc
   renames a path to a name containing ".old" (the old package, about to be
   deleted), it first moves that path aside to MIX_SWAP_ASIDE and puts a
   symbolic link to MIX_SWAP_TARGET in its place. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rename(const char *from, const char *to) {
  static int (*real)(const char *, const char *);
  if (!real)
    real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  const char *aside = getenv("MIX_SWAP_ASIDE"),
             *target = getenv("MIX_SWAP_TARGET");
  static int swapped;
  if (!swapped && aside && target && strstr(to, ".old")) {
    swapped = 1;
    if (real(from, aside) != 0 || symlink(target, from) != 0) {
      perror("swap-on-rename");
      abort();
    }
  }
  return real(from, to);
}
