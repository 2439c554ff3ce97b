//===- BucketCollectives.cpp - tg-bucket-collectives ----------------------===//
//
// Gradient all-reduces merged into buckets (PyTorch DDP's, Megatron's): a
// bucket is one all-reduce of its gradients laid one after the other, each
// gradient a slice of its result. Gradients join buckets in the order they
// are computed, so that each bucket can go as soon as its last gradient
// exists. The memory plan has each gradient's producer write it in place
// inside the bucket and reads each part of the result where it lies
// (docs/memory.md): the buckets cost no copy. ZeRO's gradient
// reduce-scatters and parameter all-gathers form buckets too, at the cost
// of a copy in (reduce-scatters) or out (all-gathers), where the cost
// model says the step waits for its communication.
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

/// The ops of a block in order, and each one's position.
struct BlockOrder {
  explicit BlockOrder(Block &body) : body(body) {
    for (Operation &op : body) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
  }
  /// The position of the op of the block that is or holds `op`; -1 for
  /// none (`op` null: a block argument's).
  int64_t of(Operation *op) const {
    Operation *top = op ? body.findAncestorOpInBlock(*op) : nullptr;
    return top ? position.lookup(top) : -1;
  }
  Block &body;
  std::vector<Operation *> ops;
  DenseMap<Operation *, int64_t> position;
};

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

/// `parts` (one per member of a bucket) concatenated along `dim`, with
/// each one's offset along it; `loc` becomes the members' locations fused.
template <typename CollectiveOp>
Value concatParts(OpBuilder &builder, ArrayRef<CollectiveOp> members,
                  ArrayRef<Value> parts, int64_t dim,
                  SmallVectorImpl<int64_t> &offsets, Location &loc) {
  SmallVector<Location> locations;
  for (CollectiveOp member : members)
    locations.push_back(member.getLoc());
  loc = builder.getFusedLoc(locations);
  auto type = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = 0;
  for (Value part : parts) {
    offsets.push_back(shape[dim]);
    shape[dim] += cast<RankedTensorType>(part.getType()).getShape()[dim];
  }
  return ConcatOp::create(builder, loc,
                          RankedTensorType::get(shape, type.getElementType()),
                          parts, builder.getI64IntegerAttr(dim));
}

/// The members' inputs flattened (views) and concatenated, with each
/// one's offset; `loc` becomes their locations fused.
template <typename CollectiveOp>
Value joinFlattened(OpBuilder &builder, ArrayRef<CollectiveOp> members,
                    SmallVectorImpl<int64_t> &offsets, Location &loc) {
  SmallVector<Value> parts;
  for (CollectiveOp member : members) {
    auto type = cast<RankedTensorType>(member.getInput().getType());
    Value input = member.getInput();
    if (type.getRank() != 1)
      input = ReshapeOp::create(
          builder, member.getLoc(),
          RankedTensorType::get({type.getNumElements()}, type.getElementType()),
          input);
    parts.push_back(input);
  }
  return concatParts(builder, members, ArrayRef<Value>(parts), 0, offsets, loc);
}

/// One bucket, after `after`: flatten, concatenate, all-reduce, slice back.
void rewriteBucket(const Bucket<shard::AllReduceOp> &bucket, Operation *after) {
  shard::AllReduceOp first = bucket.members.front();
  OpBuilder builder(after->getContext());
  builder.setInsertionPointAfter(after);
  SmallVector<int64_t> offsets;
  Location loc = first.getLoc();
  Value joined =
      joinFlattened<shard::AllReduceOp>(builder, bucket.members, offsets, loc);
  auto reduced = shard::AllReduceOp::create(
      builder, loc, joined.getType(), first.getGrid(), first.getGridAxes(),
      joined, first.getReduction());
  replaceBySlices<shard::AllReduceOp>(builder, reduced, bucket.members,
                                      offsets);
}

/// The elements of `type` before dimension `axis`: the number of runs in
/// which the blocks along `axis` interleave in memory (1: they lie one
/// after the other).
int64_t getOuterSize(RankedTensorType type, int64_t axis) {
  int64_t outer = 1;
  for (int64_t size : type.getShape().take_front(axis))
    outer *= size;
  return outer;
}

