#!/usr/bin/env python3
"""Runs entry points of a library built for the CUDA emulator on numpy
arrays, as the runtime would: each buffer allocated on the emulated
device, the inputs uploaded, the entry point called between
mixrt_device_begin and mixrt_device_end, the outputs downloaded. Shared by
the checks of the hand-scheduled kernels (flash_attention_check.py,
cross_entropy_check.py).
"""
import ctypes
import sys

import numpy as np


class Device:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        lib = self.lib
        lib.mixrt_device_alloc.restype = ctypes.c_void_p
        lib.mixrt_device_alloc.argtypes = [ctypes.c_uint64]
        lib.mixrt_device_upload.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.c_uint64]
        lib.mixrt_device_download.argtypes = [ctypes.c_void_p,
                                              ctypes.c_void_p,
                                              ctypes.c_uint64]
        lib.mixrt_device_error.restype = ctypes.c_char_p
        # Each entry point's calls share a device memory plan, made at its
        # first call: one plan an entry, as the runtime keeps them.
        self.entries = {}

    def run(self, entry, inputs, output_shapes, read_back=()):
        """Calls entry point `entry` on `inputs` (float32, or integer arrays
        as they are); returns the float32 outputs of the given shapes, then
        the inputs numbered in `read_back` as the call left them (the
        buffers it updates in place)."""
        lib = self.lib
        arrays = [np.ascontiguousarray(
            x, dtype=x.dtype if x.dtype.kind == "i" else np.float32)
            for x in inputs]
        arrays += [np.full(s, np.nan, dtype=np.float32) for s in output_shapes]
        buffers = []
        for k, a in enumerate(arrays):
            device = lib.mixrt_device_alloc(a.nbytes)
            if not device:
                sys.exit("error: " + lib.mixrt_device_error().decode())
            # Outputs start as NaN: an element the kernels miss shows.
            lib.mixrt_device_upload(device, a.ctypes.data, a.nbytes)
            buffers.append(device)
        args = (ctypes.c_void_p * len(buffers))(*buffers)
        lib.mixrt_device_begin(self.entries.setdefault(entry,
                                                       len(self.entries)))
        getattr(lib, "mix_" + entry)(args)
        if lib.mixrt_device_end() != 0:
            sys.exit("error: " + lib.mixrt_device_error().decode())
        outputs = arrays[len(inputs):]
        for a, device in zip(outputs, buffers[len(inputs):]):
            lib.mixrt_device_download(a.ctypes.data, device, a.nbytes)
        for k in read_back:
            a = arrays[k]
            lib.mixrt_device_download(a.ctypes.data, buffers[k], a.nbytes)
            outputs.append(a)
        return outputs
