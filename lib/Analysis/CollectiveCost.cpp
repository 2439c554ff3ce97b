//===- CollectiveCost.cpp - modelled time of shard collectives ------------===//
//
// Ring algorithms in the alpha-beta model, as NCCL runs large collectives:
// on a ring of n devices a reduce-scatter and an all-gather each take n-1
// steps in which every device sends 1/n of the full tensor to its
// neighbour; an all-reduce is the two in sequence. A ring runs at the speed
// of its slowest link, so a group that spans nodes runs at InfiniBand's
// figures for all its bytes.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/CollectiveCost.h"

#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tgc;

/// The most devices a grid may have: 2^20, far above any cluster tgc plans
/// for, so that group sizes times tensor bytes stay inside int64 and
/// isGroupWithinNode's walk over the devices stays short.
static constexpr int64_t kMaxGridDevices = int64_t(1) << 20;

StringRef tgc::stringifyCollectiveKind(CollectiveKind kind) {
  static constexpr StringLiteral names[kNumCollectiveKinds] = {
      "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_slice",
      "send",       "recv"};
  return names[static_cast<unsigned>(kind)];
}

StringRef tgc::stringifyLinkKind(LinkKind link) {
  return link == LinkKind::NVLink ? "nvlink" : "infiniband";
}

int64_t tgc::getCollectiveSteps(CollectiveKind kind, int64_t groupSize) {
  int64_t n = std::max<int64_t>(1, groupSize);
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2 * (n - 1);
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return n - 1;
  case CollectiveKind::AllSlice:
    return 0;
  case CollectiveKind::Send:
  case CollectiveKind::Recv:
    return 1;
  }
  return 0;
}

int64_t tgc::getCollectiveBytesPerDevice(CollectiveKind kind, int64_t groupSize,
                                         int64_t bytes) {
  if (kind == CollectiveKind::Send)
    return bytes;
  if (kind == CollectiveKind::Recv)
    return 0;
  int64_t n = std::max<int64_t>(1, groupSize);
  // Each step sends 1/n of the tensor. Split so that steps * bytes never
  // forms: a tensor may hold 2^44 bytes and a group 2^20 devices.
  int64_t steps = getCollectiveSteps(kind, n);
  return bytes / n * steps + bytes % n * steps / n;
}

CollectiveCost tgc::estimateCollectiveCost(CollectiveKind kind,
                                           int64_t groupSize, int64_t bytes,
                                           LinkKind link,
                                           const DeviceSpec &device) {
  CollectiveCost cost;
  cost.kind = kind;
  cost.groupSize = std::max<int64_t>(1, groupSize);
  cost.link = link;
  cost.steps = getCollectiveSteps(kind, cost.groupSize);
  cost.bytesPerDevice =
      getCollectiveBytesPerDevice(kind, cost.groupSize, bytes);
  if (cost.steps == 0)
    return cost;
  const LinkSpec &spec =
      link == LinkKind::NVLink ? device.nvlink : device.infiniband;
  cost.time = cost.steps * spec.latency;
  // A recv takes the time of the message it receives.
  int64_t transferred =
      kind == CollectiveKind::Recv ? bytes : cost.bytesPerDevice;
  if (spec.bandwidth > 0)
    cost.time += transferred / spec.bandwidth;
  return cost;
}

bool tgc::isGroupWithinNode(ArrayRef<int64_t> gridShape,
                            ArrayRef<int64_t> groupAxes, int64_t gpusPerNode) {
  int64_t rank = gridShape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t axis = rank - 2; axis >= 0; --axis)
    strides[axis] = strides[axis + 1] * gridShape[axis + 1];
  int64_t devices = rank ? strides[0] * gridShape[0] : 1;
  gpusPerNode = std::max<int64_t>(1, gpusPerNode);
  // Each device against the first device of its group (its coordinates on
  // the group's axes set to 0): the grids tgc plans for have at most a few
  // thousand devices, so checking every one is cheap and exact for any
  // shape, including groups whose size does not divide a node.
  for (int64_t device = 0; device < devices; ++device) {
    int64_t first = device;
    for (int64_t axis : groupAxes)
      if (axis >= 0 && axis < rank)
        first -= (device / strides[axis]) % gridShape[axis] * strides[axis];
    if (first / gpusPerNode != device / gpusPerNode)
      return false;
  }
  return true;
}

bool tgc::isPairWithinNode(ArrayRef<int64_t> gridShape, int64_t axis,
                           int64_t from, int64_t to, int64_t gpusPerNode) {
  int64_t rank = gridShape.size();
  if (axis < 0 || axis >= rank)
    return true;
  int64_t stride = 1;
  for (int64_t inner = axis + 1; inner < rank; ++inner)
    stride *= gridShape[inner];
  int64_t devices = stride;
  for (int64_t outer = 0; outer <= axis; ++outer)
    devices *= gridShape[outer];
  gpusPerNode = std::max<int64_t>(1, gpusPerNode);
  // Each device at coordinate `from` against its peer at `to`.
  for (int64_t device = 0; device < devices; ++device) {
    if ((device / stride) % gridShape[axis] != from)
      continue;
    int64_t peer = device + (to - from) * stride;
    if (peer / gpusPerNode != device / gpusPerNode)
      return false;
  }
  return true;
}

