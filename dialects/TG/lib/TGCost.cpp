//===- TGCost.cpp - CostOpInterface of the tg ops ------------------------===//
//
// FLOPs, transcendentals and bytes moved for every tg op, as one kernel.
// Conventions: a multiply-add is two FLOPs; a transcendental also counts as
// one FLOP; bytes are those a kernel must read and write in device memory
// (a reshape is a view and moves nothing; a slice reads what it keeps).
//
//===----------------------------------------------------------------------===//

#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/Support/CheckedArithmetic.h"
#include <cmath>

using namespace mlir;
using namespace tgc::tg;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

int64_t tgc::tg::addFigures(int64_t a, int64_t b) {
  std::optional<int64_t> sum = llvm::checkedAdd(a, b);
  return sum ? *sum : kSaturatedFigure;
}

int64_t tgc::tg::multiplyFigures(int64_t a, int64_t b) {
  std::optional<int64_t> product = llvm::checkedMul(a, b);
  return product ? *product : kSaturatedFigure;
}

OpCost &OpCost::operator+=(const OpCost &other) {
  flops = addFigures(flops, other.flops);
  transcendentals = addFigures(transcendentals, other.transcendentals);
  integerOps = addFigures(integerOps, other.integerOps);
  matrixFlops = addFigures(matrixFlops, other.matrixFlops);
  bytesRead = addFigures(bytesRead, other.bytesRead);
  bytesWritten = addFigures(bytesWritten, other.bytesWritten);
  workspaceBytes = addFigures(workspaceBytes, other.workspaceBytes);
  return *this;
}

int64_t tgc::tg::getElementByteSize(Type elementType) {
  // Sub-byte types (i1) occupy a byte each in device memory.
  return std::max<int64_t>(
      1, llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8));
}

std::optional<int64_t> tgc::tg::getBoundedTensorByteSize(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank() || !shaped.getElementType().isIntOrFloat())
    return std::nullopt;
  // A zero dimension counts as one in the bound: tensor<0x2^62xf32> holds
  // nothing, but its strides and index arithmetic would still overflow.
  int64_t span = getElementByteSize(shaped.getElementType());
  bool empty = false;
  for (int64_t dim : shaped.getShape()) {
    if (dim < 0) // dynamic
      return std::nullopt;
    empty |= dim == 0;
    std::optional<int64_t> product =
        llvm::checkedMul(span, std::max<int64_t>(dim, 1));
    if (!product || *product > kMaxTensorBytes)
      return std::nullopt;
    span = *product;
  }
  return empty ? 0 : span;
}

int64_t tgc::tg::getTensorByteSize(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() * getElementByteSize(shaped.getElementType());
}

static int64_t getNumElements(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements();
}

static int64_t getByteSize(ValueRange values) {
  int64_t bytes = 0;
  for (Value value : values)
    bytes += getTensorByteSize(value.getType());
  return bytes;
}

/// Reads every operand once and writes every result once.
static OpCost getStreamingCost(Operation *op) {
  OpCost cost;
  cost.bytesRead = getByteSize(op->getOperands());
  cost.bytesWritten = getByteSize(op->getResults());
  return cost;
}

OpCost tgc::tg::getElementwiseCost(Operation *op, int64_t flopsPerElement,
                                   int64_t transcendentalsPerElement) {
  OpCost cost = getStreamingCost(op);
  int64_t elements = getNumElements(op->getResult(0));
  cost.flops = flopsPerElement * elements;
  cost.transcendentals = transcendentalsPerElement * elements;
  // The type the arithmetic runs in: the compared or converted operand's,
  // else the result's (select's predicate is not it).
  cost.computeType =
      getElementTypeOrSelf(op->getOperand(op->getNumOperands() - 1).getType());
  return cost;
}

