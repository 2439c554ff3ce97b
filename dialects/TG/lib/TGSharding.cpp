//===- TGSharding.cpp - ShardingRuleOpInterface of the tg ops ------------===//
//
// Each op's factor-based sharding rule (Shardy's model). A rule states data
// dependencies only: which operand and result dimensions are the same index
// space, which factors the op reduces over, and which cannot be split without
// more than a partial reduction. What a partitioned op would additionally
// need to know (a dropout's global element index, a causal mask's global
// positions, the global token count of a mean loss) restricts the rule for
// propagation and tg-partition, next to the rule (restrictForPartitioning).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "llvm/ADT/STLExtras.h"
#include <numeric>

using namespace mlir;
using namespace tgc::tg;

//===----------------------------------------------------------------------===//
// ShardingRule and its builder
//===----------------------------------------------------------------------===//

bool ShardingRule::isReducedIn(unsigned result, int64_t factor) const {
  for (const auto &dim : resultFactors[result])
    if (llvm::is_contained(dim, factor))
      return false;
  for (const auto &operand : operandFactors)
    for (const auto &dim : operand)
      if (llvm::is_contained(dim, factor))
        return true;
  return false;
}

/// i, j, ..., z, then z_1, z_2... as Shardy prints factors.
static std::string getFactorName(int64_t factor) {
  if (factor < 18)
    return std::string(1, static_cast<char>('i' + factor));
  return "z_" + std::to_string(factor - 17);
}

void ShardingRule::print(llvm::raw_ostream &os) const {
  auto printTensors = [&](const auto &tensors) {
    os << "(";
    llvm::interleaveComma(tensors, os, [&](const auto &dims) {
      os << "[";
      llvm::interleaveComma(dims, os, [&](const auto &factors) {
        if (factors.size() == 1) {
          os << getFactorName(factors.front());
          return;
        }
        // A dimension of size 1 prints as [], one of several factors as
        // their group.
        os << "[";
        llvm::interleaveComma(
            factors, os, [&](int64_t factor) { os << getFactorName(factor); });
        os << "]";
      });
      os << "]";
    });
    os << ")";
  };
  printTensors(operandFactors);
  os << "->";
  printTensors(resultFactors);
  os << " {";
  llvm::interleaveComma(
      llvm::seq<int64_t>(0, getNumFactors()), os, [&](int64_t factor) {
        os << getFactorName(factor) << "=" << factorSizes[factor];
      });
  os << "}";
  for (auto [kind, name] :
       {std::pair(FactorKind::Reduction, "reduction"),
        std::pair(FactorKind::NeedReplication, "need_replication")}) {
    SmallVector<int64_t> factors;
    for (int64_t factor : llvm::seq<int64_t>(0, getNumFactors()))
      if (factorKinds[factor] == kind)
        factors.push_back(factor);
    if (factors.empty())
      continue;
    os << " " << name << "={";
    llvm::interleaveComma(factors, os,
                          [&](int64_t factor) { os << getFactorName(factor); });
    os << "}";
  }
}

LogicalResult ShardingRule::verify(Operation *op) const {
  if (operandFactors.size() != op->getNumOperands() ||
      resultFactors.size() != op->getNumResults())
    return op->emitError("sharding rule has ")
           << operandFactors.size() << " operands and " << resultFactors.size()
           << " results, the op " << op->getNumOperands() << " and "
           << op->getNumResults();
  SmallVector<bool> used(getNumFactors(), false);
  auto check = [&](StringRef what, unsigned index, Type type,
                   ArrayRef<SmallVector<int64_t, 1>> dims) -> LogicalResult {
    auto shaped = cast<ShapedType>(type);
    if (static_cast<int64_t>(dims.size()) != shaped.getRank())
      return op->emitError("sharding rule gives ")
             << what << " #" << index << " " << dims.size()
             << " dimensions, its type has " << shaped.getRank();
    for (auto [dim, factors] : llvm::enumerate(dims)) {
      int64_t product = 1;
      for (int64_t factor : factors) {
        if (factor < 0 || factor >= getNumFactors())
          return op->emitError("sharding rule names factor ")
                 << factor << " of " << getNumFactors();
        used[factor] = true;
        product *= factorSizes[factor];
      }
      if (product != shaped.getDimSize(dim))
        return op->emitError("sharding rule makes dimension ")
               << dim << " of " << what << " #" << index << " " << product
               << ", its size is " << shaped.getDimSize(dim);
    }
    return success();
  };
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    if (failed(
            check("operand", index, operand.getType(), operandFactors[index])))
      return failure();
  for (auto [index, result] : llvm::enumerate(op->getResults()))
    if (failed(check("result", index, result.getType(), resultFactors[index])))
      return failure();
  for (auto [factor, isUsed] : llvm::enumerate(used))
    if (!isUsed)
      return op->emitError("sharding rule factor ")
             << getFactorName(factor) << " is in no dimension";
  return success();
}

