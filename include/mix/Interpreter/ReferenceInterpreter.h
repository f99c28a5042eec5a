//===- ReferenceInterpreter.h - mix IR evaluated in double ------*- C++ -*-===//
//
// A small, slow, independent interpreter of mix IR in double precision:
// the reference that rewrites are checked against on data. Every op is
// implemented from its description (MixOps.td, MixPrimitiveOps.td and
// docs/models.md), not from the lowering, so the two can disagree.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_INTERPRETER_REFERENCEINTERPRETER_H
#define MIX_INTERPRETER_REFERENCEINTERPRETER_H

#include "mix/Dialect/Mix/IR/MixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mlir {
namespace mix {

/// A dense row-major tensor of doubles.
struct RefTensor {
  SmallVector<int64_t> shape;
  std::vector<double> data;

  /// The number of elements the shape holds (1 for rank 0).
  int64_t numel() const;
  /// A tensor of the given shape filled with zeros.
  static RefTensor zeros(ArrayRef<int64_t> shape);
};

/// Evaluates mix IR (and the few arith, tensor and func ops it uses) on
/// RefTensors. Values are computed on demand from their defining ops and
/// memoized; a failure never crashes or asserts, it returns failure and
/// leaves a message in getError().
///
/// The memo is keyed by Value: after changing the IR, call clear() (run()
/// does) before evaluating again.
class ReferenceInterpreter {
public:
  ReferenceInterpreter();
  ~ReferenceInterpreter();
  ReferenceInterpreter(const ReferenceInterpreter &) = delete;
  ReferenceInterpreter &operator=(const ReferenceInterpreter &) = delete;

  /// Gives `v` the value `t`: an input (a block argument), or an override
  /// of any other value. Drops every memoized value, since they may depend
  /// on `v`.
  void bind(Value v, RefTensor t);

  /// Forgets every binding, memoized value and error.
  void clear();

  /// The value of `v`: bound, or computed from its defining op,
  /// recursively and memoized. Fails, with a message in getError() naming
  /// the op, when an op is not supported, a block argument is unbound, or
  /// shapes are inconsistent.
  FailureOr<RefTensor> evaluate(Value v);

  /// Runs `func` on `args` (one per argument, each of the argument's shape)
  /// and returns its results. Forgets every earlier binding and memoized
  /// value first. The body must be a single block ending in func.return.
  FailureOr<SmallVector<RefTensor>> run(func::FuncOp func,
                                        ArrayRef<RefTensor> args);

  /// Expert k of a mixture on input `x`, without its gate weight. For a
  /// region mixture: the region evaluated with block argument 0 bound to `x`
  /// and argument i+1 to slice k (along dim 0) of the i-th expert weight
  /// (the weights themselves evaluated with evaluate()); values inside the
  /// region are not memoized across calls. For stacked kernels:
  /// `x K_k^T + b_k` (or `+ shared_bias`).
  FailureOr<RefTensor> evaluateExpert(MixtureOp op, int64_t k,
                                      const RefTensor &x);

  /// Why the last failing call failed.
  const std::string &getError() const { return error; }

private:
  struct Scope;

  /// The value of `v` if it is known without computing anything.
  const RefTensor *lookup(Value v) const;
  /// The value of `v`, computed if needed; valid until the next call.
  FailureOr<const RefTensor *> get(Value v);
  /// Computes the single result of `op`, whose operands are all known.
  FailureOr<RefTensor> compute(Operation *op);
  /// The sum of the gate-weighted experts of `op`.
  FailureOr<RefTensor> computeMixture(MixtureOp op);
  /// evaluateExpert() without resetting the error.
  FailureOr<RefTensor> expert(MixtureOp op, int64_t k, const RefTensor &x);
  /// Stores `t` as the value of `v`, in the innermost scope holding `v`.
  const RefTensor *store(Value v, RefTensor t);
  /// Records `message` as the error and fails.
  LogicalResult fail(const Twine &message);
  /// Checks that `t` has the shape of `v`'s type.
  LogicalResult checkShape(Value v, const RefTensor &t, const Twine &what);

  /// Values given by bind().
  llvm::DenseMap<Value, std::unique_ptr<RefTensor>> bound;
  /// Memoized values outside every region being evaluated.
  llvm::DenseMap<Value, std::unique_ptr<RefTensor>> memo;
  /// The mixture regions being evaluated, innermost last.
  SmallVector<std::unique_ptr<Scope>> scopes;
  /// The ops being computed, waiting for their operands.
  llvm::DenseSet<Operation *> active;
  std::string error;
};

/// What randomTensor() fills a tensor with.
enum class RandomFill {
  /// Samples of the standard normal distribution.
  Normal,
  /// Integers drawn uniformly from [-2, 2]: small enough that sums of
  /// products stay exact in double.
  SmallIntegers,
};

/// A tensor of the given shape with random elements drawn from `rng`, for
/// tests and counterexample searches.
RefTensor randomTensor(ArrayRef<int64_t> shape, std::mt19937 &rng,
                       RandomFill fill = RandomFill::Normal);

/// The largest elementwise |a - b|; infinity if the shapes differ, NaN if
/// some difference is NaN (so that any `< tolerance` check fails).
double maxAbsDifference(const RefTensor &a, const RefTensor &b);

} // namespace mix
} // namespace mlir

#endif // MIX_INTERPRETER_REFERENCEINTERPRETER_H
