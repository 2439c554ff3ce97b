//===- RaisePatterns.cpp - recognizers of decomposed high-level ops -------===//
//
// Structural matchers for the decompositions exporters write (layer norm,
// RMS norm, GELU, SiLU, attention, cross-entropy), as rewrite patterns to the
// tg ops; tg-raise (Raise.cpp) applies them to a module.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Raise.h"

#include "RaiseExperts.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

using namespace mlir;
using namespace tgc;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isIdentityPrefix(ArrayRef<int64_t> dims, int64_t n) {
  return llvm::equal(dims, llvm::seq<int64_t>(0, n));
}

//===----------------------------------------------------------------------===//
// The ops of one match
//===----------------------------------------------------------------------===//

/// The intermediate ops of a match: they die with its root, so every use of
/// their results must be inside the match. Inputs (`x`, weights) and
/// constants are not recorded: they may be read elsewhere. Alternatives roll
/// back what they recorded when they fail.
class MatchedOps {
public:
  explicit MatchedOps(Operation *root) : root(root) {}

  void add(Value v) {
    if (Operation *op = v.getDefiningOp();
        op && op != root && set.insert(op).second)
      order.push_back(op);
  }
  size_t mark() const { return order.size(); }
  void rollback(size_t mark) {
    while (order.size() > mark)
      set.erase(order.pop_back_val());
  }

  /// Whether no result of a recorded op is read outside the match: raising
  /// then removes work instead of duplicating it.
  bool usedOnlyInside() const {
    for (Operation *op : order)
      for (Operation *user : op->getUsers())
        if (user != root && !set.contains(user))
          return false;
    return true;
  }

private:
  Operation *root;
  llvm::SmallPtrSet<Operation *, 16> set;
  SmallVector<Operation *> order;
};

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The value of a float splat constant, seen through the broadcasts and
/// reshapes that importers put between a scalar and its use.
std::optional<APFloat> getSplatFloat(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (auto broadcast = dyn_cast<tg::BroadcastInDimOp>(op))
      v = broadcast.getOperand();
    else if (auto reshape = dyn_cast<tg::ReshapeOp>(op))
      v = reshape.getOperand();
    else
      break;
  }
  auto constant = v.getDefiningOp<tg::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>();
}

/// Whether `v` is a splat of `expected` rounded to its element type, or
/// within 1e-6 of it relatively (a constant written with fewer digits).
bool isSplatOf(Value v, double expected) {
  std::optional<APFloat> value = getSplatFloat(v);
  if (!value)
    return false;
  APFloat rounded(expected);
  bool lost;
  rounded.convert(value->getSemantics(), APFloat::rmNearestTiesToEven, &lost);
  if (value->compare(rounded) == APFloat::cmpEqual)
    return true;
  return std::abs(value->convertToDouble() - expected) <=
         1e-6 * std::abs(expected);
}

/// A positive finite splat, as a double.
std::optional<double> getPositiveSplat(Value v) {
  std::optional<APFloat> value = getSplatFloat(v);
  if (!value || !value->isFiniteNonZero() || value->isNegative())
    return std::nullopt;
  return value->convertToDouble();
}

/// A constant whose values depend only on its last `trailing` indices,
/// seen through broadcasts along the leading dimensions and reshapes that
/// keep the trailing block: the constant's values, whose first block is the
/// one that matters (all blocks are checked equal).
struct TrailingConstant {
  DenseElementsAttr values;
};

std::optional<TrailingConstant> getTrailingConstant(Value v, int64_t trailing) {
  ArrayRef<int64_t> block = typeOf(v).getShape().take_back(trailing);
  if (typeOf(v).getRank() < trailing)
    return std::nullopt;
  while (Operation *op = v.getDefiningOp()) {
    if (auto broadcast = dyn_cast<tg::BroadcastInDimOp>(op)) {
      auto operand = typeOf(broadcast.getOperand());
      int64_t rank = typeOf(v).getRank(), operandRank = operand.getRank();
      if (operandRank < trailing)
        return std::nullopt;
      ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
      for (int64_t i = 0; i < operandRank; ++i) {
        bool inBlock = i >= operandRank - trailing;
        if (inBlock && (dims[i] != rank - (operandRank - i) ||
                        operand.getDimSize(i) != typeOf(v).getDimSize(dims[i])))
          return std::nullopt;
        if (!inBlock && operand.getDimSize(i) != 1)
          return std::nullopt;
      }
      v = broadcast.getOperand();
      continue;
    }
    // A reshape keeps the row-major order: with the same trailing block,
    // block k of the result is block k of the operand.
    if (auto reshape = dyn_cast<tg::ReshapeOp>(op)) {
      auto operand = typeOf(reshape.getOperand());
      if (operand.getRank() < trailing ||
          operand.getShape().take_back(trailing) != block)
        return std::nullopt;
      v = reshape.getOperand();
      continue;
    }
    break;
  }
  auto constant = v.getDefiningOp<tg::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  int64_t blockSize = 1;
  for (int64_t d : block)
    blockSize *= d;
  // An empty tensor (a dimension of 0 before the block) holds no block to
  // read.
  if (!dense || dense.getNumElements() < blockSize)
    return std::nullopt;
  if (!dense.isSplat()) {
    auto values = dense.getValues<Attribute>();
    for (int64_t i = blockSize, e = dense.getNumElements(); i < e; ++i)
      if (values[i] != values[i % blockSize])
        return std::nullopt;
  }
  return TrailingConstant{dense};
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

/// Both orders of the operands of a commutative binary op.
template <typename OpTy>
std::array<std::pair<Value, Value>, 2> operandOrders(OpTy op) {
  return {{{op.getLhs(), op.getRhs()}, {op.getRhs(), op.getLhs()}}};
}

/// The factors of the product `v`, split through the `tg.mul`s that only the
/// product reads (a factor that is a product read elsewhere, like the input
/// of a GELU, stays whole). `v` itself is always split.
void collectFactors(Value v, bool split, SmallVectorImpl<Value> &factors,
                    MatchedOps &m) {
  auto mul = v.getDefiningOp<tg::MulOp>();
  if (!mul || (!split && !v.hasOneUse()) || factors.size() > 8) {
    factors.push_back(v);
    return;
  }
  m.add(v);
  collectFactors(mul.getLhs(), false, factors, m);
  collectFactors(mul.getRhs(), false, factors, m);
}

SmallVector<Value> factorsOf(Value v, MatchedOps &m) {
  SmallVector<Value> factors;
  collectFactors(v, true, factors, m);
  return factors;
}

/// The factors but the one at `skip`.
SmallVector<Value> allBut(ArrayRef<Value> factors, size_t skip) {
  SmallVector<Value> rest;
  for (auto [i, f] : llvm::enumerate(factors))
    if (i != skip)
      rest.push_back(f);
  return rest;
}

/// Reshapes keep the row-major order, so a chain of elementwise ops on
/// per-row values may go through them.
Value skipReshapes(Value v, MatchedOps &m) {
  while (auto reshape = v.getDefiningOp<tg::ReshapeOp>()) {
    m.add(v);
    v = reshape.getOperand();
  }
  return v;
}

/// The per-row values that `v` broadcasts along its last dimension: the
/// operand of a `tg.broadcast_in_dim` from the leading shape (dims
/// `[0..r-2]`) or from it with a trailing 1 (dims `[0..r-1]`), seen through
/// reshapes.
Value matchRowBroadcast(Value v, MatchedOps &m) {
  auto broadcast = v.getDefiningOp<tg::BroadcastInDimOp>();
  if (!broadcast)
    return {};
  auto result = typeOf(v), operand = typeOf(broadcast.getOperand());
  int64_t rank = result.getRank();
  if (rank == 0)
    return {};
  ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
  ArrayRef<int64_t> leading = result.getShape().drop_back();
  bool dropped =
      operand.getShape() == leading && isIdentityPrefix(dims, rank - 1);
  bool kept = operand.getRank() == rank &&
              operand.getShape().drop_back() == leading &&
              operand.getShape().back() == 1 && isIdentityPrefix(dims, rank);
  if (!dropped && !kept)
    return {};
  m.add(v);
  return skipReshapes(broadcast.getOperand(), m);
}

/// `x` of `mean(x)` over the last dimension of `x`.
Value matchRowMean(Value v, MatchedOps &m) {
  v = skipReshapes(v, m);
  auto reduce = v.getDefiningOp<tg::ReduceOp>();
  if (!reduce || reduce.getKind() != tg::ReduceKind::Mean)
    return {};
  int64_t rank = typeOf(reduce.getOperand()).getRank();
  if (rank == 0 || reduce.getDimensions() != ArrayRef<int64_t>{rank - 1})
    return {};
  m.add(v);
  return reduce.getOperand();
}

/// `b` of `b^2`, written `pow(b, 2)` or `b * b`.
Value matchSquare(Value v, MatchedOps &m) {
  if (auto pow = v.getDefiningOp<tg::PowOp>();
      pow && isSplatOf(pow.getRhs(), 2.0)) {
    m.add(v);
    return pow.getLhs();
  }
  if (auto mul = v.getDefiningOp<tg::MulOp>();
      mul && mul.getLhs() == mul.getRhs()) {
    m.add(v);
    return mul.getLhs();
  }
  return {};
}

/// `b` of `b^3`, written `pow(b, 3)` or as three factors `b`.
Value matchCubeFactors(ArrayRef<Value> factors, MatchedOps &m) {
  if (factors.size() == 3 && factors[0] == factors[1] &&
      factors[1] == factors[2])
    return factors[0];
  if (factors.size() == 1)
    if (auto pow = factors[0].getDefiningOp<tg::PowOp>();
        pow && isSplatOf(pow.getRhs(), 3.0)) {
      m.add(factors[0]);
      return pow.getLhs();
    }
  return {};
}

//===----------------------------------------------------------------------===//
// Layer norm and RMS norm
//===----------------------------------------------------------------------===//

/// A vector applied along the last dimension: a `[H]` value broadcast with
/// dims `[r-1]`, the value itself for `r == 1`, or a splat constant.
struct LastDimVector {
  Value vector;
  std::optional<APFloat> splat;
};

std::optional<LastDimVector> matchLastDimVector(Value v, MatchedOps &m) {
  auto type = typeOf(v);
  int64_t rank = type.getRank();
  if (rank == 0)
    return std::nullopt;
  if (std::optional<APFloat> splat = getSplatFloat(v))
    return LastDimVector{Value(), *splat};
  if (rank == 1)
    return LastDimVector{v, std::nullopt};
  auto broadcast = v.getDefiningOp<tg::BroadcastInDimOp>();
  if (!broadcast)
    return std::nullopt;
  auto operand = typeOf(broadcast.getOperand());
  if (operand.getRank() != 1 ||
      operand.getDimSize(0) != type.getShape().back() ||
      broadcast.getBroadcastDimensions() != ArrayRef<int64_t>{rank - 1})
    return std::nullopt;
  m.add(v);
  return LastDimVector{broadcast.getOperand(), std::nullopt};
}

/// `x` of `x - mean(x)`, the mean over the last dimension broadcast back.
Value matchCentered(Value v, MatchedOps &m) {
  auto sub = v.getDefiningOp<tg::SubOp>();
  if (!sub)
    return {};
  size_t mark = m.mark();
  Value mean = matchRowBroadcast(sub.getRhs(), m);
  Value x = mean ? matchRowMean(mean, m) : Value();
  if (!x || x != sub.getLhs()) {
    m.rollback(mark);
    return {};
  }
  m.add(v);
  return x;
}

/// Per row, `mean(b^2) + eps`: the square's base and epsilon.
struct RowMeanSquare {
  Value base;
  double epsilon;
};

std::optional<RowMeanSquare> matchRowMeanSquarePlusEps(Value v, MatchedOps &m) {
  v = skipReshapes(v, m);
  auto add = v.getDefiningOp<tg::AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [meanSquare, eps] : operandOrders(add)) {
    std::optional<APFloat> epsilon = getSplatFloat(eps);
    if (!epsilon || epsilon->isNegative() || !epsilon->isFinite())
      continue;
    size_t mark = m.mark();
    Value square = matchRowMean(meanSquare, m);
    Value base = square ? matchSquare(square, m) : Value();
    if (!base) {
      m.rollback(mark);
      continue;
    }
    m.add(v);
    return RowMeanSquare{base, epsilon->convertToDouble()};
  }
  return std::nullopt;
}

