//===- SplitFusedProjections.cpp - tg-split-fused-projections -------------===//
//
// A projection whose output is only read as k equal slices of its output
// dimension (GPT-2's fused q, k, v; a mixture of experts' fused gate and up
// products) becomes k projections, and its weight (and bias) parameter is
// viewed with that dimension as [k, N/k] (or [N/k, k] for interleaved
// slices): the same row-major bytes, but now each slice is a block of a
// dimension of its own, so tensor parallelism can split every slice by
// heads or by width.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "Projections.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "tg-split-fused-projections"

namespace tgc {
#define GEN_PASS_DEF_TGSPLITFUSEDPROJECTIONS
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

/// A parameter read through transposes and converts: the ops from the
/// argument to the value, and the argument's dimension of each of the
/// value's.
struct ParamRead {
  BlockArgument param;
  SmallVector<Operation *> chain;
  SmallVector<int64_t> dims;
};

/// A fused projection: `matmul(x, W)` or `expert_matmul(x, W[ids])`, plus
/// a bias (`broadcast(b)`, or an expert's row `embedding(B, ids)`), read
/// only by `slices`, which cut its last dimension into equal parts: blocks
/// in order, or (`interleaved`) every k-th element from part's offset.
struct FusedProjection {
  Operation *projection;
  ParamRead weight;
  AddOp add;
  Operation *biasRead = nullptr;
  std::optional<ParamRead> bias;
  SmallVector<SliceOp> slices;
  bool interleaved = false;
};

/// How a parameter is viewed: its dimension `dim` as `parts` blocks, or as
/// `parts` interleaved elements (the parts' dimension after it).
struct ParamView {
  int64_t dim;
  int64_t parts;
  bool interleaved;
  bool operator==(const ParamView &other) const {
    return dim == other.dim && parts == other.parts &&
           interleaved == other.interleaved;
  }
  int64_t partDim() const { return interleaved ? dim + 1 : dim; }
};

class ProjectionSplitter {
public:
  explicit ProjectionSplitter(func::FuncOp function) : function(function) {}
  void run();

private:
  std::optional<ParamRead> traceParam(Value value);
  std::optional<FusedProjection> match(Operation *projection);
  /// Whether `slices` cut the last dimension of `type` into equal parts, in
  /// blocks or interleaved; sorts them by part.
  static std::optional<bool> matchParts(RankedTensorType type,
                                        SmallVector<SliceOp> &slices);
  /// The argument `read.param` viewed as `view` says (once per parameter;
  /// its other readers get the old shape back).
  Value viewParam(const ParamRead &read, ParamView view);
  /// Part `part` of the view, read through `read.chain` again.
  Value readPart(OpBuilder &builder, const ParamRead &read, Value view,
                 int64_t dim, int64_t part);
  void split(FusedProjection &fused);

  func::FuncOp function;
  DenseMap<Value, ParamView> views;
};

} // namespace

std::optional<ParamRead> ProjectionSplitter::traceParam(Value value) {
  ParamRead read;
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  read.dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  while (Operation *def = value.getDefiningOp()) {
    if (!def->hasOneUse())
      return std::nullopt;
    if (auto transpose = dyn_cast<TransposeOp>(def)) {
      for (int64_t &dim : read.dims)
        dim = transpose.getPermutation()[dim];
      value = transpose.getOperand();
    } else if (auto convert = dyn_cast<ConvertOp>(def)) {
      value = convert.getOperand();
    } else {
      return std::nullopt;
    }
    read.chain.push_back(def);
  }
  auto arg = cast<BlockArgument>(value);
  if (getArgumentRole(function, arg.getArgNumber()) != Role::Param)
    return std::nullopt;
  read.param = arg;
  std::reverse(read.chain.begin(), read.chain.end());
  return read;
}

