//===- Declarations.h - The support code's functions in a module -*- C++ -*-===//
//
// The passes that lower operations to calls of the packages' support code
// (cuBLASLt and oneDNN products, the flash attention on the CPU, the
// emulator's barrier and shuffle, the gradients' all-reduce points)
// declare each callee once in the module, privately, and must not call a
// symbol of the same name that is something else.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CODEGEN_DECLARATIONS_H
#define MIX_CODEGEN_DECLARATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::mix {

/// Where in its module a new declaration goes.
enum class DeclarationPlace { Start, End };

/// The private declaration of \p name with \p type in \p module: the
/// function of that name and type there, or one made at \p place. Null,
/// with an error on the symbol, when \p name names something else (another
/// operation, or a function of another type).
func::FuncOp
lookupOrDeclareFunction(ModuleOp module, StringRef name, FunctionType type,
                        DeclarationPlace place = DeclarationPlace::Start);

} // namespace mlir::mix

#endif // MIX_CODEGEN_DECLARATIONS_H