/// Per row, `sqrt(mean(b^2) + eps)`.
std::optional<RowMeanSquare> matchRowRms(Value v, MatchedOps &m) {
  v = skipReshapes(v, m);
  auto sqrt = v.getDefiningOp<tg::SqrtOp>();
  if (!sqrt)
    return std::nullopt;
  m.add(v);
  return matchRowMeanSquarePlusEps(sqrt.getOperand(), m);
}

/// Per row, `1 / sqrt(mean(b^2) + eps)`: `rsqrt(...)` or `1 / sqrt(...)`.
std::optional<RowMeanSquare> matchRowInverseRms(Value v, MatchedOps &m) {
  v = skipReshapes(v, m);
  if (auto rsqrt = v.getDefiningOp<tg::RsqrtOp>()) {
    m.add(v);
    return matchRowMeanSquarePlusEps(rsqrt.getOperand(), m);
  }
  if (auto div = v.getDefiningOp<tg::DivOp>();
      div && isSplatOf(div.getLhs(), 1.0)) {
    m.add(v);
    return matchRowRms(div.getRhs(), m);
  }
  return std::nullopt;
}

/// A normalization `n * scale + bias` of the rows of `input`, where `n` is
/// `x / rms(x)` (RMS norm) or `(x - mean) / std` (layer norm).
struct NormalizationMatch {
  Value input;
  bool centered = false;
  double epsilon = 0;
  std::optional<LastDimVector> scale, bias;
};

/// Whether `numerator / sqrt(mean(squared^2) + eps)` normalizes the rows of
/// some `x`: both are `x` (RMS norm), or both are `x - mean(x)`, possibly
/// computed twice (layer norm).
bool matchNormalizedBase(Value numerator, Value squared, MatchedOps &m,
                         NormalizationMatch &match) {
  size_t mark = m.mark();
  if (Value x = matchCentered(numerator, m)) {
    Value same = squared == numerator ? x : matchCentered(squared, m);
    if (same == x) {
      match.input = x;
      match.centered = true;
      return true;
    }
    m.rollback(mark);
    return false;
  }
  if (numerator != squared)
    return false;
  match.input = numerator;
  match.centered = false;
  return true;
}

/// `numerator / rowbroadcast(sqrt(mean(b^2) + eps))`.
bool matchDividedForm(Value v, MatchedOps &m, NormalizationMatch &match) {
  auto div = v.getDefiningOp<tg::DivOp>();
  if (!div)
    return false;
  size_t mark = m.mark();
  Value rms = matchRowBroadcast(div.getRhs(), m);
  std::optional<RowMeanSquare> stats = rms ? matchRowRms(rms, m) : std::nullopt;
  if (!stats || !matchNormalizedBase(div.getLhs(), stats->base, m, match)) {
    m.rollback(mark);
    return false;
  }
  match.epsilon = stats->epsilon;
  m.add(v);
  return true;
}

/// `v` is the normalized rows, optionally times a scale vector.
bool matchScaledNormalized(Value v, MatchedOps &m, NormalizationMatch &match) {
  if (matchDividedForm(v, m, match))
    return true;
  size_t mark = m.mark();
  SmallVector<Value> factors = factorsOf(v, m);
  if (factors.size() < 2 || factors.size() > 3) {
    m.rollback(mark);
    return false;
  }
  for (size_t i = 0; i < factors.size(); ++i) {
    size_t inner = m.mark();
    SmallVector<Value> rest = allBut(factors, i);
    // `(n / rms) * scale`.
    if (rest.size() == 1 && matchDividedForm(factors[i], m, match)) {
      if ((match.scale = matchLastDimVector(rest[0], m)))
        return true;
      m.rollback(inner);
      continue;
    }
    // `n * inverse_rms [* scale]`, the factors in any order.
    Value inverse = matchRowBroadcast(factors[i], m);
    std::optional<RowMeanSquare> stats =
        inverse ? matchRowInverseRms(inverse, m) : std::nullopt;
    if (!stats) {
      m.rollback(inner);
      continue;
    }
    for (size_t j = 0; j < rest.size(); ++j) {
      size_t attempt = m.mark();
      if (!matchNormalizedBase(rest[j], stats->base, m, match))
        continue;
      match.epsilon = stats->epsilon;
      match.scale.reset();
      if (rest.size() == 1)
        return true;
      if ((match.scale = matchLastDimVector(rest[1 - j], m)))
        return true;
      m.rollback(attempt);
    }
    m.rollback(inner);
  }
  m.rollback(mark);
  return false;
}

/// A layer norm or RMS norm ending at `root`.
std::optional<NormalizationMatch> matchNormalization(Operation *root,
                                                     MatchedOps &m) {
  if (root->getNumResults() != 1 || typeOf(root->getResult(0)).getRank() == 0 ||
      !isa<tg::AddOp, tg::MulOp, tg::DivOp>(root))
    return std::nullopt;
  Value result = root->getResult(0);
  NormalizationMatch match;
  if (auto add = dyn_cast<tg::AddOp>(root)) {
    for (auto [normalized, bias] : operandOrders(add)) {
      size_t mark = m.mark();
      std::optional<LastDimVector> vector = matchLastDimVector(bias, m);
      if (vector && matchScaledNormalized(normalized, m, match) &&
          match.centered) {
        m.add(normalized);
        match.bias = vector;
        return match;
      }
      m.rollback(mark);
    }
    return std::nullopt;
  }
  if (matchScaledNormalized(result, m, match))
    return match;
  return std::nullopt;
}

