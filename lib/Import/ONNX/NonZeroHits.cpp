//===- NonZeroHits.cpp - NonZero of run-time values, imported densely -----===//
//
// tg's shapes are static, so a NonZero whose input is computed at run time
// cannot list its hits. The graphs that contain one (the TorchScript export
// of transformers' eager mixture-of-experts loop: per expert, the tokens
// routed to it are a NonZero of the routing, their rows are gathered, run
// through the expert, weighted and scattered back into the layer's output)
// only use the hits' positions to gather rows and to scatter results back.
// Such a NonZero is imported densely: its output lists every position of
// its input that can be a hit (BoundsAnalysis leaves out those that cannot),
// with a mask of the hits; each value computed from those
// positions keeps a "hit dimension" that runs over them (Hits), through the
// ops that treat the positions independently (elementwise ops, reshapes,
// transposes, gathers, row-wise matmuls, reductions over other
// dimensions), until a ScatterElements or ScatterND writes back only the
// hits or a
// reduction over them reduces only the hits (maskHitReduction). An op
// that would mix the positions (an index among them, a slice of them, a
// use of their number as a value) is refused, naming the NonZero.
//
// A Split of the positions into as many pieces as there are positions (the
// loop over the experts that the trace unrolled, one iteration per expert
// hit) requires every position to be a hit: the exported graph fails when
// one is not. The dense import runs every piece anyway; in a mixture of
// experts, an expert no token chose then selects no tokens and contributes
// nothing, which is what the model computes.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Hits = GraphImporter::Hits;
using HitCount = GraphImporter::HitCount;

/// "the positions of NonZero 'N'", for errors.
static std::string describe(const Hits &hits) {
  return "the positions of NonZero '" + hits.node +
         "' (its input is computed at run time: imported densely, every "
         "position with a mask of the hits)";
}

//===----------------------------------------------------------------------===//
// Which positions can be hits
//===----------------------------------------------------------------------===//
//
// Each element's interval of values, where the ops that compute a small
// tensor allow it: constants, TopK's indices (within the row), and the ops
// that move elements or are monotone (run on the bounds with their
// interpreter kernels), comparisons and choices (element by element). A
// position whose interval is [0, 0] is never a hit: the eager experts
// loop's one-hot has a class past the experts that TopK never picks.

namespace {
struct Bounds {
  Tensor low, high;
};

class BoundsAnalysis {
public:
  explicit BoundsAnalysis(GraphImporter &g) : g(g) {}
  std::optional<Bounds> get(Value value, unsigned depth = 0);

private:
  std::optional<Bounds> compute(Value value, unsigned depth);
  std::optional<Bounds> runKernel(Operation *op, unsigned result,
                                  ArrayRef<const Tensor *> low,
                                  ArrayRef<const Tensor *> high);

  GraphImporter &g;
  EvalOptions options;
  llvm::DenseMap<Value, std::optional<Bounds>> memo;
};
} // namespace

/// The analysis looks at small tensors only, a bounded depth up.
constexpr int64_t kMaxBoundsElements = int64_t(1) << 16;
constexpr unsigned kMaxBoundsDepth = 64;

static void setElement(Tensor &tensor, int64_t i, double value) {
  if (tensor.isIntStorage())
    tensor.ints()[i] = toInt64Saturating(value);
  else if (tensor.isDoubleStorage())
    tensor.doubles()[i] = value;
  else
    tensor.floats()[i] = float(value);
}

std::optional<Bounds> BoundsAnalysis::get(Value value, unsigned depth) {
  if (auto it = memo.find(value); it != memo.end())
    return it->second;
  std::optional<Bounds> bounds = compute(value, depth);
  memo.try_emplace(value, bounds);
  return bounds;
}

std::optional<Bounds> BoundsAnalysis::runKernel(Operation *op, unsigned result,
                                                ArrayRef<const Tensor *> low,
                                                ArrayRef<const Tensor *> high) {
  const Kernel *kernel =
      KernelRegistry::getDefault().lookup(op->getName().getStringRef());
  if (!kernel)
    return std::nullopt;
  // Integers near the ends of their range could wrap, which no bound
  // survives.
  for (ArrayRef<const Tensor *> tensors : {low, high})
    for (const Tensor *tensor : tensors)
      if (tensor->isIntStorage() && llvm::any_of(tensor->ints(), [](int64_t v) {
            return v > (int64_t(1) << 40) || v < -(int64_t(1) << 40);
          }))
        return std::nullopt;
  // A kernel's error (which bounds could provoke) only ends the analysis.
  ScopedDiagnosticHandler silence(op->getContext(),
                                  [](Diagnostic &) { return success(); });
  KernelContext context{options};
  SmallVector<Tensor> lows, highs;
  if (failed((*kernel)(op, low, lows, context)) ||
      failed((*kernel)(op, high, highs, context)))
    return std::nullopt;
  return Bounds{std::move(lows[result]), std::move(highs[result])};
}