ShardingRuleBuilder::ShardingRuleBuilder(Operation *op) : op(op) {
  auto getDims = [](Type type) {
    return SmallVector<SmallVector<int64_t, 1>>(
        cast<ShapedType>(type).getRank());
  };
  for (Type type : op->getOperandTypes())
    rule.operandFactors.push_back(getDims(type));
  for (Type type : op->getResultTypes())
    rule.resultFactors.push_back(getDims(type));
}

int64_t ShardingRuleBuilder::addFactor(int64_t size, FactorKind kind) {
  rule.factorSizes.push_back(size);
  rule.factorKinds.push_back(kind);
  return rule.getNumFactors() - 1;
}

ShardingRuleBuilder &
ShardingRuleBuilder::operandDim(unsigned operand, int64_t dim, int64_t factor) {
  rule.operandFactors[operand][dim].push_back(factor);
  return *this;
}

ShardingRuleBuilder &
ShardingRuleBuilder::resultDim(unsigned result, int64_t dim, int64_t factor) {
  rule.resultFactors[result][dim].push_back(factor);
  return *this;
}

int64_t ShardingRuleBuilder::addShared(
    int64_t size, ArrayRef<std::pair<unsigned, int64_t>> operands,
    ArrayRef<std::pair<unsigned, int64_t>> results, FactorKind kind) {
  if (size == 1)
    return -1;
  int64_t factor = addFactor(size, kind);
  for (auto [operand, dim] : operands)
    operandDim(operand, dim, factor);
  for (auto [result, dim] : results)
    resultDim(result, dim, factor);
  return factor;
}

ShardingRuleBuilder &
ShardingRuleBuilder::addElementwise(ArrayRef<unsigned> operands,
                                    ArrayRef<unsigned> results) {
  Type type = operands.empty() ? op->getResult(results.front()).getType()
                               : op->getOperand(operands.front()).getType();
  ArrayRef<int64_t> shape = cast<ShapedType>(type).getShape();
  for (auto [dim, size] : llvm::enumerate(shape)) {
    SmallVector<std::pair<unsigned, int64_t>> operandDims, resultDims;
    for (unsigned operand : operands)
      operandDims.push_back({operand, dim});
    for (unsigned result : results)
      resultDims.push_back({result, dim});
    addShared(size, operandDims, resultDims);
  }
  return *this;
}

ShardingRule ShardingRuleBuilder::build() {
  for (int64_t factor : llvm::seq<int64_t>(0, rule.getNumFactors())) {
    if (rule.factorKinds[factor] != FactorKind::PassThrough)
      continue;
    bool inResult = llvm::any_of(rule.resultFactors, [&](const auto &dims) {
      return llvm::any_of(dims, [&](const auto &factors) {
        return llvm::is_contained(factors, factor);
      });
    });
    if (!inResult)
      rule.factorKinds[factor] = FactorKind::Reduction;
  }
  return std::move(rule);
}

static ArrayRef<int64_t> getShape(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

ShardingRule tgc::tg::getElementwiseShardingRule(Operation *op) {
  return ShardingRuleBuilder(op)
      .addElementwise(llvm::to_vector(llvm::seq(op->getNumOperands())),
                      llvm::to_vector(llvm::seq(op->getNumResults())))
      .build();
}

/// (operand or result number, dimension) pairs.
using DimList = ArrayRef<std::pair<unsigned, int64_t>>;

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

ShardingRule ConstantOp::getShardingRule() {
  return ShardingRuleBuilder(*this).addElementwise({}, {0}).build();
}

ShardingRule BroadcastInDimOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> in = getShape(getOperand()), out = getShape(getResult());
  SmallVector<bool> fromOperand(out.size(), false);
  for (auto [dim, resultDim] : llvm::enumerate(getBroadcastDimensions())) {
    // A dimension of size 1 broadcast to a larger one: the operand keeps no
    // factor there and the result gets its own.
    if (in[dim] != out[resultDim])
      continue;
    fromOperand[resultDim] = true;
    builder.addShared(in[dim], {{0, dim}}, {{0, resultDim}});
  }
  for (auto [dim, size] : llvm::enumerate(out))
    if (!fromOperand[dim])
      builder.addShared(size, {}, {{0, dim}});
  return builder.build();
}

