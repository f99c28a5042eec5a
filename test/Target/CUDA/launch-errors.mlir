// RUN: mix-opt %s -split-input-file -verify-diagnostics --mix-parallel-loops-to-gpu --mix-launch-serial-ops

// What mix-parallel-loops-to-gpu and mix-launch-serial-ops refuse, each
// with the reason.


func.func @reduction_loop(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{scf.parallel with reductions is not supported on the CUDA target}}
  %s = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %s : f32
}

// -----

func.func @dynamic_bounds(%x: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{scf.parallel needs constant bounds and positive steps on the CUDA target}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %f, %x[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @loop_with_results(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{a host loop with results reads or writes device memory; the CUDA target cannot run it}}
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    %r = arith.addf %acc, %v : f32
    scf.yield %r : f32
  }
  return %s : f32
}

// -----

func.func @host_load(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{the host code reads device memory directly; the CUDA target cannot run it}}
  %v = memref.load %x[%c0] : memref<8xf32>
  return %v : f32
}
