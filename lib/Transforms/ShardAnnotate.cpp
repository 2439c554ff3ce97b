//===- ShardAnnotate.cpp - tg-shard-annotate
//--------------------------------===//
//
// The presets of the sharding stage: the mesh as a `shard.grid`, and the
// annotations that data parallelism, ZeRO, Megatron-style tensor parallelism
// and sequence parallelism put on a step before tg-shard-propagate. The
// user's own `tg.sharding` annotations are kept and win (priority 0).
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "Projections.h"
#include "TensorParallelPadding.h"
#include "ZeroPadding.h"

#include "tgc/Analysis/ShardingPropagation.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/GlobPattern.h"

namespace tgc {
#define GEN_PASS_DEF_TGSHARDANNOTATE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

#define DEBUG_TYPE "tg-shard-annotate"

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

/// What padding became of the parameters of the first of `count` alike
/// places (attentions, layers): `names` padded, or why not.
struct PaddingOutcome {
  Operation *first = nullptr;
  std::string names, why;
  unsigned count = 0;
};

/// " (N more WHATs alike)" for the `count` - 1 places after the first.
static std::string describeOthers(unsigned count, StringRef what) {
  if (count <= 1)
    return "";
  return " (" + std::to_string(count - 1) + " more " + what.str() +
         (count == 2 ? "" : "s") + " alike)";
}

/// The priorities of DESIGN.md: user, then batch parallelism, then tensor
/// parallelism, then ZeRO (sequence parallelism is as weak as ZeRO, so that
/// a tensor-parallel weight keeps its axis where both want it).
enum Priority : int64_t { User = 0, Batch = 1, Tensor = 2, Zero = 3 };

class StepAnnotator {
public:
  StepAnnotator(func::FuncOp function, const Mesh &mesh, unsigned zero,
                bool sequenceParallel, bool expertParallel,
                ArrayRef<std::string> userShardings)
      : function(function), mesh(mesh), zero(zero),
        sequenceParallel(sequenceParallel), expertParallel(expertParallel),
        userShardings(userShardings), dp(mesh.getAxisIndex("dp")),
        tp(mesh.getAxisIndex("tp")) {}

  LogicalResult run();

private:
  /// `--shard GLOB=AXES,...`: user shardings of the arguments whose tg.name
  /// matches, written on them (they win over the IR's own).
  LogicalResult applyCommandLineShardings();
  LogicalResult checkUserAnnotations();
  LogicalResult annotateBatch();
  LogicalResult annotateTensorParallel();
  /// `--expert-parallel`: every expert stack split on its experts over dp.
  void annotateExperts();
  /// The optimizer state of `update` of `type` not yet decided is stored
  /// as `layout`.
  void layoutStates(OptimizerOpInterface update, Type type,
                    const TensorLayout &layout) {
    for (Value operand : update->getOperands()) {
      auto state = dyn_cast<BlockArgument>(operand);
      if (state && state.getType() == type &&
          getArgumentRole(function, state.getArgNumber()) == Role::State &&
          !decided.contains(state))
        decided[state] = layout;
    }
  }
  /// Whether `op` is in the forward: before the loss, where tg-autodiff
  /// puts the backward after it.
  bool isForward(Operation *op) {
    return !lossOp || op == lossOp || op->isBeforeInBlock(lossOp);
  }
  /// Whether the loss depends on `op`: the forward, without the backward
  /// of earlier micro-batches that isForward takes in.
  bool feedsLoss(Operation *op) {
    if (!lossOp)
      return true;
    if (lossSlice.empty()) {
      SmallVector<Operation *> worklist = {lossOp};
      while (!worklist.empty()) {
        Operation *next = worklist.pop_back_val();
        if (!lossSlice.insert(next).second)
          continue;
        for (Value operand : next->getOperands())
          if (Operation *def = operand.getDefiningOp())
            worklist.push_back(def);
      }
    }
    return lossSlice.contains(op);
  }
  /// The ops of kind OpT the loss depends on, in order.
  template <typename OpT> SmallVector<OpT> getLossOps() {
    SmallVector<OpT> ops;
    function.walk([&](OpT op) {
      if (feedsLoss(op))
        ops.push_back(op);
    });
    return ops;
  }
  /// Remarks that the column-parallel candidates of `keptWhole` (weight,
  /// projection) stay whole, and why.
  void remarkKeptWhole(
      llvm::ArrayRef<std::pair<BlockArgument, Operation *>> keptWhole);
  /// Whether a projection after `column` reads tp on its contraction.
  bool hasRowPartner(Operation *column, ShardingPropagation &propagation);
  /// A parameter added to the output of a column-parallel layer (its bias,
  /// broadcast, or gathered by expert as GPT-OSS's) is split as that output
  /// is: each device stores and updates the part it adds, instead of
  /// slicing the whole one and gathering its update.
  void annotateBiases(ShardingPropagation &propagation);
  LogicalResult annotateZero();
  void annotateSequence();
  /// Pads the dimension of `parameters` from `size` to `padded`
  /// (padParameters) unless the user gave the sharding of one of them.
  /// `names` lists them.
  /// Returns why not, or an empty string.
  std::string padUnlessUserSharded(ArrayRef<PaddedParameter> parameters,
                                   int64_t size, int64_t padded,
                                   std::string &names);
  /// Pads a vocabulary tp does not divide (TensorParallelPadding.h), with a
  /// remark.
  void padVocabularies();
  /// Grouped-query attention whose kv heads tp does not divide: its keys
  /// and values repeated to one per query head, with a remark (Megatron
  /// replicates the kv heads over tp).
  void expandKvHeads();
  /// Pads the heads of multi-head attention tp does not divide
  /// (TensorParallelPadding.h), with a remark.
  void padHeads();
  /// Walks back from `value` (an attention's query, key or value) through
  /// copies, sums and products (a rotary embedding) to the matmuls that
  /// project it (`onProjection`; false stops the walk) and the parameters
  /// broadcast into it (`onBroadcastParam`: a bias, with the map of the
  /// broadcast operand's dimensions to the parameter's). False where
  /// another op is on the way.
  bool walkToProjections(
      Value value, function_ref<bool(MatmulOp)> onProjection,
      function_ref<void(BlockArgument, ArrayRef<int64_t>)> onBroadcastParam);
  /// The parameters of `attention`'s heads, each with its dimension of
  /// `width` (heads times head size) to pad: the query, key and value
  /// projections' columns and biases, the output projection's rows. None
  /// where the ops between them and the attention are not copies, sums and
  /// products of the head space (a rotary embedding), or a projection's
  /// columns are not only these heads' (a fused one tg-split-fused-
  /// projections could not split).
  SmallVector<PaddedParameter> getHeadParameters(AttentionOp attention,
                                                 int64_t width);
  /// Pads the width of a column-parallel layer tp does not divide (an MLP's
  /// hidden width) and the rows of its row-parallel partner
  /// (TensorParallelPadding.h), with a remark.
  void padLayerWidths();
  /// The parameters of a column-parallel layer `column` of output width
  /// `width` and of its row-parallel partners, each with its dimension of
  /// `width`: the columns of `column`'s weight, of its bias and of a gate
  /// multiplied with it (SwiGLU), the rows of the partners' weights. None
  /// where the ops between them are not a bias, a GELU, ReLU, SiLU or tanh,
  /// a product, a cast. `rows` gets the partners' weights.
  SmallVector<PaddedParameter> getLayerWidthParameters(Operation *column,
                                                       int64_t width,
                                                       DenseSet<Value> &rows);
  /// Marks the lookups of tables split on their rows over tp (or by the
  /// user) vocabulary-parallel (kVocabParallelAttrName).
  void markVocabParallel();
  void write();

  std::string argName(unsigned index) {
    if (auto name = function.getArgAttrOfType<StringAttr>(
            index, TGDialect::kNameAttrName))
      return "'" + name.getValue().str() + "'";
    return "#" + std::to_string(index);
  }
  int64_t dimSize(Value value, unsigned dim) {
    return cast<RankedTensorType>(value.getType()).getDimSize(dim);
  }
  /// Whether `axis` can be appended to dimension `dim` of `layout`.
  bool canSplit(Value value, const TensorLayout &layout, unsigned dim,
                unsigned axis) {
    int64_t count = mesh.axisSizes[axis];
    for (unsigned other : layout.dims[dim])
      count *= mesh.axisSizes[other];
    return dimSize(value, dim) % count == 0;
  }
  TensorLayout replicated(Value value, int64_t priority) {
    TensorLayout layout = TensorLayout::getUnset(
        cast<RankedTensorType>(value.getType()).getRank());
    layout.open.assign(layout.dims.size(), false);
    layout.priority = priority;
    return layout;
  }
  /// The parameter a projection's weight reads and the parameter's
  /// dimension of the projection's output columns (`output`) or of its
  /// contraction (-1: none).
  std::optional<std::pair<BlockArgument, int64_t>>
  traceWeightDim(Operation *projection, bool output);
  /// Adds `param`'s dimension `dim` to `parameters` (once per parameter)
  /// when it has `size`; returns whether it has.
  bool addPadded(SmallVectorImpl<PaddedParameter> &parameters,
                 BlockArgument param, int64_t dim, int64_t size) {
    if (dim < 0 || dimSize(param, dim) != size)
      return false;
    if (!llvm::any_of(parameters, [&](const PaddedParameter &known) {
          return known.param == param;
        }))
      parameters.push_back({param, static_cast<unsigned>(dim)});
    return true;
  }
  /// The parameter argument `value` reads, through casts and transposes,
  /// and the map from `value`'s dimensions to the parameter's.
  std::optional<std::pair<BlockArgument, SmallVector<int64_t>>>
  traceParam(Value value);