/// Splits the operand and result shapes of a reshape into common factors,
/// major first: the major factor gcd(a, b) of two dimensions at the same
/// position always maps index to index. When the rest of two dimensions share
/// no factor, every remaining dimension gets its own need-replication factor.
ShardingRule ReshapeOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> in = getShape(getOperand()), out = getShape(getResult());
  size_t i = 0, j = 0;
  int64_t restIn = in.empty() ? 1 : in[0], restOut = out.empty() ? 1 : out[0];
  auto advance = [](ArrayRef<int64_t> shape, size_t &index, int64_t &rest) {
    while (rest == 1 && index < shape.size()) {
      ++index;
      rest = index < shape.size() ? shape[index] : 1;
    }
  };
  while (true) {
    advance(in, i, restIn);
    advance(out, j, restOut);
    if (i >= in.size() || j >= out.size())
      break;
    int64_t common = std::gcd(restIn, restOut);
    if (common == 1)
      break;
    builder.addShared(common, {{0, static_cast<int64_t>(i)}},
                      {{0, static_cast<int64_t>(j)}});
    restIn /= common;
    restOut /= common;
  }
  // What is left cannot be split consistently on both sides.
  for (; i < in.size(); ++i, restIn = i < in.size() ? in[i] : 1)
    if (restIn > 1)
      builder.operandDim(
          0, i, builder.addFactor(restIn, FactorKind::NeedReplication));
  for (; j < out.size(); ++j, restOut = j < out.size() ? out[j] : 1)
    if (restOut > 1)
      builder.resultDim(
          0, j, builder.addFactor(restOut, FactorKind::NeedReplication));
  return builder.build();
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> out = getShape(getResult());
  for (auto [dim, source] : llvm::enumerate(getPermutation()))
    builder.addShared(out[dim], {{0, source}}, {{0, dim}});
  return builder.build();
}

/// A dimension of a data-movement op that keeps its size and order is shared;
/// one that changes (sliced, padded, concatenated) gets a need-replication
/// factor on each side.
static void addChangedDim(ShardingRuleBuilder &builder, DimList operands,
                          DimList results, Operation *op) {
  for (auto [operand, dim] : operands) {
    int64_t size = getShape(op->getOperand(operand))[dim];
    if (size > 1)
      builder.operandDim(operand, dim,
                         builder.addFactor(size, FactorKind::NeedReplication));
  }
  for (auto [result, dim] : results) {
    int64_t size = getShape(op->getResult(result))[dim];
    if (size > 1)
      builder.resultDim(result, dim,
                        builder.addFactor(size, FactorKind::NeedReplication));
  }
}

ShardingRule SliceOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> in = getShape(getOperand()), out = getShape(getResult());
  for (int64_t dim : llvm::seq<int64_t>(0, in.size())) {
    if (in[dim] == out[dim])
      builder.addShared(in[dim], {{0, dim}}, {{0, dim}});
    else
      addChangedDim(builder, {{0, dim}}, {{0, dim}}, *this);
  }
  return builder.build();
}

ShardingRule PadOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> in = getShape(getOperand()), out = getShape(getResult());
  for (int64_t dim : llvm::seq<int64_t>(0, in.size())) {
    if (in[dim] == out[dim] && getInterior()[dim] == 0)
      builder.addShared(in[dim], {{0, dim}}, {{0, dim}});
    else
      addChangedDim(builder, {{0, dim}}, {{0, dim}}, *this);
  }
  return builder.build();
}

ShardingRule ConcatOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> out = getShape(getResult());
  int64_t axis = getDimension();
  for (int64_t dim : llvm::seq<int64_t>(0, out.size())) {
    SmallVector<std::pair<unsigned, int64_t>> operands;
    for (unsigned operand : llvm::seq(getNumOperands()))
      operands.push_back({operand, dim});
    if (dim != axis)
      builder.addShared(out[dim], operands, {{0, dim}});
    else
      addChangedDim(builder, operands, {{0, dim}}, *this);
  }
  return builder.build();
}

//===----------------------------------------------------------------------===//
// Reductions and compute ops
//===----------------------------------------------------------------------===//

ShardingRule ReduceOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> in = getShape(getOperand());
  ArrayRef<int64_t> reduced = getDimensions();
  int64_t resultDim = 0;
  for (int64_t dim : llvm::seq<int64_t>(0, in.size())) {
    if (llvm::is_contained(reduced, dim))
      builder.addShared(in[dim], {{0, dim}}, {}, FactorKind::Reduction);
    else
      builder.addShared(in[dim], {{0, dim}}, {{0, resultDim++}});
  }
  return builder.build();
}

ShardingRule MatmulOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> lhs = getShape(getLhs()), rhs = getShape(getRhs());
  int64_t lhsRank = lhs.size(), rhsRank = rhs.size();
  int64_t batch = lhsRank - 2;
  for (int64_t dim : llvm::seq<int64_t>(0, batch)) {
    // A matrix rhs is shared by every batch of lhs.
    if (rhsRank == 2)
      builder.addShared(lhs[dim], {{0, dim}}, {{0, dim}});
    else
      builder.addShared(lhs[dim], {{0, dim}, {1, dim}}, {{0, dim}});
  }
  int64_t lhsM = lhsRank - (getTransposeA() ? 1 : 2);
  int64_t lhsK = lhsRank - (getTransposeA() ? 2 : 1);
  int64_t rhsK = rhsRank - (getTransposeB() ? 1 : 2);
  int64_t rhsN = rhsRank - (getTransposeB() ? 2 : 1);
  builder.addShared(lhs[lhsM], {{0, lhsM}}, {{0, batch}});
  builder.addShared(rhs[rhsN], {{1, rhsN}}, {{0, batch + 1}});
  builder.addShared(lhs[lhsK], {{0, lhsK}, {1, rhsK}}, {},
                    FactorKind::Reduction);
  return builder.build();
}

