//===- MatmulsToLibrary.cpp - Matrix products as oneDNN matmul calls ------===//
//
// After bufferization, linalg.matmul, linalg.batch_matmul and the
// linalg.contract products with two batch dimensions (mix-head-products) on
// f32 or bf16 memrefs become calls of small functions in the package's
// support code, which run a oneDNN matmul primitive made once per call site
// (falling back to sgemm or loops for layouts oneDNN cannot take).
//
//===----------------------------------------------------------------------===//

#include "mix/Codegen/BufferAliasing.h"
#include "mix/Codegen/Codegen.h"
#include "mix/Codegen/Declarations.h"
#include "mix/Codegen/Passes.h"
#include "mix/Codegen/ScalarBodies.h"

#include "mix/Dialect/Mix/IR/MixDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::mix;

namespace mlir::mix {
#define GEN_PASS_DEF_MIXMATMULSTOLIBRARYCALLSPASS
#include "mix/Codegen/Passes.h.inc"
} // namespace mlir::mix

/// The C signature of the support functions: the call site's number, then
/// for each of A, B and C, the
/// base pointer (a rank-0 memref, one pointer under the bare-pointer calling
/// convention), the offset, the sizes and the strides. A and B hold
/// \p inputType (f32 or bf16), C \p outputType (f32, or bf16 for the
/// rounded GELU forms). With \p bias, a vector of \p outputType follows
/// as base pointer, offset, length and stride; with \p triangle, the
/// `mix.triangle` kind and diagonal; with \p aux, a 2-d matrix of
/// \p outputType as the operands are (base, offset, sizes, strides).
/// Null (with an error) when the module's \p name is something else.
static func::FuncOp declare(ModuleOp module, StringRef name, int64_t rank,
                            Type inputType, Type outputType, bool bias,
                            bool triangle, bool aux = false) {
  OpBuilder b(module.getContext());
  SmallVector<Type> inputs{b.getI64Type()};
  for (Type element : {inputType, inputType, outputType}) {
    inputs.push_back(MemRefType::get({}, element));
    inputs.append(1 + 2 * rank, b.getIndexType());
  }
  if (bias) {
    inputs.push_back(MemRefType::get({}, outputType));
    inputs.append(3, b.getIndexType());
  }
  if (triangle)
    inputs.append(2, b.getI64Type());
  if (aux) {
    inputs.push_back(MemRefType::get({}, outputType));
    inputs.append(5, b.getIndexType());
  }
  return lookupOrDeclareFunction(module, name, b.getFunctionType(inputs, {}));
}

/// The operation that last wrote \p op's accumulator, if it is the
/// product's previous access of it (a gradient's fill may come several
/// kernels before its product) and writes nothing but the accumulator.
static Operation *findInitializer(linalg::LinalgOp op) {
  return findPreviousWriter(op, op.getDpsInits()[0]);
}

/// \p op if it is a `linalg.fill` with a float zero; null otherwise.
static linalg::FillOp asZeroFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill)
    return nullptr;
  auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : nullptr;
  return value && value.getValue().isZero() ? fill : nullptr;
}

/// \p op's accumulator's zero `linalg.fill`, if it is the product's
/// previous access of it; null otherwise.
static linalg::FillOp findZeroFill(linalg::LinalgOp op) {
  return asZeroFill(findInitializer(op));
}

/// Whether every operation strictly between \p from and \p to (in one
/// block) leaves the root \p alone alone and does not write the root
/// \p unwritten.
static bool clearBetween(Operation *from, Operation *to, Value alone,
                         Value unwritten) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (!leavesBufferAlone(op, alone) || !leavesBufferUnwritten(op, unwritten))
      return false;
  return true;
}