std::optional<Bounds> BoundsAnalysis::compute(Value value, unsigned depth) {
  if (const Tensor *known = g.getConstant(value))
    return Bounds{*known, *known};
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *op = value.getDefiningOp();
  if (!op || !type || type.getNumElements() > kMaxBoundsElements ||
      depth >= kMaxBoundsDepth)
    return std::nullopt;
  KernelContext context{options};
  if (auto topK = dyn_cast<tg::TopKOp>(op)) {
    if (value != topK.getIndices())
      return std::nullopt;
    Bounds bounds{context.makeResult(type), context.makeResult(type)};
    int64_t row = GraphImporter::getType(topK.getOperand()).getShape().back();
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      setElement(bounds.high, i, double(row - 1));
    return bounds;
  }
  // The operands' bounds.
  SmallVector<Bounds> operands;
  for (Value operand : op->getOperands()) {
    std::optional<Bounds> bounds = get(operand, depth + 1);
    if (!bounds)
      return std::nullopt;
    operands.push_back(std::move(*bounds));
  }
  auto pointers = [&](bool high) {
    SmallVector<const Tensor *> tensors;
    for (const Bounds &bounds : operands)
      tensors.push_back(high ? &bounds.high : &bounds.low);
    return tensors;
  };
  unsigned result = cast<OpResult>(value).getResultNumber();
  // A conversion to a float, or to an integer as wide from a narrower one,
  // keeps the order (to bool, or narrowing, it does not).
  bool monotoneConvert = false;
  if (auto convert = dyn_cast<tg::ConvertOp>(op)) {
    Type from = GraphImporter::getType(convert.getOperand()).getElementType();
    Type to = type.getElementType();
    monotoneConvert =
        isa<FloatType>(to) ||
        (to.isSignlessInteger() && from.isSignlessInteger() &&
         to.getIntOrFloatBitWidth() >= from.getIntOrFloatBitWidth() &&
         (to.getIntOrFloatBitWidth() > 1));
  }
  if (isa<tg::AddOp, tg::MaxOp, tg::MinOp, tg::ReshapeOp, tg::TransposeOp,
          tg::BroadcastInDimOp, tg::SliceOp, tg::ConcatOp, tg::ReduceOp>(op) ||
      monotoneConvert)
    // Nondecreasing in every operand.
    return runKernel(op, result, pointers(false), pointers(true));
  if (isa<tg::SubOp>(op)) {
    const Tensor *low[] = {&operands[0].low, &operands[1].high};
    const Tensor *high[] = {&operands[0].high, &operands[1].low};
    std::optional<Bounds> lows = runKernel(op, 0, low, low);
    std::optional<Bounds> highs = runKernel(op, 0, high, high);
    if (!lows || !highs)
      return std::nullopt;
    return Bounds{std::move(lows->low), std::move(highs->high)};
  }
  auto element = [](const Tensor &tensor, int64_t i) {
    return tensor.getAsDouble(i);
  };
  if (isa<tg::SelectOp>(op)) {
    Bounds bounds{context.makeResult(type), context.makeResult(type)};
    const Bounds &pred = operands[0], &onTrue = operands[1],
                 &onFalse = operands[2];
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      bool maybeTrue = element(pred.high, i) != 0;
      bool maybeFalse = element(pred.low, i) == 0;
      double low = INFINITY, high = -INFINITY;
      for (auto [taken, branch] :
           {std::pair{maybeTrue, &onTrue}, std::pair{maybeFalse, &onFalse}})
        if (taken) {
          low = std::min(low, element(branch->low, i));
          high = std::max(high, element(branch->high, i));
        }
      setElement(bounds.low, i, low);
      setElement(bounds.high, i, high);
    }
    return bounds;
  }
  if (auto compareOp = dyn_cast<tg::CompareOp>(op)) {
    Bounds bounds{context.makeResult(type), context.makeResult(type)};
    const Bounds &lhs = operands[0], &rhs = operands[1];
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      double al = element(lhs.low, i), ah = element(lhs.high, i),
             bl = element(rhs.low, i), bh = element(rhs.high, i);
      bool sure = false, never = false;
      if (!std::isnan(al) && !std::isnan(ah) && !std::isnan(bl) &&
          !std::isnan(bh)) {
        switch (compareOp.getDirection()) {
        case tg::CompareDirection::LT:
          sure = ah < bl, never = al >= bh;
          break;
        case tg::CompareDirection::LE:
          sure = ah <= bl, never = al > bh;
          break;
        case tg::CompareDirection::GT:
          sure = al > bh, never = ah <= bl;
          break;
        case tg::CompareDirection::GE:
          sure = al >= bh, never = ah < bl;
          break;
        case tg::CompareDirection::EQ:
          sure = al == ah && bl == bh && al == bl, never = ah < bl || bh < al;
          break;
        case tg::CompareDirection::NE:
          sure = ah < bl || bh < al, never = al == ah && bl == bh && al == bl;
          break;
        }
      }
      setElement(bounds.low, i, sure ? 1 : 0);
      setElement(bounds.high, i, never ? 0 : 1);
    }
    return bounds;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// NonZero
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertNonZeroDensely(GraphImporter &g, Value x) {
  RankedTensorType type = GraphImporter::getType(x);
  SmallVector<int64_t> shape(type.getShape());
  if (shape.empty())
    shape.push_back(1);
  int64_t rank = shape.size(), size = product(shape);
  if (failed(g.checkIndexLength(product({rank, size}), "the output")))
    return failure();
  // The positions that can be hits: those whose value can be nonzero.
  SmallVector<int64_t> possible;
  std::optional<Bounds> bounds = BoundsAnalysis(g).get(x);
  for (int64_t i = 0; i < size; ++i)
    if (!bounds || bounds->low.getAsDouble(i) != 0.0 ||
        bounds->high.getAsDouble(i) != 0.0)
      possible.push_back(i);
  int64_t count = possible.size();
  // [rank, count]: row d holds each position's coordinate along d.
  SmallVector<int64_t> coordinates(rank * count);
  for (auto [column, at] : llvm::enumerate(possible))
    for (int64_t d = rank - 1, flat = at; d >= 0; --d) {
      coordinates[d * count + column] = flat % shape[d];
      flat /= shape[d];
    }
  Value positions = g.constantInts(
      coordinates,
      RankedTensorType::get({rank, count}, g.builder.getI64Type()));
  g.setOutput(0, positions);
  // No position can be a hit: the (empty) output is exact.
  if (count == 0)
    return success();
  Value flat = g.reshape(x, {size});
  if (count < size)
    flat = g.takeRows(
        flat, g.constantInts(possible, RankedTensorType::get(
                                           {count}, g.builder.getI64Type())));
  Value mask = isBool(flat)
                   ? flat
                   : compare(g, tg::CompareDirection::NE, flat,
                             g.splat(GraphImporter::getType(flat), 0.0));
  const onnx::NodeProto &node = g.getNode();
  std::string name = !node.name().empty()      ? node.name()
                     : node.output_size() != 0 ? node.output(0)
                                               : "<unnamed>";
  std::string hint;
  g.explainNotConstant(x, &hint);
  g.hitDims.try_emplace(positions, Hits{mask, 1, name, hint, g.getLoc()});
  return success();
}