/// Ops of the form `f(x)` along one dimension (a softmax, or its gradient of
/// the same shape): every other dimension passes through.
static ShardingRule getAlongDimRule(Operation *op, int64_t axis) {
  ShardingRuleBuilder builder(op);
  ArrayRef<int64_t> shape = getShape(op->getResult(0));
  for (int64_t dim : llvm::seq<int64_t>(0, shape.size())) {
    SmallVector<std::pair<unsigned, int64_t>> operands;
    for (unsigned operand : llvm::seq(op->getNumOperands()))
      operands.push_back({operand, dim});
    builder.addShared(shape[dim], operands, {{0, dim}},
                      dim == axis ? FactorKind::NeedReplication
                                  : FactorKind::PassThrough);
  }
  return builder.build();
}

ShardingRule SoftmaxOp::getShardingRule() {
  return getAlongDimRule(*this, getDimension());
}
ShardingRule LogSoftmaxOp::getShardingRule() {
  return getAlongDimRule(*this, getDimension());
}
ShardingRule SoftmaxGradOp::getShardingRule() {
  return getAlongDimRule(*this, getDimension());
}

ShardingRule TopKOp::getShardingRule() {
  // The rows pass through; the selection along the last dimension sees the
  // whole row, and the selected positions are a new dimension.
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> shape = getShape(getOperand());
  int64_t last = shape.size() - 1;
  for (int64_t dim : llvm::seq<int64_t>(0, last))
    builder.addShared(shape[dim], {{0, dim}}, {{0, dim}, {1, dim}});
  addChangedDim(builder, {{0, last}}, {{0, last}, {1, last}}, *this);
  return builder.build();
}

/// Marks every factor of the given operand or result dimensions
/// need-replication.
static void replicate(ShardingRule &rule,
                      ArrayRef<SmallVector<int64_t, 1>> dims) {
  for (const auto &factors : dims)
    for (int64_t factor : factors)
      rule.factorKinds[factor] = FactorKind::NeedReplication;
}

ShardingRule EmbeddingOp::getShardingRule() {
  // Rows of the table are a reduction factor: a rank holding some rows
  // produces the rows of its ids and zeros elsewhere, and the partial results
  // sum to the whole (Megatron's vocab-parallel embedding).
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> table = getShape(getTable()), ids = getShape(getIndices());
  for (int64_t dim : llvm::seq<int64_t>(0, ids.size()))
    builder.addShared(ids[dim], {{1, dim}}, {{0, dim}});
  builder.addShared(table[0], {{0, 0}}, {}, FactorKind::Reduction);
  builder.addShared(table[1], {{0, 1}},
                    {{0, static_cast<int64_t>(ids.size())}});
  return builder.build();
}

void EmbeddingOp::restrictForPartitioning(ShardingRule &rule) {
  // The table's rows split only where the presets or the user chose a
  // vocabulary-parallel lookup, and only for a float table (its partial
  // rows are summed): tg-partition rebuilds it on the device's block of
  // rows (VocabParallel.h).
  if (!(*this)->hasAttr(kVocabParallelAttrName) ||
      !isa<FloatType>(getTable().getType().getElementType()))
    replicate(rule, ArrayRef(rule.operandFactors[0]).take_front(1));
}

/// The factors of an expert product (input [rows..., H], ids [rows...],
/// `other` [rows..., O], matrices [E, H, O] or [E, O, H] transposed), at
/// the given operand or result positions (-1: a result, as -1 - index).
/// The rows are `rows` factors (shared by the product, summed by the
/// weight's gradient), H summed by the product and O shared. The experts
/// are summed by the product: a device holding some of them computes their
/// rows and zeros elsewhere (expert parallelism; tg-partition rebuilds the
/// op on the device's block, global_experts).
static ShardingRule getExpertRule(Operation *op, int input, int ids, int other,
                                  int weight, bool transposeB,
                                  FactorKind rows) {
  ShardingRuleBuilder builder(op);
  auto at = [&](int position,
                int64_t dim) -> std::pair<bool, std::pair<unsigned, int64_t>> {
    if (position >= 0)
      return {true, {unsigned(position), dim}};
    return {false, {unsigned(-1 - position), dim}};
  };
  auto add = [&](int64_t size,
                 ArrayRef<std::pair<bool, std::pair<unsigned, int64_t>>> places,
                 FactorKind kind) {
    SmallVector<std::pair<unsigned, int64_t>> operands, results;
    for (auto [isOperand, place] : places)
      (isOperand ? operands : results).push_back(place);
    builder.addShared(size, operands, results, kind);
  };
  auto valueAt = [&](int position) {
    return position >= 0 ? op->getOperand(position)
                         : op->getResult(-1 - position);
  };
  ArrayRef<int64_t> idShape = getShape(valueAt(ids));
  ArrayRef<int64_t> matrices = getShape(valueAt(weight));
  int64_t rank = idShape.size();
  for (int64_t dim : llvm::seq<int64_t>(0, rank))
    add(idShape[dim], {at(input, dim), at(ids, dim), at(other, dim)}, rows);
  add(matrices[0], {at(weight, 0)},
      weight >= 0 ? FactorKind::Reduction : FactorKind::PassThrough);
  int64_t hDim = transposeB ? 2 : 1, oDim = transposeB ? 1 : 2;
  add(matrices[hDim], {at(input, rank), at(weight, hDim)},
      rows == FactorKind::Reduction ? FactorKind::PassThrough
                                    : FactorKind::Reduction);
  add(matrices[oDim], {at(other, rank), at(weight, oDim)},
      FactorKind::PassThrough);
  return builder.build();
}

