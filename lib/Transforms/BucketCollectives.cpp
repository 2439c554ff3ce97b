//===- BucketCollectives.cpp - tg-bucket-collectives ----------------------===//
//
// Gradient all-reduces merged into buckets (PyTorch DDP's, Megatron's): a
// bucket is one all-reduce of its gradients laid one after the other, each
// gradient a slice of its result. Gradients join buckets in the order they
// are computed, so that each bucket can go as soon as its last gradient
// exists. The memory plan has each gradient's producer write it in place
// inside the bucket and reads each part of the result where it lies
// (docs/memory.md): the buckets cost no copy.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGOps.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <map>

namespace tgc {
#define GEN_PASS_DEF_TGBUCKETCOLLECTIVES
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;
using namespace tgc::tg;

namespace {

template <typename CollectiveOp> struct Bucket {
  SmallVector<CollectiveOp> members;
  int64_t bytes = 0;
  /// The position in the block of the op that computes its last gradient.
  int64_t ready = -1;
};

/// Replaces the result of each of `members` by its part of `whole` (1-D):
/// as many elements as it has from its offset, reshaped to its type; then
/// erases the members (last: one may be the op the builder inserts
/// before).
template <typename CollectiveOp>
void replaceBySlices(OpBuilder &builder, Value whole,
                     ArrayRef<CollectiveOp> members,
                     ArrayRef<int64_t> offsets) {
  Type elementType = cast<RankedTensorType>(whole.getType()).getElementType();
  for (auto [index, offset] : llvm::enumerate(offsets)) {
    CollectiveOp member = members[index];
    auto type = cast<RankedTensorType>(member.getType());
    int64_t size = type.getNumElements();
    Value part = SliceOp::create(
        builder, member.getLoc(), RankedTensorType::get({size}, elementType),
        whole, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{offset + size},
        ArrayRef<int64_t>{1});
    if (type.getRank() != 1)
      part = ReshapeOp::create(builder, member.getLoc(), type, part);
    member.getResult().replaceAllUsesWith(part);
  }
  for (CollectiveOp member : members)
    member.erase();
}

/// One bucket, after `after`: flatten, concatenate, all-reduce, slice back.
void rewriteBucket(const Bucket<shard::AllReduceOp> &bucket, Operation *after) {
  shard::AllReduceOp first = bucket.members.front();
  OpBuilder builder(after->getContext());
  builder.setInsertionPointAfter(after);
  SmallVector<Location> locations;
  SmallVector<Value> parts;
  SmallVector<int64_t> offsets;
  int64_t total = 0;
  auto elementType =
      cast<RankedTensorType>(first.getInput().getType()).getElementType();
  for (shard::AllReduceOp member : bucket.members) {
    auto type = cast<RankedTensorType>(member.getInput().getType());
    Location loc = member.getLoc();
    locations.push_back(loc);
    Value input = member.getInput();
    if (type.getRank() != 1)
      input = ReshapeOp::create(
          builder, loc,
          RankedTensorType::get({type.getNumElements()}, elementType), input);
    parts.push_back(input);
    offsets.push_back(total);
    total += type.getNumElements();
  }
  Location loc = builder.getFusedLoc(locations);
  auto bucketType = RankedTensorType::get({total}, elementType);
  Value joined = ConcatOp::create(builder, loc, bucketType, parts,
                                  builder.getI64IntegerAttr(0));
  auto reduced = shard::AllReduceOp::create(
      builder, loc, bucketType, first.getGrid(), first.getGridAxes(), joined,
      first.getReduction());
  replaceBySlices<shard::AllReduceOp>(builder, reduced, bucket.members,
                                      offsets);
}

/// A reduce-scatter's gradient as [n, s]: its n blocks along the scatter
/// axis, in the group's rank order, one per row (a view when the axis is
/// the first with more than one element, else a transpose).
Value viewAsBlocks(OpBuilder &builder, shard::ReduceScatterOp scatter,
                   int64_t n) {
  Location loc = scatter.getLoc();
  Value input = scatter.getInput();
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  int64_t axis = scatter.getScatterAxis().getSExtValue();
  int64_t outer = 1, size = type.getNumElements();
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getShape()[d];
  int64_t block = size / n;
  if (outer == 1)
    return ReshapeOp::create(
        builder, loc, RankedTensorType::get({n, block}, elementType), input);
  Value split = ReshapeOp::create(
      builder, loc,
      RankedTensorType::get({outer, n, block / outer}, elementType), input);
  Value ranksFirst = TransposeOp::create(
      builder, loc,
      RankedTensorType::get({n, outer, block / outer}, elementType), split,
      ArrayRef<int64_t>{1, 0, 2});
  return ReshapeOp::create(
      builder, loc, RankedTensorType::get({n, block}, elementType), ranksFirst);
}

/// The devices a reduce-scatter splits its gradient among.
int64_t getGroupSize(shard::ReduceScatterOp scatter) {
  int64_t axis = scatter.getScatterAxis().getSExtValue();
  return cast<RankedTensorType>(scatter.getInput().getType()).getShape()[axis] /
         cast<RankedTensorType>(scatter.getType()).getShape()[axis];
}

/// One bucket of reduce-scatters (ZeRO-2 and 3's gradients), after
/// `after`: each gradient as the rows of its blocks ([n, s]), the rows
/// concatenated ([n, S]: the copy FSDP makes into its flat buffer), one
/// reduce-scatter of the whole, and each gradient's block a slice of its
/// result.
void rewriteBucket(const Bucket<shard::ReduceScatterOp> &bucket,
                   Operation *after) {
  shard::ReduceScatterOp first = bucket.members.front();
  int64_t n = getGroupSize(first);
  OpBuilder builder(after->getContext());
  builder.setInsertionPointAfter(after);
  auto elementType =
      cast<RankedTensorType>(first.getInput().getType()).getElementType();
  SmallVector<Location> locations;
  SmallVector<Value> rows;
  SmallVector<int64_t> offsets;
  int64_t total = 0;
  for (shard::ReduceScatterOp member : bucket.members) {
    locations.push_back(member.getLoc());
    rows.push_back(viewAsBlocks(builder, member, n));
    offsets.push_back(total);
    total += cast<RankedTensorType>(member.getType()).getNumElements();
  }
  Location loc = builder.getFusedLoc(locations);
  Value joined = ConcatOp::create(
      builder, loc, RankedTensorType::get({n, total}, elementType), rows,
      builder.getI64IntegerAttr(1));
  Value flat = ReshapeOp::create(
      builder, loc, RankedTensorType::get({n * total}, elementType), joined);
  auto scattered = shard::ReduceScatterOp::create(
      builder, loc, RankedTensorType::get({total}, elementType),
      first.getGrid(), first.getGridAxes(), flat, first.getReduction(),
      APInt(64, 0));
  replaceBySlices<shard::ReduceScatterOp>(builder, scattered, bucket.members,
                                          offsets);
}

/// What gradients must share to be reduced together.
template <typename CollectiveOp> std::string getBucketKey(CollectiveOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op.getGrid() << "|";
  llvm::interleaveComma(op.getGridAxes(), os);
  os << "|" << shard::stringifyReductionKind(op.getReduction()) << "|"
     << cast<RankedTensorType>(op.getInput().getType()).getElementType();
  if constexpr (std::is_same_v<CollectiveOp, shard::ReduceScatterOp>)
    os << "|" << getGroupSize(op);
  return key;
}

/// Whether `collective` reduces a gradient the step computes, as one of
/// its buckets can: a sum or an average of a static tensor of whole bytes.
template <typename CollectiveOp>
bool isBucketable(CollectiveOp collective, const StepStructure &structure) {
  auto type = dyn_cast<RankedTensorType>(collective.getInput().getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      type.getNumElements() == 0 || type.getElementTypeBitWidth() % 8 ||
      !structure.gradients.contains(collective.getInput()) ||
      (collective.getReduction() != shard::ReductionKind::Sum &&
       collective.getReduction() != shard::ReductionKind::Average))
    return false;
  if constexpr (std::is_same_v<CollectiveOp, shard::AllReduceOp>) {
    return type == collective.getType();
  } else {
    auto result = cast<RankedTensorType>(collective.getType());
    int64_t axis = collective.getScatterAxis().getSExtValue();
    return result.hasStaticShape() && axis >= 0 && axis < type.getRank() &&
           result.getShape()[axis] > 0 &&
           type.getShape()[axis] % result.getShape()[axis] == 0;
  }
}

/// Whether copying the gradient of `scatter` into a bucket (twice when its
/// blocks need a transpose first: read and written each time, at the
/// device's memory bandwidth) costs less than the latency terms of its own
/// reduce-scatter, which the bucket saves. Large gradients are
/// bandwidth-bound: they stay alone, copied nowhere.
bool isWorthCopying(shard::ReduceScatterOp scatter, const DeviceSpec &device) {
  FailureOr<CollectiveCost> cost = estimateCollectiveCost(scatter, device);
  if (failed(cost) || device.hbmBandwidth <= 0)
    return false;
  auto type = cast<RankedTensorType>(scatter.getInput().getType());
  int64_t axis = scatter.getScatterAxis().getSExtValue();
  bool transposed = llvm::any_of(type.getShape().take_front(axis),
                                 [](int64_t size) { return size != 1; });
  double copy =
      (transposed ? 4.0 : 2.0) * getTensorByteSize(type) / device.hbmBandwidth;
  double latency =
      estimateCollectiveCost(CollectiveKind::ReduceScatter, cost->groupSize, 0,
                             cost->link, device)
          .time;
  return copy < latency;
}

/// Whether the step's collectives take longer than its kernels (the cost
/// model's sums of each): then what reduce-scatter buckets save is time
/// the step waits for, and their copies, which run on the compute stream,
/// fit in its idle time. In a compute-bound step the reduce-scatters are
/// hidden behind the backward already, and the copies would only add to
/// it.
bool isCommunicationBound(Block &body, const DeviceSpec &device) {
  double compute = 0, communication = 0;
  for (Operation &op : body) {
    if (getCollectiveKind(&op)) {
      FailureOr<CollectiveCost> cost = estimateCollectiveCost(&op, device);
      if (succeeded(cost))
        communication += cost->time;
    } else if (!op.hasTrait<::mlir::OpTrait::IsTerminator>()) {
      compute += estimateOpTime(&op, device).time;
    }
  }
  return communication > compute;
}

/// Merges the gradient collectives of one kind into buckets, in the order
/// their gradients are computed, and rewrites each bucket of two or more.
/// `device` decides which reduce-scatters are worth copying in.
template <typename CollectiveOp>
void bucketAll(Block &body, ArrayRef<Operation *> ops,
               const DenseMap<Operation *, int64_t> &position,
               const StepStructure &structure, const DeviceSpec &device,
               int64_t bucketBytes, int64_t &numBuckets, int64_t &numMembers) {
  auto positionOf = [&](Value value) -> int64_t {
    Operation *def = value.getDefiningOp();
    Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
    return top ? position.lookup(top) : -1;
  };
  // The gradient collectives, by the position of their gradient.
  SmallVector<std::pair<int64_t, CollectiveOp>> candidates;
  for (auto collective : body.getOps<CollectiveOp>()) {
    if (!isBucketable(collective, structure))
      continue;
    if constexpr (std::is_same_v<CollectiveOp, shard::ReduceScatterOp>)
      if (!isWorthCopying(collective, device))
        continue;
    int64_t ready = positionOf(collective.getInput());
    if (ready >= 0)
      candidates.emplace_back(ready, collective);
  }
  llvm::stable_sort(candidates, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });

