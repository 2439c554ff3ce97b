//===- RaiseExperts.cpp - gathered expert weights to one dense product ----===//
//
// Transformers' batched_mm experts (Mixtral, Qwen2-MoE, ...) gather each
// (token, expert) pair's weight matrix by the router's top-k and multiply
// the pair's vector by it:
//
//   G = embedding(T, ids)              T: [E, O*H] (the experts' matrices)
//   y = matmul(reshape(G) [S, O, H], x [S, H, 1])       (or x [S, 1, H] @
//                                                        reshape(G) [S, H, O])
//
// which keeps a copy of an expert's matrix per pair (S x O x H values) and
// multiplies with one vector per matrix, at one multiply-add per value read.
// The raise multiplies every vector by every expert's matrix in one GEMM,
// [S, H] x [H, E*O], and keeps for each pair the product of its expert:
// S x E x O values, E times the flops in a GEMM that runs at its peak. The
// selection is a tg.select of a one-hot mask, so the other experts'
// products never reach the result (an infinity there is no NaN here); the
// backward is the GEMM's, with the gradient of T dense.
//
// It applies when the ids are provably in [0, E) (an embedding reports an
// out-of-range id; the selection would give zeros): top_k indices of rows
// of at most E elements, through reshapes, broadcasts, additions of
// constants and selects whose choice the ranges decide (the importer's
// wrapping of negative indices); and when H > E, so that the products
// take less memory than the gathered matrices.
//
//===----------------------------------------------------------------------===//

#include "RaiseExperts.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace tgc;