/// A kernel that does `flopsPerElement` FLOPs per element of `elementsOf`
/// and `transcendentalsPerRow` per row (elements / last dimension).
static OpCost getRowwiseCost(Operation *op, Value elementsOf,
                             int64_t flopsPerElement,
                             int64_t transcendentalsPerElement,
                             int64_t flopsPerRow,
                             int64_t transcendentalsPerRow) {
  OpCost cost = getStreamingCost(op);
  auto type = cast<RankedTensorType>(elementsOf.getType());
  int64_t elements = type.getNumElements();
  int64_t rowSize = type.getRank() == 0 ? 1 : type.getShape().back();
  int64_t rows = rowSize == 0 ? 0 : elements / rowSize;
  cost.transcendentals =
      transcendentalsPerElement * elements + transcendentalsPerRow * rows;
  cost.flops = flopsPerElement * elements + flopsPerRow * rows +
               transcendentalsPerRow * rows;
  cost.computeType = type.getElementType();
  return cost;
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

OpCost ConstantOp::getCost() { return {}; }

OpCost BroadcastInDimOp::getCost() { return getStreamingCost(*this); }

OpCost ReshapeOp::getCost() { return {}; }

OpCost TransposeOp::getCost() { return getStreamingCost(*this); }

OpCost SliceOp::getCost() {
  OpCost cost;
  cost.bytesRead = cost.bytesWritten = getTensorByteSize(getType());
  return cost;
}

OpCost ConcatOp::getCost() { return getStreamingCost(*this); }

OpCost PadOp::getCost() { return getStreamingCost(*this); }

//===----------------------------------------------------------------------===//
// Reductions and compute ops
//===----------------------------------------------------------------------===//

OpCost ReduceOp::getCost() {
  OpCost cost = getStreamingCost(*this);
  cost.flops = getNumElements(getOperand());
  if (getKind() == ReduceKind::Mean)
    cost.flops += getNumElements(getResult());
  cost.computeType = getOperand().getType().getElementType();
  return cost;
}

/// The fp8 format `value` was quantized to by tg.fake_quant (through shape
/// ops), or null: an fp8 GEMM reads the quantized tensor in that format.
static Type getQuantizedFormat(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto quant = dyn_cast<FakeQuantOp>(def))
      return quant.getFormat();
    if (!def->hasTrait<::tgc::tg::OpTrait::ShapeOp>() ||
        def->getNumOperands() != 1)
      return {};
    value = def->getOperand(0);
  }
  return {};
}

OpCost MatmulOp::getCost() {
  OpCost cost = getStreamingCost(*this);
  RankedTensorType lhsType = getLhs().getType();
  int64_t k = lhsType.getShape()[lhsType.getRank() - (getTransposeA() ? 2 : 1)];
  cost.flops = multiplyFigures(2 * getNumElements(getResult()), k);
  cost.matrixFlops = cost.flops;
  cost.computeType = lhsType.getElementType();
  // Both operands fake-quantized (mixed precision's fp8 policy): an fp8 GEMM
  // reading one byte per element.
  Type lhsFormat = getQuantizedFormat(getLhs());
  Type rhsFormat = getQuantizedFormat(getRhs());
  if (lhsFormat && rhsFormat) {
    cost.computeType = lhsFormat;
    for (Value operand : {getLhs(), getRhs()})
      cost.bytesRead -=
          getNumElements(operand) *
          (getElementByteSize(getElementTypeOrSelf(operand.getType())) - 1);
  }
  return cost;
}

OpCost EmbeddingOp::getCost() {
  OpCost cost;
  // Only the gathered rows of the table are read.
  cost.bytesRead =
      getTensorByteSize(getIndices().getType()) + getTensorByteSize(getType());
  cost.bytesWritten = getTensorByteSize(getType());
  return cost;
}

/// The rows a block of E of G experts computes, with the routing balanced
/// (expert parallelism): rows x E / G; all of them for the whole stack.
template <typename Op> static int64_t getExpectedRows(Op op) {
  int64_t rows = getNumElements(op.getIds());
  int64_t global = op.getNumGlobalExperts();
  if (global <= op.getNumExperts() || global <= 0)
    return rows;
  return static_cast<int64_t>(std::ceil(
      static_cast<double>(rows) * static_cast<double>(op.getNumExperts()) /
      static_cast<double>(global)));
}

OpCost ExpertMatmulOp::getCost() {
  // The routed products only (a grouped GEMM): rows x H x O multiply-adds.
  // The generated kernel tiles them on CUDA cores, not tensor cores: the
  // flops are not matrix flops.
  OpCost cost = getStreamingCost(*this);
  cost.flops = multiplyFigures(
      multiplyFigures(2 * getExpectedRows(*this), getOutputWidth()),
      getInputWidth());
  cost.computeType = getInput().getType().getElementType();
  return cost;
}