/// The row vector a 2-d product's accumulator was filled with, if it is
/// the product's previous access of it: a `linalg.generic` that copies an
/// f32 vector (1-d, or 1 x n) into every row of the accumulator, what the
/// bias of a linear layer lowers to. Null otherwise.
static linalg::GenericOp findBiasBroadcast(linalg::LinalgOp op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(findInitializer(op));
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getValues()[0] != body.getArgument(0))
    return nullptr;
  OpOperand *input = generic.getDpsInputOperand(0);
  auto type = dyn_cast<MemRefType>(input->get().getType());
  if (!type || !type.getElementType().isF32() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return nullptr;
  MLIRContext *ctx = op.getContext();
  AffineExpr column = getAffineDimExpr(1, ctx);
  AffineMap map = generic.getMatchingIndexingMap(input);
  bool rowVector =
      (type.getRank() == 1 && map == AffineMap::get(2, 0, {column}, ctx)) ||
      (type.getRank() == 2 && type.getDimSize(0) == 1 &&
       map ==
           AffineMap::get(2, 0, {getAffineConstantExpr(0, ctx), column}, ctx));
  return rowVector ? generic : nullptr;
}

/// Whether \p generic sums the rows of a 2-d f32 memref X into a 1 x n
/// one: maps (d0, d1) -> (d0, d1) and (d0, d1) -> (0, d1), iterators
/// (reduction, parallel), body `out + in` (or `out + extf(in)` of a bf16
/// X: mix-round-into-producers' sums of a rounded operand).
static bool isColumnSum(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != 2 ||
      generic.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                           utils::IteratorType::parallel})
    return false;
  MLIRContext *ctx = generic.getContext();
  AffineExpr d1 = getAffineDimExpr(1, ctx);
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  auto out = dyn_cast<MemRefType>(generic.getDpsInits()[0].getType());
  if (!maps[0].isIdentity() || !out || !out.getElementType().isF32() ||
      out.getRank() != 2 || out.getDimSize(0) != 1 ||
      maps[1] != AffineMap::get(2, 0, {getAffineConstantExpr(0, ctx), d1}, ctx))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  Value in = body.getArgument(0), acc = body.getArgument(1);
  size_t ops = 2;
  if (in.getType().isBF16()) {
    auto wide = dyn_cast<arith::ExtFOp>(body.front());
    if (!wide || wide.getIn() != in)
      return false;
    in = wide.getResult();
    ops = 3;
  }
  if (body.getOperations().size() != ops || !add)
    return false;
  return (add.getLhs() == in && add.getRhs() == acc) ||
         (add.getLhs() == acc && add.getRhs() == in);
}

namespace {
/// A bias gradient a product computes as it runs: the column sum and the
/// zero fill of its vector before it.
struct BiasGradient {
  linalg::GenericOp sum;
  Operation *fill = nullptr;
};
} // namespace

/// A weight gradient's bias gradient, when \p op (a 2-d product) can
/// compute it as it runs (cuBLASLt's BGRADB epilogue: the sums of the rows
/// of A, over k): A is `memref.transpose` of a 2-d X, and the sum of X's
/// columns into a zero-filled 1 x M vector (isColumnSum; the fill the
/// vector's previous access) comes before \p op in its block, with nothing
/// in between writing X or touching the vector. Looked for before any
/// product becomes a call (a call's effects are not declared). Empty
/// otherwise.
static BiasGradient findBiasGradient(linalg::LinalgOp op, Value a) {
  auto transpose = a.getDefiningOp<memref::TransposeOp>();
  if (!transpose || !transpose.getPermutation().isPermutation() ||
      transpose.getPermutation().isIdentity())
    return {};
  Value x = transpose.getIn();
  for (Operation *user : x.getUsers()) {
    auto sum = dyn_cast<linalg::GenericOp>(user);
    if (!sum || sum->getBlock() != op->getBlock() ||
        !sum->isBeforeInBlock(op) || sum.getDpsInputs()[0] != x ||
        !isColumnSum(sum))
      continue;
    Value vector = sum.getDpsInits()[0];
    linalg::FillOp fill = asZeroFill(findPreviousWriter(sum, vector));
    Value vectorRoot = getBufferRoot(vector), xRoot = getBufferRoot(x);
    if (fill && isDistinctBuffer(vectorRoot) && isDistinctBuffer(xRoot) &&
        clearBetween(sum, op, vectorRoot, xRoot))
      return {sum, fill};
  }
  return {};
}

