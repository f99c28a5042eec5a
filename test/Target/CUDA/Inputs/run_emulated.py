#!/usr/bin/env python3
"""Runs one entry point of a library built for the CUDA emulator, as the
runtime would: each float32 buffer allocated on the emulated device, the
inputs uploaded, the entry point called between mixrt_device_begin and
mixrt_device_end, the outputs downloaded. Prints the outputs, or the
device's error (and exits 1).

usage: run_emulated.py LIB.so ENTRY N_INPUTS SIZE...
  Each SIZE is the number of float32 elements of one argument (inputs
  first); input k holds 1, 2, 3, ... + 100 k.
"""
import ctypes
import sys


def main():
    lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)
    entry, inputs = sys.argv[2], int(sys.argv[3])
    sizes = [int(s) for s in sys.argv[4:]]
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
        if k < inputs:
            host = (ctypes.c_float * n)(*[i + 1 + 100 * k for i in range(n)])
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