OpCost ExpertMatmulGradOp::getCost() {
  // One multiply-add per row and result column of its expert's matrix.
  OpCost cost = getStreamingCost(*this);
  cost.flops = multiplyFigures(
      multiplyFigures(2 * getExpectedRows(*this), getOutputWidth()),
      getInputWidth());
  cost.computeType = getType().getElementType();
  return cost;
}

OpCost TopKOp::getCost() {
  // A selection per row: about log2(k) comparisons per element read.
  OpCost cost = getStreamingCost(*this);
  int64_t k = std::max<int64_t>(getK(), 2);
  Type elementType = getOperand().getType().getElementType();
  if (!isa<FloatType>(elementType))
    return cost;
  cost.flops = getOperand().getType().getNumElements() *
               int64_t(std::ceil(std::log2(double(k))));
  cost.computeType = elementType;
  return cost;
}

OpCost SoftmaxOp::getCost() {
  // max, subtract, exp, sum, divide.
  return getRowwiseCost(*this, getOperand(), 5, 1, 0, 0);
}

OpCost LogSoftmaxOp::getCost() {
  // max, subtract, exp, sum, subtract; one log per row.
  return getRowwiseCost(*this, getOperand(), 5, 1, 0, 1);
}

OpCost LayerNormOp::getCost() {
  // sum, subtract mean, square, sum, times rstd, times scale, plus bias; per
  // row: the two divisions by H, the epsilon and one rsqrt.
  return getRowwiseCost(*this, getInput(), 7, 0, 3, 1);
}

OpCost RmsNormOp::getCost() {
  // square, sum, times rstd, times scale; per row: divide, epsilon, rsqrt.
  return getRowwiseCost(*this, getInput(), 4, 0, 2, 1);
}

/// Query-key pairs attention computes: all, or the causal (bottom-right
/// aligned) lower triangle, where query i sees keys 0 .. i + keys - queries.
static int64_t getAttentionPairs(RankedTensorType query, RankedTensorType key,
                                 bool causal) {
  int64_t queries = query.getDimSize(2), keys = key.getDimSize(2);
  int64_t pairs = multiplyFigures(queries, keys);
  if (causal)
    pairs = addFigures(multiplyFigures(queries, keys - queries + 1),
                       multiplyFigures(queries, queries - 1) / 2);
  return multiplyFigures(multiplyFigures(pairs, query.getDimSize(0)),
                         query.getDimSize(1));
}

/// An attention op's scores (query-key pairs), head size and value size.
namespace {
struct AttentionWork {
  int64_t pairs, headSize, valueSize;
};
} // namespace
template <typename Op> static AttentionWork getAttentionWork(Op op) {
  return {getAttentionPairs(op.getQuery().getType(), op.getKey().getType(),
                            op.getCausal()),
          op.getQuery().getType().getDimSize(3),
          op.getValue().getType().getDimSize(3)};
}

/// The integer instructions of one Philox4x32-10 call, which tg.dropout,
/// tg.random and the attention's dropout make per number (runtime
/// Philox.h): ten rounds of two 32 x 32 -> 64-bit multiplies (two
/// instructions each), two three-way XORs and the key's two additions,
/// and the counter's four words set up.
static constexpr int64_t kPhiloxOpsPerDraw = 10 * (4 + 2 + 2) + 4;

OpCost AttentionOp::getCost() {
  OpCost cost = getStreamingCost(*this);
  auto [pairs, headSize, valueSize] = getAttentionWork(*this);
  // Two matmuls (scores and output), then per score: scale, (the soft
  // cap's divide, tanh and multiply,) (bias,) max, subtract, exp, sum,
  // (dropout's select and scale, its Philox mask integer work as
  // tg.dropout's;) per output element a division.
  bool softcap = getSoftcap().has_value();
  cost.matrixFlops = multiplyFigures(pairs, 2 * (headSize + valueSize));
  cost.flops =
      addFigures(addFigures(cost.matrixFlops,
                            multiplyFigures(pairs, 5 + (getBias() ? 1 : 0) +
                                                       (softcap ? 2 : 0) +
                                                       (getSeed() ? 2 : 0))),
                 getNumElements(getOutput()));
  cost.transcendentals = multiplyFigures(pairs, softcap ? 2 : 1);
  if (getSeed())
    cost.integerOps = multiplyFigures(pairs, kPhiloxOpsPerDraw);
  cost.computeType = getQuery().getType().getElementType();
  return cost;
}