namespace {
/// The hit dimensions and counts among the current node's inputs.
struct HitInputs {
  SmallVector<std::pair<unsigned, Hits>> dims;
  SmallVector<std::pair<unsigned, HitCount>> counts;

  const Hits *dimOf(unsigned index) const {
    for (const auto &[i, hits] : dims)
      if (i == index)
        return &hits;
    return nullptr;
  }
  const HitCount *countOf(unsigned index) const {
    for (const auto &[i, count] : counts)
      if (i == index)
        return &count;
    return nullptr;
  }
};
} // namespace

static HitInputs collectHitInputs(GraphImporter &g) {
  HitInputs inputs;
  for (unsigned i = 0; i < g.getNumInputs(); ++i) {
    Value value = g.input(i);
    if (!value)
      continue;
    if (auto it = g.hitDims.find(value); it != g.hitDims.end())
      inputs.dims.push_back({i, it->second});
    if (auto it = g.hitCounts.find(value); it != g.hitCounts.end())
      inputs.counts.push_back({i, it->second});
  }
  return inputs;
}

static std::string inputName(GraphImporter &g, unsigned index) {
  return printableName(g.getNode().input(index));
}

static LogicalResult refuse(GraphImporter &g, unsigned index, const Hits &hits,
                            const Twine &why) {
  return g.fail(why + ": not supported; input '" + inputName(g, index) +
                "' runs over " + describe(hits) + hits.hint);
}

/// A refusal of a use of input `index`, which holds the number of `hits`.
static LogicalResult refuseCount(GraphImporter &g, unsigned index,
                                 const Hits &hits, const Twine &why) {
  return g.fail(why + ": not supported; input '" + inputName(g, index) +
                "' holds the number of " + describe(hits) + hits.hint);
}

/// The generic refusal: the op is not one whose positions stay apart.
static LogicalResult refuseOp(GraphImporter &g, unsigned index,
                              const Hits &hits) {
  return refuse(g, index, hits,
                g.getNode().op_type() +
                    " over a dense NonZero's positions (docs/import.md)");
}

/// Records `dim` of output `index` as running over `hits`.
static LogicalResult setHitOutput(GraphImporter &g, unsigned index,
                                  const Hits &hits, int64_t dim) {
  if (!g.hasOutput(index))
    return success();
  Value output = g.lookup(g.getNode().output(index));
  if (!output)
    return success();
  RankedTensorType type = GraphImporter::getType(output);
  int64_t positions = GraphImporter::getType(hits.mask).getDimSize(0);
  if (dim < 0 || dim >= type.getRank() || type.getDimSize(dim) != positions)
    return g.fail("output '" + printableName(g.getNode().output(index)) +
                  "' should run over " + describe(hits) +
                  " along one dimension, but its type is not shaped so");
  Hits result = hits;
  result.dim = dim;
  g.hitDims.insert_or_assign(output, result);
  return success();
}

