//===- Declarations.cpp - The support code's functions in a module --------===//

#include "mix/Codegen/Declarations.h"

using namespace mlir;

func::FuncOp mlir::mix::lookupOrDeclareFunction(ModuleOp module,
                                                StringRef name,
                                                FunctionType type,
                                                DeclarationPlace place) {
  if (Operation *existing = module.lookupSymbol(name)) {
    auto fn = dyn_cast<func::FuncOp>(existing);
    if (!fn || fn.getFunctionType() != type) {
      existing->emitError("@")
          << name << " exists and is not the support code's " << type;
      return nullptr;
    }
    return fn;
  }
  OpBuilder b = place == DeclarationPlace::Start
                    ? OpBuilder::atBlockBegin(module.getBody())
                    : OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}