/// The `[H]` operand a layer/RMS norm takes for `vector`: the vector, a new
/// splat constant, or `fallback` splat when absent.
Value materializeVector(OpBuilder &b, Location loc,
                        const std::optional<LastDimVector> &vector,
                        RankedTensorType type, double fallback) {
  if (vector && vector->vector)
    return vector->vector;
  APFloat value = vector ? *vector->splat : APFloat(fallback);
  bool lost;
  value.convert(cast<FloatType>(type.getElementType()).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
  return tg::ConstantOp::create(b, loc, DenseElementsAttr::get(type, value));
}

FailureOr<Value> raiseNormalization(Operation *root, bool centered,
                                    OpBuilder &b) {
  MatchedOps m(root);
  std::optional<NormalizationMatch> match = matchNormalization(root, m);
  if (!match || match->centered != centered || !m.usedOnlyInside())
    return failure();
  Value x = match->input;
  auto xType = typeOf(x);
  if (xType != root->getResult(0).getType())
    return failure();
  // Both vectors of a layer norm have one type.
  if (match->scale && match->bias && match->scale->vector &&
      match->bias->vector &&
      match->scale->vector.getType() != match->bias->vector.getType())
    return failure();
  Type vectorElement = xType.getElementType();
  for (const auto &vector : {match->scale, match->bias})
    if (vector && vector->vector)
      vectorElement = typeOf(vector->vector).getElementType();
  auto vectorType =
      RankedTensorType::get({xType.getShape().back()}, vectorElement);

  Location loc = root->getLoc();
  auto statsType =
      RankedTensorType::get(xType.getShape().drop_back(), b.getF32Type());
  Value scale = materializeVector(b, loc, match->scale, vectorType, 1.0);
  FloatAttr epsilon = b.getF64FloatAttr(match->epsilon);
  if (!centered)
    return tg::RmsNormOp::create(b, loc, xType, statsType, x, scale, epsilon)
        .getResult();
  Value bias = materializeVector(b, loc, match->bias, vectorType, 0.0);
  return tg::LayerNormOp::create(b, loc, xType, statsType, statsType, x, scale,
                                 bias, epsilon)
      .getResult();
}

//===----------------------------------------------------------------------===//
// GELU and SiLU
//===----------------------------------------------------------------------===//

/// `u` of `1 + f(u)` for the unary op `f`.
template <typename UnaryOp> Value matchOnePlus(Value v, MatchedOps &m) {
  auto add = v.getDefiningOp<tg::AddOp>();
  if (!add)
    return {};
  for (auto [one, term] : operandOrders(add)) {
    auto unary = term.template getDefiningOp<UnaryOp>();
    if (!unary || !isSplatOf(one, 1.0))
      continue;
    m.add(v);
    m.add(term);
    return unary.getOperand();
  }
  return {};
}

/// Whether `u` is `x / sqrt(2)` or `x * (1 / sqrt(2))`.
bool isErfArgument(Value u, Value x, MatchedOps &m) {
  size_t mark = m.mark();
  if (auto div = u.getDefiningOp<tg::DivOp>();
      div && div.getLhs() == x && isSplatOf(div.getRhs(), std::sqrt(2.0))) {
    m.add(u);
    return true;
  }
  SmallVector<Value> factors = factorsOf(u, m);
  if (factors.size() == 2)
    for (auto [a, c] :
         {std::pair(factors[0], factors[1]), std::pair(factors[1], factors[0])})
      if (a == x && isSplatOf(c, 1.0 / std::sqrt(2.0)))
        return true;
  m.rollback(mark);
  return false;
}

/// Whether `u` is `sqrt(2/pi) * (x + 0.044715 * x^3)`.
bool isTanhArgument(Value u, Value x, MatchedOps &m) {
  size_t mark = m.mark();
  SmallVector<Value> factors = factorsOf(u, m);
  const double pi = std::acos(-1.0);
  if (factors.size() == 2)
    for (auto [c, sum] : {std::pair(factors[0], factors[1]),
                          std::pair(factors[1], factors[0])}) {
      auto add = sum.getDefiningOp<tg::AddOp>();
      if (!add || !isSplatOf(c, std::sqrt(2.0 / pi)))
        continue;
      for (auto [lhs, cubic] : operandOrders(add)) {
        if (lhs != x || !cubic.getDefiningOp<tg::MulOp>())
          continue;
        size_t inner = m.mark();
        SmallVector<Value> terms = factorsOf(cubic, m);
        for (size_t i = 0; i < terms.size(); ++i) {
          if (!isSplatOf(terms[i], 0.044715))
            continue;
          if (matchCubeFactors(allBut(terms, i), m) == x) {
            m.add(sum);
            return true;
          }
        }
        m.rollback(inner);
      }
    }
  m.rollback(mark);
  return false;
}

/// `0.5 * x * (1 + erf(x / sqrt(2)))` or the tanh form, as three factors.
FailureOr<Value> raiseGelu(Operation *root, OpBuilder &b) {
  auto mul = dyn_cast<tg::MulOp>(root);
  if (!mul || !isa<FloatType>(typeOf(mul).getElementType()))
    return failure();
  MatchedOps m(root);
  SmallVector<Value> factors = factorsOf(mul, m);
  if (factors.size() != 3)
    return failure();
  for (size_t half = 0; half < 3; ++half) {
    if (!isSplatOf(factors[half], 0.5))
      continue;
    SmallVector<Value> rest = allBut(factors, half);
    for (size_t j = 0; j < 2; ++j) {
      Value x = rest[1 - j];
      size_t mark = m.mark();
      std::optional<tg::GeluApproximation> approximation;
      if (Value u = matchOnePlus<tg::ErfOp>(rest[j], m);
          u && isErfArgument(u, x, m))
        approximation = tg::GeluApproximation::Erf;
      else if (Value u = matchOnePlus<tg::TanhOp>(rest[j], m);
               u && isTanhArgument(u, x, m))
        approximation = tg::GeluApproximation::Tanh;
      if (!approximation || !m.usedOnlyInside()) {
        m.rollback(mark);
        continue;
      }
      return tg::GeluOp::create(
                 b, root->getLoc(), x.getType(), x,
                 tg::GeluApproximationAttr::get(b.getContext(), *approximation))
          .getResult();
    }
  }
  return failure();
}

/// `x * sigmoid(x)`.
FailureOr<Value> raiseSilu(Operation *root, OpBuilder &b) {
  auto mul = dyn_cast<tg::MulOp>(root);
  if (!mul)
    return failure();
  for (auto [x, gate] : operandOrders(mul)) {
    auto sigmoid = gate.getDefiningOp<tg::SigmoidOp>();
    if (!sigmoid || sigmoid.getOperand() != x || !gate.hasOneUse() || gate == x)
      continue;
    return tg::SiluOp::create(b, root->getLoc(), x.getType(), x).getResult();
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Which keys a constant mask hides, from its per-(query, key) values.
enum class MaskShape { None, Causal, Other };

/// Classifies `hidden(i, j)` over `sq x sk` against the causal mask of
/// tg.attention (key `j` visible from query `i` iff `j <= i + sk - sq`).
MaskShape
classifyMask(int64_t sq, int64_t sk,
             llvm::function_ref<std::optional<bool>(int64_t)> hidden) {
  bool any = false, causal = sq <= sk;
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t j = 0; j < sk; ++j) {
      std::optional<bool> h = hidden(i * sk + j);
      if (!h)
        return MaskShape::Other;
      any |= *h;
      causal &= *h == (j > i + sk - sq);
    }
  if (!any)
    return MaskShape::None;
  return causal ? MaskShape::Causal : MaskShape::Other;
}

/// Whether a float is a hiding mask value: -inf or at most `threshold`.
bool isHidingValue(const APFloat &value, double threshold) {
  return (value.isInfinity() && value.isNegative()) ||
         (value.isFinite() && value.convertToDouble() <= threshold);
}

/// `k` of keys or values repeated for each query head of a group, as
/// `repeat_kv` exports it: `[B, K, S, D]` (possibly reshaped to
/// `[B, K, 1, S, D]`) broadcast to `[B, K, R, S, D]` and reshaped to
/// `[B, K*R, S, D]`.
Value matchRepeatedHeads(Value v) {
  auto reshape = v.getDefiningOp<tg::ReshapeOp>();
  if (!reshape)
    return {};
  auto broadcast = reshape.getOperand().getDefiningOp<tg::BroadcastInDimOp>();
  if (!broadcast)
    return {};
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  ArrayRef<int64_t> wide = typeOf(broadcast).getShape();
  if (wide.size() != 5 || wide[0] != shape[0] ||
      wide[1] * wide[2] != shape[1] || wide[3] != shape[2] ||
      wide[4] != shape[3])
    return {};
  Value base = broadcast.getOperand();
  ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
  auto baseType = typeOf(base);
  if (baseType.getRank() == 4 && dims == ArrayRef<int64_t>{0, 1, 3, 4} &&
      baseType.getShape() ==
          ArrayRef<int64_t>{wide[0], wide[1], wide[3], wide[4]})
    return base;
  if (baseType.getRank() == 5 && isIdentityPrefix(dims, 5) &&
      baseType.getShape() ==
          ArrayRef<int64_t>{wide[0], wide[1], 1, wide[3], wide[4]})
    return base; // Reshaped to 4-D when raising.
  return {};
}

/// Peels single-use multiplications and divisions by positive constants off
/// `v`, multiplying them into `scale`.
Value peelScale(Value v, double &scale, MatchedOps &m) {
  while (v.hasOneUse()) {
    std::optional<double> factor;
    Value inner;
    if (auto mul = v.getDefiningOp<tg::MulOp>()) {
      for (auto [a, c] : operandOrders(mul))
        if ((factor = getPositiveSplat(c))) {
          inner = a;
          break;
        }
    } else if (auto div = v.getDefiningOp<tg::DivOp>()) {
      if ((factor = getPositiveSplat(div.getRhs()))) {
        inner = div.getLhs();
        *factor = 1.0 / *factor;
      }
    }
    if (!factor)
      break;
    m.add(v);
    scale *= *factor;
    v = inner;
  }
  return v;
}

struct AttentionMatch {
  Value query, key, value;
  /// The key as the scores' matmul reads it, transposed (no `transpose_b`).
  bool keyTransposed = false;
  bool causal = false;
  double scale = 1.0;
  /// The soft cap c of `c * tanh(s / c)` applied to the scaled scores s
  /// before the masks, if any.
  std::optional<double> softcap;
  /// The dropout of the probabilities (attention dropout), if any: its
  /// mask is tg.attention's (the same seed, stream, rate, offset and
  /// [B, H, Sq, Sk] elements).
  tg::DropoutOp dropout;
  /// Attention sinks (GPT-OSS): the [B, H, Sq, 1] column of logits that
  /// joins each row of scores before the softmax, its probability dropped
  /// after; null without.
  Value sinks;
  /// A mask computed at run time (not a constant), of the scores' shape:
  /// added to the scores (`addedMask`), or the predicate of a select that
  /// hides a key where it is `hideOnTrue`. `maskScale` is the product of
  /// the scales applied after it, which multiply an added mask too.
  Value addedMask, maskPredicate;
  bool hideOnTrue = true;
  double hideValue = -INFINITY;
  double maskScale = 1.0;
  /// More masks computed at run time added to the scores next to
  /// `addedMask` (BLOOM's ALiBi beside the padding mask), each with the
  /// product of the scales applied after it: the bias sums them.
  SmallVector<std::pair<Value, double>> moreAddedMasks;
  /// With a run-time mask, a constant one that hides with finite values
  /// joins the bias instead of becoming `causal`: its select's predicate
  /// (hiding `constantHideValue` where it is `constantHideOnTrue`) or the
  /// constant added.
  Value constantPredicate, constantAdded;
  bool constantHideOnTrue = true;
  double constantHideValue = -INFINITY;
  /// The product of the scales applied after the constant mask.
  double constantScale = 1.0;
};

/// Whether a mask of the scores' shape [B, H, Sq, Sk] that is a constant
/// (possibly broadcast) has a query row all of whose keys `hides`: nullopt
/// when it is not a constant read that way (a value computed at run time is
/// false: nothing is known of it).
std::optional<bool> hidesWholeRow(Value mask,
                                  llvm::function_ref<bool(Attribute)> hides) {
  // Down to the constant; `keysAt` is the dimension of it that holds the
  // keys (none: the keys are broadcast, each element a whole row).
  Value v = mask;
  std::optional<int64_t> keysAt = 3;
  while (auto broadcast = v.getDefiningOp<tg::BroadcastInDimOp>()) {
    ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
    std::optional<int64_t> operandKeys;
    for (auto [i, dim] : llvm::enumerate(dims))
      if (keysAt && dim == *keysAt &&
          typeOf(broadcast.getOperand()).getDimSize(i) != 1)
        operandKeys = int64_t(i);
    keysAt = operandKeys;
    v = broadcast.getOperand();
  }
  auto constant = v.getDefiningOp<tg::ConstantOp>();
  if (!constant) {
    // A reshaped constant is not read here; anything else is computed at
    // run time.
    auto reshape = v.getDefiningOp<tg::ReshapeOp>();
    if (reshape && reshape.getOperand().getDefiningOp<tg::ConstantOp>())
      return std::nullopt;
    return false;
  }
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return std::nullopt;
  auto type = typeOf(v);
  if (keysAt && *keysAt != type.getRank() - 1)
    return std::nullopt;
  int64_t row = keysAt ? type.getDimSize(*keysAt) : 1;
  auto values = dense.getValues<Attribute>();
  for (int64_t start = 0, e = dense.getNumElements(); start < e; start += row) {
    bool all = true;
    for (int64_t j = 0; j < row && all; ++j)
      all = hides(values[dense.isSplat() ? 0 : start + j]);
    if (all)
      return true;
  }
  return false;
}

/// Why a mask that hides a whole row with -inf is not raised.
constexpr const char *kNanRowReason =
    "a mask hides every key of a query row with -inf and no NaN guard "
    "follows the softmax (the decomposition gives NaN there, tg.attention "
    "zeros)";

/// Whether `v` leads down to the scores' product through what the matcher
/// peels off it: constant scales, constant masks (a select with a hiding
/// value, an added constant).
bool leadsToProduct(Value v, const RaiseOptions &options) {
  MatchedOps unused(v.getDefiningOp());
  while (!v.getDefiningOp<tg::MatmulOp>()) {
    if (!v.hasOneUse())
      return false;
    double scale = 1.0;
    Value inner = peelScale(v, scale, unused);
    if (auto select = v.getDefiningOp<tg::SelectOp>(); inner == v && select) {
      for (auto [hiding, kept] :
           {std::pair(select.getOnTrue(), select.getOnFalse()),
            std::pair(select.getOnFalse(), select.getOnTrue())})
        if (std::optional<APFloat> value = getSplatFloat(hiding);
            value && isHidingValue(*value, options.maskThreshold))
          inner = kept;
    } else if (auto add = v.getDefiningOp<tg::AddOp>(); inner == v && add) {
      for (auto [a, bias] : operandOrders(add))
        if (getTrailingConstant(bias, 2))
          inner = a;
      // A mask computed at run time added: the side that leads on.
      if (inner == v)
        for (auto [a, bias] : operandOrders(add))
          if (inner == v && leadsToProduct(a, options))
            inner = a;
    } else if (auto tanh = v.getDefiningOp<tg::TanhOp>(); inner == v && tanh) {
      inner = tanh.getOperand(); // A soft cap.
    }
    if (inner == v)
      return false;
    v = inner;
  }
  return true;
}

/// The attention that `root` ends, or nullopt; with `why`, the reason it is
/// not raised when the decomposition is one (left empty when `root` ends no
/// softmax over keys).
std::optional<AttentionMatch> matchAttention(tg::MatmulOp root, MatchedOps &m,
                                             const RaiseOptions &options,
                                             std::string *why = nullptr) {
  auto refuse = [&](const Twine &reason) -> std::optional<AttentionMatch> {
    if (why)
      *why = reason.str();
    return std::nullopt;
  };
  auto number = [](double value) {
    std::string text;
    llvm::raw_string_ostream(text) << value;
    return text;
  };
  // The op that defines `v`, named for a reason.
  auto opName = [](Value v) {
    Operation *op = v.getDefiningOp();
    return "`" + (op ? op->getName().getStringRef().str() : "an argument") +
           "`";
  };
  if (root.getTransposeA() || root.getTransposeB() ||
      typeOf(root).getRank() != 4)
    return std::nullopt;
  // PyTorch's safe softmax (the dynamo exporter's SDPA with a mask):
  // `p != p ? 0 : p`, the zeros of a row every key of which the mask hides
  // (a softmax of -inf only), which tg.attention gives such a row too.
  Value probabilities = root.getLhs();
  // Attention dropout, after the softmax (and its NaN guard), as PyTorch's
  // SDPA and Hugging Face's eager attention apply it.
  auto dropout = probabilities.getDefiningOp<tg::DropoutOp>();
  if (dropout) {
    m.add(probabilities);
    probabilities = dropout.getOperand();
  }
  bool nanGuard = false;
  if (auto guard = probabilities.getDefiningOp<tg::SelectOp>()) {
    nanGuard = true;
    auto isNan = guard.getPred().getDefiningOp<tg::CompareOp>();
    std::optional<APFloat> zero = getSplatFloat(guard.getOnTrue());
    if (!isNan || isNan.getDirection() != tg::CompareDirection::NE ||
        isNan.getLhs() != guard.getOnFalse() ||
        isNan.getRhs() != guard.getOnFalse() || !zero || !zero->isZero())
      return refuse("a select on the probabilities that is not PyTorch's "
                    "NaN guard (`p != p ? 0 : p`)");
    m.add(probabilities);
    m.add(guard.getPred());
    probabilities = guard.getOnFalse();
  }
  // Attention sinks (GPT-OSS): the probabilities are the softmax's but for
  // its last column, the sink's.
  bool sinkSlice = false;
  if (auto slice = probabilities.getDefiningOp<tg::SliceOp>()) {
    ArrayRef<int64_t> in = typeOf(slice.getOperand()).getShape();
    ArrayRef<int64_t> out = typeOf(slice).getShape();
    if (in.size() != 4 || in.take_front(3) != out.take_front(3) ||
        out[3] + 1 != in[3] ||
        llvm::any_of(slice.getStartIndices(), [](int64_t i) { return i; }) ||
        llvm::any_of(slice.getStrides(), [](int64_t s) { return s != 1; }))
      return std::nullopt;
    m.add(probabilities);
    probabilities = slice.getOperand();
    sinkSlice = true;
  }
  auto softmax = probabilities.getDefiningOp<tg::SoftmaxOp>();
  if (!softmax || softmax.getDimension() != 3)
    return std::nullopt;
  m.add(probabilities);
  AttentionMatch match;
  match.value = root.getRhs();
  match.dropout = dropout;

  // Scale and mask, in any order, down to the scores' matmul.
  Value scores = softmax.getOperand();
  if (sinkSlice) {
    // `x - rowmax(x)` before the softmax (GPT-OSS's stabilization), which
    // changes no softmax, then `x = concat(scores, sinks)`.
    if (auto sub = scores.getDefiningOp<tg::SubOp>()) {
      Value rowMax = sub.getRhs();
      SmallVector<Value> chain = {scores, rowMax};
      while (isa_and_nonnull<tg::BroadcastInDimOp, tg::ReshapeOp>(
          rowMax.getDefiningOp())) {
        rowMax = rowMax.getDefiningOp()->getOperand(0);
        chain.push_back(rowMax);
      }
      auto max = rowMax.getDefiningOp<tg::ReduceOp>();
      if (!max || max.getKind() != tg::ReduceKind::Max ||
          max.getOperand() != sub.getLhs() ||
          max.getDimensions() != ArrayRef<int64_t>{3})
        return refuse("a subtraction before the sinks' softmax that is not "
                      "the row maximum's");
      for (Value v : chain)
        m.add(v);
      scores = sub.getLhs();
    }
    auto concat = scores.getDefiningOp<tg::ConcatOp>();
    if (!concat || concat.getDimension() != 3 ||
        concat.getInputs().size() != 2 ||
        typeOf(concat.getInputs()[1]).getDimSize(3) != 1)
      return refuse("the probabilities are a softmax's but for its last "
                    "column, and the column is not a sink's logit joined "
                    "to the scores");
    if (dropout)
      return refuse("attention dropout with sinks (tg.attention would draw "
                    "its mask over one more key)");
    m.add(scores);
    match.sinks = concat.getInputs()[1];
    scores = concat.getInputs()[0];
  }
  ArrayRef<int64_t> shape = typeOf(scores).getShape();
  int64_t sq = shape[2], sk = shape[3];
  // At most one constant mask and one computed at run time.
  bool constantMask = false, finiteConstant = false, foldableConstant = false;
  auto runtimeMask = [&] { return match.addedMask || match.maskPredicate; };
  auto hidingSplat = [&](Value v) {
    std::optional<APFloat> value = getSplatFloat(v);
    return value && isHidingValue(*value, options.maskThreshold);
  };
  while (!scores.getDefiningOp<tg::MatmulOp>()) {
    if (!scores.hasOneUse())
      return refuse("the result of " + opName(scores) +
                    " on the scores is also used elsewhere");
    Value inner = peelScale(scores, match.scale, m);
    if (inner != scores) {
      scores = inner;
      continue;
    }
    // A soft cap, `c * tanh(s / c)` (Gemma 2, FlexAttention's score_mod):
    // the scales peeled so far (applied after the tanh) are c, those inside
    // it 1 / c; what is below scales the scores. The masks must come after
    // it (the attention caps before the bias).
    if (auto tanh = scores.getDefiningOp<tg::TanhOp>()) {
      if (match.softcap)
        return refuse("two soft caps (`tg.tanh`) on the scores");
      match.softcap = match.scale;
      m.add(scores);
      double inside = 1.0;
      scores = peelScale(tanh.getOperand(), inside, m);
      match.scale = inside * *match.softcap;
      continue;
    }
    if (match.softcap)
      return refuse(opName(scores) +
                    " between the scores' product and the soft cap (a mask "
                    "inside the cap is capped with the scores)");
    bool hadRuntimeMask = runtimeMask();
    MaskShape mask = MaskShape::Other;
    // Whether a mask hides every key of a query row with -inf: the
    // decomposition's softmax gives NaN there, tg.attention zeros, so such
    // a mask is the bias only after PyTorch's NaN guard (which gives zeros
    // too). Known of a constant read through broadcasts; a constant read
    // otherwise is refused as if it did.
    auto nanRow = [&](Value maskValue,
                      llvm::function_ref<bool(Attribute)> infAt) {
      if (nanGuard)
        return false;
      return hidesWholeRow(maskValue, infAt).value_or(true);
    };
    // The constant mask's hiding values: whether all are -inf, and the
    // largest finite one.
    bool hidesWithInf = true;
    double largestHide = -INFINITY;
    auto noteHide = [&](const APFloat &value) {
      if (value.isInfinity())
        return;
      hidesWithInf = false;
      largestHide = std::max(largestHide, value.convertToDouble());
    };
    if (auto select = scores.getDefiningOp<tg::SelectOp>()) {
      bool hideOnTrue = hidingSplat(select.getOnTrue());
      if (!hideOnTrue && !hidingSplat(select.getOnFalse()))
        return refuse("a select on the scores whose fill is not a mask's "
                      "value (-inf, or at most the mask threshold " +
                      number(options.maskThreshold) + ")");
      std::optional<TrailingConstant> pred =
          getTrailingConstant(select.getPred(), 2);
      inner = hideOnTrue ? select.getOnFalse() : select.getOnTrue();
      if (pred) {
        auto values = pred->values.getValues<bool>();
        mask = classifyMask(sq, sk, [&](int64_t i) -> std::optional<bool> {
          return values[i] == hideOnTrue;
        });
      }
      if (!pred || mask == MaskShape::Other) {
        // A predicate computed at run time, or a constant one that is not
        // the causal mask (a sliding window): the attention's bias, when
        // adding the hiding value to a score gives the hiding value (-inf,
        // or one whose f32 spacing dwarfs any score).
        double hide =
            getSplatFloat(hideOnTrue ? select.getOnTrue() : select.getOnFalse())
                ->convertToDouble();
        if (hadRuntimeMask)
          return refuse("two masks computed at run time");
        if (hide > -1e30)
          return refuse("a mask computed at run time fills with " +
                        number(hide) +
                        ", which a bias added to the score does not give "
                        "(it needs -inf or at most -1e30)");
        if (std::isinf(hide) && nanRow(select.getPred(), [&](Attribute value) {
              return cast<BoolAttr>(value).getValue() == hideOnTrue;
            }))
          return refuse(kNanRowReason);
        match.maskPredicate = select.getPred();
        match.hideOnTrue = hideOnTrue;
        match.hideValue = hide;
        m.add(scores);
        scores = inner;
        continue;
      }
      // A constant that hides nothing changes no softmax: peeled.
      if (mask == MaskShape::None) {
        m.add(scores);
        scores = inner;
        continue;
      }
      noteHide(*getSplatFloat(hideOnTrue ? select.getOnTrue()
                                         : select.getOnFalse()));
      match.constantPredicate = select.getPred();
      match.constantHideOnTrue = hideOnTrue;
      match.constantHideValue = largestHide;
    } else if (auto add = scores.getDefiningOp<tg::AddOp>()) {
      for (auto [a, bias] : operandOrders(add)) {
        std::optional<TrailingConstant> constant = getTrailingConstant(bias, 2);
        if (!constant || !isa<FloatType>(constant->values.getElementType()))
          continue;
        auto values = constant->values.getValues<APFloat>();
        hidesWithInf = true;
        largestHide = -INFINITY;
        mask = classifyMask(sq, sk, [&](int64_t i) -> std::optional<bool> {
          APFloat value = values[i];
          if (isHidingValue(value, options.maskThreshold)) {
            noteHide(value);
            return true;
          }
          if (value.isZero())
            return false;
          return std::nullopt;
        });
        inner = a;
        if (mask != MaskShape::Other) {
          if (mask != MaskShape::None)
            match.constantAdded = bias;
          break;
        }
      }
      // Zeros added (T5's cross-attention position bias without a mask)
      // change no softmax: peeled.
      if (mask == MaskShape::None) {
        m.add(scores);
        scores = inner;
        continue;
      }
      if (mask == MaskShape::Other && !match.maskPredicate) {
        // A mask computed at run time, or a constant one other than the
        // causal mask (a sliding window, ALiBi), added to the (scaled)
        // product: the attention's bias, times the scales applied after it
        // (several added so are summed into it).
        bool added = false;
        for (auto [a, bias] : operandOrders(add))
          if (leadsToProduct(a, options) && !leadsToProduct(bias, options)) {
            if (nanRow(bias, [](Attribute value) {
                  APFloat f = cast<FloatAttr>(value).getValue();
                  return f.isInfinity() && f.isNegative();
                }))
              return refuse(kNanRowReason);
            if (match.addedMask) {
              match.moreAddedMasks.push_back({bias, match.scale});
            } else {
              match.addedMask = bias;
              match.maskScale = match.scale;
            }
            m.add(scores);
            scores = a;
            added = true;
            break;
          }
        if (added)
          continue;
      }
    }
    if (constantMask && mask != MaskShape::Other)
      return refuse("two constant masks on the scores");
    if (mask == MaskShape::Other)
      return refuse(opName(scores) +
                    " on the scores is not what tg.attention takes: scales, "
                    "masks computed at run time (added, or one select), one "
                    "constant mask and a soft cap");
    constantMask = true;
    match.causal = mask == MaskShape::Causal;
    match.constantScale = match.scale;
    // -inf hides as tg.attention's causal flag does, whatever else is added
    // to the score. Finite hiding values (-1e4, f32's lowest) joined with a
    // run-time mask are what the bias computes when the constant is added
    // (before or after the run-time mask: the bias adds both, as the
    // decomposition does), or when a select of it is applied first (the
    // run-time mask then adds to its hiding value) and hides with values
    // whose f32 spacing dwarfs a score.
    finiteConstant = !hidesWithInf;
    foldableConstant =
        match.constantAdded || (hadRuntimeMask && largestHide <= -1e30);
    m.add(scores);
    scores = inner;
  }
  // A constant mask with finite hiding values next to a run-time one joins
  // the bias (no causal flag), or nothing computes what the decomposition
  // does; any other constant mask is the causal flag or nothing.
  if (runtimeMask() && finiteConstant) {
    if (!foldableConstant)
      return refuse("a constant mask selected with a finite value next to a "
                    "mask computed at run time (-1e4, or applied after it): "
                    "no bias gives its score on a row that hides every key");
    match.causal = false;
  } else {
    match.constantPredicate = match.constantAdded = Value();
  }
  if (!scores.hasOneUse())
    return refuse("the scores' product is also used elsewhere");
  auto product = scores.getDefiningOp<tg::MatmulOp>();
  if (product.getTransposeA())
    return refuse("the scores' product transposes its left operand");
  m.add(scores);
  match.query = peelScale(product.getLhs(), match.scale, m);
  Value key = peelScale(product.getRhs(), match.scale, m);
  match.keyTransposed = !product.getTransposeB();
  if (match.keyTransposed) {
    // Read through the transpose of the keys' last two dimensions.
    if (auto transpose = key.getDefiningOp<tg::TransposeOp>();
        transpose &&
        transpose.getPermutation() == ArrayRef<int64_t>{0, 1, 3, 2}) {
      key = transpose.getOperand();
      match.keyTransposed = false;
    }
  }
  match.key = key;
  // Grouped-query attention: tg.attention repeats the key/value heads.
  if (!match.keyTransposed) {
    Value k = matchRepeatedHeads(match.key),
          v = matchRepeatedHeads(match.value);
    if (k && v && typeOf(k).getShape()[1] == typeOf(v).getShape()[1]) {
      match.key = k;
      match.value = v;
    }
  }
  return match;
}

/// `v` as a 4-D `[B, K, S, D]` tensor (un-repeated heads may be 5-D).
Value as4d(OpBuilder &b, Location loc, Value v) {
  auto type = typeOf(v);
  if (type.getRank() == 4)
    return v;
  ArrayRef<int64_t> s = type.getShape();
  auto target =
      RankedTensorType::get({s[0], s[1], s[3], s[4]}, type.getElementType());
  if (auto reshape = v.getDefiningOp<tg::ReshapeOp>();
      reshape && reshape.getOperand().getType() == target)
    return reshape.getOperand();
  return tg::ReshapeOp::create(b, loc, target, v);
}

/// A mask of the scores' shape [B, H, Sq, Sk] in the smallest shape the
/// attention can read it in place, [B|1, H|1, Sq|1, Sk|1]: a constant the
/// same for every batch and head as a [1, 1, Sq, Sk] constant, else read
/// through its broadcast (the operand with 1s on the dimensions it adds).
Value unbroadcastMask(OpBuilder &b, Location loc, Value mask) {
  ArrayRef<int64_t> scores = typeOf(mask).getShape();
  if (std::optional<TrailingConstant> constant = getTrailingConstant(mask, 2)) {
    auto type = RankedTensorType::get({1, 1, scores[2], scores[3]},
                                      typeOf(mask).getElementType());
    DenseElementsAttr values = constant->values;
    if (!values.isSplat()) {
      auto all = values.getValues<Attribute>();
      SmallVector<Attribute> block(all.begin(),
                                   all.begin() + scores[2] * scores[3]);
      values = DenseElementsAttr::get(type, block);
    } else {
      values = values.resizeSplat(type);
    }
    return tg::ConstantOp::create(b, loc, values);
  }
  auto broadcast = mask.getDefiningOp<tg::BroadcastInDimOp>();
  if (!broadcast)
    return mask;
  Value source = broadcast.getOperand();
  SmallVector<int64_t> shape(4, 1);
  for (auto [dim, size] :
       llvm::zip(broadcast.getBroadcastDimensions(), typeOf(source).getShape()))
    shape[dim] = size;
  auto type = typeOf(source).clone(ArrayRef<int64_t>(shape));
  if (source.getType() == type)
    return source;
  return tg::ReshapeOp::create(b, loc, type, source);
}

/// tg.attention's f32 bias from the run-time mask of `match`: an added
/// mask times the scales after it, or 0 and the select's hiding value from
/// its predicate (-inf, or so large that a score plus it rounds to it).
Value buildAttentionBias(OpBuilder &b, Location loc,
                         const AttentionMatch &match) {
  Type f32 = b.getF32Type();
  auto splatOf = [&](Value like, double value) -> Value {
    auto type = typeOf(like).clone(f32);
    return tg::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getFloatAttr(f32, value)));
  };
  if (match.maskPredicate) {
    Value pred = unbroadcastMask(b, loc, match.maskPredicate);
    Value zero = splatOf(pred, 0.0), hidden = splatOf(pred, match.hideValue);
    return match.hideOnTrue ? tg::SelectOp::create(b, loc, pred, hidden, zero)
                            : tg::SelectOp::create(b, loc, pred, zero, hidden);
  }
  auto toF32 = [&](Value v) -> Value {
    if (typeOf(v).getElementType().isF32())
      return v;
    return tg::ConvertOp::create(b, loc, typeOf(v).clone(f32), v);
  };
  // x + y in f32, in their common shape.
  auto addBiases = [&](Value x, Value y) -> Value {
    SmallVector<int64_t> common;
    for (auto [a, c] : llvm::zip(typeOf(x).getShape(), typeOf(y).getShape()))
      common.push_back(std::max(a, c));
    auto commonType = RankedTensorType::get(common, f32);
    auto widen = [&](Value v) -> Value {
      if (v.getType() == commonType)
        return v;
      return tg::BroadcastInDimOp::create(b, loc, commonType, v,
                                          ArrayRef<int64_t>{0, 1, 2, 3});
    };
    return tg::AddOp::create(b, loc, widen(x), widen(y));
  };
  // A mask times the scales applied after it.
  auto scaledMask = [&](Value mask, double scale) {
    Value v = toF32(unbroadcastMask(b, loc, mask));
    if (scale != 1.0)
      v = tg::MulOp::create(b, loc, v, splatOf(v, scale));
    return v;
  };
  Value bias = scaledMask(match.addedMask, match.maskScale);
  for (auto [mask, scale] : match.moreAddedMasks)
    bias = addBiases(bias, scaledMask(mask, scale));
  // A constant mask applied before it: its hiding value (or the constant)
  // added, both in their common shape.
  Value constant;
  if (match.constantPredicate) {
    Value pred = unbroadcastMask(b, loc, match.constantPredicate);
    Value zero = splatOf(pred, 0.0),
          hidden = splatOf(pred, match.constantHideValue);
    constant = match.constantHideOnTrue
                   ? tg::SelectOp::create(b, loc, pred, hidden, zero)
                   : tg::SelectOp::create(b, loc, pred, zero, hidden);
  } else if (match.constantAdded) {
    constant = toF32(unbroadcastMask(b, loc, match.constantAdded));
  }
  if (!constant)
    return bias;
  if (match.constantScale != 1.0)
    constant = tg::MulOp::create(b, loc, constant,
                                 splatOf(constant, match.constantScale));
  return addBiases(bias, constant);
}

