//===- TrainingMemory.cpp - persistent memory of a training step ----------===//

#include "tgc/Analysis/TrainingMemory.h"

#include "tgc/Dialect/TG/TGOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

static void add(MemoryCategory &category, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  ++category.tensors;
  category.elements += tensor.getNumElements();
  category.bytes += tg::getTensorByteSize(tensor);
}

/// The ops that read `value`, looking through fusion regions: a region
/// input is read by its block argument's readers, a yielded value by the
/// readers of the region's result.
static SmallVector<Operation *> getReaders(Value value) {
  SmallVector<Operation *> readers;
  for (OpOperand &use : value.getUses()) {
    Operation *owner = use.getOwner();
    if (auto fusion = dyn_cast<tg::FusionOp>(owner))
      llvm::append_range(readers,
                         getReaders(fusion.getBody().front().getArgument(
                             use.getOperandNumber())));
    else if (isa<tg::YieldOp>(owner) && isa<tg::FusionOp>(owner->getParentOp()))
      llvm::append_range(readers, getReaders(owner->getParentOp()->getResult(
                                      use.getOperandNumber())));
    else
      readers.push_back(owner);
  }
  return readers;
}

/// Whether `op` only feeds a max reduction (the |x| of an amax, which a
/// kernel computes while it quantizes).
static bool feedsMaxOnly(Operation *op) {
  SmallVector<Operation *> readers = getReaders(op->getResult(0));
  return !readers.empty() && llvm::all_of(readers, [](Operation *user) {
    auto reduce = dyn_cast<tg::ReduceOp>(user);
    return reduce && reduce.getKind() == tg::ReduceKind::Max;
  });
}

/// Whether a cast's result is stored: it is not computed inside the one
/// kernel that reads it (a bias cast in its GEMM's epilogue).
static bool isStored(Operation *cast) {
  if (!isa<tg::FusionOp>(cast->getParentOp()))
    return true;
  return llvm::any_of(cast->getUsers(),
                      [](Operation *user) { return isa<tg::YieldOp>(user); });
}

/// The gathered parameter that the all-gather of `block` (a device's
/// block of it) gives: the all-gather's result, or in a bucket of
/// all-gathers (tg-bucket-collectives: the blocks flattened, concatenated,
/// gathered at once, each parameter copied out by one region) the copy-out
/// region's result for it. Null when `block` is not gathered.
static Value getGathered(Value block) {
  SmallVector<Operation *> readers = getReaders(block);
  if (readers.size() != 1)
    return {};
  Operation *reader = readers.front();
  if (auto gather = dyn_cast<shard::AllGatherOp>(reader))
    return gather.getResult();
  if (isa<tg::ReshapeOp>(reader)) {
    if (!reader->hasOneUse())
      return {};
    reader = *reader->getUsers().begin();
  }
  auto concat = dyn_cast<tg::ConcatOp>(reader);
  if (!concat || !concat->hasOneUse())
    return {};
  auto gather = dyn_cast<shard::AllGatherOp>(*concat->getUsers().begin());
  if (!gather || !gather->hasOneUse())
    return {};
  auto rows = dyn_cast<tg::ReshapeOp>(*gather->getUsers().begin());
  if (!rows || !rows->hasOneUse())
    return {};
  auto copyOut = dyn_cast<tg::FusionOp>(*rows->getUsers().begin());
  if (!copyOut || copyOut.getNumResults() != concat.getInputs().size())
    return {};
  // The concatenation's operand that holds `block` (the region's result
  // when a region computes it), maybe flattened.
  Value outside = block;
  for (OpOperand &use : block.getUses())
    if (isa<tg::YieldOp>(use.getOwner()) &&
        isa<tg::FusionOp>(use.getOwner()->getParentOp()))
      outside =
          use.getOwner()->getParentOp()->getResult(use.getOperandNumber());
  for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
    auto reshape = input.getDefiningOp<tg::ReshapeOp>();
    if (input == outside || (reshape && reshape.getOperand() == outside))
      return copyOut.getResult(index);
  }
  return {};
}

