//===- SplitFusedProjections.cpp - tg-split-fused-projections -------------===//
//
// A projection whose output is only read as k equal slices of its output
// dimension (GPT-2's fused q, k, v) becomes k projections, and its weight
// (and bias) parameter is viewed with that dimension as [k, N/k]: the same
// row-major bytes, but now each slice is a block of a dimension of its own,
// so tensor parallelism can split every slice by heads.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

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

/// A fused projection: `matmul(x, W) (+ broadcast(b))` read only by
/// `slices`, which cut its last dimension into equal, ordered parts.
struct FusedProjection {
  MatmulOp matmul;
  ParamRead weight;
  AddOp add;
  BroadcastInDimOp broadcast;
  std::optional<ParamRead> bias;
  SmallVector<SliceOp> slices;
};

class ProjectionSplitter {
public:
  explicit ProjectionSplitter(func::FuncOp function) : function(function) {}
  void run();

private:
  std::optional<ParamRead> traceParam(Value value);
  std::optional<FusedProjection> match(MatmulOp matmul);
  /// The argument `read.param` viewed with dimension `dim` as [k, size/k]
  /// (once per parameter; its other readers get the old shape back).
  Value viewParam(const ParamRead &read, int64_t dim, int64_t parts);
  /// Part `part` of the view, read through `read.chain` again.
  Value readPart(OpBuilder &builder, const ParamRead &read, Value view,
                 int64_t dim, int64_t part);
  void split(FusedProjection &fused);

  func::FuncOp function;
  DenseMap<Value, std::pair<int64_t, int64_t>> views;
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

std::optional<FusedProjection> ProjectionSplitter::match(MatmulOp matmul) {
  FusedProjection fused;
  fused.matmul = matmul;
  std::optional<ParamRead> weight = traceParam(matmul.getRhs());
  if (!weight)
    return std::nullopt;
  fused.weight = *weight;
  auto type = cast<RankedTensorType>(matmul.getType());
  int64_t last = type.getRank() - 1;
  Value output = matmul.getResult();
  // A bias broadcast along the last dimension.
  if (output.hasOneUse())
    if (auto add = dyn_cast<AddOp>(*output.getUsers().begin())) {
      Value other = add.getLhs() == output ? add.getRhs() : add.getLhs();
      auto broadcast = other.getDefiningOp<BroadcastInDimOp>();
      if (broadcast && broadcast->hasOneUse() &&
          broadcast.getBroadcastDimensions() == ArrayRef<int64_t>{last}) {
        fused.bias = traceParam(broadcast.getOperand());
        if (!fused.bias)
          return std::nullopt;
        fused.add = add;
        fused.broadcast = broadcast;
        output = add.getResult();
      }
    }
  int64_t size = type.getDimSize(last);
  for (Operation *user : output.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice || llvm::any_of(slice.getStrides(),
                               [](int64_t stride) { return stride != 1; }))
      return std::nullopt;
    for (int64_t dim = 0; dim < last; ++dim)
      if (slice.getStartIndices()[dim] != 0 ||
          slice.getLimitIndices()[dim] != type.getDimSize(dim))
        return std::nullopt;
    fused.slices.push_back(slice);
  }
  int64_t parts = fused.slices.size();
  if (parts < 2 || size % parts != 0)
    return std::nullopt;
  int64_t width = size / parts;
  llvm::sort(fused.slices, [&](SliceOp a, SliceOp b) {
    return a.getStartIndices()[last] < b.getStartIndices()[last];
  });
  for (auto [part, slice] : llvm::enumerate(fused.slices))
    if (slice.getStartIndices()[last] != int64_t(part) * width ||
        slice.getLimitIndices()[last] != int64_t(part + 1) * width)
      return std::nullopt;
  return fused;
}

Value ProjectionSplitter::viewParam(const ParamRead &read, int64_t dim,
                                    int64_t parts) {
  BlockArgument arg = read.param;
  if (auto it = views.find(arg); it != views.end())
    return it->second == std::make_pair(dim, parts) ? Value(arg) : Value();
  auto type = cast<RankedTensorType>(arg.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= parts;
  shape.insert(shape.begin() + dim, parts);
  auto viewType = RankedTensorType::get(shape, type.getElementType());
  // Readers of the parameter other than the projection see its old shape.
  OpBuilder builder(function.getBody());
  arg.setType(viewType);
  auto whole = ReshapeOp::create(builder, arg.getLoc(), type, arg);
  arg.replaceAllUsesExcept(whole, whole);
  views[arg] = {dim, parts};
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
  MatmulOp matmul = fused.matmul;
  int64_t rhsRank = fused.weight.dims.size();
  int64_t nDim =
      fused.weight.dims[matmul.getTransposeB() ? rhsRank - 2 : rhsRank - 1];
  Value weightView = viewParam(fused.weight, nDim, parts);
  Value biasView;
  int64_t biasDim = fused.bias ? fused.bias->dims.front() : 0;
  if (fused.bias)
    biasView = viewParam(*fused.bias, biasDim, parts);
  if (!weightView || (fused.bias && !biasView))
    return;
  for (auto [part, slice] : llvm::enumerate(fused.slices)) {
    OpBuilder builder(slice);
    Value weight = readPart(builder, fused.weight, weightView, nDim, part);
    auto sliceType = cast<RankedTensorType>(slice.getType());
    Operation *projection = builder.clone(*matmul);
    projection->setOperand(1, weight);
    projection->getResult(0).setType(RankedTensorType::get(
        sliceType.getShape(), sliceType.getElementType()));
    Value value = projection->getResult(0);
    if (fused.bias) {
      Value bias = readPart(builder, *fused.bias, biasView, biasDim, part);
      Operation *broadcast = builder.clone(*fused.broadcast);
      broadcast->setOperand(0, bias);
      broadcast->getResult(0).setType(sliceType);
      Operation *add = builder.clone(*fused.add);
      add->setOperand(fused.add.getLhs() == matmul.getResult() ? 0 : 1, value);
      add->setOperand(fused.add.getLhs() == matmul.getResult() ? 1 : 0,
                      broadcast->getResult(0));
      add->getResult(0).setType(sliceType);
      value = add->getResult(0);
    }
    slice.replaceAllUsesWith(value);
  }
  for (SliceOp slice : fused.slices)
    slice.erase();
  if (fused.add)
    fused.add.erase();
  if (fused.broadcast)
    fused.broadcast.erase();
  matmul.erase();
  for (ParamRead *read : {&fused.weight, fused.bias ? &*fused.bias : nullptr})
    if (read)
      for (Operation *op : llvm::reverse(read->chain))
        op->erase();
}

void ProjectionSplitter::run() {
  std::vector<FusedProjection> found;
  DenseSet<Value> seen;
  function.walk([&](MatmulOp matmul) {
    std::optional<FusedProjection> fused = match(matmul);
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
