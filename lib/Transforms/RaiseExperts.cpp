//===- RaiseExperts.cpp - gathered expert weights to a grouped product ----===//
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
// multiplies one vector per matrix. The raise is one tg.expert_matmul of
// the vectors [S, H] by T viewed as [E, O, H] (transposed) or [E, H, O]
// with the same ids: each pair's product with its own expert's matrix, read
// in place, nothing gathered (a grouped GEMM: the routed flops only). Its
// backward is an expert_matmul for the vectors and an expert_matmul_grad
// for T, each expert's gradient summed over its rows, never a dense table
// of S copies. An id out of range is reported by both forms alike.
//
//===----------------------------------------------------------------------===//

#include "RaiseExperts.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

using namespace mlir;
using namespace tgc;

namespace {

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
  // (An empty table stays: its lookups are the embedding's errors.)
  if (table.getRank() != 2 || table.getDimSize(0) == 0 || ids.getRank() != 1 ||
      shape.size() != 3 || shape[0] != ids.getDimSize(0) ||
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

  Location loc = root.getLoc();
  Type element = lhsType.getElementType();
  auto tensor = [](ArrayRef<int64_t> shape, Type type) {
    return RankedTensorType::get(shape, type);
  };
  Value x = tg::ReshapeOp::create(b, loc, tensor({s, h}, element), vectors);
  // Left: T's rows are [O, H] matrices, each applied transposed.
  Value matrices = tg::ReshapeOp::create(
      b, loc,
      tensor(left ? ArrayRef<int64_t>{e, o, h} : ArrayRef<int64_t>{e, h, o},
             element),
      gathered->table);
  Value products = tg::ExpertMatmulOp::create(
      b, loc, tensor({s, o}, root.getType().getElementType()), x, matrices,
      gathered->ids, /*transpose_b=*/left, /*global_experts=*/nullptr);
  return tg::ReshapeOp::create(b, loc, root.getType(), products).getResult();
}