/// The low-precision copies of a parameter: its casts (through the loss
/// scaling hook). A copy that only fp8 kernels read (and their amax) is held
/// in fp8.
static void addParameterCopies(MemoryCategory &category, Value param) {
  SmallVector<Value> sources = {param};
  for (Operation *user : getReaders(param))
    if (isa<tg::ScaleGradOp>(user))
      sources.push_back(user->getResult(0));
  for (Value source : sources)
    for (Operation *user : getReaders(source)) {
      auto cast = dyn_cast<tg::ConvertOp>(user);
      if (!cast || !isa<FloatType>(cast.getType().getElementType()) ||
          tg::getElementByteSize(cast.getType().getElementType()) >=
              tg::getElementByteSize(getElementTypeOrSelf(param.getType())) ||
          !isStored(cast))
        continue;
      // Partitioned: ZeRO-1/2 keep the gathered copy of a split master
      // weight from the forward to the backward (one all-gather with several
      // readers); ZeRO-3 gathers it around each use and keeps the slice.
      auto type = llvm::cast<RankedTensorType>(cast.getType());
      if (Value gathered = getGathered(cast.getResult()))
        if (getReaders(gathered).size() > 1)
          type = llvm::cast<RankedTensorType>(gathered.getType());
      ++category.tensors;
      category.elements += type.getNumElements();
      SmallVector<Operation *> users = getReaders(cast.getResult());
      bool onlyFp8 = !users.empty() && llvm::all_of(users, [](Operation *op) {
        return isa<tg::FakeQuantOp>(op) || feedsMaxOnly(op);
      });
      category.bytes +=
          type.getNumElements() *
          (onlyFp8 ? 1 : tg::getElementByteSize(type.getElementType()));
    }
}

/// The buffer an update's operand is read from: a region input for a
/// multi-tensor region's block argument, and, partitioned, the full tensor
/// a `shard.all_slice` cuts the device's part from (ZeRO-1 keeps the
/// all-reduced full gradient and each device updates its slice: the full
/// gradient is what is stored). A reduce-scatter's result (ZeRO-2) is
/// stored as it is.
static Value getStoredValue(Value value, bool isGradient) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    if (auto fusion =
            dyn_cast_or_null<tg::FusionOp>(arg.getOwner()->getParentOp()))
      value = fusion.getInputs()[arg.getArgNumber()];
  // A parameter is stored whole where its update reads a slice of it; a
  // gradient is stored whole where the slice cuts an all-reduce's result
  // (ZeRO-1; a bucket's all-reduce, tg-bucket-collectives, is sliced and
  // reshaped into each gradient first), while a slice of anything else (a
  // padded gradient under ZeRO-2) is all that is kept.
  while (auto slice = value.getDefiningOp<shard::AllSliceOp>()) {
    Value reduced = slice.getInput();
    while (isa_and_nonnull<tg::ReshapeOp, tg::SliceOp>(reduced.getDefiningOp()))
      reduced = reduced.getDefiningOp()->getOperand(0);
    if (isGradient && !reduced.getDefiningOp<shard::AllReduceOp>())
      break;
    value = slice.getInput();
  }
  return value;
}