static LogicalResult setHitOutputs(GraphImporter &g, const Hits &hits,
                                   int64_t dim) {
  for (unsigned i = 0; i < g.getNumOutputs(); ++i)
    if (failed(setHitOutput(g, i, hits, dim)))
      return failure();
  return success();
}

/// Output 0 of a shape computation holding the count at `positions` (none:
/// the count was not selected).
static void setCountOutput(GraphImporter &g, const Hits &hits,
                           SmallVector<int64_t> positions) {
  if (positions.empty() || !g.hasOutput(0))
    return;
  if (Value output = g.lookup(g.getNode().output(0)))
    g.hitCounts.insert_or_assign(output, HitCount{hits, std::move(positions)});
}

/// The dimension of `to` that holds what dimension `dim` of `from` holds
/// when `from` is reshaped to `to` (the elements before it and its size
/// agree), or none.
static std::optional<int64_t> reshapedDim(ArrayRef<int64_t> from, int64_t dim,
                                          ArrayRef<int64_t> to) {
  int64_t before = product(from.take_front(dim));
  int64_t seen = 1;
  for (auto [b, size] : llvm::enumerate(to)) {
    if (seen == before && size == from[dim])
      return b;
    seen = product({seen, size});
    if (seen > before && before != 0)
      break;
  }
  return std::nullopt;
}

/// The output dimension of the hits of operands `indices` of a numpy
/// broadcast to rank `rank`: every operand with hits must put them at the
/// same dimension and share the mask; the others must have size 1 there
/// (or not reach it): their entries there would not be per position.
static FailureOr<std::pair<Hits, int64_t>>
broadcastHits(GraphImporter &g, const HitInputs &inputs,
              ArrayRef<unsigned> indices, int64_t rank) {
  std::optional<std::pair<Hits, int64_t>> result;
  unsigned first = 0;
  for (unsigned i : indices) {
    const Hits *hits = inputs.dimOf(i);
    if (!hits)
      continue;
    int64_t dim =
        hits->dim + rank - GraphImporter::getType(g.input(i)).getRank();
    if (!result) {
      result = {*hits, dim};
      first = i;
      continue;
    }
    if (hits->mask != result->first.mask)
      return refuse(g, i, *hits,
                    "it meets the positions of NonZero '" + result->first.node +
                        "', another selection");
    if (dim != result->second)
      return refuse(
          g, i, *hits,
          "another input runs over the positions along another dimension");
  }
  if (!result)
    return refuseOp(g, inputs.dims.front().first, inputs.dims.front().second);
  for (unsigned i : indices) {
    Value value = g.input(i);
    if (!value || inputs.dimOf(i))
      continue;
    RankedTensorType type = GraphImporter::getType(value);
    int64_t d = result->second - (rank - type.getRank());
    if (d >= 0 && d < type.getRank() && type.getDimSize(d) != 1)
      return refuse(
          g, first, result->first,
          "input '" + inputName(g, i) +
              "' has several entries along the positions' dimension without "
              "running over them");
  }
  return *result;
}

/// The ops whose every output element depends only on the inputs' elements
/// at the same (broadcast) position.
static bool isElementwise(StringRef op) {
  static const llvm::StringSet<> ops = {"Abs",
                                        "Acos",
                                        "Acosh",
                                        "Add",
                                        "And",
                                        "Asin",
                                        "Asinh",
                                        "Atan",
                                        "Atanh",
                                        "BitShift",
                                        "BitwiseAnd",
                                        "BitwiseNot",
                                        "BitwiseOr",
                                        "BitwiseXor",
                                        "Cast",
                                        "Ceil",
                                        "Celu",
                                        "Clip",
                                        "Cos",
                                        "Cosh",
                                        "Div",
                                        "Dropout",
                                        "Elu",
                                        "Equal",
                                        "Erf",
                                        "Exp",
                                        "Floor",
                                        "Gelu",
                                        "Greater",
                                        "GreaterOrEqual",
                                        "HardSigmoid",
                                        "HardSwish",
                                        "Identity",
                                        "IsInf",
                                        "IsNaN",
                                        "LeakyRelu",
                                        "Less",
                                        "LessOrEqual",
                                        "Log",
                                        "Max",
                                        "Mean",
                                        "Min",
                                        "Mish",
                                        "Mod",
                                        "Mul",
                                        "Neg",
                                        "Not",
                                        "Or",
                                        "Pow",
                                        "PRelu",
                                        "Reciprocal",
                                        "Relu",
                                        "Round",
                                        "Selu",
                                        "Shrink",
                                        "Sigmoid",
                                        "Sign",
                                        "Sin",
                                        "Sinh",
                                        "Softplus",
                                        "Softsign",
                                        "Sqrt",
                                        "Sub",
                                        "Sum",
                                        "Tan",
                                        "Tanh",
                                        "ThresholdedRelu",
                                        "Where",
                                        "Xor"};
  return ops.contains(op);
}

static bool isReduction(StringRef op) {
  static const llvm::StringSet<> ops = {
      "ReduceSum",       "ReduceMean",     "ReduceMax", "ReduceMin",
      "ReduceProd",      "ReduceL1",       "ReduceL2",  "ReduceLogSum",
      "ReduceLogSumExp", "ReduceSumSquare"};
  return ops.contains(op);
}