  // Whether every reader of `collective` comes after position `ready`.
  auto readAfter = [&](CollectiveOp collective, int64_t ready) {
    return llvm::all_of(collective->getUsers(), [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return top && position.lookup(top) > ready;
    });
  };
  // Open buckets by what their members share.
  std::map<std::string, Bucket<CollectiveOp>> open;
  SmallVector<Bucket<CollectiveOp>> closed;
  for (auto [ready, collective] : candidates) {
    Bucket<CollectiveOp> &bucket = open[getBucketKey(collective)];
    // A bucket goes once its last gradient exists: it closes before a
    // gradient whose collective is read before then.
    int64_t later = std::max(bucket.ready, ready);
    if (!bucket.members.empty() &&
        (!readAfter(collective, later) ||
         !llvm::all_of(bucket.members, [&](CollectiveOp member) {
           return readAfter(member, later);
         }))) {
      closed.push_back(std::move(bucket));
      bucket = Bucket<CollectiveOp>();
      later = ready;
    }
    bucket.members.push_back(collective);
    bucket.ready = later;
    int64_t bytes = getTensorByteSize(
        cast<RankedTensorType>(collective.getInput().getType()));
    bucket.bytes += bytes;
    // An all-reduce's gradients are written in place in their bucket: what
    // follows one of a size that is not a multiple of the alignment could
    // not be, so it ends its bucket. (A reduce-scatter's are copied.)
    bool unaligned = std::is_same_v<CollectiveOp, shard::AllReduceOp> &&
                     bytes % kInPlaceAlignment;
    if (bucket.bytes >= bucketBytes || unaligned) {
      closed.push_back(std::move(bucket));
      bucket = Bucket<CollectiveOp>();
    }
  }
  for (auto &[key, bucket] : open)
    if (!bucket.members.empty())
      closed.push_back(std::move(bucket));