namespace {
/// A GELU step a product computes as it stores its result (cuBLASLt's
/// GELU_AUX_BIAS or DGELU epilogue): the elementwise op it replaces, and
/// the 2-d views, made before the product, of the pre-activation (the
/// epilogue's auxiliary output or input) and of what the product now
/// writes. `rounded`: the op writes bf16 (--precision bf16), and so does
/// the product, its auxiliary matrix and bias being bf16 too (cuBLASLt's
/// rule: outside FP8 they take D's type).
struct GeluEpilogue {
  linalg::GenericOp op;
  Value preActivation, out;
  bool rounded = false;
};
} // namespace

/// \p v as a 2-d view like \p like's (its collapse by \p expand's
/// reassociation, when \p expand made \p like's 3-d or more view of it),
/// made at \p b; null when not collapsible.
static Value asMatrix(OpBuilder &b, Value v, memref::ExpandShapeOp expand) {
  if (!expand)
    return v;
  auto type = cast<MemRefType>(v.getType());
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
    return nullptr;
  return memref::CollapseShapeOp::create(b, v.getLoc(), v, groups);
}

/// Whether \p c is a row-major 2-d matrix whose rows are a multiple of 8
/// floats apart (cuBLASLt's condition on an epilogue's auxiliary matrix,
/// which is laid out as C).
static bool isRowMajorMatrix(Value c) {
  auto type = cast<MemRefType>(c.getType());
  return type.getRank() == 2 && type.getLayout().isIdentity() &&
         !type.isDynamicDim(1) && type.getDimSize(1) % 8 == 0;
}

/// \p c and the views of it an elementwise op over more dimensions reads.
static SmallVector<Value> matrixViews(Value c) {
  SmallVector<Value> views{c};
  for (Operation *user : c.getUsers())
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(user))
      views.push_back(expand.getResult());
  return views;
}

/// Whether \p generic (possibly null) is an elementwise op on buffers after
/// \p op in its block: \p inputs inputs and one output, all with identity
/// maps, every loop parallel.
static bool isElementwiseAfter(linalg::GenericOp generic, Operation *op,
                               unsigned inputs) {
  return generic && generic->getBlock() == op->getBlock() &&
         op->isBeforeInBlock(generic) && generic.hasPureBufferSemantics() &&
         generic.getNumDpsInputs() == inputs && generic.getNumDpsInits() == 1 &&
         generic.getNumParallelLoops() == generic.getNumLoops() &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// Whether \p v is defined before \p op, after moving its allocation
/// (operand-free, in \p op's block) there if it was not.
static bool dominateOrHoist(Value v, Operation *op, DominanceInfo &dom) {
  if (dom.properlyDominates(v, op))
    return true;
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getNumOperands() != 0 ||
      alloc->getBlock() != op->getBlock())
    return false;
  alloc->moveBefore(op);
  return true;
}

/// Whether the 2-d views \p made (of \p of) exist and are shaped and laid
/// out as \p c (their element type may differ); if not, the views made for
/// the purpose are erased.
static bool sameMatrix(Value c, ArrayRef<Value> made, ArrayRef<Value> of) {
  auto type = cast<MemRefType>(c.getType());
  bool same = llvm::all_of(made, [&](Value v) {
    return v && v.getType() ==
                    type.clone(cast<MemRefType>(v.getType()).getElementType());
  });
  if (!same)
    for (auto [v, original] : llvm::zip(made, of))
      if (v && v != original)
        v.getDefiningOp()->erase();
  return same;
}

/// Whether every use of the allocation \p root, through views, is one of
/// \p ops or a deallocation.
static bool onlyUsedBy(Value root, ArrayRef<Operation *> ops) {
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (llvm::is_contained(ops, user) || isa<memref::DeallocOp>(user))
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (!view || view.getViewSource() != v)
        return false;
      work.push_back(view->getResult(0));
    }
  }
  return true;
}

/// Whether \p op writes every element of the allocation \p root without
/// reading it: a `linalg.fill` of it, or an elementwise `linalg.generic`
/// whose one init is it and whose body ignores the init's value.
static bool overwrites(Operation *op, Value root) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getDpsInits()[0] == root;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getDpsInits()[0] != root ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      llvm::is_contained(generic.getDpsInputs(), root))
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  return generic.getMatchingIndexingMap(init).isPermutation() &&
         generic.getMatchingBlockArgument(init).use_empty();
}