/// Shape vectors that hold the count: the positions of the count that
/// the node's output 0 keeps, or an error when the node computes with it.
static LogicalResult propagateCount(GraphImporter &g, const HitInputs &inputs) {
  const onnx::NodeProto &node = g.getNode();
  StringRef op = node.op_type();
  const auto &[index, count] = inputs.counts.front();
  auto refuseUse = [&]() {
    return refuseCount(g, index, count.hits,
                       op + " computes with the number of a dense NonZero's "
                            "positions, which is not known at import (it can "
                            "only shape a Reshape, Expand or ConstantOfShape)");
  };
  // Read as a shape: the hit dimension rules below handle the data.
  if ((op == "Reshape" || op == "Expand") && index == 1 &&
      inputs.counts.size() == 1)
    return success();
  if (op == "ConstantOfShape")
    return success();
  if (inputs.counts.size() != 1)
    return refuseUse();
  Value data = g.input(index);
  int64_t rank = GraphImporter::getType(data).getRank();
  if ((op == "Identity" || op == "Cast" || op == "Squeeze" ||
       op == "Unsqueeze" || op == "Reshape" || op == "Flatten") &&
      index == 0) {
    // The elements keep their order.
    setCountOutput(g, count.hits, count.positions);
    return success();
  }
  if (op == "Gather" && index == 0 && rank == 1) {
    const Tensor *indices = g.input(1) ? g.getConstant(g.input(1)) : nullptr;
    if (!indices || !indices->isIntStorage())
      return refuseUse();
    int64_t size = GraphImporter::getType(data).getDimSize(0);
    SmallVector<int64_t> kept;
    for (auto [k, at] : llvm::enumerate(indices->ints()))
      if (llvm::is_contained(count.positions, at < 0 ? at + size : at))
        kept.push_back(k);
    setCountOutput(g, count.hits, kept);
    return success();
  }
  if (op == "Concat" && rank == 1) {
    int64_t offset = 0;
    for (unsigned i = 0; i < index; ++i)
      if (Value piece = g.input(i))
        offset += GraphImporter::getType(piece).getDimSize(0);
    SmallVector<int64_t> kept;
    for (int64_t at : count.positions)
      kept.push_back(at + offset);
    setCountOutput(g, count.hits, kept);
    return success();
  }
  if (op == "Slice" && index == 0 && rank == 1) {
    FailureOr<SmallVector<SliceAxis>> axes =
        getSliceAxes(g, GraphImporter::getType(data).getShape());
    if (failed(axes))
      return failure();
    // Output element k is the k-th position the slice keeps.
    SmallVector<int64_t> kept;
    int64_t k = 0;
    for (const SliceAxis &axis : *axes)
      for (int64_t at = axis.begin;
           axis.step > 0 ? at < axis.limit : at > axis.limit;
           at += axis.step, ++k)
        if (llvm::is_contained(count.positions, at))
          kept.push_back(k);
    if (axes->empty())
      kept = count.positions;
    setCountOutput(g, count.hits, kept);
    return success();
  }
  return refuseUse();
}

/// The dimensions a reduction (Reduce*, ArgMax, ArgMin) of `x` reduces,
/// normalized; none when it reduces nothing (empty axes with
/// noop_with_empty_axes).
static FailureOr<std::optional<SmallVector<int64_t>>>
getReducedDims(GraphImporter &g, Value x) {
  StringRef op = g.getNode().op_type();
  if (op != "ArgMax" && op != "ArgMin")
    return getReduceDims(g, x);
  int64_t rank = GraphImporter::getType(x).getRank();
  FailureOr<int64_t> axis = g.normalizeAxis(g.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  return std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{*axis});
}

LogicalResult onnx_import::maskHitReduction(
    GraphImporter &g, SmallVectorImpl<std::pair<std::string, Value>> &restore) {
  StringRef op = g.getNode().op_type();
  if (!(isReduction(op) || op == "ArgMax" || op == "ArgMin") ||
      g.getNumInputs() == 0)
    return success();
  Value x = g.input(0);
  auto it = x ? g.hitDims.find(x) : g.hitDims.end();
  if (it == g.hitDims.end())
    return success();
  const Hits &hits = it->second;
  RankedTensorType type = GraphImporter::getType(x);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = getReducedDims(g, x);
  if (failed(axes))
    return failure();
  if (!*axes || !llvm::is_contained(**axes, hits.dim))
    return success();
  // The positions that are not hits take the element that leaves the
  // reduction unchanged; an index among the hits, or a log-sum-exp of none
  // (-inf, which the shifted form would make NaN), has no such element.
  if (op == "ArgMax" || op == "ArgMin" || op == "ReduceLogSumExp")
    return refuse(g, 0, hits, "the reduction is over the positions");
  Type elementType = type.getElementType();
  if (!isa<FloatType>(elementType) && !elementType.isSignlessInteger())
    return refuse(g, 0, hits,
                  "the reduction of these values is over the positions");
  double neutral = getNeutralElement(op == "ReduceMax"    ? "max"
                                     : op == "ReduceMin"  ? "min"
                                     : op == "ReduceProd" ? "mul"
                                                          : "add",
                                     elementType);
  if (elementType.isInteger(1))
    neutral = op == "ReduceMin" ? 1.0 : 0.0;
  SmallVector<int64_t> maskShape(type.getRank(), 1);
  maskShape[hits.dim] = type.getDimSize(hits.dim);
  Value valid = g.broadcastTo(g.reshape(hits.mask, maskShape), type.getShape());
  std::string name = g.getNode().input(0);
  restore.push_back({name, x});
  g.define(name, select(g, valid, x, g.splat(type, neutral)));
  return success();
}