  func::FuncOp function;
  const Mesh &mesh;
  unsigned zero;
  bool sequenceParallel;
  bool expertParallel;
  ArrayRef<std::string> userShardings;
  std::optional<unsigned> dp, tp;
  Operation *lossOp = nullptr;
  /// The ops the loss depends on (feedsLoss).
  DenseSet<Operation *> lossSlice;
  llvm::MapVector<Value, TensorLayout> decided;
  /// The arguments whose layout the user gave.
  DenseSet<Value> userAnnotated;
};

} // namespace

LogicalResult StepAnnotator::applyCommandLineShardings() {
  MLIRContext *context = function.getContext();
  for (StringRef spec : userShardings) {
    auto [pattern, dimsText] = spec.rsplit('=');
    if (pattern.empty() || pattern.size() == spec.size())
      return function.emitError("--shard wants NAME_GLOB=AXES,AXES,... (one "
                                "entry per dimension; `a+b` for two axes, "
                                "empty for a whole dimension), got '")
             << spec << "'";
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      llvm::consumeError(glob.takeError());
      return function.emitError("--shard: '")
             << pattern << "' is not a valid glob";
    }
    SmallVector<StringRef> dimTexts;
    dimsText.split(dimTexts, ',');
    SmallVector<SmallVector<StringRef>> dims;
    for (StringRef text : dimTexts) {
      SmallVector<StringRef> axes;
      if (!text.trim().empty())
        text.split(axes, '+');
      for (StringRef &axis : axes) {
        axis = axis.trim();
        if (!mesh.getAxisIndex(axis))
          return function.emitError("--shard ")
                 << spec << ": the mesh " << mesh.str() << " has no axis '"
                 << axis << "'";
      }
      dims.push_back(axes);
    }
    bool matched = false;
    for (BlockArgument arg : function.getArguments()) {
      auto name = function.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), TGDialect::kNameAttrName);
      if (!name || !glob->match(name.getValue()))
        continue;
      matched = true;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() != static_cast<int64_t>(dims.size()))
        return function.emitError("--shard ")
               << spec << " gives " << dims.size() << " dimension(s); argument "
               << argName(arg.getArgNumber()) << " is " << arg.getType();
      function.setArgAttr(arg.getArgNumber(), kShardingAttrName,
                          ShardingAttr::get(context, mesh.name, dims, {},
                                            /*priority=*/User));
    }
    if (!matched)
      return function.emitError("--shard ")
             << spec << ": no argument's tg.name matches '" << pattern << "'";
  }
  return success();
}

LogicalResult StepAnnotator::checkUserAnnotations() {
  for (BlockArgument arg : function.getArguments()) {
    ShardingAttr sharding = getArgSharding(function, arg.getArgNumber());
    if (!sharding)
      continue;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() != sharding.getRank())
      return function.emitError("the sharding of argument ")
             << argName(arg.getArgNumber()) << " has " << sharding.getRank()
             << " dimensions, its type " << arg.getType();
    for (StringRef axis : sharding.getUsedAxes())
      if (!mesh.getAxisIndex(axis))
        return function.emitError("the sharding of argument ")
               << argName(arg.getArgNumber()) << " names axis \"" << axis
               << "\", which the mesh " << mesh.str() << " does not have";
    if (!getLocalShape(sharding, type.getShape(), mesh))
      return function.emitError("the sharding of argument ")
             << argName(arg.getArgNumber()) << " splits " << type
             << " into blocks that do not divide it";
    TensorLayout layout = TensorLayout::fromAttr(sharding, mesh);
    // A user sharding an op's rule cannot take (a split softmax or norm
    // dimension, a sliced one) would be undone at once: say so instead.
    for (OpOperand &use : arg.getUses()) {
      auto ruled = dyn_cast<ShardingRuleOpInterface>(use.getOwner());
      if (!ruled)
        continue;
      // A table split on its rows: a vocabulary-parallel lookup.
      if (isa<EmbeddingOp>(use.getOwner()) && use.getOperandNumber() == 0 &&
          !layout.dims[0].empty())
        use.getOwner()->setAttr(kVocabParallelAttrName,
                                UnitAttr::get(function.getContext()));
      ShardingRule rule = ruled.getShardingRule();
      restrictRuleForPartitioning(use.getOwner(), rule);
      for (auto [dim, factors] :
           llvm::enumerate(rule.operandFactors[use.getOperandNumber()]))
        for (int64_t factor : factors)
          if (!layout.dims[dim].empty() &&
              rule.factorKinds[factor] == FactorKind::NeedReplication) {
            InFlightDiagnostic diag =
                use.getOwner()->emitError()
                << "needs dimension " << dim << " of operand #"
                << use.getOperandNumber() << " whole, but the user sharding "
                << sharding << " of argument " << argName(arg.getArgNumber())
                << " splits it";
            diag.attachNote(function.getLoc()) << "the sharding is here";
            return failure();
          }
    }
    decided[arg] = layout;
    userAnnotated.insert(arg);
  }
  return success();
}

LogicalResult StepAnnotator::annotateBatch() {
  if (!dp)
    return success();
  for (BlockArgument arg : function.getArguments()) {
    std::optional<Role> role = getArgumentRole(function, arg.getArgNumber());
    if (decided.contains(arg) || (role != Role::Input && role != Role::Label))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 0)
      continue;
    TensorLayout layout = replicated(arg, Batch);
    if (!canSplit(arg, layout, 0, *dp))
      return function.emitError("the batch dimension of ")
             << stringifyRole(*role) << " " << argName(arg.getArgNumber())
             << " has size " << type.getDimSize(0)
             << ", which dp=" << mesh.axisSizes[*dp] << " does not divide";
    layout.dims[0].push_back(*dp);
    decided[arg] = layout;
    // Micro-batches slice the batch: each slice is split over dp too (the
    // slice itself gathers the batch, which is small next to what it feeds).
    for (Operation *user : arg.getUsers())
      if (auto slice = dyn_cast<SliceOp>(user)) {
        TensorLayout part = replicated(slice.getResult(), Batch);
        if (canSplit(slice.getResult(), part, 0, *dp)) {
          part.dims[0].push_back(*dp);
          decided[slice.getResult()] = part;
        }
      }
  }
  return success();
}

std::optional<std::pair<BlockArgument, SmallVector<int64_t>>>
StepAnnotator::traceParam(Value value) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  auto dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  while (Operation *def = value.getDefiningOp()) {
    if (auto transpose = dyn_cast<TransposeOp>(def)) {
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      for (int64_t &dim : dims)
        dim = dim < 0 ? dim : permutation[dim];
      value = transpose.getOperand();
    } else if (auto convert = dyn_cast<ConvertOp>(def)) {
      value = convert.getOperand();
    } else if (auto slice = dyn_cast<SliceOp>(def)) {
      // A part of a parameter (tg-split-fused-projections' slices of a
      // fused weight): the dimensions keep their places.
      value = slice.getOperand();
    } else if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      // Only dimensions of size 1 dropped or added: the others in order.
      ArrayRef<int64_t> from =
          cast<RankedTensorType>(reshape.getOperand().getType()).getShape();
      ArrayRef<int64_t> to =
          cast<RankedTensorType>(reshape.getType()).getShape();
      SmallVector<int64_t> fromDims, toDims;
      for (auto [dim, size] : llvm::enumerate(from))
        if (size != 1)
          fromDims.push_back(dim);
      for (auto [dim, size] : llvm::enumerate(to))
        if (size != 1)
          toDims.push_back(dim);
      if (fromDims.size() != toDims.size() ||
          llvm::any_of(llvm::zip(fromDims, toDims), [&](auto pair) {
            return from[std::get<0>(pair)] != to[std::get<1>(pair)];
          }))
        return std::nullopt;
      for (int64_t &dim : dims) {
        auto it = llvm::find(toDims, dim);
        // A dimension of size 1 maps to none; it is never split.
        dim = it == toDims.end() ? -1 : fromDims[it - toDims.begin()];
      }
      value = reshape.getOperand();
    } else {
      return std::nullopt;
    }
  }
  auto arg = cast<BlockArgument>(value);
  if (getArgumentRole(function, arg.getArgNumber()) != Role::Param)
    return std::nullopt;
  return std::make_pair(arg, dims);
}

