#!/usr/bin/env python3
"""Checks an emulated CUDA module (mixc --target cuda --emulate
--emit=llvm): every gpu.launch_func names a kernel that exists as the host
function __mixemu_<kernel>, which takes the launch's arguments plus the
twelve thread, block, block-size and grid-size ids, the block's shared
memory and the size of its dynamic part.

usage: emulated_kernels.py MODULE.mlir
"""
import re
import sys


def main():
    text = open(sys.argv[1]).read()
    kernels = {}
    for m in re.finditer(r"llvm\.func @__mixemu_(\w+)\(([^)]*)\)", text):
        kernels[m.group(1)] = m.group(2).count("%arg")
    bad = count = 0
    for m in re.finditer(
            r"gpu\.launch_func\s+@\w+::@(\w+)[^\n]*?args\(([^\n]*)\)\s*$",
            text, re.M):
        count += 1
        name, args = m.group(1), m.group(2).count(" : ")
        if name not in kernels:
            print(f"launch of {name}: no host function __mixemu_{name}")
            bad += 1
        elif kernels[name] != args + 14:
            print(f"launch of {name} passes {args} arguments; "
                  f"__mixemu_{name} takes {kernels[name]} (with 12 ids and "
                  "the shared memory's 2)")
            bad += 1
    if count == 0 or bad:
        print("no launches found" if count == 0 else f"{bad} mismatches")
        return 1
    print(f"{count} launches of {len(kernels)} emulated kernels: "
          "argument counts match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