/// Why the attention `match` that `root` ends cannot be one tg.attention
/// (types and shapes), or nullopt: q [B, H, Sq, D], k [B, K, Sk, D] and
/// v [B, K, Sk, Dv] of the root's element type with K dividing H, Sq <= Sk
/// when causal, for an output [B, H, Sq, Dv] of the root's type.
std::optional<std::string> checkAttentionMatch(tg::MatmulOp root,
                                               const AttentionMatch &match) {
  auto queryType = typeOf(match.query);
  Type element = queryType.getElementType();
  if (queryType.getRank() != 4 ||
      typeOf(match.key).getElementType() != element ||
      typeOf(match.value).getElementType() != element ||
      typeOf(root).getElementType() != element)
    return std::string("the query, key, value and output differ in element "
                       "type (or the query is not 4-D)");
  auto heads4d = [](RankedTensorType type) {
    ArrayRef<int64_t> s = type.getShape();
    return type.getRank() == 5 ? SmallVector<int64_t>{s[0], s[1], s[3], s[4]}
                               : SmallVector<int64_t>(s);
  };
  SmallVector<int64_t> q(queryType.getShape());
  SmallVector<int64_t> k = heads4d(typeOf(match.key));
  SmallVector<int64_t> v = heads4d(typeOf(match.value));
  if (match.keyTransposed && k.size() == 4)
    std::swap(k[2], k[3]);
  if (k.size() != 4 || v.size() != 4 || k[0] != q[0] || v[0] != q[0] ||
      k[1] != v[1] || k[1] == 0 || q[1] % k[1] != 0 || k[2] != v[2] ||
      k[3] != q[3] || (match.causal && q[2] > k[2]) ||
      typeOf(root).getShape() != ArrayRef<int64_t>{q[0], q[1], q[2], v[3]})
    return std::string("the query, key and value shapes are not "
                       "[B, H, Sq, D], [B, K, Sk, D], [B, K, Sk, Dv] with K "
                       "dividing H (and Sq <= Sk when causal)");
  return std::nullopt;
}