std::optional<std::pair<BlockArgument, int64_t>>
StepAnnotator::traceWeightDim(Operation *projection, bool output) {
  auto traced = traceParam(projection->getOperand(1));
  if (!traced)
    return std::nullopt;
  int64_t rank = traced->second.size();
  bool last = output != getTransposeB(projection);
  return std::make_pair(traced->first,
                        traced->second[last ? rank - 1 : rank - 2]);
}

/// The tokens of `labels` whose label is not `ignoreIndex`, as an f32
/// scalar.
static Value countTokens(OpBuilder &b, Location loc, Value labels,
                         IntegerAttr ignoreIndex) {
  auto type = cast<RankedTensorType>(labels.getType());
  Value ignored = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          type, Attribute(IntegerAttr::get(type.getElementType(),
                                           ignoreIndex.getInt()))));
  Value counted = CompareOp::create(b, loc, type.clone(b.getI1Type()),
                                    CompareDirection::NE, labels, ignored);
  Value ones = ConvertOp::create(b, loc, type.clone(b.getF32Type()), counted);
  return ReduceOp::create(
      b, loc, RankedTensorType::get({}, b.getF32Type()), ReduceKind::Sum, ones,
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
}

/// `value` converted to `type` where it has another element type.
static Value convertTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return ConvertOp::create(b, loc, type, value);
}

/// A mean cross-entropy with an ignore_index divides by the tokens that are
/// not ignored, a count only the whole batch knows: over split tokens (dp)
/// the loss would keep its tokens whole on every device, gathering the
/// logits (a PyTorch export's ignore_index = -100 on every loss). Each such
/// loss and gradient becomes the sum over the tokens and that count, which
/// the partitioner then reduces as partial sums (two scalar all-reduces in
/// the forward; the gradient reads the same count): loss = sum / count, and
/// the gradient the summed loss's for dloss / count. The same numbers on
/// one device.
static void splitIgnoredMeans(func::FuncOp function) {
  SmallVector<Operation *> means;
  function.walk([&](Operation *op) {
    if (auto loss = dyn_cast<CrossEntropyOp>(op);
        loss && loss.getReduction() == LossReduction::Mean &&
        loss.getIgnoreIndexAttr())
      means.push_back(op);
    if (auto grad = dyn_cast<CrossEntropyGradOp>(op);
        grad && grad.getReduction() == LossReduction::Mean &&
        grad.getIgnoreIndexAttr())
      means.push_back(op);
  });
  auto f32 = RankedTensorType::get({}, Float32Type::get(function.getContext()));
  // The count of each labels tensor, made once: the gradient reuses the
  // forward's (and its all-reduce).
  DenseMap<std::pair<Value, int64_t>, Value> counts;
  for (Operation *op : means) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Operation *previous = op->getPrevNode();
    auto getCount = [&](Value labels, IntegerAttr ignoreIndex) {
      Value &count = counts[{labels, ignoreIndex.getInt()}];
      if (!count || count.getParentBlock() != op->getBlock())
        count = countTokens(b, loc, labels, ignoreIndex);
      return count;
    };
    Operation *sum;
    if (auto loss = dyn_cast<CrossEntropyOp>(op)) {
      Value count = getCount(loss.getLabels(), loss.getIgnoreIndexAttr());
      auto summed = CrossEntropyOp::create(
          b, loc, loss.getLoss().getType(), loss.getLogsumexp().getType(),
          LossReduction::Sum, loss.getLogits(), loss.getLabels(),
          loss.getIgnoreIndexAttr());
      Value mean = DivOp::create(
          b, loc, convertTo(b, loc, summed.getLoss(), f32), count);
      loss.getLoss().replaceAllUsesWith(
          convertTo(b, loc, mean, loss.getLoss().getType()));
      loss.getLogsumexp().replaceAllUsesWith(summed.getLogsumexp());
      sum = summed;
    } else {
      auto grad = cast<CrossEntropyGradOp>(op);
      Value count = getCount(grad.getLabels(), grad.getIgnoreIndexAttr());
      Value gradLoss = grad.getGradLoss();
      Value weight = convertTo(
          b, loc,
          DivOp::create(b, loc, convertTo(b, loc, gradLoss, f32), count),
          gradLoss.getType());
      auto summed = CrossEntropyGradOp::create(
          b, loc, grad.getType(), LossReduction::Sum, weight, grad.getLogits(),
          grad.getLabels(), grad.getLogsumexp(), grad.getIgnoreIndexAttr());
      grad.getResult().replaceAllUsesWith(summed.getResult());
      sum = summed;
    }
    // The new ops belong where the loss was (its stage, micro-batch and
    // phase); the summed loss keeps its other attributes (an id bound).
    for (Operation &made :
         llvm::make_range(previous ? std::next(previous->getIterator())
                                   : op->getBlock()->begin(),
                          op->getIterator()))
      copyPipelineAttrs(op, &made);
    for (NamedAttribute attr : op->getDiscardableAttrs())
      sum->setAttr(attr.getName(), attr.getValue());
    op->erase();
  }
}

/// The loss `matmul`'s result reaches before any other matmul (the output
/// projection's), or null.
static CrossEntropyOp getLossOf(Operation *projection) {
  SmallVector<Operation *> worklist(projection->getUsers().begin(),
                                    projection->getUsers().end());
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!seen.insert(op).second || seen.size() > 64 || isProjection(op))
      continue;
    if (auto loss = dyn_cast<CrossEntropyOp>(op))
      return loss;
    worklist.append(op->getUsers().begin(), op->getUsers().end());
  }
  return nullptr;
}

bool StepAnnotator::hasRowPartner(Operation *column,
                                  ShardingPropagation &propagation) {
  SmallVector<Operation *> worklist(column->getUsers().begin(),
                                    column->getUsers().end());
  DenseSet<Operation *> seen;
  while (!worklist.empty() && seen.size() < 256) {
    Operation *op = worklist.pop_back_val();
    if (!seen.insert(op).second || !isForward(op))
      continue;
    if (!isProjection(op) || !traceParam(op->getOperand(1))) {
      worklist.append(op->getUsers().begin(), op->getUsers().end());
      continue;
    }
    ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
    const TensorLayout &lhs = propagation.getLayout(op->getOperand(0));
    for (auto [dim, factors] : llvm::enumerate(rule.operandFactors[0]))
      for (int64_t factor : factors)
        if (rule.isReductionFactor(factor) &&
            llvm::is_contained(lhs.dims[dim], *tp))
          return true;
  }
  return false;
}

std::string
StepAnnotator::padUnlessUserSharded(ArrayRef<PaddedParameter> parameters,
                                    int64_t size, int64_t padded,
                                    std::string &names) {
  for (const PaddedParameter &parameter : parameters)
    names +=
        (names.empty() ? "" : ", ") + argName(parameter.param.getArgNumber());
  if (llvm::any_of(parameters, [&](const PaddedParameter &parameter) {
        return userAnnotated.contains(parameter.param);
      }))
    return "the user gave the sharding of " + names;
  return padParameters(function, size, padded, parameters);
}

void StepAnnotator::padVocabularies() {
  int64_t count = mesh.axisSizes[*tp];
  SmallVector<CrossEntropyOp> losses;
  function.walk([&](CrossEntropyOp loss) {
    if (isForward(loss))
      losses.push_back(loss);
  });
  for (CrossEntropyOp loss : losses) {
    int64_t classes = loss.getLogits().getType().getShape().back();
    if (classes % count == 0 || classes < count)
      continue;
    // The parameters with a row or column per class: the output projection
    // that reaches the loss, and the float tables of the lookups.
    SmallVector<PaddedParameter> parameters;
    function.walk([&](MatmulOp matmul) {
      auto weight = traceWeightDim(matmul, /*output=*/true);
      if (weight && isForward(matmul) && getLossOf(matmul) == loss)
        addPadded(parameters, weight->first, weight->second, classes);
    });
    function.walk([&](EmbeddingOp lookup) {
      auto traced = traceParam(lookup.getTable());
      if (traced && isForward(lookup) &&
          isa<FloatType>(getElementTypeOrSelf(traced->first.getType())))
        addPadded(parameters, traced->first, traced->second[0], classes);
    });
    if (parameters.empty())
      continue;
    int64_t padded = llvm::divideCeil(classes, count) * count;
    std::string names;
    std::string why = padUnlessUserSharded(parameters, classes, padded, names);
    if (!why.empty()) {
      loss->emitRemark("tp=") << count << " does not divide the " << classes
                              << " classes, and they cannot be padded (" << why
                              << "): the vocabulary stays whole";
      continue;
    }
    loss->emitRemark("tp=")
        << count << ": the " << classes << " classes are padded to " << padded
        << " (" << padded - classes << " zero rows or columns in " << names
        << ") so that tp splits the vocabulary; the loss masks the padding "
           "out";
  }
}

