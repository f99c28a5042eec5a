// RUN: mix-opt %s -split-input-file -verify-diagnostics --mix-memory-to-device

// What mix-memory-to-device refuses, with the reason.

func.func @dynamic(%n: index) {
  // expected-error @+1 {{dynamic allocations are not supported on the CUDA target (every shape is static)}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

