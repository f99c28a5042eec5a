#!/usr/bin/env python3
"""A kernel with more parameters than PTX 8.0 allows (4 KiB), for the
emulator's check of that limit (emulate-param-limit.test).

usage: param_limit.py emit OUT.mlir COUNT
       param_limit.py run LIB.so COUNT
`emit` writes @sum, whose one launch reads one element of each of COUNT
buffers (so the kernel takes COUNT + 1 pointers); `run` calls it on the
emulator and prints the sum, or exits with the emulator's error.
"""
import os
import sys

import numpy as np


def emit(path, count):
    args = ", ".join(f"%a{i}: memref<1xf32>" for i in range(count))
    lines = [f"func.func @sum({args}, %out: memref<1xf32>) {{",
             "  %c1 = arith.constant 1 : index",
             "  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1,"
             " %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1,"
             " %sz = %c1) {",
             "    %c0 = arith.constant 0 : index",
             "    %s0 = arith.constant 0.0 : f32"]
    for i in range(count):
        lines.append(f"    %v{i} = memref.load %a{i}[%c0] : memref<1xf32>")
        lines.append(f"    %s{i + 1} = arith.addf %s{i}, %v{i} : f32")
    lines += [f"    memref.store %s{count}, %out[%c0] : memref<1xf32>",
              "    gpu.terminator", "  }", "  return", "}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(path, count):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from emulated_device import Device
    inputs = [np.array([1.0], np.float32) for _ in range(count)]
    (total,) = Device(path).run("sum", inputs, [(1,)])
    print(f"sum {total[0]:g}")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("emit", "run"):
        sys.exit(__doc__)
    (emit if sys.argv[1] == "emit" else run)(sys.argv[2], int(sys.argv[3]))


if __name__ == "__main__":
    main()
