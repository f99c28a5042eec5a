//===- LastBlock.cpp - The last block of a launch finishes its work -------===//
//
// A reduction split over the blocks of a launch leaves one partial value a
// block; folding them needs every block done. A second launch would wait
// for that; here the blocks count themselves instead and the last one to
// finish folds (the "threadfence reduction" of CUDA's samples): each block
// stores its part, fences it at device scope and takes a ticket from a
// counter in device memory; the block that takes the last ticket has seen
// every other block's fence, fences (acquire) and reads their parts. The
// counter is a zero-initialised global, set back to zero by the last block,
// so a launch needs no memset before it and a CUDA graph replays it as is.
// The fold reads the parts in a fixed order: the result does not depend on
// which block comes last.
//
//===----------------------------------------------------------------------===//

#include "mix/Target/CUDA/CUDACodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::mix;

Value mlir::mix::createBlockCounter(OpBuilder &b, Location loc, ModuleOp module,
                                    StringRef prefix) {
  MLIRContext *ctx = b.getContext();
  auto type = MemRefType::get({1}, IntegerType::get(ctx, 32));
  // Made detached: inserting renames it if the name is taken.
  OpBuilder detached(ctx);
  auto global = memref::GlobalOp::create(
      detached, loc, prefix, detached.getStringAttr("private"), type,
      DenseElementsAttr::get(RankedTensorType::get({1}, type.getElementType()),
                             detached.getI32IntegerAttr(0)),
      /*constant=*/false, /*alignment=*/nullptr);
  SymbolTable(module).insert(global, module.getBody()->begin());
  return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
}

void mlir::mix::createLastBlockSection(OpBuilder &b, Location loc,
                                       gpu::LaunchOp launch, Value counter,
                                       Value flag, int64_t blocks) {
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Type i32 = b.getI32Type();
  Value zero = c(0);
  gpu::KernelDim3 tid = launch.getThreadIds();
  Value first = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid.x, zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid.y, zero)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid.z, zero));
  // This block's stores before the ticket, for every block that reads them.
  LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release, "device");
  gpu::BarrierOp::create(b, loc);
  auto ticket = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ticket.thenBlock());
    // After the barrier, thread 0's fence orders the stores of the whole
    // block (the barrier made them its own) before its ticket: the pattern
    // of the memory model, besides each thread's fence of CUDA's samples.
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::release, "device");
    Value taken = memref::AtomicRMWOp::create(
        b, loc, arith::AtomicRMWKind::addi,
        arith::ConstantIntOp::create(b, loc, i32, 1), counter, zero);
    Value last = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, taken,
        arith::ConstantIntOp::create(b, loc, i32, blocks - 1));
    memref::StoreOp::create(b, loc, arith::ExtUIOp::create(b, loc, i32, last),
                            flag, zero);
  }
  gpu::BarrierOp::create(b, loc);
  Value isLast =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                            memref::LoadOp::create(b, loc, flag, zero),
                            arith::ConstantIntOp::create(b, loc, i32, 0));
  auto section = scf::IfOp::create(b, loc, isLast, /*withElse=*/false);
  b.setInsertionPointToStart(section.thenBlock());
  auto reset = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reset.thenBlock());
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, i32, 0), counter, zero);
  }
  // The other blocks' stores, before this block reads them.
  b.setInsertionPoint(reset);
  LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acquire, "device");
}
