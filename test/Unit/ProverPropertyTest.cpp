//===- ProverPropertyTest.cpp - The prover on random expert regions -------===//
//
// Generates random expert regions from a grammar of the dialect's ops, some
// linear and token-local (a dynamic convolution), some not (a nonlinearity,
// a product of two values of x, an op that mixes tokens, a constant that
// varies along them). For each, runs mix-prove-dynamic-conv and
// mix-moe-to-dynamic-conv and checks with the double-precision reference
// interpreter that:
//   - every region the grammar builds as a convolution is proved and
//     rewritten, and the rewritten function equals the original on random
//     inputs;
//   - every other region is refused, and a counterexample it prints really
//     separates its two sides (the two printed values differ).
// MIX_PROVER_PROPERTY_CASES=N runs N regions instead of the default.
//
//===----------------------------------------------------------------------===//

#include "mix/Dialect/Mix/IR/MixDialect.h"
#include "mix/Dialect/Mix/IR/MixOps.h"
#include "mix/Interpreter/ReferenceInterpreter.h"
#include "mix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <regex>

using namespace mlir;
using namespace mlir::mix;

namespace {

std::string tensor(std::initializer_list<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// One random mixture: a function `@f(%x, %g, extra args...)` whose body is
/// the mixture of an expert region built from the grammar.
class RegionGenerator {
public:
  explicit RegionGenerator(unsigned seed) : rng(seed) {}

  /// The function's text; `convolution` says whether the grammar built the
  /// expert as a dynamic convolution (affine, token-local, position-free).
  std::string generate(bool &convolution) {
    n = pick(2, 3);
    d = pick(2, 4);
    convolution = true;
    args.clear();
    expertArgs.clear();
    body.clear();
    counter = 0;
    // The values of x so far: (name, features).
    std::vector<std::pair<std::string, int64_t>> values{{"%xi", d}};
    // Every expert has weights of its own: a linear map first.
    values.push_back(goodOp("%xi", d, values, /*choice=*/0));
    int steps = pick(1, 3);
    int bad = chance(0.4) ? pick(0, steps - 1) : -1;
    for (int step = 0; step < steps; ++step) {
      auto [v, f] = values.back();
      std::pair<std::string, int64_t> next =
          step == bad ? badOp(v, f) : goodOp(v, f, values);
      values.push_back(next);
    }
    convolution = bad < 0;
    auto [result, f] = values.back();
    std::string out = tensor({b, s, f});
    std::string fn =
        "func.func @f(%x: " + tensor({b, s, d}) + ", %g: " + tensor({b, s, n});
    for (const std::string &a : args)
      fn += ", " + a;
    fn += ") -> " + out + " {\n";
    std::string operands = "(" + tensor({b, s, d}) + ", " + tensor({b, s, n});
    std::string names, blockArgs = "%xi: " + tensor({b, s, d});
    for (auto &[name, stacked, slice] : expertArgs) {
      names += (names.empty() ? "" : ", ") + name;
      operands += ", " + stacked;
      blockArgs += ", " + name + "k: " + slice;
    }
    fn += "  %u = mix.mixture %x, %g experts(" + names + ") : " + operands +
          ") -> " + out + " {\n  ^bb0(" + blockArgs + "):\n" + body +
          "    mix.yield " + result + " : " + out +
          "\n  }\n  return %u : " + out + "\n}\n";
    return fn;
  }

private:
  int pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
  std::string fresh() { return "%v" + std::to_string(counter++); }
  std::string arg(const std::string &type) {
    std::string name = "%a" + std::to_string(counter++);
    args.push_back(name + ": " + type);
    return name;
  }
  /// A per-expert weight: a stacked function argument and its slice.
  std::string expertWeight(std::initializer_list<int64_t> slice) {
    std::string name = "%w" + std::to_string(counter++);
    std::vector<int64_t> stacked{n};
    stacked.insert(stacked.end(), slice);
    std::string st = "tensor<";
    for (int64_t x : stacked)
      st += std::to_string(x) + "x";
    st += "f32>";
    std::string sl = tensor(slice);
    args.push_back(name + ": " + st);
    expertArgs.push_back({name, st, sl});
    return name + "k";
  }
  std::string emit(const std::string &text) {
    std::string v = fresh();
    body += "    " + v + " = " + text + "\n";
    return v;
  }

  /// An op that keeps the expert a dynamic convolution.
  std::pair<std::string, int64_t>
  goodOp(const std::string &v, int64_t f,
         std::vector<std::pair<std::string, int64_t>> &values,
         int choice = -1) {
    std::string t = tensor({b, s, f});
    switch (choice >= 0 ? choice : pick(0, 10)) {
    case 0:
    case 1: { // per-expert linear, maybe with a per-expert or shared bias
      int64_t o = pick(2, 4);
      std::string w = expertWeight({o, f});
      std::string bias, biasType;
      if (chance(0.5)) {
        bias = ", " + (chance(0.5) ? expertWeight({o}) : arg(tensor({o})));
        biasType = ", " + tensor({o});
      }
      std::string r = emit(
          llvm::formatv("mix.linear {0}, {1}{2} : ({3}, {4}{5}) -> {6}", v, w,
                        bias, t, tensor({o, f}), biasType, tensor({b, s, o})));
      return {r, o};
    }
    case 2: { // a weight shared by the experts
      int64_t o = pick(2, 4);
      std::string w = arg(tensor({o, f}));
      std::string r =
          emit(llvm::formatv("mix.linear {0}, {1} : ({2}, {3}) -> {4}", v, w, t,
                             tensor({o, f}), tensor({b, s, o})));
      return {r, o};
    }
    case 3: { // a scale per feature
      std::string c = arg(tensor({1, 1, f}));
      return {emit(llvm::formatv("mix.mul {0}, {1} : {2}, {3} -> {2}", v, c, t,
                                 tensor({1, 1, f}))),
              f};
    }
    case 4: { // a splat scale, then a shared bias per feature
      std::string two =
          emit("arith.constant dense<2.5> : " + tensor({1, 1, 1}));
      std::string r = emit(llvm::formatv("mix.mul {0}, {1} : {2}, {3} -> {3}",
                                         two, v, tensor({1, 1, 1}), t));
      std::string c = arg(tensor({1, 1, f}));
      return {emit(llvm::formatv("mix.add {0}, {1} : {2}, {3} -> {2}", r, c, t,
                                 tensor({1, 1, f}))),
              f};
    }
    case 5: { // the sum or difference of two maps of x
      std::string w = expertWeight({f, d});
      std::string other =
          emit(llvm::formatv("mix.linear %xi, {0} : ({1}, {2}) -> {3}", w,
                             tensor({b, s, d}), tensor({f, d}), t));
      return {emit(llvm::formatv("mix.{0} {1}, {2} : {3}, {3} -> {3}",
                                 chance(0.5) ? "add" : "sub", v, other, t)),
              f};
    }
    case 6:
      return {emit(llvm::formatv("mix.neg {0} : {1}", v, t)), f};
    case 7: { // tokens flattened and restored
      std::string flat = emit(llvm::formatv(
          "tensor.collapse_shape {0} [[0, 1], [2]] : {1} into {2}", v, t,
          "tensor<" + std::to_string(b * s) + "x" + std::to_string(f) +
              "xf32>"));
      return {emit(llvm::formatv("tensor.expand_shape {0} [[0, 1], [2]] "
                                 "output_shape [{1}, {2}, {3}] : {4} into {5}",
                                 flat, b, s, f,
                                 "tensor<" + std::to_string(b * s) + "x" +
                                     std::to_string(f) + "xf32>",
                                 t)),
              f};
    }
    case 8: { // a product of the flattened tokens by a weight matrix
      int64_t o = pick(2, 4), rows = b * s;
      bool transposed = chance(0.5);
      std::string w = transposed ? expertWeight({o, f}) : expertWeight({f, o});
      std::string flatIn =
          "tensor<" + std::to_string(rows) + "x" + std::to_string(f) + "xf32>";
      std::string flatOut =
          "tensor<" + std::to_string(rows) + "x" + std::to_string(o) + "xf32>";
      std::string flat = emit(llvm::formatv(
          "tensor.collapse_shape {0} [[0, 1], [2]] : {1} into {2}", v, t,
          flatIn));
      std::string mm = emit(
          llvm::formatv("mix.matmul {0}, {1}{2} : ({3}, {4}) -> {5}", flat, w,
                        transposed ? " transpose_rhs" : "", flatIn,
                        transposed ? tensor({o, f}) : tensor({f, o}), flatOut));
      return {emit(llvm::formatv("tensor.expand_shape {0} [[0, 1], [2]] "
                                 "output_shape [{1}, {2}, {3}] : {4} into {5}",
                                 mm, b, s, o, flatOut, tensor({b, s, o}))),
              o};
    }
    case 9: { // the sum of each token's features, broadcast back
      std::string sum = emit(llvm::formatv(
          "mix.reduce_sum {0} dims [2] : {1} -> {2}", v, t, tensor({b, s, 1})));
      std::string c = arg(tensor({1, 1, f}));
      return {emit(llvm::formatv("mix.mul {0}, {1} : {2}, {3} -> {4}", sum, c,
                                 tensor({b, s, 1}), tensor({1, 1, f}), t)),
              f};
    }
    default: { // the captured mixture input, mapped
      std::string w = expertWeight({f, d});
      std::string other =
          emit(llvm::formatv("mix.linear %x, {0} : ({1}, {2}) -> {3}", w,
                             tensor({b, s, d}), tensor({f, d}), t));
      return {emit(llvm::formatv("mix.add {0}, {1} : {2}, {2} -> {2}", v, other,
                                 t)),
              f};
    }
    }
  }

  /// An op after which the expert is no dynamic convolution.
  std::pair<std::string, int64_t> badOp(const std::string &v, int64_t f) {
    std::string t = tensor({b, s, f});
    switch (pick(0, 5)) {
    case 0: {
      const char *acts[] = {"relu", "gelu", "sigmoid", "tanh", "exp"};
      return {emit(llvm::formatv("mix.{0} {1} : {2}", acts[pick(0, 4)], v, t)),
              f};
    }
    case 1: { // a product of two values of x
      std::string w = expertWeight({f, d});
      std::string other =
          emit(llvm::formatv("mix.linear %xi, {0} : ({1}, {2}) -> {3}", w,
                             tensor({b, s, d}), tensor({f, d}), t));
      return {emit(llvm::formatv("mix.mul {0}, {1} : {2}, {2} -> {2}", v, other,
                                 t)),
              f};
    }
    case 2:
      if (chance(0.5))
        return {emit(llvm::formatv("mix.prefix_mean {0} : {1}", v, t)), f};
      else {
        // the sum over the sequence, broadcast back to every position
        std::string sum =
            emit(llvm::formatv("mix.reduce_sum {0} dims [1] : {1} -> {2}", v, t,
                               tensor({b, 1, f})));
        return {emit(llvm::formatv("mix.broadcast {0} : {1} -> {2}", sum,
                                   tensor({b, 1, f}), t)),
                f};
      }
    case 3: { // a scale that varies along the sequence
      std::string c = arg(tensor({1, s, 1}));
      return {emit(llvm::formatv("mix.mul {0}, {1} : {2}, {3} -> {2}", v, c, t,
                                 tensor({1, s, 1}))),
              f};
    }
    case 4: { // a bias that varies along the batch
      std::string c = arg(tensor({b, 1, f}));
      return {emit(llvm::formatv("mix.add {0}, {1} : {2}, {3} -> {2}", v, c, t,
                                 tensor({b, 1, f}))),
              f};
    }
    default: { // the sequence folded into the features and back
      std::string wide =
          "tensor<" + std::to_string(b) + "x" + std::to_string(s * f) + "xf32>";
      std::string folded = emit(llvm::formatv(
          "tensor.collapse_shape {0} [[0], [1, 2]] : {1} into {2}", v, t,
          wide));
      std::string w = expertWeight({s * f, s * f});
      std::string mapped =
          emit(llvm::formatv("mix.linear {0}, {1} : ({2}, {3}) -> {2}", folded,
                             w, wide, tensor({s * f, s * f})));
      return {emit(llvm::formatv("tensor.expand_shape {0} [[0], [1, 2]] "
                                 "output_shape [{1}, {2}, {3}] : {4} into {5}",
                                 mapped, b, s, f, wide, t)),
              f};
    }
    }
  }

  std::mt19937 rng;
  int64_t b = 2, s = 3, d = 3, n = 2;
  int counter = 0;
  std::vector<std::string> args;
  std::vector<std::tuple<std::string, std::string, std::string>> expertArgs;
  std::string body;
};

/// The two values a counterexample prints, in the order printed.
std::optional<std::pair<double, double>> printedValues(const std::string &c) {
  static const std::regex patterns[] = {
      std::regex(
          R"(M\(x\) \+ M\(y\) = ([-0-9.e+]+), but M\(x \+ y\) \+ M\(0\) = ([-0-9.e+]+))"),
      std::regex(R"(from ([-0-9.e+]+) to ([-0-9.e+]+))"),
      std::regex(R"(gives ([-0-9.e+]+) at .*, but ([-0-9.e+]+) at)")};
  for (const std::regex &re : patterns) {
    std::smatch m;
    if (std::regex_search(c, m, re))
      return std::make_pair(std::stod(m[1]), std::stod(m[2]));
  }
  return std::nullopt;
}

class ProverProperty : public ::testing::Test {
protected:
  ProverProperty() {
    registry.insert<MixDialect, arith::ArithDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  DialectRegistry registry;
  MLIRContext context;
};

TEST_F(ProverProperty, RandomRegions) {
  int cases = 60;
  if (const char *env = std::getenv("MIX_PROVER_PROPERTY_CASES"))
    cases = std::atoi(env);
  int proved = 0, refused = 0, separated = 0;
  for (int i = 0; i < cases; ++i) {
    RegionGenerator gen(1000 + i);
    bool convolution = false;
    std::string source = gen.generate(convolution);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << source;
    auto func = *module->getOps<func::FuncOp>().begin();

    // The original, on random arguments.
    std::mt19937 argRng(i);
    SmallVector<RefTensor> args;
    for (BlockArgument a : func.getArguments())
      args.push_back(
          randomTensor(cast<RankedTensorType>(a.getType()).getShape(), argRng));
    ReferenceInterpreter interp;
    FailureOr<SmallVector<RefTensor>> before = interp.run(func, args);
    ASSERT_TRUE(succeeded(before)) << interp.getError() << "\n" << source;

    std::vector<std::string> remarks;
    PassManager pm(&context);
    pm.addPass(createMixProveDynamicConvPass());
    pm.addPass(createMixMoEToDynamicConvPass());
    {
      ScopedDiagnosticHandler collect(&context, [&](Diagnostic &d) {
        remarks.push_back(d.str());
        return success(d.getSeverity() != DiagnosticSeverity::Error);
      });
      ASSERT_TRUE(succeeded(pm.run(*module))) << source;
    }
    int convs = 0, mixtures = 0;
    std::string counterexample;
    module->walk([&](Operation *op) {
      convs += isa<DynamicConvOp>(op);
      if (auto m = dyn_cast<MixtureOp>(op)) {
        ++mixtures;
        if (auto proof = m->getAttrOfType<DictionaryAttr>("mix.proof"))
          if (auto c = proof.getAs<StringAttr>("counterexample"))
            counterexample = c.str();
      }
    });
    std::string all;
    for (const std::string &r : remarks)
      all += r + "\n";
    if (convolution) {
      // Proved and rewritten, with the same value.
      EXPECT_EQ(convs, 1) << source << all;
      EXPECT_EQ(mixtures, 0) << source << all;
      FailureOr<SmallVector<RefTensor>> after = interp.run(func, args);
      ASSERT_TRUE(succeeded(after)) << interp.getError() << "\n" << source;
      double scale = 1;
      for (double v : (*before)[0].data)
        scale = std::max(scale, std::abs(v));
      EXPECT_LT(maxAbsDifference((*after)[0], (*before)[0]), 1e-9 * scale)
          << source;
      ++proved;
      continue;
    }
    // Refused, and left alone.
    EXPECT_EQ(convs, 0) << source << all;
    EXPECT_EQ(mixtures, 1) << source << all;
    ++refused;
    if (counterexample.empty())
      continue;
    std::optional<std::pair<double, double>> values =
        printedValues(counterexample);
    ASSERT_TRUE(values) << counterexample;
    EXPECT_GT(std::abs(values->first - values->second),
              1e-9 * (1 + std::abs(values->first)))
        << counterexample << "\n"
        << source;
    ++separated;
  }
  // The grammar builds both kinds, and the search separates the refusals.
  EXPECT_GT(proved, cases / 5);
  EXPECT_GT(refused, cases / 5);
  EXPECT_GE(separated, refused * 3 / 4)
      << separated << " of " << refused << " refusals with a counterexample";
  std::printf("%d regions: %d proved and rewritten, %d refused (%d with a "
              "counterexample)\n",
              cases, proved, refused, separated);
}

} // namespace