OpCost DropoutOp::getCost() {
  // The mask is integer work (a Philox call per element); the FLOPs are
  // the scale and select.
  OpCost cost = getStreamingCost(*this);
  cost.flops = 2 * getNumElements(getResult());
  cost.integerOps =
      multiplyFigures(getNumElements(getResult()), kPhiloxOpsPerDraw);
  cost.computeType = getOperand().getType().getElementType();
  return cost;
}

OpCost RandomOp::getCost() {
  // Philox is integer work; a normal draw adds a log, a square root and a
  // cosine (in f64) per element.
  OpCost cost = getStreamingCost(*this);
  bool normal = getDistribution() == RandomDistribution::Normal;
  cost.flops = (normal ? 6 : 1) * getNumElements(getResult());
  cost.transcendentals = normal ? 3 * getNumElements(getResult()) : 0;
  cost.integerOps =
      multiplyFigures(getNumElements(getResult()), kPhiloxOpsPerDraw);
  cost.computeType =
      normal ? Float64Type::get(getContext()) : getType().getElementType();
  return cost;
}

OpCost CrossEntropyOp::getCost() {
  // Per logit: max, subtract, exp, sum; per token: log, pick, accumulate.
  return getRowwiseCost(*this, getLogits(), 4, 1, 2, 1);
}

//===----------------------------------------------------------------------===//
// Mixed-precision ops
//===----------------------------------------------------------------------===//

// Identities in the forward: a kernel would alias its operand.
OpCost ScaleGradOp::getCost() { return {}; }
OpCost FakeQuantGradOp::getCost() { return {}; }

OpCost FakeQuantOp::getCost() {
  // Scale, clamp, round and unscale per element; the history is read too.
  return getElementwiseCost(*this, 4, 0);
}

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

/// An optimizer update: `flops` per parameter element, `transcendentals` per
/// element (the square roots), reading and writing parameter and state once.
static OpCost getOptimizerCost(Operation *op, int64_t flops,
                               int64_t transcendentals) {
  OpCost cost = getStreamingCost(op);
  int64_t elements = getNumElements(op->getResult(0));
  cost.flops = flops * elements;
  cost.transcendentals = transcendentals * elements;
  cost.computeType = getElementTypeOrSelf(op->getResult(0).getType());
  return cost;
}

OpCost SgdOp::getCost() {
  // decay, scale, subtract; with momentum: the buffer update and nesterov.
  return getOptimizerCost(*this, getMomentumBuffer() ? 7 : 4, 0);
}

OpCost AdamWOp::getCost() {
  // two moment updates, two bias corrections, sqrt, divide, decay, update.
  return getOptimizerCost(*this, 14, 1);
}

OpCost LambOp::getCost() {
  // AdamW's direction plus the two norms of the trust ratio.
  return getOptimizerCost(*this, 18, 1);
}

OpCost AdafactorOp::getCost() {
  // Per element: g2, the row and column sums (or the moment update), V,
  // sqrt, divide, the RMS sum, clip, decay, update; the state is small.
  OpCost cost = getOptimizerCost(*this, 14, 1);
  // The statistics must be complete before U, and RMS(U) before any
  // parameter is written: the gradient is read three times.
  cost.bytesRead += 2 * getTensorByteSize(getGrad().getType());
  return cost;
}

//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

OpCost SoftmaxGradOp::getCost() {
  // multiply, sum, subtract, multiply.
  OpCost cost = getStreamingCost(*this);
  cost.flops = 4 * getNumElements(getResult());
  cost.computeType = getType().getElementType();
  return cost;
}

OpCost LayerNormGradOp::getCost() {
  // xhat, g, the two row means, the combination, and the two column sums.
  return getRowwiseCost(*this, getInput(), 10, 0, 4, 0);
}

OpCost RmsNormGradOp::getCost() {
  return getRowwiseCost(*this, getInput(), 7, 0, 2, 0);
}

