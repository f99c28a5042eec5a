//===- BufferAliasing.h - Which buffers an operation touches ----*- C++ -*-===//
//
// After bufferization, whether two memrefs can share memory: each is a view
// of a root (an allocation or an argument of its function), and distinct
// roots never overlap (the entry points' arguments are distinct buffers).
// The passes that move or merge work across the operations between two
// accesses of a buffer (a product and the fill of its accumulator, the
// forward and backward halves of the cross-entropy) ask whether those
// operations leave the buffer alone.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_CODEGEN_BUFFERALIASING_H
#define MIX_CODEGEN_BUFFERALIASING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace mlir::mix {

/// The buffer \p v is a view of, followed through view-like operations,
/// `memref.transpose` and `memref.extract_strided_metadata`: an allocation or a
/// block argument where it can be followed there, else the last value reached.
Value getBufferRoot(Value v);

/// The value \p v reshapes, through collapses and expansions only (which
/// keep the elements' row-major order); \p v itself if it is none.
Value getReshapeRoot(Value v);

/// Whether \p a and \p b view the same elements in the same row-major
/// order: one value, or views of one value through collapses and
/// expansions only, both with identity layouts, static shapes and as many
/// elements.
bool sameElementOrder(Value a, Value b);

/// Whether \p root is a buffer of its own, distinct from every other such
/// root: a fresh allocation (`memref.alloc`, `memref.alloca`, `gpu.alloc`:
/// an op declaring it allocates the value), or an argument of its
/// function.
bool isDistinctBuffer(Value root);

/// Whether \p op (with the operations nested in it) neither reads nor
/// writes the buffer \p root: every effect an operation in it declares is
/// on a memref whose root is another distinct buffer, and an operation
/// with undeclared effects (a call, a stream's wait) has only such memrefs
/// among its operands and results: a buffer is reached through a memref
/// value (the host code holds no other pointers to them at this stage).
bool leavesBufferAlone(Operation *op, Value root);

/// Like leavesBufferAlone, but \p op may read \p root: only the effects
/// other than reads it declares count (undeclared effects still count as
/// any access).
bool leavesBufferUnwritten(Operation *op, Value root);

/// The linalg operation before \p op that wrote \p buffer, if that was
/// \p buffer's previous access: in between, only views, operations without
/// memory effects and operations that leave the buffer alone. It writes
/// nothing but \p buffer (its one init is \p buffer itself). Null
/// otherwise.
Operation *findPreviousWriter(Operation *op, Value buffer);

} // namespace mlir::mix

#endif // MIX_CODEGEN_BUFFERALIASING_H