bool StepAnnotator::walkToProjections(
    Value value, function_ref<bool(MatmulOp)> onProjection,
    function_ref<void(BlockArgument, ArrayRef<int64_t>)> onBroadcastParam) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    Operation *def = value.getDefiningOp();
    if (!def || seen.size() > 64)
      return false;
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      if (!onProjection(matmul))
        return false;
      continue;
    }
    if (auto broadcast = dyn_cast<BroadcastInDimOp>(def)) {
      if (auto traced = traceParam(broadcast.getOperand()))
        onBroadcastParam(traced->first, traced->second);
      continue;
    }
    if (isa<ConstantOp>(def))
      continue;
    if (!isa<TransposeOp, ReshapeOp, ConvertOp, AddOp, SubOp, MulOp, NegOp,
             SliceOp, ConcatOp>(def))
      return false;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  return true;
}

SmallVector<PaddedParameter>
StepAnnotator::getHeadParameters(AttentionOp attention, int64_t width) {
  SmallVector<PaddedParameter> parameters;
  auto add = [&](BlockArgument param, int64_t dim) {
    return addPadded(parameters, param, dim, width);
  };
  // Back from the query, key and value to their projections; a bias over
  // the heads' columns, or a table broadcast along the heads (a rotary
  // embedding's), which the padding repeats.
  for (Value operand :
       {attention.getQuery(), attention.getKey(), attention.getValue()}) {
    unsigned projections = 0;
    bool walked = walkToProjections(
        operand,
        [&](MatmulOp matmul) {
          auto weight = traceWeightDim(matmul, /*output=*/true);
          ++projections;
          return weight && add(weight->first, weight->second);
        },
        [&](BlockArgument param, ArrayRef<int64_t> dims) {
          for (int64_t dim : dims)
            add(param, dim);
        });
    // Keys and values need not come from projections of these heads
    // (repeated kv heads): they are padded with zero heads where the
    // attention reads them.
    if (!walked || (projections == 0 && operand == attention.getQuery()))
      return {};
  }
  // Forward from the output, through copies, to the output projection.
  Value output = attention.getOutput();
  while (true) {
    SmallVector<Operation *> users;
    for (Operation *user : output.getUsers())
      if (feedsLoss(user))
        users.push_back(user);
    if (users.size() != 1)
      return {};
    if (auto matmul = dyn_cast<MatmulOp>(users.front())) {
      auto weight = traceWeightDim(matmul, /*output=*/false);
      if (matmul.getLhs() != output || !weight ||
          !add(weight->first, weight->second))
        return {};
      break;
    }
    if (!isa<TransposeOp, ReshapeOp, ConvertOp>(users.front()))
      return {};
    output = users.front()->getResult(0);
  }
  return parameters;
}

/// `value` [b, kv, s, d] with each head repeated `group` times in place:
/// [b, kv * group, s, d] (a broadcast and a reshape, before `like`).
static Value repeatHeads(OpBuilder &builder, Value value, int64_t group,
                         Operation *like) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  Location loc = value.getLoc();
  auto repeated = BroadcastInDimOp::create(
      builder, loc, type.clone({shape[0], shape[1], group, shape[2], shape[3]}),
      value, builder.getDenseI64ArrayAttr({0, 1, 3, 4}));
  auto joined = ReshapeOp::create(
      builder, loc,
      type.clone({shape[0], shape[1] * group, shape[2], shape[3]}), repeated);
  copyPipelineAttrs(like, repeated);
  copyPipelineAttrs(like, joined);
  return joined;
}

void StepAnnotator::expandKvHeads() {
  int64_t count = mesh.axisSizes[*tp];
  PaddingOutcome outcome;
  std::pair<int64_t, int64_t> heads;
  for (AttentionOp attention : getLossOps<AttentionOp>()) {
    int64_t queries = attention.getQuery().getType().getShape()[1];
    int64_t kv = attention.getKey().getType().getShape()[1];
    int64_t group = queries / kv;
    // tp splits the kv heads, or a single kv head's queries; more kv heads
    // than one it does not divide would need each group split apart.
    if (kv == queries || kv % count == 0 || (kv == 1 && group % count == 0))
      continue;
    Value key = attention.getKey(), value = attention.getValue();
    // The kv projections stay whole (each device repeats the kv heads its
    // query heads read), unless the user said otherwise.
    for (Value kvOperand : {key, value})
      walkToProjections(
          kvOperand,
          [&](MatmulOp matmul) {
            if (auto traced = traceParam(matmul.getRhs()))
              decided.try_emplace(traced->first,
                                  replicated(traced->first, Tensor));
            return true;
          },
          [&](BlockArgument param, ArrayRef<int64_t>) {
            decided.try_emplace(param, replicated(param, Tensor));
          });
    OpBuilder builder(attention);
    Value fullKey = repeatHeads(builder, key, group, attention);
    Value fullValue = repeatHeads(builder, value, group, attention);
    attention.getKeyMutable().assign(fullKey);
    attention.getValueMutable().assign(fullValue);
    // Its gradients: of the repeated keys and values, summed over each
    // group back to the kv heads by a product with the 0/1 matrix of the
    // heads' groups (so that, with the heads split, each device's sum is a
    // partial one, all-reduced as Megatron does for replicated kv heads,
    // instead of the repeated gradients gathered).
    for (Operation *user : llvm::to_vector(key.getUsers())) {
      // The bias's gradient reads the repeated heads too (its result is the
      // bias's shape).
      if (auto biasGrad = dyn_cast<AttentionBiasGradOp>(user);
          biasGrad && biasGrad.getKey() == key &&
          biasGrad.getValue() == value) {
        biasGrad.getKeyMutable().assign(fullKey);
        biasGrad.getValueMutable().assign(fullValue);
        continue;
      }
      auto grad = dyn_cast<AttentionGradOp>(user);
      if (!grad || grad.getKey() != key || grad.getValue() != value)
        continue;
      grad.getKeyMutable().assign(fullKey);
      grad.getValueMutable().assign(fullValue);
      builder.setInsertionPointAfter(grad);
      for (Value result :
           SmallVector<Value>{grad.getGradKey(), grad.getGradValue()}) {
        auto type = cast<RankedTensorType>(result.getType());
        ArrayRef<int64_t> shape = type.getShape();
        result.setType(cast<RankedTensorType>(result == grad.getGradKey()
                                                  ? fullKey.getType()
                                                  : fullValue.getType()));
        Location loc = grad.getLoc();
        int64_t heads = shape[1] * group;
        auto element = cast<FloatType>(type.getElementType());
        SmallVector<APFloat> ones(
            heads * shape[1], APFloat::getZero(element.getFloatSemantics()));
        for (int64_t h = 0; h < heads; ++h)
          ones[h * shape[1] + h / group] =
              APFloat::getOne(element.getFloatSemantics());
        auto groups = ConstantOp::create(
            builder, loc,
            DenseElementsAttr::get(
                RankedTensorType::get({heads, shape[1]}, element), ones));
        auto headsLast = TransposeOp::create(
            builder, loc, type.clone({shape[0], shape[2], shape[3], heads}),
            result, ArrayRef<int64_t>{0, 2, 3, 1});
        auto summed = MatmulOp::create(
            builder, loc, type.clone({shape[0], shape[2], shape[3], shape[1]}),
            headsLast, groups, /*transpose_a=*/false, /*transpose_b=*/false);
        auto back = TransposeOp::create(builder, loc, type, summed,
                                        ArrayRef<int64_t>{0, 3, 1, 2});
        for (Operation *made : {groups.getOperation(), headsLast.getOperation(),
                                summed.getOperation(), back.getOperation()})
          copyPipelineAttrs(grad, made);
        result.replaceAllUsesExcept(back, headsLast);
      }
    }
    if (!outcome.count++) {
      outcome.first = attention;
      heads = {queries, kv};
    }
  }
  if (outcome.count)
    outcome.first->emitRemark("tp=")
        << count << " does not divide the " << heads.second << " kv heads (of "
        << heads.first / heads.second
        << " query heads each): the keys and values are repeated to one per "
           "query head, each device's share computed from the whole kv "
           "projections (Megatron's replicated kv heads)"
        << describeOthers(outcome.count, "attention");
}