ShardingRule ExpertMatmulOp::getShardingRule() {
  return getExpertRule(*this, 0, 2, -1, 1, getTransposeB(),
                       FactorKind::PassThrough);
}

ShardingRule ExpertMatmulGradOp::getShardingRule() {
  // The rows are summed into each expert's matrix.
  return getExpertRule(*this, 0, 2, 1, -1, getTransposeB(),
                       FactorKind::Reduction);
}

ShardingRule EmbeddingGradOp::getShardingRule() {
  // The positions are summed into the table's rows: a reduction factor.
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> ids = getShape(getIndices());
  ArrayRef<int64_t> table = getShape(getResult());
  for (int64_t dim : llvm::seq<int64_t>(0, ids.size()))
    builder.addShared(ids[dim], {{0, dim}, {1, dim}}, {},
                      FactorKind::Reduction);
  builder.addShared(table[0], {}, {{0, 0}});
  builder.addShared(table[1], {{0, static_cast<int64_t>(ids.size())}},
                    {{0, 1}});
  return builder.build();
}

/// Norms over the last dimension: `input` and `normalized` results are
/// `[rows..., H]`, the statistics `[rows...]`, the vectors `[H]`. The rows
/// pass through; H needs replication (its mean and variance). `reducedRows`
/// results sum over the rows (the gradients of scale and bias).
static ShardingRule getNormRule(Operation *op, ArrayRef<unsigned> fullOperands,
                                ArrayRef<unsigned> rowOperands,
                                ArrayRef<unsigned> vectorOperands,
                                ArrayRef<unsigned> fullResults,
                                ArrayRef<unsigned> rowResults,
                                ArrayRef<unsigned> vectorResults) {
  ShardingRuleBuilder builder(op);
  ArrayRef<int64_t> shape = getShape(op->getOperand(fullOperands.front()));
  int64_t rows = shape.size() - 1;
  for (int64_t dim : llvm::seq<int64_t>(0, rows)) {
    SmallVector<std::pair<unsigned, int64_t>> operands, results;
    for (unsigned operand :
         llvm::concat<const unsigned>(fullOperands, rowOperands))
      operands.push_back({operand, dim});
    for (unsigned result :
         llvm::concat<const unsigned>(fullResults, rowResults))
      results.push_back({result, dim});
    builder.addShared(shape[dim], operands, results);
  }
  SmallVector<std::pair<unsigned, int64_t>> operands, results;
  for (unsigned operand : fullOperands)
    operands.push_back({operand, rows});
  for (unsigned operand : vectorOperands)
    operands.push_back({operand, 0});
  for (unsigned result : fullResults)
    results.push_back({result, rows});
  for (unsigned result : vectorResults)
    results.push_back({result, 0});
  builder.addShared(shape[rows], operands, results,
                    FactorKind::NeedReplication);
  return builder.build();
}

ShardingRule LayerNormOp::getShardingRule() {
  return getNormRule(*this, {0}, {}, {1, 2}, {0}, {1, 2}, {});
}
ShardingRule RmsNormOp::getShardingRule() {
  return getNormRule(*this, {0}, {}, {1}, {0}, {1}, {});
}
ShardingRule LayerNormGradOp::getShardingRule() {
  return getNormRule(*this, {0, 1}, {2, 3}, {4}, {0}, {}, {1, 2});
}
ShardingRule RmsNormGradOp::getShardingRule() {
  return getNormRule(*this, {0, 1}, {2}, {3}, {0}, {}, {1});
}