std::optional<bool>
ProjectionSplitter::matchParts(RankedTensorType type,
                               SmallVector<SliceOp> &slices) {
  int64_t last = type.getRank() - 1;
  int64_t parts = slices.size();
  int64_t size = type.getDimSize(last);
  if (parts < 2 || size % parts != 0)
    return std::nullopt;
  int64_t width = size / parts;
  for (SliceOp slice : slices) {
    if (slice.getType().getDimSize(last) != width)
      return std::nullopt;
    for (int64_t dim = 0; dim < last; ++dim)
      if (slice.getStartIndices()[dim] != 0 ||
          slice.getLimitIndices()[dim] != type.getDimSize(dim) ||
          slice.getStrides()[dim] != 1)
        return std::nullopt;
  }
  llvm::sort(slices, [&](SliceOp a, SliceOp b) {
    return a.getStartIndices()[last] < b.getStartIndices()[last];
  });
  // Blocks: part p is [p * width, (p + 1) * width).
  if (llvm::all_of(llvm::enumerate(slices), [&](auto entry) {
        auto [part, slice] = entry;
        return slice.getStrides()[last] == 1 &&
               slice.getStartIndices()[last] == int64_t(part) * width;
      }))
    return false;
  // Interleaved (GPT-OSS's gate and up): part p is p, p + k, p + 2k...
  if (llvm::all_of(llvm::enumerate(slices), [&](auto entry) {
        auto [part, slice] = entry;
        return slice.getStrides()[last] == parts &&
               slice.getStartIndices()[last] == int64_t(part);
      }))
    return true;
  return std::nullopt;
}

std::optional<FusedProjection>
ProjectionSplitter::match(Operation *projection) {
  FusedProjection fused;
  fused.projection = projection;
  // The weight is operand 1 of both products.
  std::optional<ParamRead> weight = traceParam(projection->getOperand(1));
  if (!weight)
    return std::nullopt;
  fused.weight = *weight;
  auto expert = dyn_cast<ExpertMatmulOp>(projection);
  auto type = cast<RankedTensorType>(projection->getResult(0).getType());
  int64_t last = type.getRank() - 1;
  Value output = projection->getResult(0);
  // A bias broadcast along the last dimension, or (experts) each row's
  // expert's bias, gathered by the same ids.
  if (output.hasOneUse())
    if (auto add = dyn_cast<AddOp>(*output.getUsers().begin())) {
      Value other = add.getLhs() == output ? add.getRhs() : add.getLhs();
      Operation *read = other.getDefiningOp();
      auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(read);
      auto gathered = dyn_cast_or_null<EmbeddingOp>(read);
      Value bias;
      if (broadcast && !expert &&
          broadcast.getBroadcastDimensions() == ArrayRef<int64_t>{last})
        bias = broadcast.getOperand();
      else if (gathered && expert && gathered.getIndices() == expert.getIds() &&
               gathered.getTable().getType().getRank() == 2)
        bias = gathered.getTable();
      if (bias && read->hasOneUse()) {
        fused.bias = traceParam(bias);
        if (!fused.bias)
          return std::nullopt;
        fused.add = add;
        fused.biasRead = read;
        output = add.getResult();
      }
    }
  for (Operation *user : output.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice)
      return std::nullopt;
    fused.slices.push_back(slice);
  }
  std::optional<bool> interleaved = matchParts(type, fused.slices);
  if (!interleaved)
    return std::nullopt;
  fused.interleaved = *interleaved;
  return fused;
}

Value ProjectionSplitter::viewParam(const ParamRead &read, ParamView view) {
  BlockArgument arg = read.param;
  if (auto it = views.find(arg); it != views.end())
    return it->second == view ? Value(arg) : Value();
  auto type = cast<RankedTensorType>(arg.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[view.dim] /= view.parts;
  shape.insert(shape.begin() + view.partDim(), view.parts);
  auto viewType = RankedTensorType::get(shape, type.getElementType());
  // Readers of the parameter other than the projection see its old shape.
  OpBuilder builder(function.getBody());
  arg.setType(viewType);
  auto whole = ReshapeOp::create(builder, arg.getLoc(), type, arg);
  arg.replaceAllUsesExcept(whole, whole);
  views[arg] = view;
  return arg;
}

Value ProjectionSplitter::readPart(OpBuilder &builder, const ParamRead &read,
                                   Value view, int64_t dim, int64_t part) {
  auto viewType = cast<RankedTensorType>(view.getType());
  SmallVector<int64_t> start(viewType.getRank(), 0);
  SmallVector<int64_t> limit(viewType.getShape());
  SmallVector<int64_t> strides(viewType.getRank(), 1);
  start[dim] = part;
  limit[dim] = part + 1;
  Location loc = read.param.getLoc();
  Value value = SliceOp::create(builder, loc, view, start, limit, strides);
  SmallVector<int64_t> shape(viewType.getShape());
  shape.erase(shape.begin() + dim);
  value = ReshapeOp::create(
      builder, loc, RankedTensorType::get(shape, viewType.getElementType()),
      value);
  for (Operation *op : read.chain) {
    Operation *clone = builder.clone(*op);
    clone->setOperand(0, value);
    auto oldType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<int64_t> partShape(
        cast<RankedTensorType>(value.getType()).getShape());
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      SmallVector<int64_t> permuted;
      for (int64_t source : transpose.getPermutation())
        permuted.push_back(partShape[source]);
      partShape = permuted;
    }
    clone->getResult(0).setType(
        RankedTensorType::get(partShape, oldType.getElementType()));
    value = clone->getResult(0);
  }
  return value;
}