/// The latency terms of `collective` alone: what it costs with no bytes.
std::optional<double> getLatencyTerms(Operation *collective,
                                      const DeviceSpec &device) {
  FailureOr<CollectiveCost> cost = estimateCollectiveCost(collective, device);
  if (failed(cost))
    return std::nullopt;
  return estimateCollectiveCost(cost->kind, cost->groupSize, 0, cost->link,
                                device)
      .time;
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
  int64_t outer = getOuterSize(type, scatter.getScatterAxis().getSExtValue());
  int64_t block = type.getNumElements() / n;
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
  SmallVector<Value> rows;
  for (shard::ReduceScatterOp member : bucket.members)
    rows.push_back(viewAsBlocks(builder, member, n));
  SmallVector<int64_t> offsets;
  Location loc = first.getLoc();
  Value joined = concatParts<shard::ReduceScatterOp>(builder, bucket.members,
                                                     rows, 1, offsets, loc);
  auto joinedType = cast<RankedTensorType>(joined.getType());
  Type elementType = joinedType.getElementType();
  int64_t total = joinedType.getShape()[1];
  Value flat = ReshapeOp::create(
      builder, loc, RankedTensorType::get({n * total}, elementType), joined);
  auto scattered = shard::ReduceScatterOp::create(
      builder, loc, RankedTensorType::get({total}, elementType),
      first.getGrid(), first.getGridAxes(), flat, first.getReduction(),
      APInt(64, 0));
  replaceBySlices<shard::ReduceScatterOp>(builder, scattered, bucket.members,
                                          offsets);
}

/// The devices an all-gather joins blocks from.
int64_t getGroupSize(shard::AllGatherOp gather) {
  int64_t axis = gather.getGatherAxis().getSExtValue();
  return cast<RankedTensorType>(gather.getType()).getShape()[axis] /
         cast<RankedTensorType>(gather.getInput().getType()).getShape()[axis];
}

/// The runs in which the blocks an all-gather joins interleave (1: they
/// lie one after the other; else a bucket needs a transpose to put the
/// parameter back together).
int64_t getOuterSize(shard::AllGatherOp gather) {
  return getOuterSize(cast<RankedTensorType>(gather.getInput().getType()),
                      gather.getGatherAxis().getSExtValue());
}

/// What gradients must share to be reduced together (parameters, to be
/// gathered together).
template <typename CollectiveOp> std::string getBucketKey(CollectiveOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op.getGrid() << "|";
  llvm::interleaveComma(op.getGridAxes(), os);
  if constexpr (!std::is_same_v<CollectiveOp, shard::AllGatherOp>)
    os << "|" << shard::stringifyReductionKind(op.getReduction());
  os << "|" << cast<RankedTensorType>(op.getInput().getType()).getElementType();
  if constexpr (!std::is_same_v<CollectiveOp, shard::AllReduceOp>)
    os << "|" << getGroupSize(op);
  return key;
}