void StepAnnotator::padHeads() {
  int64_t count = mesh.axisSizes[*tp];
  // One remark per number of heads and outcome: the first attention, its
  // parameters (or why they were not padded), and how many attentions.
  llvm::MapVector<std::pair<int64_t, unsigned>, PaddingOutcome> outcomes;
  for (AttentionOp attention : getLossOps<AttentionOp>()) {
    // Grouped-query attention is not padded (tp splits its kv heads here;
    // expandKvHeads repeated the others to a kv head per query head), nor a
    // single head.
    ArrayRef<int64_t> query = attention.getQuery().getType().getShape();
    int64_t heads = query[1], headSize = query[3];
    if (heads % count == 0 || (heads + count - 1) / count == heads ||
        attention.getKey().getType().getShape()[1] != heads ||
        attention.getValue().getType().getShape()[3] != headSize)
      continue;
    SmallVector<PaddedParameter> parameters =
        getHeadParameters(attention, heads * headSize);
    if (parameters.empty())
      continue;
    int64_t padded = llvm::divideCeil(heads, count) * count;
    std::string names;
    std::string why = padUnlessUserSharded(parameters, heads * headSize,
                                           padded * headSize, names);
    PaddingOutcome &outcome = outcomes[{heads, why.empty() ? 1u : 0u}];
    if (!outcome.count++)
      outcome = {attention, names, why, 1};
  }
  for (auto &[key, outcome] : outcomes) {
    auto [heads, done] = key;
    if (!done) {
      outcome.first->emitRemark("tp=")
          << count << " does not divide the " << heads
          << " heads, and they cannot be padded (" << outcome.why << ")"
          << describeOthers(outcome.count, "attention");
      continue;
    }
    int64_t padded = llvm::divideCeil(heads, count) * count;
    int64_t headSize =
        cast<AttentionOp>(outcome.first).getQuery().getType().getShape()[3];
    outcome.first->emitRemark("tp=")
        << count << ": the " << heads << " heads of " << outcome.count
        << (outcome.count == 1 ? " attention are" : " attentions are")
        << " padded to " << padded << " with " << padded - heads
        << (padded - heads == 1 ? " zero head (" : " zero heads (")
        << (padded - heads) * headSize << " more columns or rows in "
        << outcome.names << (outcome.count == 1 ? "" : " and the others'")
        << ") so that tp splits them; the padded heads stay zero";
  }
}

SmallVector<PaddedParameter>
StepAnnotator::getLayerWidthParameters(Operation *column, int64_t width,
                                       DenseSet<Value> &rows) {
  SmallVector<PaddedParameter> parameters;
  auto add = [&](BlockArgument param, int64_t dim) {
    return addPadded(parameters, param, dim, width);
  };
  // A column-parallel projection: the columns of its weight.
  auto addColumns = [&](Operation *projection) {
    auto weight = traceWeightDim(projection, /*output=*/true);
    return weight && add(weight->first, weight->second);
  };
  // A bias: the broadcast parameter's dimension of `width`, or the columns
  // of a table whose rows are looked up (each expert's bias).
  auto addBias = [&](Value value) {
    auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
    auto lookup = value.getDefiningOp<EmbeddingOp>();
    auto traced = broadcast ? traceParam(broadcast.getOperand())
                  : lookup  ? traceParam(lookup.getTable())
                            : std::nullopt;
    if (!traced)
      return false;
    ArrayRef<int64_t> dims = traced->second;
    return llvm::any_of(lookup ? dims.drop_front() : dims,
                        [&](int64_t dim) { return add(traced->first, dim); });
  };
  // The other factor of a product: a scale, or a gate (a projection, its
  // bias and activation).
  auto addGate = [&](Value value) {
    while (Operation *def = value.getDefiningOp()) {
      if (isProjection(def))
        return addColumns(def);
      if (auto broadcast = dyn_cast<BroadcastInDimOp>(def))
        return cast<RankedTensorType>(broadcast.getOperand().getType())
                   .getRank() == 0;
      if (isa<AddOp>(def)) {
        bool biasFirst = addBias(def->getOperand(0));
        if (!biasFirst && !addBias(def->getOperand(1)))
          return false;
        value = def->getOperand(biasFirst ? 1 : 0);
        continue;
      }
      if (!isa<GeluOp, ReluOp, SiluOp, TanhOp, ConvertOp>(def))
        return false;
      value = def->getOperand(0);
    }
    return false;
  };
  if (!addColumns(column))
    return {};
  // Forward from the layer's output to the layers that contract its width.
  SmallVector<Value> worklist = {column->getResult(0)};
  DenseSet<Value> seen;
  unsigned partners = 0;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (seen.size() > 64)
      return {};
    for (Operation *user : value.getUsers()) {
      if (!feedsLoss(user))
        continue;
      if (isProjection(user)) {
        auto weight = traceWeightDim(user, /*output=*/false);
        if (user->getOperand(0) != value || !weight ||
            !add(weight->first, weight->second))
          return {};
        rows.insert(weight->first);
        ++partners;
        continue;
      }
      if (auto sum = dyn_cast<AddOp>(user)) {
        if (!addBias(sum.getOperand(sum.getOperand(0) == value ? 1 : 0)))
          return {};
      } else if (auto product = dyn_cast<MulOp>(user)) {
        if (product.getOperand(0) != product.getOperand(1) &&
            !addGate(
                product.getOperand(product.getOperand(0) == value ? 1 : 0)))
          return {};
      } else if (!isa<GeluOp, ReluOp, SiluOp, TanhOp, ConvertOp>(user)) {
        return {};
      }
      worklist.push_back(user->getResult(0));
    }
  }
  if (partners == 0)
    return {};
  return parameters;
}

void StepAnnotator::padLayerWidths() {
  int64_t count = mesh.axisSizes[*tp];
  // One remark per width and outcome, as for the heads.
  llvm::MapVector<std::pair<int64_t, unsigned>, PaddingOutcome> outcomes;
  // The row-parallel partners padded: not taken for column-parallel layers
  // after (Megatron alternates).
  DenseSet<Value> rows;
  // Dense layers and experts' grouped products alike.
  SmallVector<Operation *> projections;
  function.walk([&](Operation *op) {
    if (isProjection(op) && feedsLoss(op))
      projections.push_back(op);
  });
  for (Operation *projection : projections) {
    auto weight = traceWeightDim(projection, /*output=*/true);
    if (!weight || weight->second < 0 || rows.contains(weight->first) ||
        decided.contains(weight->first))
      continue;
    int64_t width = dimSize(weight->first, weight->second);
    if (width % count == 0 || (width + count - 1) / count == width)
      continue;
    DenseSet<Value> partners;
    SmallVector<PaddedParameter> parameters =
        getLayerWidthParameters(projection, width, partners);
    if (parameters.empty())
      continue;
    int64_t padded = llvm::divideCeil(width, count) * count;
    std::string names;
    std::string why = padUnlessUserSharded(parameters, width, padded, names);
    if (why.empty())
      rows.insert(partners.begin(), partners.end());
    PaddingOutcome &outcome = outcomes[{width, why.empty() ? 1u : 0u}];
    if (!outcome.count++)
      outcome = {projection, names, why, 1};
  }
  for (auto &[key, outcome] : outcomes) {
    auto [width, done] = key;
    if (!done) {
      outcome.first->emitRemark("tp=")
          << count << " does not divide the width " << width
          << " of a column-parallel layer, and it cannot be padded ("
          << outcome.why << ")" << describeOthers(outcome.count, "layer");
      continue;
    }
    int64_t padded = llvm::divideCeil(width, count) * count;
    outcome.first->emitRemark("tp=")
        << count << ": the width " << width << " of " << outcome.count
        << (outcome.count == 1 ? " column-parallel layer is"
                               : " column-parallel layers is")
        << " padded to " << padded << ": " << padded - width
        << (padded - width == 1 ? " zero column" : " zero columns")
        << " in the weights and biases, as many zero rows in "
           "the row-parallel partners' ("
        << outcome.names << (outcome.count == 1 ? "" : " and the others'")
        << ") so that tp splits it; the padding stays zero";
  }
}