void ProjectionSplitter::split(FusedProjection &fused) {
  int64_t parts = fused.slices.size();
  Operation *projection = fused.projection;
  Value output = projection->getResult(0);
  int64_t rhsRank = fused.weight.dims.size();
  ParamView weightView = {
      fused.weight.dims[getTransposeB(projection) ? rhsRank - 2 : rhsRank - 1],
      parts, fused.interleaved};
  Value weightParam = viewParam(fused.weight, weightView);
  // The bias's output dimension: a vector's only one, a table's last.
  ParamView biasView = {fused.bias ? fused.bias->dims.back() : 0, parts,
                        fused.interleaved};
  Value biasParam;
  if (fused.bias)
    biasParam = viewParam(*fused.bias, biasView);
  if (!weightParam || (fused.bias && !biasParam))
    return;
  for (auto [part, slice] : llvm::enumerate(fused.slices)) {
    OpBuilder builder(slice);
    Value weight = readPart(builder, fused.weight, weightParam,
                            weightView.partDim(), part);
    auto sliceType = cast<RankedTensorType>(slice.getType());
    Operation *product = builder.clone(*projection);
    product->setOperand(1, weight);
    product->getResult(0).setType(sliceType);
    Value value = product->getResult(0);
    if (fused.bias) {
      Value bias =
          readPart(builder, *fused.bias, biasParam, biasView.partDim(), part);
      Operation *read = builder.clone(*fused.biasRead);
      read->setOperand(0, bias);
      read->getResult(0).setType(sliceType);
      Operation *add = builder.clone(*fused.add);
      add->setOperand(fused.add.getLhs() == output ? 0 : 1, value);
      add->setOperand(fused.add.getLhs() == output ? 1 : 0, read->getResult(0));
      add->getResult(0).setType(sliceType);
      value = add->getResult(0);
    }
    slice.replaceAllUsesWith(value);
  }
  for (SliceOp slice : fused.slices)
    slice.erase();
  if (fused.add)
    fused.add.erase();
  if (fused.biasRead)
    fused.biasRead->erase();
  projection->erase();
  for (ParamRead *read : {&fused.weight, fused.bias ? &*fused.bias : nullptr})
    if (read)
      for (Operation *op : llvm::reverse(read->chain))
        op->erase();
}

void ProjectionSplitter::run() {
  std::vector<FusedProjection> found;
  DenseSet<Value> seen;
  function.walk([&](Operation *op) {
    if (!isProjection(op))
      return;
    std::optional<FusedProjection> fused = match(op);
    if (!fused)
      return;
    // A parameter read by two fused projections is left alone.
    if (!seen.insert(fused->weight.param).second ||
        (fused->bias && !seen.insert(fused->bias->param).second))
      return;
    found.push_back(std::move(*fused));
  });
  for (FusedProjection &fused : found)
    split(fused);
  // The old shape, where nothing else reads the parameter, is not needed.
  for (auto &entry : views)
    for (Operation *user : llvm::make_early_inc_range(entry.first.getUsers()))
      if (isa<ReshapeOp>(user) && user->use_empty())
        user->erase();
  function.setType(FunctionType::get(function.getContext(),
                                     function.getBody().getArgumentTypes(),
                                     function.getFunctionType().getResults()));
}

namespace {
struct SplitFusedProjectionsPass
    : public tgc::impl::TGSplitFusedProjectionsBase<SplitFusedProjectionsPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    ProjectionSplitter(function).run();
  }
};
} // namespace