/// Attention sinks as one more key, in front of the others: its key and
/// value are zeros and its score is its sink through the bias (q . 0 is 0,
/// whatever the scale and cap), so the softmax over the keys and the sink
/// is the decomposition's and the sink adds nothing to the output. In front,
/// the causal alignment (key j visible from query i iff j <= i + Sk - Sq)
/// keeps every real key where it was and shows the sink to every query.
/// Returns the key, value and f32 bias ([B|1, H|1, Sq|1, Sk + 1]).
std::tuple<Value, Value, Value> prependSinkKey(OpBuilder &b, Location loc,
                                               Value key, Value value,
                                               Value bias, Value sinks) {
  auto prependZero = [&](Value v) -> Value {
    SmallVector<int64_t> shape(typeOf(v).getShape());
    shape[2] = 1;
    auto type = typeOf(v).clone(ArrayRef<int64_t>(shape));
    Value zero = tg::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0)));
    return tg::ConcatOp::create(b, loc, ValueRange{zero, v}, 2);
  };
  Type f32 = b.getF32Type();
  Value column = unbroadcastMask(b, loc, sinks);
  if (!typeOf(column).getElementType().isF32())
    column = tg::ConvertOp::create(b, loc, typeOf(column).clone(f32), column);
  int64_t sk = typeOf(key).getDimSize(2);
  if (!bias)
    bias = tg::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({1, 1, 1, sk}, f32),
                               b.getFloatAttr(f32, 0)));
  // Both in the common [B|1, H|1, Sq|1] of their leading dimensions.
  SmallVector<int64_t> lead;
  for (int64_t d = 0; d < 3; ++d)
    lead.push_back(
        std::max(typeOf(column).getDimSize(d), typeOf(bias).getDimSize(d)));
  auto widen = [&](Value v, int64_t last) -> Value {
    auto type = RankedTensorType::get({lead[0], lead[1], lead[2], last}, f32);
    if (v.getType() == type)
      return v;
    return tg::BroadcastInDimOp::create(b, loc, type, v,
                                        ArrayRef<int64_t>{0, 1, 2, 3});
  };
  bias = tg::ConcatOp::create(b, loc,
                              ValueRange{widen(column, 1), widen(bias, sk)}, 3);
  return {prependZero(key), prependZero(value), bias};
}