LogicalResult StepAnnotator::annotateTensorParallel() {
  if (!tp)
    return success();
  padVocabularies();
  expandKvHeads();
  padHeads();
  padLayerWidths();
  unsigned splitWeights = 0, splitLayers = 0;
  // Column-parallel candidates without a row-parallel partner: kept whole,
  // which a remark says (never silently replicated).
  SmallVector<std::pair<BlockArgument, Operation *>> keptWhole;
  // Weights tp divides no dimension of that it would split (the weight, its
  // dimension, the matmul): kept whole, which a remark says, or an error
  // when no layer is split.
  struct Indivisible {
    BlockArgument weight;
    unsigned dim;
    Operation *projection;
  };
  SmallVector<Indivisible> indivisible;
  // Megatron's layout, found on the data flow: a matmul whose input does not
  // carry the tp axis on its contraction splits its weight's output
  // dimension (column-parallel); one whose input does, after propagating the
  // decisions so far, splits its weight's input dimension (row-parallel),
  // which leaves partial sums to all-reduce. The experts' grouped products
  // are split so too (each expert's matrix by the same columns or rows, as
  // Megatron's expert tensor parallelism), the experts kept whole.
  ShardingPropagation propagation(function, mesh);
  // Decided on the forward alone: the backward would carry the split of a
  // layer's output back to the input of the same layer.
  propagation.setLastOp(lossOp);
  for (auto &[value, layout] : decided)
    propagation.annotate(value, layout);
  // Parameters not decided yet stay whole while deciding: tp reaches a
  // row-parallel layer's input through the activations only, never back
  // through another parameter (a tied embedding would otherwise carry it
  // around the model).
  for (BlockArgument arg : function.getArguments())
    if (!decided.contains(arg) &&
        getArgumentRole(function, arg.getArgNumber()) == Role::Param)
      propagation.annotate(arg, replicated(arg, Zero));
  propagation.run();
  DenseSet<Value> embedded;
  function.walk([&](EmbeddingOp embedding) {
    if (auto traced = traceParam(embedding.getTable()))
      embedded.insert(traced->first);
  });
  function.walk([&](Operation *projection) {
    if (!isProjection(projection))
      return;
    auto traced = traceParam(projection->getOperand(1));
    if (!traced)
      return;
    auto [weight, dims] = *traced;
    if (decided.contains(weight))
      return;
    ShardingRule rule =
        cast<ShardingRuleOpInterface>(projection).getShardingRule();
    int64_t rhsRank = dims.size();
    // The rhs's contraction and output dimensions (its last two).
    bool transposeB = getTransposeB(projection);
    int64_t kDim = transposeB ? rhsRank - 1 : rhsRank - 2;
    int64_t nDim = transposeB ? rhsRank - 2 : rhsRank - 1;
    if (kDim < 0 || rule.operandFactors[1][kDim].size() != 1)
      return;
    int64_t kFactor = rule.operandFactors[1][kDim].front();
    propagation.runIncremental(Tensor);
    const TensorLayout &lhs = propagation.getLayout(projection->getOperand(0));
    bool rowParallel = false;
    for (auto [dim, factors] : llvm::enumerate(rule.operandFactors[0]))
      if (llvm::is_contained(factors, kFactor) &&
          llvm::is_contained(lhs.dims[dim], *tp))
        rowParallel = true;
    // The output projection is column-parallel over the vocabulary when a
    // loss reads its classes: Megatron's vocabulary-parallel loss, with no
    // row-parallel partner (tg-partition combines the devices' classes).
    // That holds even where tp reaches the projection's input on its hidden
    // dimension (a model whose attention tp does not split, GPT-2 1.5b's 25
    // heads): the input is gathered, the vocabulary split. Another
    // projection of an embedding table stays whole.
    CrossEntropyOp loss = getLossOf(projection);
    bool outputProjection = loss && dims[nDim] >= 0 &&
                            dimSize(weight, dims[nDim]) ==
                                loss.getLogits().getType().getShape().back();
    if (outputProjection)
      rowParallel = false;
    if (rowParallel)
      loss = nullptr;
    TensorLayout layout = replicated(weight, Tensor);
    if (dims[rowParallel ? kDim : nDim] < 0)
      return;
    unsigned splitDim = dims[rowParallel ? kDim : nDim];
    if (!rowParallel && !outputProjection &&
        (loss || embedded.contains(weight)))
      return;
    if (!canSplit(weight, layout, splitDim, *tp)) {
      if (llvm::none_of(indivisible, [&](const Indivisible &known) {
            return known.weight == weight;
          }))
        indivisible.push_back({weight, splitDim, projection});
      return;
    }
    layout.dims[splitDim].push_back(*tp);
    // A column-parallel layer needs its row-parallel partner: a later
    // matmul that then reads the tp axis on its contraction. Without one
    // (GPT-2's fused QKV, whose slices gather the split output) the layer
    // stays whole rather than gather what it split.
    if (!rowParallel && !outputProjection) {
      ShardingPropagation trial = propagation;
      trial.annotate(weight, layout);
      trial.runIncremental(Tensor);
      if (!hasRowPartner(projection, trial)) {
        if (llvm::none_of(keptWhole, [&](const auto &entry) {
              return entry.first == weight;
            }))
          keptWhole.emplace_back(weight, projection);
        return;
      }
    }
    decided[weight] = layout;
    propagation.annotate(weight, layout);
    ++splitWeights;
    if (!outputProjection)
      ++splitLayers;
  });
  // Megatron's vocabulary-parallel embedding: a float table with a row per
  // class of a loss is split on its rows, as the output projection is on
  // the classes (a tied table already is).
  SmallVector<int64_t> vocabularies;
  function.walk([&](CrossEntropyOp loss) {
    if (isForward(loss))
      vocabularies.push_back(loss.getLogits().getType().getShape().back());
  });
  function.walk([&](EmbeddingOp embedding) {
    auto traced = traceParam(embedding.getTable());
    if (!traced || !isForward(embedding))
      return;
    auto [table, dims] = *traced;
    auto type = cast<RankedTensorType>(table.getType());
    if (decided.contains(table) || dims[0] < 0 ||
        !isa<FloatType>(type.getElementType()) ||
        !llvm::is_contained(vocabularies, type.getDimSize(dims[0])))
      return;
    TensorLayout layout = replicated(table, Tensor);
    if (!canSplit(table, layout, dims[0], *tp))
      return;
    layout.dims[dims[0]].push_back(*tp);
    decided[table] = layout;
    propagation.annotate(table, layout);
    ++splitWeights;
  });
  if (splitWeights != 0)
    annotateBiases(propagation);
  if (!keptWhole.empty())
    remarkKeptWhole(keptWhole);
  // A padded vocabulary alone does not make tp worth it: a layer tp
  // divides no dimension of is an error when no layer is split.
  if (indivisible.empty())
    return success();
  auto [weight, dim, projection] = indivisible.front();
  if (splitLayers == 0)
    return function.emitError("tp=")
           << mesh.axisSizes[*tp] << " divides no dimension it would split: "
           << "dimension " << dim << " of parameter "
           << argName(weight.getArgNumber()) << " " << weight.getType()
           << " is the first";
  projection->emitRemark("tp=")
      << mesh.axisSizes[*tp]
      << " divides none of the dimensions it would split " << indivisible.size()
      << (indivisible.size() == 1 ? " weight" : " weights")
      << " on: they stay whole, replicated over tp ("
      << argName(weight.getArgNumber())
      << (indivisible.size() == 1 ? "" : " first") << ": dimension " << dim
      << " of " << weight.getType() << ")";
  return success();
}

void StepAnnotator::remarkKeptWhole(
    ArrayRef<std::pair<BlockArgument, Operation *>> keptWhole) {
  int64_t count = mesh.axisSizes[*tp];
  // The usual cause: attention whose heads tp cannot split (one head, or
  // heads that could not be padded), which needs its projections' outputs
  // whole. (Grouped-query attention whose kv heads tp does not divide was
  // repeated to multi-head by expandKvHeads.)
  SmallVector<int64_t> heads;
  for (AttentionOp attention : getLossOps<AttentionOp>()) {
    int64_t n = attention.getQuery().getType().getShape()[1];
    if (n % count != 0 && !llvm::is_contained(heads, n))
      heads.push_back(n);
  }
  InFlightDiagnostic remark = keptWhole.front().second->emitRemark("tp=");
  remark << count << " keeps " << keptWhole.size() << " weight"
         << (keptWhole.size() == 1 ? "" : "s")
         << " it would split column-parallel whole, replicated over tp ("
         << argName(keptWhole.front().first.getArgNumber())
         << (keptWhole.size() == 1 ? "" : " first") << "): ";
  if (heads.empty()) {
    remark << "no row-parallel layer reads their split output";
    return;
  }
  remark << "attention over ";
  for (auto [index, n] : llvm::enumerate(heads))
    remark << (index == 0 ? "" : " or ") << n << (n == 1 ? " head" : " heads");
  remark << ", which tp does not split, reads their outputs whole";
}