  // Each bucket goes right after the op that computes its last gradient
  // (never a collective that is itself rewritten).
  DenseSet<Operation *> members;
  for (const Bucket<CollectiveOp> &bucket : closed)
    if (bucket.members.size() > 1)
      for (CollectiveOp member : bucket.members)
        members.insert(member);
  for (const Bucket<CollectiveOp> &bucket : closed) {
    if (bucket.members.size() < 2 || members.contains(ops[bucket.ready]))
      continue;
    ++numBuckets;
    numMembers += bucket.members.size();
    rewriteBucket(bucket, ops[bucket.ready]);
  }
}

struct BucketCollectivesPass
    : public tgc::impl::TGBucketCollectivesBase<BucketCollectivesPass> {
  using TGBucketCollectivesBase::TGBucketCollectivesBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (bucketBytes < 0) {
      function.emitError("tg-bucket-collectives: bucket-bytes must be 0 or "
                         "more, got ")
          << static_cast<int64_t>(bucketBytes);
      return signalPassFailure();
    }
    if (bucketBytes == 0 || function.isExternal())
      return;
    if (failed(checkSingleBlockFunctions(function, "tg-bucket-collectives")))
      return signalPassFailure();
    Block &body = function.getBody().front();
    // A pipeline's stages run their own collectives: not bucketed.
    if (llvm::any_of(body, [](Operation &op) { return getStage(&op); }))
      return;
    if (scatter != "auto" && scatter != "always" && scatter != "never") {
      function.emitError("tg-bucket-collectives: scatter is auto, always or "
                         "never, not '")
          << scatter << "'";
      return signalPassFailure();
    }
    llvm::Expected<DeviceSpec> device = getDeviceOf(function, this->device);
    if (!device) {
      function.emitError("tg-bucket-collectives: ")
          << llvm::toString(device.takeError());
      return signalPassFailure();
    }
    // The block's order and the step's gradients, read again for each
    // kind of collective (the first kind's buckets change the block).
    int64_t numBuckets = 0, numMembers = 0;
    auto bucketKind = [&](auto tag) {
      using CollectiveOp = decltype(tag);
      std::vector<Operation *> ops;
      DenseMap<Operation *, int64_t> position;
      for (Operation &op : body) {
        position[&op] = ops.size();
        ops.push_back(&op);
      }
      StepStructure structure = StepStructure::compute(function);
      bucketAll<CollectiveOp>(body, ops, position, structure, *device,
                              bucketBytes, numBuckets, numMembers);
    };
    bucketKind(shard::AllReduceOp());
    if (scatter == "always" ||
        (scatter == "auto" && isCommunicationBound(body, *device)))
      bucketKind(shard::ReduceScatterOp());
    bucketsMade = numBuckets;
    collectivesMerged = numMembers;
  }
};

} // namespace