/// Attention's index spaces. The query heads are `K` key/value heads times
/// `G` query heads per group, major to minor (query head h reads key/value
/// head h / G). The key positions and the head width are inside the softmax:
/// they need replication. `q`, `k`, `v`, `o` list the operands or results of
/// each shape (`BxHxSqxD`, `BxKxSkxD`, `BxKxSkxDv`, `BxHxSqxDv`), `lse`
/// those of `BxHxSq`.
namespace {
struct AttentionShapes {
  SmallVector<std::pair<bool, unsigned>> q, k, v, o, lse;
  /// The operand number of the bias, when the op has one.
  std::optional<unsigned> bias;
  /// The result number of the bias's gradient, when the op has one (a
  /// dimension the bias broadcasts is then a reduction).
  std::optional<unsigned> biasGrad;
};
} // namespace

static ShardingRule getAttentionRule(Operation *op, Value query, Value key,
                                     Value value, Value bias,
                                     AttentionShapes shapes) {
  ShardingRuleBuilder builder(op);
  ArrayRef<int64_t> q = getShape(query), k = getShape(key), v = getShape(value);
  // The bias [B|1, H|1, Sq|1, Sk|1] shares the factor of each dimension it
  // does not broadcast.
  SmallVector<std::pair<bool, unsigned>> biasAt[4];
  if (bias) {
    ArrayRef<int64_t> b = getShape(bias);
    int64_t full[4] = {q[0], q[1], q[2], k[2]};
    for (int dim = 0; dim < 4; ++dim)
      if (b[dim] == full[dim]) {
        biasAt[dim].push_back({false, *shapes.bias});
        if (shapes.biasGrad)
          biasAt[dim].push_back({true, *shapes.biasGrad});
      }
  }
  auto add = [&](int64_t factor, ArrayRef<std::pair<bool, unsigned>> tensors,
                 int64_t dim) {
    if (factor < 0)
      return;
    for (auto [isResult, index] : tensors)
      isResult ? builder.resultDim(index, dim, factor)
               : builder.operandDim(index, dim, factor);
  };
  auto all = [](ArrayRef<SmallVector<std::pair<bool, unsigned>>> lists) {
    SmallVector<std::pair<bool, unsigned>> out;
    for (const auto &list : lists)
      out.append(list.begin(), list.end());
    return out;
  };
  auto addFactor = [&](int64_t size, FactorKind kind) -> int64_t {
    return size == 1 ? -1 : builder.addFactor(size, kind);
  };
  int64_t batch = addFactor(q[0], FactorKind::PassThrough);
  add(batch,
      all({shapes.q, shapes.k, shapes.v, shapes.o, shapes.lse, biasAt[0]}), 0);
  int64_t kvHeads = addFactor(k[1], FactorKind::PassThrough);
  int64_t group = addFactor(q[1] / k[1], FactorKind::PassThrough);
  add(kvHeads,
      all({shapes.q, shapes.k, shapes.v, shapes.o, shapes.lse, biasAt[1]}), 1);
  add(group, all({shapes.q, shapes.o, shapes.lse, biasAt[1]}), 1);
  int64_t queries = addFactor(q[2], FactorKind::PassThrough);
  add(queries, all({shapes.q, shapes.o, shapes.lse, biasAt[2]}), 2);
  int64_t keys = addFactor(k[2], FactorKind::NeedReplication);
  add(keys, all({shapes.k, shapes.v}), 2);
  add(keys, biasAt[3], 3);
  int64_t width = addFactor(q[3], FactorKind::NeedReplication);
  add(width, all({shapes.q, shapes.k}), 3);
  // The value width needs replication. Each output column reads its value
  // column, but the log-sum-exp does not read the values at all (split, it
  // would pass for a partial sum of them), and the backward sums over the
  // width (dP = dO·Vᵀ, the softmax's rowsum(dO∘O)) for the query's and
  // key's gradients while the value's gradient keeps it. tp splits the
  // heads instead; it reached the width only when it does not divide them
  // (one head, or GPT-2 1.5b's 25 on tp=4), and gave wrong gradients.
  int64_t valueWidth = addFactor(v[3], FactorKind::NeedReplication);
  add(valueWidth, all({shapes.v, shapes.o}), 3);
  return builder.build();
}

/// A causal mask compares global positions: the query and key sequences of
/// operands `query` and `key` stay whole on each device.
static void replicateCausalSequence(ShardingRule &rule, unsigned query,
                                    unsigned key) {
  auto sequence = [&](unsigned operand) {
    ArrayRef<SmallVector<int64_t, 1>> dims = rule.operandFactors[operand];
    return dims.slice(dims.size() - 2, 1);
  };
  replicate(rule, sequence(query));
  replicate(rule, sequence(key));
}

ShardingRule AttentionOp::getShardingRule() {
  AttentionShapes shapes;
  shapes.q = {{false, 0}};
  shapes.k = {{false, 1}};
  shapes.v = {{false, 2}};
  shapes.o = {{true, 0}};
  shapes.lse = {{true, 1}};
  shapes.bias = 3;
  return getAttentionRule(*this, getQuery(), getKey(), getValue(), getBias(),
                          shapes);
}