void StepAnnotator::annotateBiases(ShardingPropagation &propagation) {
  propagation.runIncremental(Tensor);
  for (BlockArgument arg : function.getArguments()) {
    if (decided.contains(arg) ||
        getArgumentRole(function, arg.getArgNumber()) != Role::Param)
      continue;
    // Every forward read: a broadcast, a lookup of rows (an expert's bias)
    // or a concatenation along another dimension (GPT-OSS's attention
    // sinks joined to a mask), possibly of a low-precision copy or of a part
    // (tg-split-fused-projections' slices of a fused bias).
    std::optional<TensorLayout> layout;
    bool agree = true;
    SmallVector<Value> worklist = {arg};
    while (!worklist.empty() && agree) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (!isForward(user))
          continue;
        if (isa<ConvertOp, SliceOp, ReshapeOp>(user)) {
          worklist.push_back(user->getResult(0));
          continue;
        }
        // The read's operand and the result's dimension of each of its
        // dimensions (a looked-up row's columns follow the ids' dimensions;
        // its rows are never split here).
        auto broadcast = dyn_cast<BroadcastInDimOp>(user);
        auto lookup = dyn_cast<EmbeddingOp>(user);
        auto concat = dyn_cast<ConcatOp>(user);
        Value read;
        SmallVector<int64_t> resultDims;
        if (concat) {
          read = value;
          for (int64_t dim : llvm::seq<int64_t>(0, concat.getType().getRank()))
            resultDims.push_back(dim == int64_t(concat.getDimension()) ? -1
                                                                       : dim);
        } else if (broadcast) {
          read = broadcast.getOperand();
          llvm::append_range(resultDims, broadcast.getBroadcastDimensions());
        } else if (lookup && value == lookup.getTable()) {
          read = lookup.getTable();
          int64_t idsRank = lookup.getIndices().getType().getRank();
          resultDims.push_back(-1);
          for (int64_t dim = 1; dim < lookup.getTable().getType().getRank();
               ++dim)
            resultDims.push_back(idsRank + dim - 1);
        }
        auto traced = read ? traceParam(read) : std::nullopt;
        if (!traced || traced->first != arg) {
          agree = false;
          break;
        }
        Value result = user->getResult(0);
        const TensorLayout &wide = propagation.getLayout(result);
        TensorLayout split = replicated(arg, Tensor);
        for (auto [dim, resultDim] : llvm::enumerate(resultDims)) {
          int64_t argDim = traced->second[dim];
          if (argDim >= 0 && resultDim >= 0 &&
              dimSize(arg, argDim) == dimSize(result, resultDim) &&
              llvm::is_contained(wide.dims[resultDim], *tp) &&
              !split.hasAxes() && canSplit(arg, split, argDim, *tp))
            split.dims[argDim].push_back(*tp);
        }
        if (layout && !(*layout == split))
          agree = false;
        layout = split;
      }
    }
    if (agree && layout && layout->hasAxes())
      decided[arg] = *layout;
  }
}

LogicalResult StepAnnotator::annotateZero() {
  if (zero == 0) {
    // Optimizer state is stored as its parameter is.
    function.walk([&](OptimizerOpInterface update) {
      auto param = dyn_cast<BlockArgument>(update.getUpdatedParam());
      if (!param || !decided.contains(param))
        return;
      layoutStates(update, param.getType(), decided.lookup(param));
    });
    return success();
  }
  if (!dp)
    return function.emitError("--zero ")
           << zero << " shards over the dp axis, which the mesh " << mesh.str()
           << " does not have";
  auto withDp = [&](Value value, TensorLayout layout) {
    std::optional<unsigned> dim;
    for (unsigned candidate = 0; candidate < layout.dims.size(); ++candidate)
      if (canSplit(value, layout, candidate, *dp)) {
        dim = candidate;
        break;
      }
    if (!dim)
      return std::optional<TensorLayout>();
    layout.dims[*dim].push_back(*dp);
    layout.priority = Zero;
    return std::optional<TensorLayout>(layout);
  };
  SmallVector<OptimizerOpInterface> updates;
  function.walk(
      [&](OptimizerOpInterface update) { updates.push_back(update); });
  int64_t dpSize = mesh.axisSizes[*dp];
  for (OptimizerOpInterface update : updates) {
    auto param = dyn_cast<BlockArgument>(update.getUpdatedParam());
    if (!param)
      continue;
    TensorLayout paramLayout = decided.lookup(param);
    if (paramLayout.dims.empty())
      paramLayout = replicated(param, Batch);
    // Already split over dp (an expert stack under expert parallelism):
    // each device holds and updates its block, its state alike.
    if (llvm::any_of(paramLayout.dims, [&](const AxisList &axes) {
          return llvm::is_contained(axes, *dp);
        })) {
      layoutStates(update, param.getType(), paramLayout);
      continue;
    }
    std::optional<TensorLayout> sharded = withDp(param, paramLayout);
    if (!sharded) {
      // No dimension divides: pad one (ZeroPadding.h), never replicate
      // silently.
      auto type = cast<RankedTensorType>(param.getType());
      SmallVector<bool> whole = llvm::map_to_vector(
          paramLayout.dims, [](const AxisList &axes) { return axes.empty(); });
      std::optional<unsigned> dim = choosePaddedDim(type, whole, dpSize);
      std::string why;
      if (userAnnotated.contains(param))
        why = "the user gave its sharding";
      else if (!dim)
        why = "no dimension it leaves whole has dp elements";
      else
        why = padForZero(
            function, update, param, *dim, dpSize,
            zero >= 3 || llvm::any_of(param.getUsers(), [](Operation *user) {
              return isa<ConvertOp>(user);
            }));
      if (!why.empty()) {
        update->emitRemark("ZeRO: no dimension of parameter ")
            << argName(param.getArgNumber()) << " " << type
            << " divides by dp=" << dpSize << ", and it cannot be padded ("
            << why << "); it and its optimizer state stay replicated";
        continue;
      }
      int64_t padding =
          llvm::divideCeil(type.getDimSize(*dim), dpSize) * dpSize -
          type.getDimSize(*dim);
      update->emitRemark("ZeRO: parameter ")
          << argName(param.getArgNumber()) << " " << type << " is padded by "
          << padding << " on dimension " << *dim << " ("
          << llvm::formatv("{0:F2}", 100.0 * padding / type.getDimSize(*dim))
                 .str()
          << "% more) so that dp=" << dpSize
          << " splits it; its gradient and optimizer state are padded alike "
             "with zeros, which the update keeps zero";
      sharded = paramLayout;
      sharded->dims[*dim].push_back(*dp);
      sharded->priority = Zero;
    }
    // The state has the (padded) type of the new parameter.
    layoutStates(update, update->getResult(0).getType(), *sharded);
    bool hasCopies = llvm::any_of(
        param.getUsers(), [](Operation *user) { return isa<ConvertOp>(user); });
    // ZeRO-3 keeps only a shard of every parameter; ZeRO-1 and -2 shard the
    // f32 master weights of mixed precision (optimizer state in the ZeRO
    // paper) and keep their low-precision copies whole.
    if (zero >= 3 || hasCopies) {
      decided[param] = *sharded;
      if (zero < 3)
        for (Operation *user : param.getUsers())
          if (auto convert = dyn_cast<ConvertOp>(user)) {
            // Whole over dp, split as the parameter is over tp.
            TensorLayout copy = paramLayout;
            decided[convert.getResult()] = copy;
          }
    }
    // ZeRO-1 all-reduces the whole gradient (each device then updates its
    // slice); ZeRO-2 and -3 reduce-scatter it.
    Value grad = update.getParamGrad();
    if (zero == 1 && grad.getDefiningOp()) {
      decided[grad] = paramLayout;
    }
  }
  return success();
}