/// The chain of reshapes from the allocation \p root to \p v, outermost
/// last; false when \p v is not \p root or reshapes of it.
static bool getReshapeChain(Value v, Value root,
                            SmallVectorImpl<Operation *> &chain) {
  while (v != root) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      return false;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  std::reverse(chain.begin(), chain.end());
  return true;
}

/// The readers of the value a product \p op writes in the allocation \p u
/// (the pre-activation of a rounded GELU_AUX_BIAS epilogue): the inputs,
/// through reshapes, of `linalg.generic` ops after \p op in its block,
/// up to the next overwrite (bufferization reuses one buffer for each
/// layer's U where nothing keeps them) or deallocation of \p u. False when
/// another operation in between touches \p u (besides \p ignored: the
/// GELU).
static bool findValueReaders(Operation *op, Value u,
                             ArrayRef<Operation *> ignored,
                             SmallVectorImpl<OpOperand *> &readers) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (llvm::is_contained(ignored, next) ||
        isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(next) ||
        leavesBufferAlone(next, u))
      continue;
    if (auto free = dyn_cast<memref::DeallocOp>(next))
      return free.getMemref() == u;
    if (overwrites(next, u))
      return true;
    auto generic = dyn_cast<linalg::GenericOp>(next);
    if (!generic || !leavesBufferUnwritten(next, u))
      return false;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      SmallVector<Operation *> chain;
      if (getBufferRoot(input->get()) == u &&
          !getReshapeChain(input->get(), u, chain))
        return false;
      if (getBufferRoot(input->get()) == u)
        readers.push_back(input);
    }
  }
  return true;
}

/// Stores the value the product \p op writes in the f32 allocation \p u
/// as bf16 (the auxiliary matrix of a rounded GELU_AUX_BIAS epilogue takes
/// D's type): in a bf16 allocation of its own, made before \p op and freed
/// after its last reader, \p readers (findValueReaders) reading it
/// through the same reshapes and widening it. Returns the allocation.
static Value storeAsBF16(Operation *op, Value u,
                         ArrayRef<OpOperand *> readers) {
  OpBuilder b(op);
  Type bf16 = b.getBF16Type();
  auto narrow = [&](Type t) {
    return cast<MemRefType>(cast<MemRefType>(t).clone(bf16));
  };
  auto u16 = memref::AllocOp::create(b, op->getLoc(), narrow(u.getType()));
  Operation *last = op;
  for (OpOperand *use : readers) {
    auto generic = cast<linalg::GenericOp>(use->getOwner());
    SmallVector<Operation *> chain;
    getReshapeChain(use->get(), u, chain);
    // Beside the allocation: defined before any product that may later
    // take the reader as its epilogue.
    b.setInsertionPointAfter(u16);
    IRMapping map;
    map.map(u, u16.getResult());
    for (Operation *view : chain) {
      Operation *copy = b.clone(*view, map);
      copy->getResult(0).setType(narrow(view->getResult(0).getType()));
      map.map(view->getResult(0), copy->getResult(0));
    }
    use->set(map.lookup(use->get()));
    BlockArgument arg = generic.getMatchingBlockArgument(use);
    arg.setType(bf16);
    OpBuilder inBody = OpBuilder::atBlockBegin(arg.getOwner());
    Value wide = arith::ExtFOp::create(inBody, generic.getLoc(),
                                       inBody.getF32Type(), arg);
    arg.replaceAllUsesExcept(wide, wide.getDefiningOp());
    last = generic;
  }
  b.setInsertionPointAfter(last);
  memref::DeallocOp::create(b, op->getLoc(), u16);
  return u16;
}