FailureOr<Value> raiseAttention(tg::MatmulOp root, const RaiseOptions &options,
                                OpBuilder &b) {
  MatchedOps m(root);
  std::optional<AttentionMatch> match = matchAttention(root, m, options);
  if (!match || !m.usedOnlyInside() || checkAttentionMatch(root, *match))
    return failure();
  SmallVector<int64_t> q(typeOf(match->query).getShape());

  Location loc = root.getLoc();
  Value key = match->key;
  if (match->keyTransposed)
    key = tg::TransposeOp::create(b, loc, key, ArrayRef<int64_t>{0, 1, 3, 2});
  key = as4d(b, loc, key);
  Value value = as4d(b, loc, match->value);
  double defaultScale = 1.0 / std::sqrt(double(q[3]));
  FloatAttr scale;
  if (std::abs(match->scale - defaultScale) > 1e-6 * defaultScale)
    scale = b.getF64FloatAttr(match->scale);
  auto lseType = RankedTensorType::get({q[0], q[1], q[2]}, b.getF32Type());
  Value bias;
  if (match->addedMask || match->maskPredicate)
    bias = buildAttentionBias(b, loc, *match);
  if (match->sinks)
    std::tie(key, value, bias) =
        prependSinkKey(b, loc, key, value, bias, match->sinks);
  FloatAttr softcap;
  if (match->softcap)
    softcap = b.getF64FloatAttr(*match->softcap);
  tg::DropoutOp dropout = match->dropout;
  auto attention = tg::AttentionOp::create(
      b, loc, root.getType(), lseType, match->query, key, value, bias,
      dropout ? dropout.getSeed() : Value(),
      dropout ? dropout.getOffset() : Value(), match->causal, scale, softcap,
      dropout ? dropout.getRateAttr() : FloatAttr(),
      dropout ? dropout.getStreamAttr() : IntegerAttr(),
      dropout ? dropout.getGlobalShapeAttr() : DenseI64ArrayAttr());
  return attention.getOutput();
}

} // namespace

