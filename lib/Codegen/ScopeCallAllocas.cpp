//===- ScopeCallAllocas.cpp - Stack space of a call, freed after it -------===//
//
// The translation of gpu.launch_func to LLVM IR builds each launch's
// parameter array in allocas where the launch is. In a loop those allocas
// are not freed until the function returns, so a host loop of launches
// grows the stack with every iteration (16,384 launches of a row loop
// overflowed 128 MiB). Here, the allocas of a block that serve only a
// call that does not keep the pointers (a kernel launch: the driver copies
// the parameters) are bracketed with llvm.stacksave before the first of
// them and llvm.stackrestore after the call.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace llvm;

/// Whether every use of \p root (through address computations) lies in
/// \p block before \p call, is the call itself, or stores into memory that
/// \p group holds (a pointer kept in the parameter array); \p group is the
/// set of allocas being scoped.
static bool onlyServes(Instruction *root, CallBase *call,
                       const SmallPtrSetImpl<AllocaInst *> &group) {
  SmallVector<Instruction *> worklist{root};
  SmallPtrSet<Instruction *, 16> seen;
  while (!worklist.empty()) {
    Instruction *inst = worklist.pop_back_val();
    if (!seen.insert(inst).second)
      continue;
    for (User *user : inst->users()) {
      auto *use = dyn_cast<Instruction>(user);
      if (!use || use->getParent() != call->getParent())
        return false;
      if (use == call)
        continue;
      if (!use->comesBefore(call))
        return false;
      if (isa<GetElementPtrInst>(use)) {
        worklist.push_back(use);
      } else if (auto *store = dyn_cast<StoreInst>(use)) {
        if (store->getValueOperand() == inst) {
          // The pointer is kept in memory: only in the group's.
          llvm::Value *base = store->getPointerOperand();
          while (auto *gep = dyn_cast<GetElementPtrInst>(base))
            base = gep->getPointerOperand();
          auto *target = dyn_cast<AllocaInst>(base);
          if (!target || !group.contains(target))
            return false;
        }
      } else {
        return false;
      }
    }
  }
  return true;
}

void mlir::mix::scopeCallAllocas(Module &module,
                                 ArrayRef<std::string> nonCapturingCalls) {
  for (Function &f : module) {
    if (f.isDeclaration())
      continue;
    for (BasicBlock &block : f) {
      if (&block == &f.getEntryBlock())
        continue; // the frame's own allocas: fixed size, freed on return
      for (Instruction &inst : make_early_inc_range(block)) {
        auto *call = dyn_cast<CallBase>(&inst);
        Function *callee = call ? call->getCalledFunction() : nullptr;
        if (!callee ||
            !llvm::is_contained(nonCapturingCalls, callee->getName()))
          continue;
        SmallPtrSet<AllocaInst *, 8> group;
        for (Instruction &before : block) {
          if (&before == call)
            break;
          if (auto *alloca = dyn_cast<AllocaInst>(&before))
            group.insert(alloca);
        }
        if (group.empty())
          continue;
        // Every alloca before the call must serve only it.
        if (!llvm::all_of(group, [&](AllocaInst *a) {
              return onlyServes(a, call, group);
            }))
          continue;
        AllocaInst *first = nullptr;
        for (Instruction &before : block)
          if (auto *alloca = dyn_cast<AllocaInst>(&before);
              alloca && group.contains(alloca)) {
            first = alloca;
            break;
          }
        IRBuilder<> b(first);
        llvm::Value *saved = b.CreateStackSave();
        b.SetInsertPoint(call->getNextNode());
        b.CreateStackRestore(saved);
      }
    }
  }
}