/// A bf16 copy of the f32 bias row \p bias (1-d, or 1 x n) for a rounded
/// GELU_AUX_BIAS epilogue, as a 1-d vector: rounded where the row's
/// allocation is a function argument at the function's start (beside the
/// weights' roundings, into whose launch it merges), else before \p op.
static Value roundBias(Value bias, Operation *op) {
  auto type = cast<MemRefType>(bias.getType());
  Value row = bias;
  if (auto expand = bias.getDefiningOp<memref::ExpandShapeOp>();
      expand && type.getRank() == 2)
    row = expand.getSrc();
  auto rowType = cast<MemRefType>(row.getType());
  OpBuilder b(op);
  if (auto arg = dyn_cast<BlockArgument>(row);
      arg && rowType.getRank() == 1 &&
      arg.getOwner() == &op->getParentOfType<func::FuncOp>().front())
    b.setInsertionPointToStart(arg.getOwner());
  else
    row = bias;
  rowType = cast<MemRefType>(row.getType());
  Location loc = op->getLoc();
  auto out = memref::AllocOp::create(
      b, loc, MemRefType::get(rowType.getShape(), b.getBF16Type()));
  AffineMap id = b.getMultiDimIdentityMap(rowType.getRank());
  SmallVector<utils::IteratorType> parallel(rowType.getRank(),
                                            utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{row}, ValueRange{out},
      ArrayRef<AffineMap>{id, id}, parallel,
      [](OpBuilder &nested, Location l, ValueRange args) {
        Value rounded =
            arith::TruncFOp::create(nested, l, nested.getBF16Type(), args[0]);
        linalg::YieldOp::create(nested, l, rounded);
      });
  // Freed where the f32 row's last reader, the product, ran.
  b.setInsertionPointAfter(op);
  memref::DeallocOp::create(b, loc, out);
  if (rowType.getRank() == 1)
    return out;
  b.setInsertionPoint(op);
  return memref::CollapseShapeOp::create(
      b, loc, out, ArrayRef<ReassociationIndices>{{0, 1}});
}

/// A GELU's backward step \p op (a 2-d product into zeros, C = dH, filled
/// by \p fill) can take as cuBLASLt's DGELU epilogue: C is a fresh
/// allocation that only the fill, the product and one elementwise op use
/// (and frees), that op multiplies
/// C (or its expansion) by the GELU's derivative at a pre-activation U
/// (computesGeluGradient, identity maps) into dU, and nothing between the
/// two touches dU or writes U. Then the product writes dU itself. With
/// --precision bf16 the step may write dU rounded, from a bf16 U (a rounded
/// GELU_AUX_BIAS epilogue's): the product then writes dU in bf16. Empty
/// otherwise.
static GeluEpilogue findGeluGradient(linalg::LinalgOp op, Operation *fill,
                                     bool bf16Operands, DominanceInfo &dom) {
  Value c = op.getDpsInits()[0];
  Value root = getBufferRoot(c);
  if (!root.getDefiningOp<memref::AllocOp>() || !isRowMajorMatrix(c))
    return {};
  for (Value view : matrixViews(c))
    for (Operation *user : view.getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      unsigned grad = 0;
      if (!isElementwiseAfter(generic, op, 2) ||
          generic.getDpsInputs()[0] == generic.getDpsInputs()[1])
        continue;
      Value du = generic.getDpsInits()[0];
      bool rounded = getElementTypeOrSelf(du.getType()).isBF16();
      if ((rounded && !bf16Operands) ||
          !computesGeluGradient(generic.getRegion().front(), grad, rounded) ||
          generic.getDpsInputs()[grad] != view ||
          !onlyUsedBy(root, {fill, op, generic}))
        continue;
      Value u = generic.getDpsInputs()[1 - grad];
      // The auxiliary matrix has D's type.
      if (getElementTypeOrSelf(u.getType()) !=
          getElementTypeOrSelf(du.getType()))
        continue;
      Value uRoot = getBufferRoot(u), duRoot = getBufferRoot(du);
      if (!isDistinctBuffer(uRoot) || !isDistinctBuffer(duRoot) ||
          duRoot == uRoot || duRoot == root || uRoot == root)
        continue;
      if (!dominateOrHoist(du, op, dom) || !dom.properlyDominates(u, op) ||
          !clearBetween(op, generic, duRoot, uRoot))
        continue;
      OpBuilder b(op);
      auto expand = view.getDefiningOp<memref::ExpandShapeOp>();
      Value u2 = asMatrix(b, u, expand), du2 = asMatrix(b, du, expand);
      if (!sameMatrix(c, {u2, du2}, {u, du}))
        continue;
      return {generic, u2, du2, rounded};
    }
  return {};
}