TrainingMemory TrainingMemory::compute(func::FuncOp step) {
  TrainingMemory memory;
  memory.functionName = step.getName().str();
  for (BlockArgument arg : step.getArguments()) {
    unsigned index = arg.getArgNumber();
    std::optional<tg::Role> role = tg::getArgumentRole(step, index);
    if (role == tg::Role::Param) {
      add(memory.parameters, arg.getType());
      addParameterCopies(memory.parameterCopies, arg);
    } else if (role == tg::Role::State && tg::isModelValue(step, index)) {
      add(memory.buffers, arg.getType());
    } else if (role == tg::Role::State &&
               llvm::none_of(getReaders(arg), [](Operation *user) {
                 return isa<tg::OptimizerOpInterface>(user);
               })) {
      // State that no optimizer update reads is mixed precision's.
      add(memory.scalingState, arg.getType());
    } else if (role == tg::Role::State) {
      add(memory.optimizerState, arg.getType());
    }
  }
  // The gradient buffers are what the updates read (inside fusion regions
  // too), the trained parameters what they update; without updates, the
  // step's gradient results.
  llvm::DenseSet<Value> updated;
  llvm::DenseSet<Value> gradients;
  step.walk([&](tg::OptimizerOpInterface update) {
    // Updates of slices of one gradient (or one parameter) count it once.
    Value gradient = getStoredValue(update.getParamGrad(), /*isGradient=*/true);
    if (gradients.insert(gradient).second)
      add(memory.gradients, gradient.getType());
    Value param =
        getStoredValue(update.getUpdatedParam(), /*isGradient=*/false);
    if (updated.insert(param).second)
      add(memory.trainable, param.getType());
    if (memory.optimizer.empty())
      memory.optimizer = update->getName().stripDialect().str();
  });
  if (memory.gradients.tensors == 0) {
    SmallVector<DictionaryAttr> attrs;
    step.getAllResultAttrs(attrs);
    attrs.resize(step.getNumResults());
    for (auto [type, resultAttrs] : llvm::zip(step.getResultTypes(), attrs))
      if (tg::getRole(resultAttrs) == tg::Role::Grad) {
        add(memory.gradients, type);
        add(memory.trainable, type);
      }
  }
  return memory;
}

void TrainingMemory::print(raw_ostream &os, int64_t modelParams) const {
  double params =
      std::max<int64_t>(1, modelParams > 0 ? modelParams : parameters.elements);
  os << "persistent training memory of @" << functionName << " ("
     << (optimizer.empty() ? "no optimizer" : optimizer) << "), per device\n";
  os << llvm::format("  %-22s %8s %15s %15s %12s\n", "category", "tensors",
                     "elements", "bytes", "bytes/param");
  auto row = [&](const MemoryCategory &c, bool withBytes) {
    os << llvm::format("  %-22s %8lld %15lld", c.name.c_str(),
                       static_cast<long long>(c.tensors),
                       static_cast<long long>(c.elements));
    if (withBytes)
      os << llvm::format(" %15lld %12.2f", static_cast<long long>(c.bytes),
                         c.bytes / params);
    os << "\n";
  };
  row(parameters, true);
  row(trainable, false);
  row(gradients, true);
  row(optimizerState, true);
  if (parameterCopies.tensors)
    row(parameterCopies, true);
  if (scalingState.tensors)
    row(scalingState, true);
  if (buffers.tensors)
    row(buffers, true);
  os << llvm::format("  %-22s %8s %15s %15lld %12.2f\n", "total", "", "",
                     static_cast<long long>(getTotalBytes()),
                     getTotalBytes() / params);
  os << llvm::format("  trainable: %.4f%% of the parameters\n",
                     100.0 * trainable.elements /
                         std::max<int64_t>(1, parameters.elements));
}

nlohmann::json TrainingMemory::toJson() const {
  auto category = [](const MemoryCategory &c) {
    return nlohmann::json{
        {"tensors", c.tensors}, {"elements", c.elements}, {"bytes", c.bytes}};
  };
  return {{"function", functionName},
          {"optimizer", optimizer},
          {"parameters", category(parameters)},
          {"trainable_parameters", category(trainable)},
          {"gradients", category(gradients)},
          {"optimizer_state", category(optimizerState)},
          {"parameter_copies", category(parameterCopies)},
          {"scaling_state", category(scalingState)},
          {"buffers", category(buffers)},
          {"total_bytes", getTotalBytes()}};
}