std::optional<std::string>
tgc::explainUnraisedAttention(tg::MatmulOp root, const RaiseOptions &options) {
  // An attention: a product of the probabilities, a softmax over the keys
  // of rank-4 scores, reached through what may sit between them (a NaN
  // guard, a dropout, a convert, a product: FlexAttention's prob_mod; a
  // reshape to merged batch and heads).
  Value probabilities = root.getLhs();
  std::string between;
  while (Operation *op = probabilities.getDefiningOp()) {
    if (!isa<tg::SelectOp, tg::DropoutOp, tg::ConvertOp, tg::MulOp,
             tg::ReshapeOp>(op) ||
        op->getNumOperands() == 0)
      break;
    if (between.empty() && !isa<tg::SelectOp>(op))
      between = op->getName().getStringRef().str();
    if (auto select = dyn_cast<tg::SelectOp>(op)) {
      probabilities = select.getOnFalse();
    } else if (auto mul = dyn_cast<tg::MulOp>(op)) {
      // The factor that is no splat constant (a prob_mod's scale).
      probabilities = getSplatFloat(mul.getLhs()) ? mul.getRhs() : mul.getLhs();
    } else {
      probabilities = op->getOperand(0);
    }
  }
  auto softmax = probabilities.getDefiningOp<tg::SoftmaxOp>();
  if (root.getTransposeA() || root.getTransposeB() || !softmax ||
      softmax.getDimension() != 3 || typeOf(softmax).getRank() != 4)
    return std::nullopt;
  if (typeOf(root).getRank() != 4)
    return std::string("its products are 3-D, the batch and the heads "
                       "merged ([B * H, S, D]), and not views of [B, H, S, "
                       "D] tensors, which tg-raise would read as BLOOM's");
  std::string why;
  MatchedOps m(root);
  std::optional<AttentionMatch> match = matchAttention(root, m, options, &why);
  if (!match)
    return why.empty() ? "`" + between +
                             "` between the softmax and the "
                             "product with the values"
                       : why;
  if (!m.usedOnlyInside())
    return std::string("an intermediate of the decomposition (the scores or "
                       "the probabilities) is also used outside it");
  return checkAttentionMatch(root, *match);
}

namespace {

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

struct CrossEntropyMatch {
  Value logits, labels;
  tg::LossReduction reduction;
};

/// `labels` of the one-hot mask `labels == [0, 1, ..., C-1]` along the last
/// dimension.
Value matchOneHot(Value v, MatchedOps &m) {
  auto compare = v.getDefiningOp<tg::CompareOp>();
  if (!compare || compare.getDirection() != tg::CompareDirection::EQ)
    return {};
  int64_t classes = typeOf(v).getShape().back();
  for (auto [labels, iota] : operandOrders(compare)) {
    std::optional<TrailingConstant> constant = getTrailingConstant(iota, 1);
    if (!constant || !isa<IntegerType>(constant->values.getElementType()))
      continue;
    auto values = constant->values.getValues<APInt>();
    bool isIota = true;
    for (int64_t c = 0; c < classes && isIota; ++c)
      isIota = values[c].getSExtValue() == c;
    if (!isIota)
      continue;
    size_t mark = m.mark();
    if (Value rows = matchRowBroadcast(labels, m)) {
      m.add(v);
      return rows;
    }
    m.rollback(mark);
  }
  return {};
}

/// Per token, the label's log-probability: `sum(select(onehot, logp, 0))` or
/// `sum(logp * convert(onehot))` over the classes, `logp` a log-softmax over
/// them.
std::optional<CrossEntropyMatch> matchPicked(Value v, MatchedOps &m) {
  auto reduce = v.getDefiningOp<tg::ReduceOp>();
  if (!reduce || reduce.getKind() != tg::ReduceKind::Sum)
    return std::nullopt;
  Value full = reduce.getOperand();
  int64_t rank = typeOf(full).getRank();
  if (rank < 2 || reduce.getDimensions() != ArrayRef<int64_t>{rank - 1})
    return std::nullopt;
  m.add(v);
  Value logp, labels;
  if (auto select = full.getDefiningOp<tg::SelectOp>()) {
    if (isSplatOf(select.getOnFalse(), 0.0)) {
      logp = select.getOnTrue();
      labels = matchOneHot(select.getPred(), m);
    }
  } else if (auto mul = full.getDefiningOp<tg::MulOp>()) {
    for (auto [a, mask] : operandOrders(mul)) {
      auto convert = mask.getDefiningOp<tg::ConvertOp>();
      if (!convert)
        continue;
      size_t mark = m.mark();
      if ((labels = matchOneHot(convert.getOperand(), m))) {
        m.add(mask);
        logp = a;
        break;
      }
      m.rollback(mark);
    }
  }
  auto logSoftmax = logp ? logp.getDefiningOp<tg::LogSoftmaxOp>() : nullptr;
  if (!labels || !logSoftmax || int64_t(logSoftmax.getDimension()) != rank - 1)
    return std::nullopt;
  m.add(full);
  m.add(logp);
  return CrossEntropyMatch{logSoftmax.getOperand(), labels,
                           tg::LossReduction::Mean};
}

/// `kind` of a reduction of all dimensions of a value.
std::optional<tg::LossReduction> matchFullReduction(tg::ReduceOp reduce) {
  int64_t rank = typeOf(reduce.getOperand()).getRank();
  if (!isIdentityPrefix(reduce.getDimensions(), rank))
    return std::nullopt;
  if (reduce.getKind() == tg::ReduceKind::Mean)
    return tg::LossReduction::Mean;
  if (reduce.getKind() == tg::ReduceKind::Sum)
    return tg::LossReduction::Sum;
  return std::nullopt;
}

/// `x` of `-x`, as `neg` or a product with -1.
Value matchNegated(Value v, MatchedOps &m) {
  if (auto neg = v.getDefiningOp<tg::NegOp>()) {
    m.add(v);
    return neg.getOperand();
  }
  if (auto mul = v.getDefiningOp<tg::MulOp>())
    for (auto [a, c] : operandOrders(mul))
      if (isSplatOf(c, -1.0)) {
        m.add(v);
        return a;
      }
  return {};
}

/// The loss: `-reduce(picked)` or `reduce(-picked)`, mean or sum over the
/// tokens.
std::optional<CrossEntropyMatch> matchOneHotCrossEntropy(Operation *root,
                                                         MatchedOps &m) {
  if (root->getNumResults() != 1)
    return std::nullopt;
  Value loss = root->getResult(0);
  if (typeOf(loss).getRank() != 0)
    return std::nullopt;
  std::optional<tg::LossReduction> reduction;
  Value picked;
  if (Value inner = matchNegated(loss, m)) {
    auto reduce = inner.getDefiningOp<tg::ReduceOp>();
    if (!reduce || !(reduction = matchFullReduction(reduce)))
      return std::nullopt;
    m.add(inner);
    picked = reduce.getOperand();
  } else if (auto reduce = dyn_cast<tg::ReduceOp>(root)) {
    if (!(reduction = matchFullReduction(reduce)))
      return std::nullopt;
    picked = matchNegated(reduce.getOperand(), m);
  }
  if (!picked)
    return std::nullopt;
  std::optional<CrossEntropyMatch> match = matchPicked(picked, m);
  if (!match)
    return std::nullopt;
  match->reduction = *reduction;
  return match;
}

/// A cross-entropy of log-probabilities: log_softmax changes no
/// cross-entropy, but it does change the logsumexp, which must be unused.
FailureOr<tg::CrossEntropyOp>
raiseLogSoftmaxCrossEntropy(tg::CrossEntropyOp loss, OpBuilder &b) {
  auto logSoftmax = loss.getLogits().getDefiningOp<tg::LogSoftmaxOp>();
  int64_t rank = typeOf(loss.getLogits()).getRank();
  if (!logSoftmax || int64_t(logSoftmax.getDimension()) != rank - 1 ||
      !loss.getLogits().hasOneUse() || !loss.getLogsumexp().use_empty())
    return failure();
  return tg::CrossEntropyOp::create(
      b, loss.getLoc(), loss.getLoss().getType(), loss.getLogsumexp().getType(),
      loss.getReduction(), logSoftmax.getOperand(), loss.getLabels(),
      loss.getIgnoreIndexAttr());
}

FailureOr<Value> raiseOneHotCrossEntropy(Operation *root, OpBuilder &b) {
  MatchedOps m(root);
  std::optional<CrossEntropyMatch> match = matchOneHotCrossEntropy(root, m);
  if (!match || !m.usedOnlyInside())
    return failure();
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  if (root->getResult(0).getType() != f32Scalar)
    return failure();
  Location loc = root->getLoc();
  auto logitsType = typeOf(match->logits);
  auto labelsType =
      RankedTensorType::get(logitsType.getShape().drop_back(),
                            typeOf(match->labels).getElementType());
  Value labels = match->labels;
  if (labels.getType() != labelsType)
    labels = tg::ReshapeOp::create(b, loc, labelsType, labels);
  auto lseType =
      RankedTensorType::get(logitsType.getShape().drop_back(), b.getF32Type());
  return tg::CrossEntropyOp::create(b, loc, f32Scalar, lseType,
                                    match->reduction, match->logits, labels,
                                    IntegerAttr())
      .getLoss();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Bigger decompositions first: a root that ends several forms (a `tg.mul`
/// ends a loss, a normalization, a GELU or a SiLU) is offered to the form
/// that covers the most ops first, in the order of getAllRaiseKinds.
PatternBenefit benefitOf(RaiseKind kind) {
  ArrayRef<RaiseKind> all = getAllRaiseKinds();
  return all.size() - (llvm::find(all, kind) - all.begin());
}

/// One form of `kind` ending at a `RootOp`: `raise` matches the
/// decomposition and builds its replacement, touching nothing on failure;
/// the pattern replaces the root, and the driver erases the decomposition's
/// ops that this leaves dead.
template <typename RootOp>
struct RaiseDecomposition : OpRewritePattern<RootOp> {
  using Raiser = std::function<FailureOr<Value>(RootOp, OpBuilder &)>;

  RaiseDecomposition(MLIRContext *context, RaiseKind kind, Raiser raise)
      : OpRewritePattern<RootOp>(context, benefitOf(kind)),
        raise(std::move(raise)) {
    this->setDebugName(getRaiseKindName(kind));
  }

  LogicalResult matchAndRewrite(RootOp root,
                                PatternRewriter &rewriter) const override {
    FailureOr<Value> raised = raise(root, rewriter);
    if (failed(raised))
      return rewriter.notifyMatchFailure(root, "no decomposition ends here");
    rewriter.replaceOp(root, *raised);
    return success();
  }

  Raiser raise;
};

/// Adds a RaiseDecomposition of `kind` for each of `RootOps`.
template <typename... RootOps, typename Raiser>
void addRaise(RewritePatternSet &patterns, RaiseKind kind, Raiser raise) {
  (patterns.add<RaiseDecomposition<RootOps>>(patterns.getContext(), kind,
                                             raise),
   ...);
}

/// An operand of a product over merged batch and heads ([B * H, m, n], as
/// BLOOM writes its attention) as the rank-4 tensor it merges: reshape(x)
/// of x [B, H, m, n], or transpose(reshape(x), [0, 2, 1]) (x read
/// transposed).
struct Unmerged {
  Value value;
  bool transposed;
};
std::optional<Unmerged> unmerge(Value v) {
  bool transposed = false;
  if (auto transpose = v.getDefiningOp<tg::TransposeOp>()) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1})
      return std::nullopt;
    v = transpose.getOperand();
    transposed = true;
  }
  auto reshape = v.getDefiningOp<tg::ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  RankedTensorType from = typeOf(reshape.getOperand()), to = typeOf(v);
  if (from.getRank() != 4 || to.getRank() != 3 ||
      from.getDimSize(0) * from.getDimSize(1) != to.getDimSize(0) ||
      from.getShape().take_back(2) != to.getShape().take_back(2))
    return std::nullopt;
  return Unmerged{reshape.getOperand(), transposed};
}

