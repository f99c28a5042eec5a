//===- ScopeCallAllocasTest.cpp - Launch stack space freed after each call ===//
//
// scopeCallAllocas on LLVM IR shaped as the translation of gpu.launch_func
// leaves it: a loop whose body builds a launch's parameter array in
// allocas. Without the bracket, every iteration keeps its allocas until
// the function returns.
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/Codegen.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

namespace {

/// A loop of `n` launches, as the launch translation builds them, and
/// `escape`: the same, but the parameter array is also passed to @keep,
/// which may hold on to it.
constexpr const char *kIR = R"IR(
declare void @mgpuLaunchKernel(ptr, i64, i64, i64, i64, i64, i64, i32, ptr, ptr, ptr, i64)
declare void @keep(ptr)

define void @loop(ptr %f, ptr %buffer, i64 %n) {
entry:
  %frame = alloca i64
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %args = alloca { ptr, i64 }
  %params = alloca ptr, i64 2
  %a0 = getelementptr inbounds { ptr, i64 }, ptr %args, i32 0, i32 0
  store ptr %buffer, ptr %a0
  %p0 = getelementptr ptr, ptr %params, i32 0
  store ptr %a0, ptr %p0
  %a1 = getelementptr inbounds { ptr, i64 }, ptr %args, i32 0, i32 1
  store i64 %i, ptr %a1
  %p1 = getelementptr ptr, ptr %params, i32 1
  store ptr %a1, ptr %p1
  call void @mgpuLaunchKernel(ptr %f, i64 1, i64 1, i64 1, i64 8, i64 1, i64 1, i32 0, ptr null, ptr %params, ptr null, i64 2)
  %next = add i64 %i, 1
  br label %head
exit:
  ret void
}

define void @escape(ptr %f, i64 %n) {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %exit
body:
  %params = alloca ptr, i64 1
  call void @keep(ptr %params)
  call void @mgpuLaunchKernel(ptr %f, i64 1, i64 1, i64 1, i64 8, i64 1, i64 1, i32 0, ptr null, ptr %params, ptr null, i64 1)
  %next = add i64 %i, 1
  br label %head
exit:
  ret void
}
)IR";

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext &context) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(kIR, error, context);
  EXPECT_TRUE(module) << error.getMessage().str();
  return module;
}

/// The intrinsic calls of \p id in \p block, in order.
std::vector<llvm::IntrinsicInst *> calls(llvm::BasicBlock &block,
                                         llvm::Intrinsic::ID id) {
  std::vector<llvm::IntrinsicInst *> out;
  for (llvm::Instruction &inst : block)
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
        call && call->getIntrinsicID() == id)
      out.push_back(call);
  return out;
}

llvm::BasicBlock &block(llvm::Module &module, llvm::StringRef function,
                        llvm::StringRef name) {
  for (llvm::BasicBlock &b : *module.getFunction(function))
    if (b.getName() == name)
      return b;
  ADD_FAILURE() << "no block " << name.str();
  return module.getFunction(function)->getEntryBlock();
}

TEST(ScopeCallAllocas, FreesALaunchsParametersAfterIt) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parse(context);
  ASSERT_TRUE(module);
  mlir::mix::scopeCallAllocas(*module, {"mgpuLaunchKernel"});
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  llvm::BasicBlock &body = block(*module, "loop", "body");
  auto saves = calls(body, llvm::Intrinsic::stacksave);
  auto restores = calls(body, llvm::Intrinsic::stackrestore);
  ASSERT_EQ(saves.size(), 1u);
  ASSERT_EQ(restores.size(), 1u);
  // The save comes first in the body, before both allocas; the restore
  // right after the launch, with the saved pointer.
  EXPECT_EQ(&body.front(), saves[0]);
  auto *launch = llvm::cast<llvm::CallBase>(restores[0]->getPrevNode());
  EXPECT_EQ(launch->getCalledFunction()->getName(), "mgpuLaunchKernel");
  EXPECT_EQ(restores[0]->getArgOperand(0), saves[0]);
  // The entry block's alloca (the frame's own) is left where it is.
  EXPECT_TRUE(calls(module->getFunction("loop")->getEntryBlock(),
                    llvm::Intrinsic::stacksave)
                  .empty());
}

TEST(ScopeCallAllocas, LeavesAnAllocaThatEscapes) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parse(context);
  ASSERT_TRUE(module);
  mlir::mix::scopeCallAllocas(*module, {"mgpuLaunchKernel"});
  llvm::BasicBlock &body = block(*module, "escape", "body");
  EXPECT_TRUE(calls(body, llvm::Intrinsic::stacksave).empty());
  EXPECT_TRUE(calls(body, llvm::Intrinsic::stackrestore).empty());
}

TEST(ScopeCallAllocas, OnlyTheCallsNamed) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = parse(context);
  ASSERT_TRUE(module);
  mlir::mix::scopeCallAllocas(*module, {});
  EXPECT_TRUE(calls(block(*module, "loop", "body"), llvm::Intrinsic::stacksave)
                  .empty());
}

} // namespace
