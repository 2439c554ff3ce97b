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

struct Bucket {
  SmallVector<shard::AllReduceOp> members;
  int64_t bytes = 0;
  /// The position in the block of the op that computes its last gradient.
  int64_t ready = -1;
};

/// One bucket, after `after`: flatten, concatenate, all-reduce, slice back.
void rewriteBucket(const Bucket &bucket, Operation *after) {
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
  for (auto [index, offset] : llvm::enumerate(offsets)) {
    shard::AllReduceOp member = bucket.members[index];
    auto type = cast<RankedTensorType>(member.getType());
    int64_t size = type.getNumElements();
    Value part = SliceOp::create(
        builder, member.getLoc(), RankedTensorType::get({size}, elementType),
        reduced, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{offset + size},
        ArrayRef<int64_t>{1});
    if (type.getRank() != 1)
      part = ReshapeOp::create(builder, member.getLoc(), type, part);
    member.getResult().replaceAllUsesWith(part);
  }
  // Erased last: a member may be the op the builder inserts before.
  for (shard::AllReduceOp member : bucket.members)
    member.erase();
}

/// What gradients must share to be all-reduced together.
std::string getBucketKey(shard::AllReduceOp reduce) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << reduce.getGrid() << "|";
  llvm::interleaveComma(reduce.getGridAxes(), os);
  os << "|" << shard::stringifyReductionKind(reduce.getReduction()) << "|"
     << cast<RankedTensorType>(reduce.getInput().getType()).getElementType();
  return key;
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
    std::vector<Operation *> ops;
    DenseMap<Operation *, int64_t> position;
    for (Operation &op : body) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    auto positionOf = [&](Value value) -> int64_t {
      Operation *def = value.getDefiningOp();
      Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
      return top ? position.lookup(top) : -1;
    };

    // The gradient all-reduces (a sum or an average of a gradient the step
    // computes), by the position of their gradient.
    StepStructure structure = StepStructure::compute(function);
    SmallVector<std::pair<int64_t, shard::AllReduceOp>> candidates;
    for (auto reduce : body.getOps<shard::AllReduceOp>()) {
      auto type = dyn_cast<RankedTensorType>(reduce.getInput().getType());
      if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
          type.getNumElements() == 0 || type != reduce.getType() ||
          type.getElementTypeBitWidth() % 8 ||
          !structure.gradients.contains(reduce.getInput()) ||
          (reduce.getReduction() != shard::ReductionKind::Sum &&
           reduce.getReduction() != shard::ReductionKind::Average))
        continue;
      int64_t ready = positionOf(reduce.getInput());
      if (ready >= 0)
        candidates.emplace_back(ready, reduce);
    }
    llvm::stable_sort(candidates, [](const auto &a, const auto &b) {
      return a.first < b.first;
    });

    // Whether every reader of `reduce` comes after position `ready`.
    auto readAfter = [&](shard::AllReduceOp reduce, int64_t ready) {
      return llvm::all_of(reduce->getUsers(), [&](Operation *user) {
        Operation *top = body.findAncestorOpInBlock(*user);
        return top && position.lookup(top) > ready;
      });
    };
    // Open buckets by what their members share.
    std::map<std::string, Bucket> open;
    SmallVector<Bucket> closed;
    for (auto [ready, reduce] : candidates) {
      Bucket &bucket = open[getBucketKey(reduce)];
      // A bucket goes once its last gradient exists: it closes before a
      // gradient whose all-reduce is read before then.
      int64_t later = std::max(bucket.ready, ready);
      if (!bucket.members.empty() &&
          (!readAfter(reduce, later) ||
           !llvm::all_of(bucket.members, [&](shard::AllReduceOp member) {
             return readAfter(member, later);
           }))) {
        closed.push_back(std::move(bucket));
        bucket = Bucket();
        later = ready;
      }
      bucket.members.push_back(reduce);
      bucket.ready = later;
      int64_t bytes = getTensorByteSize(
          cast<RankedTensorType>(reduce.getInput().getType()));
      bucket.bytes += bytes;
      // What follows a gradient of a size that is not a multiple of the
      // alignment could not be written in place: it ends its bucket.
      if (bucket.bytes >= bucketBytes || bytes % kInPlaceAlignment) {
        closed.push_back(std::move(bucket));
        bucket = Bucket();
      }
    }
    for (auto &[key, bucket] : open)
      if (!bucket.members.empty())
        closed.push_back(std::move(bucket));

    // Each bucket goes right after the op that computes its last gradient
    // (never an all-reduce that is itself rewritten).
    DenseSet<Operation *> members;
    for (const Bucket &bucket : closed)
      if (bucket.members.size() > 1)
        for (shard::AllReduceOp member : bucket.members)
          members.insert(member);
    int64_t numBuckets = 0, numMembers = 0;
    for (const Bucket &bucket : closed) {
      if (bucket.members.size() < 2 || members.contains(ops[bucket.ready]))
        continue;
      ++numBuckets;
      numMembers += bucket.members.size();
      rewriteBucket(bucket, ops[bucket.ready]);
    }
    bucketsMade = numBuckets;
    allReducesMerged = numMembers;
  }
};

} // namespace