namespace {

/// A half-open range of integer values [lo, hi).
struct Range {
  int64_t lo, hi;
};

constexpr int kMaxDepth = 16;

std::optional<Range> getRange(Value value, int depth);

/// Whether `compare` is true for every element (true), false for every one
/// (false), or either (nullopt), from its operands' ranges.
std::optional<bool> decide(tg::CompareOp compare, int depth) {
  std::optional<Range> a = getRange(compare.getLhs(), depth + 1);
  std::optional<Range> b = getRange(compare.getRhs(), depth + 1);
  if (!a || !b)
    return std::nullopt;
  // Largest values: hi - 1.
  int64_t aMax = a->hi - 1, bMax = b->hi - 1;
  switch (compare.getDirection()) {
  case tg::CompareDirection::LT:
    if (aMax < b->lo)
      return true;
    if (a->lo >= bMax)
      return false;
    return std::nullopt;
  case tg::CompareDirection::LE:
    if (aMax <= b->lo)
      return true;
    if (a->lo > bMax)
      return false;
    return std::nullopt;
  case tg::CompareDirection::GT:
    if (a->lo > bMax)
      return true;
    if (aMax <= b->lo)
      return false;
    return std::nullopt;
  case tg::CompareDirection::GE:
    if (a->lo >= bMax)
      return true;
    if (aMax < b->lo)
      return false;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// The condition of a select, seen through the views that keep its values.
std::optional<bool> decideCondition(Value condition, int depth) {
  if (depth > kMaxDepth)
    return std::nullopt;
  Operation *def = condition.getDefiningOp();
  if (isa_and_nonnull<tg::ReshapeOp, tg::BroadcastInDimOp, tg::TransposeOp,
                      tg::SliceOp>(def))
    return decideCondition(def->getOperand(0), depth + 1);
  if (auto compare = dyn_cast_or_null<tg::CompareOp>(def))
    return decide(compare, depth);
  return std::nullopt;
}

/// The range of every element of integer `value`, where the ops that make
/// it bound it.
std::optional<Range> getRange(Value value, int depth) {
  if (depth > kMaxDepth || !isa<IntegerType>(getElementTypeOrSelf(value)))
    return std::nullopt;
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto topK = dyn_cast<tg::TopKOp>(def)) {
    if (value != topK.getIndices())
      return std::nullopt;
    auto type = cast<RankedTensorType>(topK.getOperand().getType());
    return Range{0, type.getShape().back()};
  }
  if (isa<tg::ReshapeOp, tg::BroadcastInDimOp, tg::TransposeOp, tg::SliceOp>(
          def))
    return getRange(def->getOperand(0), depth + 1);
  if (auto constant = dyn_cast<tg::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (!dense || dense.empty())
      return std::nullopt;
    bool isUnsigned = getElementTypeOrSelf(value).isUnsignedInteger();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const APInt &v : dense.getValues<APInt>()) {
      int64_t x = isUnsigned ? int64_t(v.getZExtValue()) : v.getSExtValue();
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    if (hi == INT64_MAX)
      return std::nullopt;
    return Range{lo, hi + 1};
  }
  if (auto add = dyn_cast<tg::AddOp>(def)) {
    std::optional<Range> a = getRange(add.getLhs(), depth + 1);
    std::optional<Range> b = getRange(add.getRhs(), depth + 1);
    // Small ranges in a type of 32 bits or more: the sums neither overflow
    // nor wrap.
    auto small = [](Range r) { return r.lo > -(1 << 30) && r.hi < (1 << 30); };
    if (!a || !b || !small(*a) || !small(*b) ||
        getElementTypeOrSelf(value).getIntOrFloatBitWidth() < 32)
      return std::nullopt;
    return Range{a->lo + b->lo, a->hi + b->hi - 1};
  }
  if (auto select = dyn_cast<tg::SelectOp>(def)) {
    std::optional<bool> choice = decideCondition(select.getPred(), depth + 1);
    if (choice)
      return getRange(*choice ? select.getOnTrue() : select.getOnFalse(),
                      depth + 1);
    std::optional<Range> a = getRange(select.getOnTrue(), depth + 1);
    std::optional<Range> b = getRange(select.getOnFalse(), depth + 1);
    if (!a || !b)
      return std::nullopt;
    return Range{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
  }
  return std::nullopt;
}

/// The gathered matrices behind a matmul operand: reshape(embedding(T, ids))
/// of shape [S, a, b] with T [E, a*b] and ids [S], each used only there.
struct Gathered {
  Value table, ids;
  int64_t experts;
};

std::optional<Gathered> matchGathered(Value operand) {
  auto reshape = operand.getDefiningOp<tg::ReshapeOp>();
  if (!reshape || !reshape->hasOneUse())
    return std::nullopt;
  auto embedding = reshape.getOperand().getDefiningOp<tg::EmbeddingOp>();
  if (!embedding || !embedding->hasOneUse())
    return std::nullopt;
  auto table = cast<RankedTensorType>(embedding.getTable().getType());
  auto ids = cast<RankedTensorType>(embedding.getIndices().getType());
  auto shape = cast<RankedTensorType>(operand.getType()).getShape();
  if (table.getRank() != 2 || ids.getRank() != 1 || shape.size() != 3 ||
      shape[0] != ids.getDimSize(0) ||
      shape[1] * shape[2] != table.getDimSize(1))
    return std::nullopt;
  return Gathered{embedding.getTable(), embedding.getIndices(),
                  table.getDimSize(0)};
}

} // namespace

FailureOr<Value> tgc::raiseGatheredExperts(tg::MatmulOp root, OpBuilder &b) {
  if (root.getTransposeA() || root.getTransposeB())
    return failure();
  auto lhsType = cast<RankedTensorType>(root.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(root.getRhs().getType());
  auto resultType = cast<RankedTensorType>(root.getType());
  if (lhsType.getRank() != 3 || rhsType.getRank() != 3)
    return failure();
  // Left: matrices [S, O, H] times vectors [S, H, 1]; right: vectors
  // [S, 1, H] times matrices [S, H, O].
  std::optional<Gathered> gathered;
  Value vectors;
  bool left =
      rhsType.getDimSize(2) == 1 && (gathered = matchGathered(root.getLhs()));
  if (left) {
    vectors = root.getRhs();
  } else if (lhsType.getDimSize(1) == 1 &&
             (gathered = matchGathered(root.getRhs()))) {
    vectors = root.getLhs();
  } else {
    return failure();
  }
  int64_t s = lhsType.getDimSize(0);
  int64_t e = gathered->experts;
  int64_t h = left ? lhsType.getDimSize(2) : rhsType.getDimSize(1);
  int64_t o = left ? lhsType.getDimSize(1) : rhsType.getDimSize(2);
  // Products smaller than the gathered matrices, and ids that index T.
  if (h <= e || s <= 0)
    return failure();
  std::optional<Range> range = getRange(gathered->ids, 0);
  if (!range || range->lo < 0 || range->hi > e)
    return failure();

  Location loc = root.getLoc();
  Type element = lhsType.getElementType();
  Type resultElement = resultType.getElementType();
  auto tensor = [](ArrayRef<int64_t> shape, Type type) {
    return RankedTensorType::get(shape, type);
  };
  Value x = tg::ReshapeOp::create(b, loc, tensor({s, h}, element), vectors);
  // Every expert's matrix as [H, E*O] (left: T as [E*O, H], transposed by
  // the GEMM).
  Value products;
  if (left) {
    Value table = tg::ReshapeOp::create(b, loc, tensor({e * o, h}, element),
                                        gathered->table);
    products = tg::MatmulOp::create(b, loc, tensor({s, e * o}, resultElement),
                                    x, table, /*transpose_a=*/false,
                                    /*transpose_b=*/true);
  } else {
    Value table = tg::ReshapeOp::create(b, loc, tensor({e, h, o}, element),
                                        gathered->table);
    table = tg::TransposeOp::create(b, loc, table, ArrayRef<int64_t>{1, 0, 2});
    table = tg::ReshapeOp::create(b, loc, tensor({h, e * o}, element), table);
    products = tg::MatmulOp::create(b, loc, tensor({s, e * o}, resultElement),
                                    x, table, false, false);
  }
  products =
      tg::ReshapeOp::create(b, loc, tensor({s, e, o}, resultElement), products);
  // mask[s, e] = ids[s] == e, over [S, E, O].
  Type idType = getElementTypeOrSelf(gathered->ids);
  SmallVector<APInt> positions;
  for (int64_t i = 0; i < e; ++i)
    positions.push_back(APInt(idType.getIntOrFloatBitWidth(), i));
  Value iota = tg::ConstantOp::create(
      b, loc, DenseElementsAttr::get(tensor({e}, idType), positions));
  Value ids =
      tg::BroadcastInDimOp::create(b, loc, tensor({s, e}, idType),
                                   gathered->ids, b.getDenseI64ArrayAttr({0}));
  iota = tg::BroadcastInDimOp::create(b, loc, tensor({s, e}, idType), iota,
                                      b.getDenseI64ArrayAttr({1}));
  Value mask =
      tg::CompareOp::create(b, loc, tg::CompareDirection::EQ, ids, iota);
  mask = tg::BroadcastInDimOp::create(b, loc, tensor({s, e, o}, b.getI1Type()),
                                      mask, b.getDenseI64ArrayAttr({0, 1}));
  auto zerosType = tensor({s, e, o}, resultElement);
  Value zeros = tg::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(zerosType, b.getFloatAttr(resultElement, 0.0)));
  Value chosen = tg::SelectOp::create(b, loc, mask, products, zeros);
  Value sum = tg::ReduceOp::create(b, loc, tg::ReduceKind::Sum, chosen,
                                   b.getDenseI64ArrayAttr({1}));
  return tg::ReshapeOp::create(b, loc, resultType, sum).getResult();
}