static void restrictCounterRandom(CounterRandomOpInterface op,
                                  ShardingRule &rule);

void AttentionOp::restrictForPartitioning(ShardingRule &rule) {
  if (getCausal())
    replicateCausalSequence(rule, 0, 1);
  restrictCounterRandom(*this, rule);
}

ShardingRule AttentionGradOp::getShardingRule() {
  // Operands: grad_output, query, key, value, output, logsumexp; results:
  // the gradients of query, key and value. The gradients of a key/value head
  // sum over its group and over the queries (reduced in grad_key/value).
  AttentionShapes shapes;
  shapes.q = {{false, 1}, {true, 0}};
  shapes.k = {{false, 2}, {true, 1}};
  shapes.v = {{false, 3}, {true, 2}};
  shapes.o = {{false, 0}, {false, 4}};
  shapes.lse = {{false, 5}};
  shapes.bias = 6;
  return getAttentionRule(*this, getQuery(), getKey(), getValue(), getBias(),
                          shapes);
}

void AttentionGradOp::restrictForPartitioning(ShardingRule &rule) {
  if (getCausal())
    replicateCausalSequence(rule, 1, 2);
  restrictCounterRandom(*this, rule);
}

ShardingRule AttentionBiasGradOp::getShardingRule() {
  // Operands: grad_output, query, key, value, output, logsumexp, bias; the
  // result: the bias's gradient, summed over the dimensions the bias
  // broadcasts (their factors become reductions).
  AttentionShapes shapes;
  shapes.q = {{false, 1}};
  shapes.k = {{false, 2}};
  shapes.v = {{false, 3}};
  shapes.o = {{false, 0}, {false, 4}};
  shapes.lse = {{false, 5}};
  shapes.bias = 6;
  shapes.biasGrad = 0;
  return getAttentionRule(*this, getQuery(), getKey(), getValue(), getBias(),
                          shapes);
}

void AttentionBiasGradOp::restrictForPartitioning(ShardingRule &rule) {
  if (getCausal())
    replicateCausalSequence(rule, 1, 2);
  restrictCounterRandom(*this, rule);
}

ShardingRule DropoutOp::getShardingRule() {
  // The mask is a function of the element's global index: a partitioned
  // dropout offsets its counters by the shard's position.
  return ShardingRuleBuilder(*this).addElementwise({0}, {0}).build();
}

/// tg-partition gives a block of a CounterRandomOpInterface op the global
/// index of its first element (added to the `offset` operand, a
/// micro-batch's) and the whole tensor's shape (`global_shape`); an op that
/// has a global shape already is one device's block: it stays whole.
static void restrictCounterRandom(CounterRandomOpInterface op,
                                  ShardingRule &rule) {
  if (op.drawsRandom() && op.getRandomGlobalShape())
    for (ArrayRef<SmallVector<int64_t, 1>> factors : rule.resultFactors)
      replicate(rule, factors);
}

void DropoutOp::restrictForPartitioning(ShardingRule &rule) {
  restrictCounterRandom(*this, rule);
}

ShardingRule RandomOp::getShardingRule() {
  // As dropout's mask: the numbers are a function of the global index.
  return ShardingRuleBuilder(*this).addElementwise({}, {0}).build();
}

void RandomOp::restrictForPartitioning(ShardingRule &rule) {
  restrictCounterRandom(*this, rule);
}

/// `logits` is `N...xC` and `labels` `N...`. The classes are reduced over
/// (a log-sum-exp and the label's logit; tg-partition builds Megatron's
/// vocabulary-parallel loss from the device's classes). The tokens pass
/// through to the per-token results and are reduced in the loss.
ShardingRule CrossEntropyOp::getShardingRule() {
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> logits = getShape(getLogits());
  int64_t tokens = logits.size() - 1;
  for (int64_t dim : llvm::seq<int64_t>(0, tokens))
    builder.addShared(logits[dim], {{0, dim}, {1, dim}}, {{1, dim}});
  builder.addShared(logits[tokens], {{0, tokens}}, {}, FactorKind::Reduction);
  return builder.build();
}

// A mean over the tokens that are not ignored divides by a count only the
// whole batch knows: the tokens stay whole (tg-shard-annotate rewrites such
// a loss as a sum over a count before partitioning, so that they need not).
void CrossEntropyOp::restrictForPartitioning(ShardingRule &rule) {
  if (getIgnoreIndex() && getReduction() == LossReduction::Mean)
    replicate(rule, rule.operandFactors[1]);
}

ShardingRule CrossEntropyGradOp::getShardingRule() {
  // Operands: grad_loss (a scalar), logits, labels, logsumexp. Given the
  // logsumexp, each logit's gradient is elementwise: the classes pass
  // through (comparing with the label needs the shard's class offset).
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> logits = getShape(getLogits());
  int64_t tokens = logits.size() - 1;
  for (int64_t dim : llvm::seq<int64_t>(0, tokens))
    builder.addShared(logits[dim], {{1, dim}, {2, dim}, {3, dim}}, {{0, dim}});
  builder.addShared(logits[tokens], {{1, tokens}}, {{0, tokens}});
  return builder.build();
}