/// A GELU after a linear layer \p op (a 2-d product in the `_bias` form, C
/// = U, a fresh buffer) can take as cuBLASLt's GELU_AUX_BIAS epilogue: an
/// elementwise op computes the GELU of C (or its expansion; computesGelu,
/// identity maps) into H, and nothing between the two touches H or
/// writes U. Then the product writes H, and U as the epilogue's auxiliary
/// output (kept for the backward pass). With --precision bf16 the GELU may
/// write H rounded: the product then writes H, U and reads the bias in
/// bf16, which needs the readers of U's value to be elementwise ops
/// (findValueReaders). Empty otherwise.
static GeluEpilogue findGeluForward(linalg::LinalgOp op, bool bf16Operands,
                                    SmallVectorImpl<OpOperand *> &readers,
                                    DominanceInfo &dom) {
  Value c = op.getDpsInits()[0];
  if (getBufferRoot(c) != c || !isDistinctBuffer(c) || !isRowMajorMatrix(c))
    return {};
  for (Value view : matrixViews(c))
    for (Operation *user : view.getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!isElementwiseAfter(generic, op, 1) ||
          generic.getDpsInputs()[0] != view)
        continue;
      Value h = generic.getDpsInits()[0];
      bool rounded = getElementTypeOrSelf(h.getType()).isBF16();
      readers.clear();
      if ((rounded && !bf16Operands) ||
          !computesGelu(generic.getRegion().front(), rounded) ||
          (rounded && !findValueReaders(op, c, {generic}, readers)))
        continue;
      Value hRoot = getBufferRoot(h);
      if (!isDistinctBuffer(hRoot) || hRoot == c ||
          !dominateOrHoist(h, op, dom) || !clearBetween(op, generic, hRoot, c))
        continue;
      OpBuilder b(op);
      Value h2 = asMatrix(b, h, view.getDefiningOp<memref::ExpandShapeOp>());
      if (!sameMatrix(c, {h2}, {h}))
        continue;
      return {generic, c, h2, rounded};
    }
  return {};
}

/// Erases the allocation \p root once nothing but views and deallocations
/// use it.
static void eraseIfOnlyFreed(Value root) {
  SmallVector<Operation *> ops;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        ops.push_back(user);
        continue;
      }
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (!view || view.getViewSource() != v)
        return;
      ops.push_back(user);
      work.push_back(view->getResult(0));
    }
  }
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  root.getDefiningOp()->erase();
}

/// The views of a `linalg.contract` over (b0, b1, m, n, k) on rank-4
/// memrefs, in the order A (b0, b1, m, k), B (b0, b1, k, n), C (b0, b1, m,
/// n), each a `memref.transpose` of its operand where that is permuted;
/// empty if \p op is not such a product.
static SmallVector<Value> getBatch2Views(linalg::ContractOp op) {
  if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3)
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[0].getNumDims() != 5)
    return {};
  // Each loop dimension's role, from the operands that use it: batch
  // (A, B, C), m (A, C), n (B, C), k (A, B).
  SmallVector<unsigned> uses(5, 0);
  for (unsigned i = 0; i < 3; ++i) {
    if (!maps[i].isProjectedPermutation() || maps[i].getNumResults() != 4)
      return {};
    for (AffineExpr e : maps[i].getResults())
      uses[cast<AffineDimExpr>(e).getPosition()] |= 1u << i;
  }
  SmallVector<unsigned> batch;
  unsigned m = 5, n = 5, k = 5;
  for (unsigned d = 0; d < 5; ++d) {
    if (uses[d] == 0b111)
      batch.push_back(d);
    else if (uses[d] == 0b101)
      m = d;
    else if (uses[d] == 0b110)
      n = d;
    else if (uses[d] == 0b011)
      k = d;
  }
  if (batch.size() != 2 || m == 5 || n == 5 || k == 5)
    return {};
  const SmallVector<unsigned> order[3] = {{batch[0], batch[1], m, k},
                                          {batch[0], batch[1], k, n},
                                          {batch[0], batch[1], m, n}};
  OpBuilder b(op);
  SmallVector<Value> views;
  for (unsigned i = 0; i < 3; ++i) {
    // View dimension j is the operand's dimension that loop order[i][j]
    // indexes.
    SmallVector<unsigned> perm;
    for (unsigned d : order[i])
      perm.push_back(
          *maps[i].getResultPosition(getAffineDimExpr(d, b.getContext())));
    Value v = op->getOperand(i);
    if (!llvm::equal(perm, llvm::seq<unsigned>(0, 4)))
      v = memref::TransposeOp::create(
          b, op.getLoc(), v,
          AffineMapAttr::get(
              AffineMap::getPermutationMap(perm, b.getContext())));
    views.push_back(v);
  }
  return views;
}