LogicalResult onnx_import::propagateHits(GraphImporter &g) {
  HitInputs inputs = collectHitInputs(g);
  if (inputs.dims.empty() && inputs.counts.empty())
    return success();
  const onnx::NodeProto &node = g.getNode();
  StringRef op = node.op_type();
  if (!inputs.counts.empty() && failed(propagateCount(g, inputs)))
    return failure();
  // Their converters write the hits back (getScatterHitMask).
  if (op == "ScatterElements" || op == "ScatterND")
    return success();
  // The rules below read output 0's shape (Split's outputs are optional).
  Value output = g.hasOutput(0) ? g.lookup(node.output(0)) : Value();
  if (!output && op != "Split") {
    if (!inputs.dims.empty())
      return refuseOp(g, inputs.dims.front().first, inputs.dims.front().second);
    return g.fail("the node's first output is absent");
  }
  if (op == "Reshape" && !inputs.dimOf(0) && inputs.countOf(1))
    return refuseCount(g, 1, inputs.countOf(1)->hits,
                       "the shape holds the number of a dense NonZero's "
                       "positions, but the data does not run over them");

  // A shape that holds the count makes a value uniform along it.
  if (op == "ConstantOfShape" || (op == "Expand" && !inputs.dimOf(0))) {
    const HitCount *count = inputs.countOf(op == "Expand" ? 1 : 0);
    if (!count)
      // Positions read as a shape.
      return inputs.dims.empty() ? success()
                                 : refuseOp(g, inputs.dims.front().first,
                                            inputs.dims.front().second);
    if (count->positions.size() != 1)
      return refuseCount(g, op == "Expand" ? 1 : 0, count->hits,
                         "the shape holds the number of a dense NonZero's "
                         "positions more than once");
    int64_t dim = count->positions.front();
    if (op == "Expand") {
      RankedTensorType out = GraphImporter::getType(output);
      RankedTensorType in = GraphImporter::getType(g.input(0));
      int64_t d = dim - (out.getRank() - in.getRank());
      if (d >= 0 && in.getDimSize(d) != 1)
        return refuseCount(g, 1, count->hits,
                           "the data has several entries along the "
                           "positions' dimension without running over them");
    }
    return setHitOutputs(g, count->hits, dim);
  }
  if (inputs.dims.empty())
    return success();
  const auto &[index, hits] = inputs.dims.front();
  int64_t rank = GraphImporter::getType(g.input(index)).getRank();
  int64_t dim = hits.dim;
  auto onlyInput = [&](unsigned i) {
    return inputs.dims.size() == 1 && index == i;
  };

  if (isElementwise(op) || op == "Expand") {
    SmallVector<unsigned> operands;
    if (op == "Expand" || op == "Dropout")
      operands = {0};
    else
      for (unsigned i = 0; i < g.getNumInputs(); ++i)
        operands.push_back(i);
    if (op == "Dropout" && !onlyInput(0))
      return refuseOp(g, index, hits);
    FailureOr<std::pair<Hits, int64_t>> result = broadcastHits(
        g, inputs, operands, GraphImporter::getType(output).getRank());
    if (failed(result))
      return failure();
    return setHitOutputs(g, result->first, result->second);
  }
  if (op == "CastLike" && onlyInput(0))
    return setHitOutputs(g, hits, dim);
  if (op == "Transpose" && onlyInput(0)) {
    SmallVector<int64_t> perm = g.getInts("perm").value_or(
        llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
    const auto *at = llvm::find(perm, dim);
    if (at == perm.end())
      return refuseOp(g, index, hits);
    return setHitOutputs(g, hits, at - perm.begin());
  }
  if ((op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
       op == "Flatten") &&
      onlyInput(0)) {
    ArrayRef<int64_t> from = GraphImporter::getType(g.input(0)).getShape();
    ArrayRef<int64_t> to = GraphImporter::getType(output).getShape();
    std::optional<int64_t> result = reshapedDim(from, dim, to);
    if (!result)
      return refuse(g, index, hits,
                    "the reshape merges the positions with another dimension "
                    "or splits them");
    return setHitOutputs(g, hits, *result);
  }
  if (op == "Split" && onlyInput(0)) {
    // Along them, checkHitSplit made sure that every position is a piece
    // the graph requires to be a hit: the pieces are plain positions.
    int64_t axis = g.getInt("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    return axis == dim ? success() : setHitOutputs(g, hits, dim);
  }
  if (op == "Shape" && onlyInput(0)) {
    int64_t start = g.getInt("start", 0), end = g.getInt("end", rank);
    auto clamp = [&](int64_t at) {
      return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank);
    };
    start = clamp(start);
    end = clamp(end);
    if (dim >= start && dim < end)
      setCountOutput(g, hits, {dim - start});
    return success();
  }
  if (op == "Slice" && onlyInput(0)) {
    // Slices of other dimensions keep the positions; of theirs, only the
    // whole range.
    ArrayRef<int64_t> shape = GraphImporter::getType(g.input(0)).getShape();
    FailureOr<SmallVector<SliceAxis>> axes = getSliceAxes(g, shape);
    if (failed(axes))
      return failure();
    for (const SliceAxis &axis : *axes)
      if (axis.dim == dim &&
          (axis.step != 1 || axis.begin != 0 || axis.limit != shape[dim]))
        return refuse(g, index, hits,
                      "the slice keeps some positions and not others");
    return setHitOutputs(g, hits, dim);
  }
  if (op == "Gather" && inputs.dims.size() == 1) {
    int64_t dataRank = GraphImporter::getType(g.input(0)).getRank();
    int64_t axis = g.getInt("axis", 0);
    axis = axis < 0 ? axis + dataRank : axis;
    if (index == 1)
      return setHitOutputs(g, hits, axis + dim);
    if (dim == axis)
      return refuse(g, index, hits, "the gather picks among the positions");
    int64_t indicesRank = GraphImporter::getType(g.input(1)).getRank();
    return setHitOutputs(g, hits, dim < axis ? dim : dim - 1 + indicesRank);
  }
  if (op == "GatherND" && onlyInput(1)) {
    // The positions' points pick the data's slices (x[mask] of a boolean
    // mask: a NonZero's transposed points).
    int64_t batchDims = g.getInt("batch_dims", 0);
    if (dim >= rank - 1 || dim < batchDims)
      return refuse(g, index, hits,
                    "GatherND reads them as coordinates or batch entries");
    return setHitOutputs(g, hits, dim);
  }
  if (op == "GatherElements" && onlyInput(1)) {
    int64_t axis = g.getInt("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    if (dim != axis)
      return refuse(
          g, index, hits,
          "GatherElements aligns the positions with the data's entries");
    return setHitOutputs(g, hits, dim);
  }
  if (op == "MatMul" && inputs.dims.size() == 1) {
    int64_t out = GraphImporter::getType(output).getRank();
    if (index == 0 && rank >= 2 && dim == rank - 2)
      return setHitOutputs(g, hits, out - 2);
    if (index == 1 && rank >= 2 && dim == rank - 1)
      return setHitOutputs(g, hits, out - 1);
    return refuse(
        g, index, hits,
        "the product sums over the positions or batches them with the "
        "other operand");
  }
  if (op == "Gemm" && inputs.dims.size() == 1 && index < 2) {
    bool transposed = g.getInt(index == 0 ? "transA" : "transB", 0) != 0;
    int64_t rows = index == 0 ? (transposed ? 1 : 0) : (transposed ? 0 : 1);
    if (dim != rows)
      return refuse(g, index, hits, "the product sums over the positions");
    if (Value c = g.input(2)) {
      RankedTensorType type = GraphImporter::getType(c);
      int64_t d = index - (2 - type.getRank());
      if (d >= 0 && type.getDimSize(d) != 1)
        return refuse(g, index, hits,
                      "the bias has several entries along the positions' "
                      "dimension without running over them");
    }
    return setHitOutputs(g, hits, index);
  }
  if (op == "Concat") {
    int64_t axis = g.getInt("axis", 0);
    axis = axis < 0 ? axis + rank : axis;
    for (unsigned i = 0; i < g.getNumInputs(); ++i) {
      const Hits *other = inputs.dimOf(i);
      if (!other || other->mask != hits.mask || other->dim != dim)
        return refuse(g, index, hits,
                      "the concatenation joins values that do not run over "
                      "the positions");
    }
    if (axis == dim)
      return refuse(g, index, hits, "the concatenation extends the positions");
    return setHitOutputs(g, hits, dim);
  }
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") &&
      onlyInput(0)) {
    bool coerced = g.opset < 13;
    int64_t axis = g.getInt("axis", coerced ? 1 : -1);
    axis = axis < 0 ? axis + rank : axis;
    if (coerced ? dim >= axis : dim == axis)
      return refuse(g, index, hits,
                    "the softmax normalizes over the positions");
    return setHitOutputs(g, hits, dim);
  }
  if ((op == "LayerNormalization" || op == "RMSNormalization") &&
      onlyInput(0)) {
    int64_t axis = g.getInt("axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    if (dim >= axis)
      return refuse(g, index, hits, "the normalization is over the positions");
    return setHitOutputs(g, hits, dim);
  }
  if ((isReduction(op) || op == "ArgMax" || op == "ArgMin") && onlyInput(0)) {
    FailureOr<std::optional<SmallVector<int64_t>>> axes =
        getReducedDims(g, g.input(0));
    if (failed(axes))
      return failure();
    if (!*axes)
      return setHitOutputs(g, hits, dim);
    if (llvm::is_contained(**axes, dim)) {
      // maskHitReduction gave the converter the hits only: a mean divided
      // by every position is scaled to the hits.
      if (op != "ReduceMean")
        return success();
      auto f32 = g.builder.getF32Type();
      Value hitCount = g.reduce(tg::ReduceKind::Sum, g.convert(hits.mask, f32),
                                {0}, /*keepDims=*/false);
      int64_t positions = GraphImporter::getType(hits.mask).getDimSize(0);
      Value scale = buildBinary<tg::DivOp>(
          g, g.splat(GraphImporter::getType(hitCount), double(positions)),
          hitCount);
      RankedTensorType type = GraphImporter::getType(output);
      scale = g.broadcastTo(g.convert(scale, type.getElementType()),
                            type.getShape());
      g.define(node.output(0), buildBinary<tg::MulOp>(g, output, scale));
      return success();
    }
    bool keepDims = g.getInt("keepdims", 1) != 0;
    int64_t before = llvm::count_if(**axes, [&](int64_t a) { return a < dim; });
    return setHitOutputs(g, hits, keepDims ? dim : dim - before);
  }
  return refuseOp(g, index, hits);
}

LogicalResult onnx_import::checkHitSplit(GraphImporter &g, Value x,
                                         int64_t axis, bool explicitSizes,
                                         ArrayRef<int64_t> sizes) {
  auto it = g.hitDims.find(x);
  if (it == g.hitDims.end())
    return success();
  const Hits &hits = it->second;
  if (hits.dim != axis)
    return success();
  int64_t positions = GraphImporter::getType(x).getDimSize(axis);
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  if (!explicitSizes)
    return refuse(g, 0, hits,
                  "the sizes of a split of the positions into equal pieces "
                  "depend on how many are hits");
  if (total != positions)
    return refuse(g, 0, hits,
                  "the split takes " + Twine(total) + " of the " +
                      Twine(positions) +
                      " positions, as many as the export's trace had hits: "
                      "the graph runs only when exactly that many are hits, "
                      "and tgc cannot tell which (re-export with a batch "
                      "that hits every position)");
  return success();
}

FailureOr<Value> onnx_import::getScatterHitMask(GraphImporter &g, Value indices,
                                                Value updates,
                                                std::optional<int64_t> axis) {
  auto hitsOf = [&](Value value) -> const Hits * {
    auto it = g.hitDims.find(value);
    return it == g.hitDims.end() ? nullptr : &it->second;
  };
  const Hits *indexHits = hitsOf(indices), *updateHits = hitsOf(updates);
  if (const Hits *data = hitsOf(g.input(0)))
    return (void)refuse(
               g, 0, *data,
               "a scatter into the positions writes positions, not rows"),
           failure();
  if (!indexHits && !updateHits)
    return Value();
  const Hits &hits = indexHits ? *indexHits : *updateHits;
  unsigned index = indexHits ? 1 : 2;
  if (!indexHits || !updateHits || indexHits->mask != updateHits->mask ||
      indexHits->dim != updateHits->dim)
    return (void)refuse(g, index, hits,
                        "the scatter's indices and updates must both run over "
                        "the positions, along the same dimension"),
           failure();
  RankedTensorType type = GraphImporter::getType(indices);
  if (axis && hits.dim != *axis)
    return (void)refuse(g, index, hits,
                        "the scatter's axis is another dimension than the "
                        "positions', which would address the data's entries"),
           failure();
  // ScatterND: the positions must be among the points, not their
  // coordinates or the batch dimensions the data shares.
  if (!axis &&
      (hits.dim >= type.getRank() - 1 || hits.dim < g.getInt("batch_dims", 0)))
    return (void)refuse(g, index, hits,
                        "ScatterND reads them as coordinates or batch entries"),
           failure();
  ArrayRef<int64_t> shape =
      axis ? type.getShape() : type.getShape().drop_back();
  SmallVector<int64_t> maskShape(shape.size(), 1);
  maskShape[hits.dim] = shape[hits.dim];
  return g.broadcastTo(g.reshape(hits.mask, maskShape), shape);
}

LogicalResult onnx_import::checkNoHits(GraphImporter &g, Value value,
                                       StringRef what) {
  auto dims = g.hitDims.find(value);
  auto counts = g.hitCounts.find(value);
  if (dims == g.hitDims.end() && counts == g.hitCounts.end())
    return success();
  const Hits &hits =
      dims != g.hitDims.end() ? dims->second : counts->second.hits;
  g.setError();
  return emitError(hits.location)
         << what << " runs over the positions of NonZero '" << hits.node
         << "' (its input is computed at run time), whose number depends "
            "on the data, which tg cannot hold; only a scatter that writes the "
            "hits back may take them"
         << hits.hint;
}