void CrossEntropyGradOp::restrictForPartitioning(ShardingRule &rule) {
  if (getIgnoreIndex() && getReduction() == LossReduction::Mean)
    replicate(rule, rule.operandFactors[2]);
}

ShardingRule ScaleGradOp::getShardingRule() {
  return ShardingRuleBuilder(*this).addElementwise({0}, {0}).build();
}

/// fake_quant(x, history): elementwise in x given the scale, which comes from
/// the whole history (a max over it): the history needs replication.
static ShardingRule getFakeQuantRule(Operation *op) {
  ShardingRuleBuilder builder(op);
  builder.addElementwise({0}, {0});
  builder.addShared(getShape(op->getOperand(1))[0], {{1, 0}}, {},
                    FactorKind::NeedReplication);
  return builder.build();
}
ShardingRule FakeQuantOp::getShardingRule() { return getFakeQuantRule(*this); }
ShardingRule FakeQuantGradOp::getShardingRule() {
  return getFakeQuantRule(*this);
}

//===----------------------------------------------------------------------===//
// Optimizer ops: the parameter, its gradient and its state are updated
// elementwise (scalars such as the learning rate have no dimension), except
// where the update reads a whole-tensor statistic.
//===----------------------------------------------------------------------===//

/// Operands and results that have the parameter's shape share its factors.
static ShardingRule getOptimizerRule(Operation *op, Value param,
                                     FactorKind kind) {
  ShardingRuleBuilder builder(op);
  ArrayRef<int64_t> shape = getShape(param);
  for (int64_t dim : llvm::seq<int64_t>(0, shape.size())) {
    SmallVector<std::pair<unsigned, int64_t>> operands, results;
    for (OpOperand &operand : op->getOpOperands())
      if (getShape(operand.get()) == shape)
        operands.push_back({operand.getOperandNumber(), dim});
    for (OpResult result : op->getResults())
      if (getShape(result) == shape)
        results.push_back({result.getResultNumber(), dim});
    builder.addShared(shape[dim], operands, results, kind);
  }
  return builder.build();
}

ShardingRule SgdOp::getShardingRule() {
  return getOptimizerRule(*this, getParam(), FactorKind::PassThrough);
}
ShardingRule AdamWOp::getShardingRule() {
  return getOptimizerRule(*this, getParam(), FactorKind::PassThrough);
}
// LAMB's trust ratio divides two norms over the whole tensor.
ShardingRule LambOp::getShardingRule() {
  return getOptimizerRule(*this, getParam(), FactorKind::NeedReplication);
}

ShardingRule AdafactorOp::getShardingRule() {
  // The factored state of a `[..., m, n]` parameter is a row state `[..., m]`
  // and a column state `[..., n]`; the update clips by the RMS over the whole
  // tensor, so every factor needs replication.
  ShardingRuleBuilder builder(*this);
  ArrayRef<int64_t> shape = getShape(getParam());
  int64_t rank = shape.size();
  SmallVector<int64_t> factors;
  for (int64_t size : shape)
    factors.push_back(
        size == 1 ? -1 : builder.addFactor(size, FactorKind::NeedReplication));
  // The dimensions of the parameter that a tensor of the update has: all of
  // them, or for the factored state the leading ones and the rows (R) or the
  // columns (C).
  auto getDims = [&](Value value, bool isState, unsigned stateIndex) {
    if (!isState || rank < 2)
      return llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<int64_t> dims =
        llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
    dims.push_back(stateIndex == 0 ? rank - 2 : rank - 1);
    return dims;
  };
  auto map = [&](Value value, bool isState, unsigned stateIndex, auto addDim) {
    if (getShape(value).empty() && value != getParam())
      return; // lr, step, grad_scale
    for (auto [index, dim] :
         llvm::enumerate(getDims(value, isState, stateIndex)))
      if (factors[dim] >= 0)
        addDim(index, factors[dim]);
  };
  for (OpOperand &operand : getOperation()->getOpOperands()) {
    auto state = llvm::find(getState(), operand.get());
    bool isState = state != getState().end();
    map(operand.get(), isState,
        isState ? std::distance(getState().begin(), state) : 0,
        [&](int64_t dim, int64_t factor) {
          builder.operandDim(operand.getOperandNumber(), dim, factor);
        });
  }
  for (OpResult result : getOperation()->getResults()) {
    bool isState = result != getNewParam();
    map(result, isState, isState ? result.getResultNumber() - 1 : 0,
        [&](int64_t dim, int64_t factor) {
          builder.resultDim(result.getResultNumber(), dim, factor);
        });
  }
  return builder.build();
}