/// Replaces the product \p op, on the views \p operands (A, B, C), by a
/// call of \p callee's form for its layout; whether it did, or failure
/// when the form's symbol is something else.
static FailureOr<bool> replace(ModuleOp module, linalg::LinalgOp op,
                               ValueRange operands, StringRef callee,
                               int64_t rank, int64_t &site, bool overwriteZeros,
                               bool fuseBias, BiasGradient biasGradient,
                               DominanceInfo *geluEpilogues, bool triangular) {
  if (!op.hasPureBufferSemantics())
    return false;
  SmallVector<MemRefType> types;
  for (Value v : operands) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || type.getRank() != rank)
      return false;
    types.push_back(type);
  }
  // f32 x f32 -> f32, or bf16 x bf16 -> f32 (mix-bf16-matmuls).
  Type input = types[0].getElementType();
  if (!types[2].getElementType().isF32() ||
      types[1].getElementType() != input || !(input.isF32() || input.isBF16()))
    return false;
  // A product into a zero-filled accumulator writes C = A B instead: no
  // pass to fill it, and no read of the zeros.
  auto triangle = triangular
                      ? op->getAttrOfType<DenseI64ArrayAttr>(kTriangleAttr)
                      : DenseI64ArrayAttr();
  if (triangle && triangle.size() != 2)
    triangle = {};
  Operation *initializer = nullptr;
  StringRef form;
  if (overwriteZeros && (initializer = findZeroFill(op))) {
    form = biasGradient.sum && !triangle && rank == 2 ? "_set_bgrad" : "_set";
  } else if (fuseBias && !triangle && rank == 2 &&
             (initializer = findBiasBroadcast(op)))
    form = "_bias";
  GeluEpilogue gelu;
  if (form == "_set" && geluEpilogues && !triangle && rank == 2 &&
      (gelu = findGeluGradient(op, initializer, input.isBF16(), *geluEpilogues))
          .op)
    form = "_set_dgelu";
  SmallVector<OpOperand *> uReaders;
  if (form == "_bias" && geluEpilogues && !gelu.op &&
      (gelu = findGeluForward(op, input.isBF16(), uReaders, *geluEpilogues)).op)
    form = "_bias_gelu";
  // A rounded epilogue's D, auxiliary matrix and bias are bf16.
  std::string name =
      (callee + (triangle ? "_tri" : "") + form +
       (input.isBF16() ? "_bf16" : "") + (gelu.rounded ? "_to_bf16" : ""))
          .str();
  bool vectorArg =
      form == "_bias" || form == "_bias_gelu" || form == "_set_bgrad";
  OpBuilder b(op);
  Type output = gelu.rounded ? b.getBF16Type() : b.getF32Type();
  func::FuncOp fn = declare(module, name, rank, input, output, vectorArg,
                            bool(triangle), /*aux=*/bool(gelu.op));
  if (!fn)
    return failure();
  Value bias = form.starts_with("_bias") ? initializer->getOperand(0) : nullptr;
  if (gelu.rounded && form == "_bias_gelu") {
    bias = roundBias(bias, op);
    gelu.preActivation = storeAsBF16(op, gelu.preActivation, uReaders);
  }
  SmallVector<Value> args{arith::ConstantIntOp::create(b, op.getLoc(), site++,
                                                       /*width=*/64)};
  SmallVector<Value> views(operands);
  Value cRoot = getBufferRoot(views[2]);
  if (gelu.op)
    views[2] = gelu.out;
  if (bias)
    views.push_back(bias);
  if (form == "_set_bgrad")
    views.push_back(biasGradient.sum.getDpsInits()[0]);
  for (Value v : views) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, op.getLoc(), v);
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
    // The bias (or its gradient): its length and stride only.
    if (v == views.back() && vectorArg) {
      args.push_back(meta.getSizes().back());
      args.push_back(meta.getStrides().back());
      continue;
    }
    llvm::append_range(args, meta.getSizes());
    llvm::append_range(args, meta.getStrides());
  }
  if (triangle)
    for (int64_t v : triangle.asArrayRef())
      args.push_back(arith::ConstantIntOp::create(b, op.getLoc(), v, 64));
  if (gelu.op) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, op.getLoc(),
                                                         gelu.preActivation);
    args.push_back(meta.getBaseBuffer());
    args.push_back(meta.getOffset());
    llvm::append_range(args, meta.getSizes());
    llvm::append_range(args, meta.getStrides());
  }
  func::CallOp::create(b, op.getLoc(), fn, args);
  op.erase();
  if (initializer)
    initializer->erase();
  if (form == "_set_bgrad") {
    biasGradient.sum.erase();
    biasGradient.fill->erase();
  }
  if (gelu.op)
    gelu.op.erase();
  // dH is read by nothing now, nor the f32 U a rounded epilogue replaced.
  if (form == "_set_dgelu" || gelu.rounded)
    eraseIfOnlyFreed(cRoot);
  return true;
}

