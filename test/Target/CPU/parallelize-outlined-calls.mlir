// RUN: mix-opt %s --mix-parallelize-outlined-calls | FileCheck %s

// A call of a threaded nest becomes a call of the support code's
// mix_parallel_for with the function's address, the range, and the other
// arguments packed into an i64 array allocated in the caller's entry block.

// CHECK: llvm.func @mix_parallel_for(!llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-LABEL: llvm.func @caller
//  CHECK-SAME:   (%[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64)
//       CHECK:   %[[TWO:.*]] = llvm.mlir.constant(2 : i64) : i64
//       CHECK:   %[[ARRAY:.*]] = llvm.alloca %[[TWO]] x i64 : (i64) -> !llvm.ptr
//       CHECK:   %[[PI:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
//       CHECK:   %[[S0:.*]] = llvm.getelementptr %[[ARRAY]][0] : (!llvm.ptr) -> !llvm.ptr, i64
//       CHECK:   llvm.store %[[PI]], %[[S0]] : i64, !llvm.ptr
//       CHECK:   %[[S1:.*]] = llvm.getelementptr %[[ARRAY]][1] : (!llvm.ptr) -> !llvm.ptr, i64
//       CHECK:   llvm.store %[[N]], %[[S1]] : i64, !llvm.ptr
//       CHECK:   %[[FN:.*]] = llvm.mlir.addressof @nest : !llvm.ptr
//       CHECK:   llvm.call @mix_parallel_for(%[[FN]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ARRAY]])
//   CHECK-NOT:   llvm.call @nest
// An unmarked function is called as it was.
//       CHECK:   llvm.call @serial(%[[P]])
llvm.func @nest(%t0: i64, %t1: i64, %p: !llvm.ptr, %n: i64) attributes {mix.threaded} {
  llvm.return
}
llvm.func @serial(%p: !llvm.ptr) {
  llvm.return
}
llvm.func @caller(%p: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c64 = llvm.mlir.constant(64 : i64) : i64
  llvm.call @nest(%c0, %c64, %p, %n) : (i64, i64, !llvm.ptr, i64) -> ()
  llvm.call @serial(%p) : (!llvm.ptr) -> ()
  llvm.return
}
