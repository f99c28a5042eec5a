// RUN: mix-opt %s --pass-pipeline='builtin.module(func.func(mix-report-peak-memory{largest=2}))' --split-input-file --verify-diagnostics

// The peak is the most bytes live between allocations and the frees of the
// function's block: 4 KiB + 1 KiB after %b, never 4 + 1 + 2 (%a is freed
// before %c). The notes name the peak's operation and the two largest
// buffers live there, at their allocations.

// expected-remark@+1 {{peak of 5.0 KiB in 2 live buffers (of 3 allocated)}}
func.func @straight(%in: memref<256xf32>) {
  // expected-note@+1 {{4.0 KiB: memref<1024xf32>}}
  %a = memref.alloc() : memref<1024xf32>
  // expected-note@+2 {{1.0 KiB: memref<256xf32>}}
  // expected-note@+1 {{the peak is reached here, at 'memref.alloc'}}
  %b = memref.alloc() : memref<256xf32>
  memref.copy %in, %b : memref<256xf32> to memref<256xf32>
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<512xf32>
  memref.dealloc %b : memref<256xf32>
  memref.dealloc %c : memref<512xf32>
  return
}

// -----

// A buffer allocated inside a loop counts while the loop runs, on top of
// the buffers live around it; a returned buffer is never freed, and the
// third largest live buffer (%small) is not named with largest=2.

// expected-remark@+1 {{peak of 11.0 KiB in 3 live buffers (of 3 allocated)}}
func.func @nested(%n: index) -> memref<512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note@+1 {{2.0 KiB: memref<512xf32>}}
  %out = memref.alloc() : memref<512xf32>
  %small = memref.alloc() : memref<256xf32>
  // expected-note@+1 {{the peak is reached here, at 'scf.for'}}
  scf.for %i = %c0 to %n step %c1 {
    // expected-note@+1 {{8.0 KiB: memref<2048xf32>}}
    %t = memref.alloc() : memref<2048xf32>
    memref.dealloc %t : memref<2048xf32>
  }
  memref.dealloc %small : memref<256xf32>
  return %out : memref<512xf32>
}

// -----

// Nothing allocated, nothing said.
func.func @none(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}