LogicalResult mlir::mix::convertMatmulsToLibraryCalls(
    ModuleOp module, StringRef prefix, bool overwriteZeros, bool fuseBias,
    bool fuseBiasGrad, bool fuseGelu, bool triangular) {
  SmallVector<linalg::MatmulOp> matmuls;
  SmallVector<linalg::BatchMatmulOp> batched;
  SmallVector<linalg::ContractOp> contracts;
  module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
  module.walk([&](linalg::BatchMatmulOp op) { batched.push_back(op); });
  module.walk([&](linalg::ContractOp op) { contracts.push_back(op); });
  // Each sum to at most one product.
  DenseMap<Operation *, BiasGradient> biasGradients;
  if (fuseBiasGrad) {
    SmallPtrSet<Operation *, 8> taken;
    for (linalg::MatmulOp op : matmuls) {
      BiasGradient g = findBiasGradient(op, op.getDpsInputs()[0]);
      if (g.sum && taken.insert(g.sum).second)
        biasGradients[op] = g;
    }
  }
  // A product's GELU gradient comes after it, where the products are still
  // linalg ops (their effects declared) when it is looked for.
  DominanceInfo dominance(module);
  DominanceInfo *geluEpilogues = fuseGelu ? &dominance : nullptr;
  int64_t site = 0;
  for (linalg::MatmulOp op : matmuls)
    if (failed(replace(module, op, op->getOperands(), (prefix + "matmul").str(),
                       2, site, overwriteZeros, fuseBias,
                       biasGradients.lookup(op), geluEpilogues, triangular)))
      return failure();
  for (linalg::BatchMatmulOp op : batched)
    if (failed(replace(module, op, op->getOperands(),
                       (prefix + "batch_matmul").str(), 3, site, overwriteZeros,
                       fuseBias, {}, nullptr, triangular)))
      return failure();
  // Two batch dimensions (mix-head-products).
  for (linalg::ContractOp op : contracts) {
    SmallVector<Value> views = getBatch2Views(op);
    if (views.empty())
      continue;
    FailureOr<bool> replaced =
        replace(module, op, views, (prefix + "batch2_matmul").str(), 4, site,
                overwriteZeros, fuseBias, {}, nullptr, triangular);
    if (failed(replaced))
      return failure();
    if (*replaced)
      continue;
    // The views made for a product that stays are dead.
    for (Value v : views)
      if (v.use_empty() && v.getDefiningOp<memref::TransposeOp>())
        v.getDefiningOp()->erase();
  }
  return success();
}

namespace {
struct MixMatmulsToLibraryCallsPass
    : mlir::mix::impl::MixMatmulsToLibraryCallsPassBase<
          MixMatmulsToLibraryCallsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(convertMatmulsToLibraryCalls(
            getOperation(), prefix, overwriteZeros, fuseBias, fuseBiasGrad,
            fuseGelu, triangular)))
      signalPassFailure();
  }
};
} // namespace