std::optional<CollectiveKind> tgc::getCollectiveKind(Operation *op) {
  return TypeSwitch<Operation *, std::optional<CollectiveKind>>(op)
      .Case([](shard::AllReduceOp) { return CollectiveKind::AllReduce; })
      .Case([](shard::AllGatherOp) { return CollectiveKind::AllGather; })
      .Case(
          [](shard::ReduceScatterOp) { return CollectiveKind::ReduceScatter; })
      .Case([](shard::AllToAllOp) { return CollectiveKind::AllToAll; })
      .Case([](shard::AllSliceOp) { return CollectiveKind::AllSlice; })
      .Case([](shard::SendOp) { return CollectiveKind::Send; })
      .Case([](shard::RecvOp) { return CollectiveKind::Recv; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The bytes of `value`'s static tensor type within tg's size limit, or
/// nullopt.
static std::optional<int64_t> getStaticBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return tg::getBoundedTensorByteSize(type);
}

FailureOr<CollectiveShape> tgc::getCollectiveShape(Operation *op,
                                                   std::string *why) {
  std::string ignored;
  if (!why)
    why = &ignored;
  std::optional<CollectiveKind> kind = getCollectiveKind(op);
  if (!kind) {
    *why = "the cost model has figures for all_reduce, all_gather, "
           "reduce_scatter, all_to_all, all_slice, send and recv only";
    return failure();
  }
  auto gridAttr = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  auto grid =
      gridAttr
          ? SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridAttr)
          : shard::GridOp();
  if (!grid) {
    *why = "its grid cannot be found";
    return failure();
  }
  CollectiveShape shape;
  shape.kind = *kind;
  llvm::append_range(shape.gridShape, grid.getShape());
  if (llvm::any_of(shape.gridShape, ShapedType::isDynamic)) {
    *why = "the grid @" + grid.getSymName().str() +
           " has a dynamic size: the nodes its groups span are unknown";
    return failure();
  }
  int64_t devices = 1;
  for (int64_t size : shape.gridShape) {
    devices *= std::max<int64_t>(1, size);
    if (devices > kMaxGridDevices) {
      *why = "the grid @" + grid.getSymName().str() +
             " has more than 2^20 devices";
      return failure();
    }
  }
  auto axesAttr = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
  for (int16_t axis : axesAttr ? axesAttr.asArrayRef() : ArrayRef<int16_t>()) {
    // The op's verifier checks the axes against the grid; a module built
    // without it gets an error here rather than a wrong figure.
    if (axis < 0 || axis >= static_cast<int64_t>(shape.gridShape.size())) {
      *why = "grid axis " + std::to_string(axis) + " is not an axis of @" +
             grid.getSymName().str();
      return failure();
    }
    shape.groupAxes.push_back(axis);
    shape.groupSize *= shape.gridShape[axis];
  }
  // The full tensor: the gathered result of an all-gather, the operand
  // otherwise (unreduced for the reductions, local for all-to-all). Every
  // tensor it reads and writes is a buffer the memory simulator counts.
  std::optional<int64_t> operand = getStaticBytes(op->getOperand(0));
  std::optional<int64_t> result = getStaticBytes(op->getResult(0));
  if (!operand || !result) {
    *why = "its tensors must have static shapes of int or float elements "
           "within 2^44 bytes";
    return failure();
  }
  // An all-to-all's operand and result hold as many elements; the result
  // is read, as tg-partition's remarks are made while the argument it
  // converts still has its global type.
  shape.bytes =
      *kind == CollectiveKind::AllGather || *kind == CollectiveKind::AllToAll
          ? *result
          : *operand;
  // A recv's operand is the message in flight: it holds what it receives.
  if (*kind == CollectiveKind::Recv)
    shape.bytes = *result;
  return shape;
}

FailureOr<CollectiveCost>
tgc::estimateCollectiveCost(Operation *op, const DeviceSpec &device) {
  FailureOr<CollectiveShape> shape = getCollectiveShape(op);
  if (failed(shape))
    return failure();
  bool withinNode =
      isGroupWithinNode(shape->gridShape, shape->groupAxes, device.gpusPerNode);
  // A pipeline's send or recv: its own device (the stage's) and its peer.
  auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
  if ((shape->kind == CollectiveKind::Send ||
       shape->kind == CollectiveKind::Recv) &&
      stage && shape->groupAxes.size() == 1) {
    auto peerAttr = op->getAttrOfType<DenseI64ArrayAttr>(
        shape->kind == CollectiveKind::Send ? "destination" : "source");
    int64_t axis = shape->groupAxes.front();
    if (peerAttr && peerAttr.size() == 1 && shape->gridShape[axis] > 0) {
      int64_t self = stage.getInt() % shape->gridShape[axis];
      int64_t peer = peerAttr[0];
      if (peer >= 0 && peer < shape->gridShape[axis])
        withinNode = isPairWithinNode(shape->gridShape, axis, self, peer,
                                      device.gpusPerNode);
    }
  }
  LinkKind link = withinNode ? LinkKind::NVLink : LinkKind::InfiniBand;
  return estimateCollectiveCost(shape->kind, shape->groupSize, shape->bytes,
                                link, device);
}

LogicalResult tgc::verifyCollectivesModelled(Operation *function) {
  WalkResult result = function->walk([&](Operation *op) {
    if (!isa<shard::ShardDialect>(op->getDialect()) || isa<shard::GridOp>(op))
      return WalkResult::advance();
    std::string why;
    if (succeeded(getCollectiveShape(op, &why)))
      return WalkResult::advance();
    op->emitError() << "cannot model the time of '" << op->getName()
                    << "': " << why;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