/// One bucket of parameter all-gathers (ZeRO's), after `after` (at the
/// start of the block when null): each device's blocks flattened and
/// concatenated ([S]), one all-gather of the whole ([n * S], the devices'
/// buckets one after the other), and each parameter cut from it: its
/// columns of the [n, S] view (a copy, as FSDP's copy-out), through a
/// transpose when its blocks interleave.
void rewriteBucket(const Bucket<shard::AllGatherOp> &bucket, Operation *after) {
  shard::AllGatherOp first = bucket.members.front();
  int64_t n = getGroupSize(first);
  OpBuilder builder(first->getContext());
  if (after)
    builder.setInsertionPointAfter(after);
  else
    builder.setInsertionPointToStart(first->getBlock());
  SmallVector<int64_t> offsets;
  Location loc = first.getLoc();
  Value joined =
      joinFlattened<shard::AllGatherOp>(builder, bucket.members, offsets, loc);
  auto joinedType = cast<RankedTensorType>(joined.getType());
  Type elementType = joinedType.getElementType();
  int64_t total = joinedType.getNumElements();
  auto gathered = shard::AllGatherOp::create(
      builder, loc, RankedTensorType::get({n * total}, elementType),
      first.getGrid(), first.getGridAxes(), joined, APInt(64, 0));
  auto rowsType = RankedTensorType::get({n, total}, elementType);
  Value rows = ReshapeOp::create(builder, loc, rowsType, gathered);
  // One kernel copies every parameter out (a multi-tensor region).
  SmallVector<Type> types;
  for (shard::AllGatherOp member : bucket.members)
    types.push_back(member.getType());
  auto copyOut = FusionOp::create(builder, loc, types, ValueRange{rows});
  copyOut.setKind("multi_tensor");
  OpBuilder::InsertionGuard guard(builder);
  Block *region =
      builder.createBlock(&copyOut.getBody(), {}, {rowsType}, {loc});
  SmallVector<Value> parameters;
  for (auto [index, offset] : llvm::enumerate(offsets)) {
    shard::AllGatherOp member = bucket.members[index];
    Location memberLoc = member.getLoc();
    auto inputType = cast<RankedTensorType>(member.getInput().getType());
    int64_t size = inputType.getNumElements();
    Value part = SliceOp::create(
        builder, memberLoc, RankedTensorType::get({n, size}, elementType),
        region->getArgument(0), ArrayRef<int64_t>{0, offset},
        ArrayRef<int64_t>{n, offset + size}, ArrayRef<int64_t>{1, 1});
    if (int64_t outer = getOuterSize(member); outer != 1) {
      Value split = ReshapeOp::create(
          builder, memberLoc,
          RankedTensorType::get({n, outer, size / outer}, elementType), part);
      part = TransposeOp::create(
          builder, memberLoc,
          RankedTensorType::get({outer, n, size / outer}, elementType), split,
          ArrayRef<int64_t>{1, 0, 2});
    }
    parameters.push_back(
        ReshapeOp::create(builder, memberLoc, member.getType(), part));
  }
  YieldOp::create(builder, loc, parameters);
  for (auto [index, parameter] : llvm::enumerate(copyOut.getResults())) {
    shard::AllGatherOp member = bucket.members[index];
    member.getResult().replaceAllUsesWith(parameter);
    member.erase();
  }
}

/// Rewrites each of `buckets` of two or more right after the op that
/// computes its last member's input (at the block's start when none
/// does), unless that op is a collective rewritten itself.
template <typename CollectiveOp>
void rewriteBuckets(ArrayRef<Bucket<CollectiveOp>> buckets,
                    const BlockOrder &order, int64_t &numBuckets,
                    int64_t &numMembers) {
  DenseSet<Operation *> members;
  for (const Bucket<CollectiveOp> &bucket : buckets)
    if (bucket.members.size() > 1)
      for (CollectiveOp member : bucket.members)
        members.insert(member);
  for (const Bucket<CollectiveOp> &bucket : buckets) {
    Operation *after = bucket.ready >= 0 ? order.ops[bucket.ready] : nullptr;
    if (bucket.members.size() < 2 || (after && members.contains(after)))
      continue;
    ++numBuckets;
    numMembers += bucket.members.size();
    rewriteBucket(bucket, after);
  }
}

/// Whether `gather` joins a parameter's blocks (ZeRO's all-gathers): what
/// it gathers is computed from the step's parameters and state alone (a
/// low-precision copy, or the parameter itself), or by the optimizer (an
/// updated parameter). Activations (sequence parallelism's gathers) depend
/// on the batch and are left alone.
bool isParameterGather(shard::AllGatherOp gather,
                       const DenseSet<Value> &onBatch,
                       const StepStructure &structure) {
  auto type = dyn_cast<RankedTensorType>(gather.getInput().getType());
  auto resultType = dyn_cast<RankedTensorType>(gather.getType());
  int64_t axis = gather.getGatherAxis().getSExtValue();
  if (!type || !resultType || !type.hasStaticShape() ||
      !resultType.hasStaticShape() || type.getRank() == 0 ||
      type.getNumElements() == 0 || type.getElementTypeBitWidth() % 8 ||
      axis < 0 || axis >= type.getRank() || type.getShape()[axis] == 0 ||
      resultType.getShape()[axis] % type.getShape()[axis])
    return false;
  Operation *def = gather.getInput().getDefiningOp();
  return !onBatch.contains(gather.getInput()) ||
         (def && structure.getPhase(def) == Phase::Optimizer);
}