/// Whether `v` is, or reaches through a select, dropout or convert, a
/// softmax over the last dimension of rank-4 scores.
bool isSoftmaxOutput(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (auto softmax = dyn_cast<tg::SoftmaxOp>(op))
      return typeOf(softmax).getRank() == 4 && softmax.getDimension() == 3;
    if (auto select = dyn_cast<tg::SelectOp>(op))
      v = select.getOnFalse();
    else if (isa<tg::DropoutOp, tg::ConvertOp>(op))
      v = op->getOperand(0);
    else
      return false;
  }
  return false;
}

/// Whether `v` reaches, through single uses of elementwise ops, a softmax
/// over its last dimension (rank 4).
bool feedsSoftmax(Value v) {
  for (int depth = 0; depth < 8 && v.hasOneUse(); ++depth) {
    Operation *user = *v.getUsers().begin();
    if (auto softmax = dyn_cast<tg::SoftmaxOp>(user))
      return softmax.getDimension() == 3;
    if (!isa<tg::AddOp, tg::SubOp, tg::MulOp, tg::DivOp, tg::SelectOp,
             tg::ConvertOp>(user))
      return false;
    v = user->getResult(0);
  }
  return false;
}

/// An attention over merged batch and heads (BLOOM: q, k and v reshaped to
/// [B * H, S, D], the scores `baddbmm`'s scaled product plus ALiBi, viewed
/// as [B, H, S, S] for the mask and the softmax, and viewed back for the
/// product with the values) in the rank-4 form the attention raise reads:
/// reshape4(e_n(...e_1(matmul3(merge(a), merge(b))))), the e_i elementwise
/// ops of a 3-D operand, becomes e_n(...e_1(matmul4(a, b))) with their
/// other operands reshaped to rank 4. The same products in the same order:
/// only the views move. Only next to a softmax over the keys: the scores'
/// reshape feeding one, or the product of its probabilities.
struct UnmergeHeads : OpRewritePattern<tg::ReshapeOp> {
  UnmergeHeads(MLIRContext *context, const RaiseOptions &options)
      : OpRewritePattern(context, benefitOf(RaiseKind::Attention)),
        options(options) {}
  RaiseOptions options;

  LogicalResult matchAndRewrite(tg::ReshapeOp root,
                                PatternRewriter &rewriter) const override {
    RankedTensorType to = typeOf(root), from = typeOf(root.getOperand());
    if (to.getRank() != 4 || from.getRank() != 3 ||
        to.getDimSize(0) * to.getDimSize(1) != from.getDimSize(0) ||
        to.getShape().take_back(2) != from.getShape().take_back(2))
      return rewriter.notifyMatchFailure(root, "not a split of heads");
    // The elementwise ops between the product and the view, outermost
    // first.
    SmallVector<Operation *> chain;
    Value v = root.getOperand();
    tg::MatmulOp product;
    while (Operation *op = v.getDefiningOp()) {
      if (!v.hasOneUse() || chain.size() > 8)
        break;
      if ((product = dyn_cast<tg::MatmulOp>(op)))
        break;
      if (!isa<tg::AddOp, tg::SubOp, tg::MulOp, tg::DivOp>(op))
        break;
      chain.push_back(op);
      v = leadsToProduct(op->getOperand(0), options) ? op->getOperand(0)
                                                     : op->getOperand(1);
    }
    if (!product || product.getType() != from)
      return rewriter.notifyMatchFailure(root, "no merged product");
    std::optional<Unmerged> a = unmerge(product.getLhs());
    std::optional<Unmerged> b = unmerge(product.getRhs());
    if (!a || !b)
      return rewriter.notifyMatchFailure(root, "operands not merged heads");
    ArrayRef<int64_t> heads = to.getShape().take_front(2);
    if (typeOf(a->value).getShape().take_front(2) != heads ||
        typeOf(b->value).getShape().take_front(2) != heads)
      return rewriter.notifyMatchFailure(root, "other batch and heads");
    if (!feedsSoftmax(root.getResult()) && !isSoftmaxOutput(a->value))
      return rewriter.notifyMatchFailure(root, "no softmax next to it");

    Location loc = product.getLoc();
    Value lifted = tg::MatmulOp::create(
        rewriter, loc, to.clone(from.getElementType()), a->value, b->value,
        product.getTransposeA() != a->transposed,
        product.getTransposeB() != b->transposed);
    for (Operation *op : llvm::reverse(chain)) {
      SmallVector<Value> operands;
      for (Value operand : op->getOperands()) {
        if (operand.getDefiningOp() == product ||
            llvm::is_contained(chain, operand.getDefiningOp())) {
          operands.push_back(lifted);
          continue;
        }
        // A constant is reshaped in place, so that the mask analysis reads
        // its values.
        RankedTensorType type = typeOf(operand).clone(to.getShape());
        DenseElementsAttr dense;
        if (auto constant = operand.getDefiningOp<tg::ConstantOp>())
          dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        operands.push_back(
            dense ? tg::ConstantOp::create(rewriter, loc, dense.reshape(type))
                        .getResult()
                  : tg::ReshapeOp::create(rewriter, loc, type, operand)
                        .getResult());
      }
      OperationState state(
          op->getLoc(), op->getName(), operands,
          TypeRange{to.clone(typeOf(op->getResult(0)).getElementType())},
          op->getAttrs());
      lifted = rewriter.create(state)->getResult(0);
    }
    rewriter.replaceOp(root, lifted);
    return success();
  }
};

/// `cross_entropy(log_softmax(x), y)` reads `x` directly.
struct RaiseLogSoftmaxCrossEntropy : OpRewritePattern<tg::CrossEntropyOp> {
  RaiseLogSoftmaxCrossEntropy(MLIRContext *context)
      : OpRewritePattern(context, benefitOf(RaiseKind::CrossEntropy)) {}

  LogicalResult matchAndRewrite(tg::CrossEntropyOp root,
                                PatternRewriter &rewriter) const override {
    FailureOr<tg::CrossEntropyOp> raised =
        raiseLogSoftmaxCrossEntropy(root, rewriter);
    if (failed(raised))
      return rewriter.notifyMatchFailure(root, "logits not a log_softmax");
    rewriter.replaceOp(root, *raised);
    return success();
  }
};

} // namespace

StringRef tgc::getRaiseKindName(RaiseKind kind) {
  switch (kind) {
  case RaiseKind::LayerNorm:
    return "layer_norm";
  case RaiseKind::RmsNorm:
    return "rms_norm";
  case RaiseKind::Gelu:
    return "gelu";
  case RaiseKind::Silu:
    return "silu";
  case RaiseKind::Attention:
    return "attention";
  case RaiseKind::CrossEntropy:
    return "cross_entropy";
  case RaiseKind::Experts:
    return "experts";
  }
  llvm_unreachable("unknown raise kind");
}

ArrayRef<RaiseKind> tgc::getAllRaiseKinds() {
  static const RaiseKind kinds[] = {
      RaiseKind::CrossEntropy, RaiseKind::Attention, RaiseKind::LayerNorm,
      RaiseKind::RmsNorm,      RaiseKind::Gelu,      RaiseKind::Silu,
      RaiseKind::Experts};
  return kinds;
}

void tgc::populateTGRaisePatterns(RewritePatternSet &patterns,
                                  ArrayRef<RaiseKind> kinds,
                                  const RaiseOptions &options) {
  for (RaiseKind kind : kinds) {
    switch (kind) {
    case RaiseKind::LayerNorm:
      // The bias `add`, the scale `mul` or the `div` by the deviation.
      addRaise<tg::AddOp, tg::MulOp, tg::DivOp>(
          patterns, kind, [](Operation *root, OpBuilder &b) {
            return raiseNormalization(root, /*centered=*/true, b);
          });
      break;
    case RaiseKind::RmsNorm:
      addRaise<tg::MulOp, tg::DivOp>(
          patterns, kind, [](Operation *root, OpBuilder &b) {
            return raiseNormalization(root, /*centered=*/false, b);
          });
      break;
    case RaiseKind::Gelu:
      addRaise<tg::MulOp>(patterns, kind, raiseGelu);
      break;
    case RaiseKind::Silu:
      addRaise<tg::MulOp>(patterns, kind, raiseSilu);
      break;
    case RaiseKind::Attention:
      // The matmul with the values, after the softmax it covers.
      addRaise<tg::MatmulOp>(patterns, kind,
                             [options](tg::MatmulOp root, OpBuilder &b) {
                               return raiseAttention(root, options, b);
                             });
      patterns.add<UnmergeHeads>(patterns.getContext(), options);
      break;
    case RaiseKind::CrossEntropy:
      // The negation (`neg` or a `mul` by -1) or the mean over the tokens.
      addRaise<tg::NegOp, tg::MulOp, tg::ReduceOp>(patterns, kind,
                                                   raiseOneHotCrossEntropy);
      patterns.add<RaiseLogSoftmaxCrossEntropy>(patterns.getContext());
      break;
    case RaiseKind::Experts:
      addRaise<tg::MatmulOp>(patterns, kind, raiseGatheredExperts);
      break;
    }
  }
}

void tgc::populateTGRaisePatterns(RewritePatternSet &patterns,
                                  const RaiseOptions &options) {
  populateTGRaisePatterns(patterns, getAllRaiseKinds(), options);
}