OpCost AttentionBiasGradOp::getCost() {
  // Per score, the recomputed score and dP (dot products of D and Dv), the
  // recomputed exp (the cap's tanh and divide), the mask's select and
  // scale with dropout, and the softmax backward; a row's delta =
  // rowsum(dO * O); the sums into the bias. The runtime's kernel forms
  // them a bias element per thread, on the CUDA cores, not as tensor-core
  // matmuls: the products are priced as plain flops.
  bool softcap = getSoftcap().has_value();
  OpCost cost = getStreamingCost(*this);
  auto [pairs, headSize, valueSize] = getAttentionWork(*this);
  cost.flops =
      multiplyFigures(pairs, 2 * (headSize + valueSize) + 6 +
                                 (softcap ? 3 : 0) + (getSeed() ? 2 : 0));
  cost.flops = addFigures(cost.flops, 2 * getNumElements(getOutput()));
  cost.transcendentals = multiplyFigures(pairs, softcap ? 2 : 1);
  // The mask drawn again.
  if (getSeed())
    cost.integerOps = multiplyFigures(pairs, kPhiloxOpsPerDraw);
  cost.computeType = getQuery().getType().getElementType();
  return cost;
}

OpCost AttentionGradOp::getCost() {
  // Five matmuls (the recomputed scores, dP, dV, dQ, dK) and per score the
  // recomputed exp (and soft cap: tanh, divide, multiply, and its slope
  // 1 - t^2; and dropout: the mask's select and scale on p and on dP) and
  // the softmax backward.
  bool softcap = getSoftcap().has_value();
  OpCost cost = getStreamingCost(*this);
  auto [pairs, headSize, valueSize] = getAttentionWork(*this);
  cost.matrixFlops = multiplyFigures(pairs, 2 * (3 * headSize + 2 * valueSize));
  cost.flops = addFigures(cost.matrixFlops,
                          multiplyFigures(pairs, 6 + (getBias() ? 1 : 0) +
                                                     (softcap ? 5 : 0) +
                                                     (getSeed() ? 4 : 0)));
  cost.transcendentals = multiplyFigures(pairs, softcap ? 2 : 1);
  // The mask drawn again in each of the two kernels (dQ's, and dK's and
  // dV's: runtime FlashAttention.h).
  if (getSeed())
    cost.integerOps = multiplyFigures(pairs, 2 * kPhiloxOpsPerDraw);
  cost.computeType = getQuery().getType().getElementType();
  // FlashAttention-2's backward accumulates dQ in f32 across the key blocks
  // and keeps delta = rowsum(dO * O) per query row (both f32).
  RankedTensorType query = getQuery().getType();
  int64_t rows = query.getNumElements() / query.getDimSize(3);
  cost.workspaceBytes = 4 * (query.getNumElements() + rows);
  return cost;
}

OpCost EmbeddingGradOp::getCost() {
  // The table is written whole (zeros, then the scattered rows are added).
  OpCost cost;
  cost.bytesRead = getByteSize(getOperands()) + getTensorByteSize(getType());
  cost.bytesWritten = getTensorByteSize(getType());
  cost.flops = getNumElements(getGradOutput());
  cost.computeType = getType().getElementType();
  return cost;
}

OpCost CrossEntropyGradOp::getCost() {
  // Per logit: subtract logsumexp, exp, subtract the one-hot, scale.
  return getRowwiseCost(*this, getLogits(), 4, 1, 0, 0);
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

OpCost FusionOp::getCost() {
  // One kernel: the body's arithmetic, but only the region's own inputs and
  // results move through device memory.
  OpCost cost = getStreamingCost(*this);
  int64_t largestFlops = -1;
  // The body's own ops only: a nested region's cost already holds its body
  // (walking every nested op would count an op once per enclosing region,
  // exponential in the nesting depth).
  for (auto inner : getBody().getOps<CostOpInterface>()) {
    OpCost innerCost = inner.getCost();
    cost.flops = addFigures(cost.flops, innerCost.flops);
    cost.transcendentals =
        addFigures(cost.transcendentals, innerCost.transcendentals);
    cost.matrixFlops = addFigures(cost.matrixFlops, innerCost.matrixFlops);
    cost.workspaceBytes =
        std::max(cost.workspaceBytes, innerCost.workspaceBytes);
    if (innerCost.flops > largestFlops && innerCost.computeType) {
      largestFlops = innerCost.flops;
      cost.computeType = innerCost.computeType;
    }
  }
  return cost;
}

OpCost YieldOp::getCost() { return {}; }