/// Whether cutting the parameter of `gather` out of a bucket (its local
/// block copied in, its gathered columns copied out, twice when they need
/// a transpose: each read and written at the device's memory bandwidth)
/// costs less than the latency terms of its own all-gather, which the
/// bucket saves. Large parameters are bandwidth-bound: they stay alone.
bool isWorthCopying(shard::AllGatherOp gather, const DeviceSpec &device) {
  std::optional<double> latency = getLatencyTerms(gather, device);
  if (!latency || device.hbmBandwidth <= 0)
    return false;
  int64_t in =
      getTensorByteSize(cast<RankedTensorType>(gather.getInput().getType()));
  int64_t out = getTensorByteSize(cast<RankedTensorType>(gather.getType()));
  double copy = (2.0 * in + (getOuterSize(gather) != 1 ? 4.0 : 2.0) * out) /
                device.hbmBandwidth;
  return copy < *latency;
}

/// Merges ZeRO's parameter all-gathers into buckets, in the order of
/// their first readers (the order the step needs the parameters in): a
/// bucket closes once it gathers `bucketBytes`, before a parameter whose
/// block is computed only after the bucket's first reader, and before one
/// first read after every parameter of the bucket has been read for the
/// last time (the bucket would keep it gathered longer: ZeRO-3 gathers a
/// parameter around each use, and only the parameters one op reads
/// together, a weight and its bias, share a bucket). Each bucket of two or
/// more goes right after the op that computes its last block.
void bucketGathers(func::FuncOp function, const BlockOrder &order,
                   const StepStructure &structure, const DeviceSpec &device,
                   int64_t bucketBytes, int64_t &numBuckets,
                   int64_t &numMembers) {
  Block &body = order.body;
  DenseSet<Value> onBatch =
      getValuesDependingOn(body, getBatchArguments(function));
  struct Candidate {
    int64_t firstRead;
    int64_t lastRead;
    int64_t ready;
    shard::AllGatherOp gather;
  };
  SmallVector<Candidate> candidates;
  for (auto gather : body.getOps<shard::AllGatherOp>()) {
    if (!isParameterGather(gather, onBatch, structure) ||
        !isWorthCopying(gather, device) || gather->use_empty())
      continue;
    int64_t firstRead = std::numeric_limits<int64_t>::max(), lastRead = -1;
    for (Operation *user : gather->getUsers()) {
      firstRead = std::min(firstRead, order.of(user));
      lastRead = std::max(lastRead, order.of(user));
    }
    candidates.push_back({firstRead, lastRead,
                          order.of(gather.getInput().getDefiningOp()), gather});
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return std::tie(a.firstRead, a.ready) < std::tie(b.firstRead, b.ready);
  });

  struct GatherBucket {
    Bucket<shard::AllGatherOp> bucket;
    int64_t firstRead = 0;
    int64_t lastRead = 0;
  };
  std::map<std::string, GatherBucket> open;
  SmallVector<Bucket<shard::AllGatherOp>> closed;
  for (Candidate candidate : candidates) {
    GatherBucket &current = open[getBucketKey(candidate.gather)];
    Bucket<shard::AllGatherOp> &bucket = current.bucket;
    if (!bucket.members.empty() &&
        (std::max(bucket.ready, candidate.ready) >= current.firstRead ||
         candidate.firstRead > current.lastRead)) {
      closed.push_back(std::move(bucket));
      bucket = Bucket<shard::AllGatherOp>();
    }
    if (bucket.members.empty()) {
      current.firstRead = candidate.firstRead;
      current.lastRead = candidate.lastRead;
    }
    current.lastRead = std::max(current.lastRead, candidate.lastRead);
    bucket.members.push_back(candidate.gather);
    bucket.ready = std::max(bucket.ready, candidate.ready);
    bucket.bytes +=
        getTensorByteSize(cast<RankedTensorType>(candidate.gather.getType()));
    if (bucket.bytes >= bucketBytes) {
      closed.push_back(std::move(bucket));
      bucket = Bucket<shard::AllGatherOp>();
    }
  }
  for (auto &[key, current] : open)
    if (!current.bucket.members.empty())
      closed.push_back(std::move(current.bucket));
  rewriteBuckets<shard::AllGatherOp>(closed, order, numBuckets, numMembers);
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
  std::optional<double> latency = getLatencyTerms(scatter, device);
  if (!latency || device.hbmBandwidth <= 0)
    return false;
  auto type = cast<RankedTensorType>(scatter.getInput().getType());
  bool transposed =
      getOuterSize(type, scatter.getScatterAxis().getSExtValue()) != 1;
  double copy =
      (transposed ? 4.0 : 2.0) * getTensorByteSize(type) / device.hbmBandwidth;
  return copy < *latency;
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
void bucketAll(const BlockOrder &order, const StepStructure &structure,
               const DeviceSpec &device, int64_t bucketBytes,
               int64_t &numBuckets, int64_t &numMembers) {
  Block &body = order.body;
  // The gradient collectives, by the position of their gradient.
  SmallVector<std::pair<int64_t, CollectiveOp>> candidates;
  for (auto collective : body.getOps<CollectiveOp>()) {
    if (!isBucketable(collective, structure))
      continue;
    if constexpr (std::is_same_v<CollectiveOp, shard::ReduceScatterOp>)
      if (!isWorthCopying(collective, device))
        continue;
    int64_t ready = order.of(collective.getInput().getDefiningOp());
    if (ready >= 0)
      candidates.emplace_back(ready, collective);
  }
  llvm::stable_sort(candidates, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });

  // Whether every reader of `collective` comes after position `ready`.
  auto readAfter = [&](CollectiveOp collective, int64_t ready) {
    return llvm::all_of(collective->getUsers(), [&](Operation *user) {
      return order.of(user) > ready;
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

  rewriteBuckets<CollectiveOp>(closed, order, numBuckets, numMembers);
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
    for (auto [name, value] :
         {std::pair<StringRef, StringRef>("scatter", scatter),
          {"gather", gather}})
      if (value != "auto" && value != "always" && value != "never") {
        function.emitError("tg-bucket-collectives: ")
            << name << " is auto, always or never, not '" << value << "'";
        return signalPassFailure();
      }
    llvm::Expected<DeviceSpec> device = getDeviceOf(function, this->device);
    if (!device) {
      function.emitError("tg-bucket-collectives: ")
          << llvm::toString(device.takeError());
      return signalPassFailure();
    }
    // The block's order and the step's gradients, read again for each
    // kind of collective (each kind's buckets change the block).
    int64_t numBuckets = 0, numMembers = 0;
    auto bucketKind = [&](auto tag) {
      using CollectiveOp = decltype(tag);
      StepStructure structure = StepStructure::compute(function);
      bucketAll<CollectiveOp>(BlockOrder(body), structure, *device, bucketBytes,
                              numBuckets, numMembers);
    };
    bucketKind(shard::AllReduceOp());
    if (scatter == "always" ||
        (scatter == "auto" && isCommunicationBound(body, *device)))
      bucketKind(shard::ReduceScatterOp());
    if (gather == "always" ||
        (gather == "auto" && isCommunicationBound(body, *device))) {
      bucketGathers(function, BlockOrder(body),
                    StepStructure::compute(function), *device, bucketBytes,
                    numBuckets, numMembers);
    }
    bucketsMade = numBuckets;
    collectivesMerged = numMembers;
  }
};

} // namespace
