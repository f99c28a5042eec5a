#!/usr/bin/env python3
"""Runs one entry point of a library built for the CUDA emulator, as the
runtime would: each float32 buffer allocated on the emulated device, the
inputs uploaded, the entry point called between mixrt_device_begin and
mixrt_device_end, the outputs downloaded. Prints the outputs, or the
device's error (and exits 1).

usage: run_emulated.py [--poison] LIB.so ENTRY N_INPUTS SIZE...
  Each SIZE is the number of float32 elements of one argument (inputs
  first); input k holds 1, 2, 3, ... + 100 k. With --poison the outputs
  hold NaNs before the call, so that an output the entry point reads
  before writing it shows.
"""
import ctypes
import sys


def main():
    argv = sys.argv[1:]
    poison = argv[:1] == ["--poison"]
    if poison:
        argv = argv[1:]
    lib = ctypes.CDLL(argv[0], mode=ctypes.RTLD_LOCAL)
    entry, inputs = argv[1], int(argv[2])
    sizes = [int(s) for s in argv[3:]]
    lib.mixrt_device_alloc.restype = ctypes.c_void_p
    lib.mixrt_device_alloc.argtypes = [ctypes.c_uint64]
    lib.mixrt_device_upload.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_uint64]
    lib.mixrt_device_download.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_uint64]
    lib.mixrt_device_error.restype = ctypes.c_char_p
    buffers = []
    for k, n in enumerate(sizes):
        device = lib.mixrt_device_alloc(4 * n)
        if not device:
            print("error:", lib.mixrt_device_error().decode())
            return 1
        if k < inputs or poison:
            values = ([i + 1 + 100 * k for i in range(n)] if k < inputs
                      else [float("nan")] * n)
            host = (ctypes.c_float * n)(*values)
            lib.mixrt_device_upload(device, host, 4 * n)
        buffers.append(device)
    args = (ctypes.c_void_p * len(buffers))(*buffers)
    lib.mixrt_device_begin(0)
    getattr(lib, "mix_" + entry)(args)
    if lib.mixrt_device_end() != 0:
        print("error:", lib.mixrt_device_error().decode())
        return 1
    for k in range(inputs, len(sizes)):
        host = (ctypes.c_float * sizes[k])()
        lib.mixrt_device_download(host, buffers[k], 4 * sizes[k])
        print(f"output {k - inputs}:", " ".join(f"{v:.9g}" for v in host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