void StepAnnotator::annotateExperts() {
  if (!expertParallel || !dp)
    return;
  // Expert parallelism over dp (DeepSpeed-MoE's, with as many expert
  // groups as data-parallel ranks; Megatron's all-gather token
  // dispatcher): each device holds E / dp experts of every stack. At the
  // user's priority, so that the experts keep dp where the routed rows,
  // split over dp by the batch, want it too: tg-partition gathers the rows
  // for the products instead and returns the device's rows of their sum.
  int64_t dpSize = mesh.axisSizes[*dp];
  DenseSet<Value> seen;
  // The split stacks, for the remark: the first product, its parameter.
  SmallVector<std::pair<Operation *, BlockArgument>> split;
  // The forward's products read the stacks (their gradients are computed,
  // not read).
  function.walk([&](ExpertMatmulOp op) {
    auto traced = traceParam(op.getWeight());
    if (!traced || traced->second[0] < 0 || !seen.insert(traced->first).second)
      return;
    auto [param, dims] = *traced;
    unsigned expertDim = dims[0];
    int64_t experts = dimSize(param, expertDim);
    if (userAnnotated.contains(param))
      return;
    TensorLayout layout = decided.lookup(param);
    if (layout.dims.empty())
      layout = replicated(param, User);
    if (!layout.dims[expertDim].empty() || experts % dpSize != 0) {
      op->emitRemark("expert parallelism: the ")
          << experts << " experts of " << argName(param.getArgNumber())
          << (experts % dpSize != 0
                  ? " are not a multiple of dp=" + std::to_string(dpSize)
                  : std::string(" are already split"))
          << "; they stay whole on every device";
      return;
    }
    layout.dims[expertDim].push_back(*dp);
    layout.priority = User;
    decided[param] = layout;
    split.push_back({op.getOperation(), param});
  });
  if (!split.empty())
    split.front().first->emitRemark("expert parallelism: ")
        << split.size()
        << (split.size() > 1 ? " expert stacks split on their"
                             : " expert stack split on its")
        << " experts over dp=" << dpSize << " ("
        << argName(split.front().second.getArgNumber())
        << (split.size() > 1 ? " first" : "")
        << "): each device holds its block of the experts and their "
           "optimizer state, and the routed rows are gathered before the "
           "products and their sums reduce-scattered";
  // A table of a row per expert looked up by the routing ids (GPT-OSS's
  // experts' biases) is split alike, its lookups vocabulary-parallel: each
  // device adds its own experts' rows.
  function.walk([&](EmbeddingOp lookup) {
    std::optional<int64_t> experts;
    for (Operation *user : lookup.getIndices().getUsers())
      if (auto product = dyn_cast<ExpertMatmulOp>(user);
          product && product.getIds() == lookup.getIndices())
        experts = product.getNumExperts();
    auto traced = traceParam(lookup.getTable());
    if (!experts || !traced || traced->second[0] < 0 ||
        userAnnotated.contains(traced->first))
      return;
    auto [param, dims] = *traced;
    unsigned rowDim = dims[0];
    if (dimSize(param, rowDim) != *experts || *experts % dpSize != 0)
      return;
    TensorLayout layout = decided.lookup(param);
    if (layout.dims.empty())
      layout = replicated(param, User);
    if (!layout.dims[rowDim].empty() &&
        !llvm::equal(layout.dims[rowDim], ArrayRef<unsigned>{*dp}))
      return;
    layout.dims[rowDim].assign({*dp});
    layout.priority = User;
    decided[param] = layout;
    lookup->setAttr(kVocabParallelAttrName,
                    UnitAttr::get(function.getContext()));
  });
}

void StepAnnotator::annotateSequence() {
  if (!sequenceParallel || !tp)
    return;
  // Megatron's sequence parallelism: the activations around the norms (the
  // residual stream) are split on the sequence dimension over tp; the
  // column-parallel matmul after a norm gathers them, the row-parallel one
  // before the residual reduce-scatters into them.
  auto annotate = [&](Value input) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() < 3 || !input.getDefiningOp())
      return;
    unsigned seqDim = type.getRank() - 2;
    TensorLayout layout = decided.lookup(input);
    if (layout.dims.empty()) {
      layout = TensorLayout::getUnset(type.getRank());
      if (dp && canSplit(input, layout, 0, *dp))
        layout.dims[0].push_back(*dp);
    }
    if (!canSplit(input, layout, seqDim, *tp))
      return;
    layout.dims[seqDim].push_back(*tp);
    layout.priority = Zero;
    decided[input] = layout;
  };
  function.walk([&](LayerNormOp norm) { annotate(norm.getInput()); });
  function.walk([&](RmsNormOp norm) { annotate(norm.getInput()); });
}

void StepAnnotator::write() {
  MLIRContext *context = function.getContext();
  // Parameters and optimizer state nothing decided stay replicated (closed:
  // propagation does not split what a device stores).
  for (BlockArgument arg : function.getArguments()) {
    std::optional<Role> role = getArgumentRole(function, arg.getArgNumber());
    if (!decided.contains(arg) &&
        (role == Role::Param || role == Role::State) &&
        isa<RankedTensorType>(arg.getType()))
      decided[arg] = replicated(arg, Batch);
  }
  for (auto &[value, layout] : decided) {
    ShardingAttr attr = layout.toAttr(context, mesh, {}, /*withPriority=*/true);
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      function.setArgAttr(arg.getArgNumber(), kShardingAttrName, attr);
      continue;
    }
    auto result = cast<OpResult>(value);
    Operation *op = result.getOwner();
    SmallVector<Attribute> shardings;
    if (auto existing = op->getAttrOfType<ArrayAttr>(kShardingsAttrName))
      shardings.assign(existing.begin(), existing.end());
    for (unsigned index = shardings.size(); index < op->getNumResults();
         ++index)
      shardings.push_back(
          replicated(op->getResult(index), 0).toAttr(context, mesh));
    shardings[result.getResultNumber()] = attr;
    op->setAttr(kShardingsAttrName, ArrayAttr::get(context, shardings));
  }
}

LogicalResult StepAnnotator::run() {
  splitIgnoredMeans(function);
  Operation *terminator = function.getBody().front().getTerminator();
  for (unsigned index = 0, e = function.getNumResults(); index < e; ++index)
    if (getResultRole(function, index) == Role::Loss)
      lossOp = terminator->getOperand(index).getDefiningOp();
  if (failed(applyCommandLineShardings()) || failed(checkUserAnnotations()) ||
      failed(annotateBatch()))
    return failure();
  if (failed(annotateTensorParallel()))
    return failure();
  annotateExperts();
  annotateSequence();
  if (failed(annotateZero()))
    return failure();
  markVocabParallel();
  write();
  return success();
}

void StepAnnotator::markVocabParallel() {
  function.walk([&](EmbeddingOp embedding) {
    auto traced = traceParam(embedding.getTable());
    if (!traced)
      return;
    auto [table, dims] = *traced;
    auto it = decided.find(table);
    if (it == decided.end() || dims[0] < 0)
      return;
    const AxisList &rows = it->second.dims[dims[0]];
    if ((tp && llvm::is_contained(rows, *tp)) ||
        (userAnnotated.contains(table) && !rows.empty()))
      embedding->setAttr(kVocabParallelAttrName,
                         UnitAttr::get(function.getContext()));
  });
}

namespace {
struct ShardAnnotatePass
    : public tgc::impl::TGShardAnnotateBase<ShardAnnotatePass> {
  using TGShardAnnotateBase::TGShardAnnotateBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Mesh> mesh = failure();
    if (!meshSpec.empty()) {
      std::string error;
      mesh = Mesh::parse(meshSpec, error);
      if (failed(mesh)) {
        module.emitError("--mesh: ") << error;
        return signalPassFailure();
      }
    } else {
      // Without --mesh, the mesh the module declares, if any.
      for (auto grid : module.getOps<shard::GridOp>())
        if (grid->hasAttr(kMeshAxesAttrName)) {
          mesh = Mesh::lookup(module, grid.getSymName());
          if (failed(mesh))
            return signalPassFailure();
          break;
        }
      if (failed(mesh)) {
        if (zero != 0 || sequenceParallel || expertParallel) {
          module.emitError(zero != 0          ? "--zero"
                           : sequenceParallel ? "--sequence-parallel"
                                              : "--expert-parallel")
              << " needs a mesh (--mesh dp=N[,tp=M])";
          return signalPassFailure();
        }
        return;
      }
    }
    if (zero > 3) {
      module.emitError("--zero must be 0, 1, 2 or 3, got ") << zero;
      return signalPassFailure();
    }
    if (expertParallel && !mesh->getAxisIndex("dp")) {
      module.emitError("--expert-parallel splits the experts over the dp "
                       "axis, which the mesh ")
          << mesh->str() << " does not have";
      return signalPassFailure();
    }
    if (sequenceParallel && !mesh->getAxisIndex("tp")) {
      module.emitError("--sequence-parallel splits over the tp axis, which "
                       "the mesh ")
          << mesh->str() << " does not have";
      return signalPassFailure();
    }
    // The grid: one per module, named after the mesh.
    OpBuilder builder(module.getBodyRegion());
    if (auto existing = SymbolTable::lookupSymbolIn(module, mesh->name)) {
      auto grid = dyn_cast<shard::GridOp>(existing);
      if (!grid || grid.getShape() != ArrayRef(mesh->axisSizes)) {
        existing->emitError("@")
            << mesh->name << " exists and is not the grid of " << mesh->str();
        return signalPassFailure();
      }
    } else {
      auto grid = shard::GridOp::create(builder, module.getLoc(), mesh->name,
                                        mesh->axisSizes);
      grid->setAttr(kMeshAxesAttrName,
                    builder.getStrArrayAttr(llvm::map_to_vector(
                        mesh->axisNames, [](const std::string &name) {
                          return StringRef(name);
                        })));
    }
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      StepAnnotator annotator(function, *mesh, zero, sequenceParallel,
                              expertParallel, shardings);
      if (failed(annotator.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
