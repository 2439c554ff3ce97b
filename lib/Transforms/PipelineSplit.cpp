//===- PipelineSplit.cpp - tg-pipeline-split: cut a model into stages -----===//
//
// Gives every op of the forward a tg.stage: the ops on the path of the batch
// are cut, in block order, into P*V contiguous stages of balanced modelled
// time (at layer boundaries when the parameter names number the layers);
// the ops that only read parameters and constants (casts, masks) join the
// stages that use them, copied to each stage that does.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "tg-pipeline-split"

namespace tgc {
#define GEN_PASS_DEF_TGPIPELINESPLIT
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {

/// The layer a parameter name numbers: the first all-digit component
/// between dots (`h.3.attn.c_attn.weight`, `model.layers.3.mlp.up`).
std::optional<int64_t> getLayerNumber(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  for (auto [i, part] : llvm::enumerate(parts)) {
    if (i + 1 == parts.size())
      break; // The last component names the tensor, not a layer.
    int64_t number;
    if (!part.empty() &&
        llvm::all_of(part, [](char c) { return llvm::isDigit(c); }) &&
        !part.getAsInteger(10, number))
      return number;
  }
  return std::nullopt;
}

/// A run of consecutive batch-path ops that a cut may not split.
struct Group {
  /// Index of the group's first op in the batch-path order.
  size_t begin = 0;
  double time = 0;
  /// The numbered layer the group reads (-1: none).
  int64_t layer = -1;
};

/// Cuts `groups` (in order, with their times) into `parts` contiguous
/// non-empty runs minimizing the slowest run: the first group of each run.
SmallVector<size_t> balance(ArrayRef<double> times, int64_t parts) {
  size_t n = times.size();
  auto countRuns = [&](double bound) {
    int64_t runs = 1;
    double sum = 0;
    for (double t : times) {
      if (sum + t > bound && sum > 0) {
        ++runs;
        sum = 0;
      }
      sum += t;
    }
    return runs;
  };
  double lo = 0, hi = 0;
  for (double t : times) {
    lo = std::max(lo, t);
    hi += t;
  }
  for (int iteration = 0; iteration < 100 && hi - lo > 1e-12 * hi;
       ++iteration) {
    double mid = (lo + hi) / 2;
    if (countRuns(mid) <= parts)
      hi = mid;
    else
      lo = mid;
  }
  // Greedy runs under the bound, then split the longest runs until there
  // are `parts` of them (splitting never raises the slowest).
  SmallVector<size_t> starts{0};
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (sum + times[i] > hi * (1 + 1e-9) && sum > 0) {
      starts.push_back(i);
      sum = 0;
    }
    sum += times[i];
  }
  while (static_cast<int64_t>(starts.size()) < parts) {
    // The run with the most groups, split in its middle.
    size_t best = 0, bestLength = 0;
    for (size_t r = 0; r < starts.size(); ++r) {
      size_t end = r + 1 < starts.size() ? starts[r + 1] : n;
      if (end - starts[r] > bestLength) {
        bestLength = end - starts[r];
        best = r;
      }
    }
    starts.insert(starts.begin() + best + 1, starts[best] + bestLength / 2);
  }
  return starts;
}

struct TGPipelineSplitPass
    : tgc::impl::TGPipelineSplitBase<TGPipelineSplitPass> {
  using TGPipelineSplitBase::TGPipelineSplitBase;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-pipeline-split")))
      return signalPassFailure();
    PipelineConfig config;
    config.axis = axis;
    config.stages = stages;
    config.virtualStages = virtualStages;
    config.microBatches = microBatches;
    std::optional<PipelineScheduleKind> kind =
        symbolizePipelineScheduleKind(schedule);
    if (!kind) {
      getOperation().emitError("tg-pipeline-split: unknown schedule '")
          << schedule << "' (expected gpipe, 1f1b or interleaved)";
      return signalPassFailure();
    }
    config.schedule = *kind;
    if (std::string why = config.validate(); !why.empty()) {
      getOperation().emitError("tg-pipeline-split: ") << why;
      return signalPassFailure();
    }
    if (config.getNumStages() == 1)
      return;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::Expected<DeviceSpec> spec = getDeviceOf(func, device);
      if (!spec) {
        func.emitError() << "tg-pipeline-split: "
                         << llvm::toString(spec.takeError());
        return signalPassFailure();
      }
      if (failed(split(func, config, *spec)))
        return signalPassFailure();
    }
  }

  LogicalResult split(func::FuncOp func, const PipelineConfig &config,
                      const DeviceSpec &spec);
};

LogicalResult TGPipelineSplitPass::split(func::FuncOp func,
                                         const PipelineConfig &config,
                                         const DeviceSpec &spec) {
  if (func->hasAttr(kPipelineAttrName))
    return func.emitError("tg-pipeline-split: @")
           << func.getName() << " is already split into stages";
  Block &body = func.getBody().front();
  int64_t numStages = config.getNumStages();

  // The batch path: the ops that depend on an input or label argument (on
  // any argument when the function marks none).
  SmallVector<Value> batch = getBatchArguments(func);
  if (batch.empty())
    batch.assign(body.args_begin(), body.args_end());
  llvm::DenseSet<Value> onPath = getValuesDependingOn(body, batch);
  SmallVector<Operation *> pathOps;
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return onPath.contains(v); }))
      pathOps.push_back(&op);
  if (static_cast<int64_t>(pathOps.size()) < numStages)
    return func.emitError("tg-pipeline-split: ")
           << numStages << " pipeline stages need at least as many ops on the "
           << "path of the batch; @" << func.getName() << " has "
           << pathOps.size();

  // The layer each value reads its parameters from (through casts and the
  // other parameter-only ops), -1 for a parameter its name numbers no layer.
  llvm::DenseMap<Value, int64_t> layerOf;
  for (BlockArgument arg : body.getArguments()) {
    if (tg::getArgumentRole(func, arg.getArgNumber()) != tg::Role::Param)
      continue;
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  tg::TGDialect::kNameAttrName);
    std::optional<int64_t> layer =
        name ? getLayerNumber(name.getValue()) : std::nullopt;
    layerOf[arg] = layer.value_or(-1);
  }
  for (Operation &op : body.without_terminator()) {
    if (onPath.contains(op.getNumResults() ? op.getResult(0) : Value()))
      continue;
    for (Value operand : op.getOperands())
      if (auto it = layerOf.find(operand); it != layerOf.end()) {
        for (Value result : op.getResults())
          layerOf[result] = it->second;
        break;
      }
  }

  // Groups of the batch path: a new one where the numbered layer the ops
  // read changes, or where unnumbered parameters follow numbered ones (the
  // head after the last layer).
  SmallVector<Group> groups;
  std::optional<int64_t> current; // The current group's layer (-1: none).
  bool sawLayer = false;
  SmallVector<size_t> groupOf(pathOps.size());
  for (auto [i, op] : llvm::enumerate(pathOps)) {
    std::optional<int64_t> layer;
    for (Value operand : op->getOperands())
      if (auto it = layerOf.find(operand); it != layerOf.end()) {
        layer = it->second;
        if (*layer >= 0)
          break;
      }
    bool startsGroup = groups.empty();
    if (layer && *layer >= 0 && layer != current) {
      startsGroup = true;
      current = layer;
      sawLayer = true;
    } else if (layer && *layer < 0 && current && *current >= 0) {
      startsGroup = true;
      current = -1;
    }
    if (startsGroup)
      groups.push_back({i, 0, current.value_or(-1)});
    groupOf[i] = groups.size() - 1;
    groups.back().time += estimateOpTime(op, spec).time;
  }
  if (!sawLayer) {
    // No numbered layers: any op boundary is a cut.
    groups.clear();
    for (auto [i, op] : llvm::enumerate(pathOps)) {
      groups.push_back({i, estimateOpTime(op, spec).time, -1});
      groupOf[i] = i;
    }
  } else if (static_cast<int64_t>(groups.size()) < numStages) {
    return func.emitError("tg-pipeline-split: ")
           << numStages << " pipeline stages"
           << (config.virtualStages > 1
                   ? " (" + std::to_string(config.stages) + " x " +
                         std::to_string(config.virtualStages) + " virtual)"
                   : std::string())
           << " but @" << func.getName() << " has " << groups.size()
           << (groups.size() == 1 ? " layer" : " layers")
           << " (counting the ops before the first and after the last): at "
              "most one stage per layer";
  }
  SmallVector<double> times = llvm::map_to_vector(
      groups, [](const Group &group) { return group.time; });
  SmallVector<size_t> starts = balance(times, numStages);
  SmallVector<int64_t> stageOfGroup(groups.size());
  for (size_t g = 0, s = 0; g < groups.size(); ++g) {
    while (s + 1 < starts.size() && starts[s + 1] <= g)
      ++s;
    stageOfGroup[g] = s;
  }
  llvm::DenseMap<Operation *, int64_t> stageOf;
  for (auto [i, op] : llvm::enumerate(pathOps))
    stageOf[op] = stageOfGroup[groupOf[i]];
  if (explain) {
    // Each stage's share: its ops, its layers, its modelled forward time.
    for (int64_t stage = 0; stage < numStages; ++stage) {
      double time = 0;
      int64_t firstLayer = -1, lastLayer = -1;
      size_t ops = 0, first = pathOps.size(), last = 0;
      for (auto [g, group] : llvm::enumerate(groups)) {
        if (stageOfGroup[g] != stage)
          continue;
        time += group.time;
        if (group.layer >= 0) {
          firstLayer = firstLayer < 0 ? group.layer : firstLayer;
          lastLayer = group.layer;
        }
        size_t end =
            g + 1 < groups.size() ? groups[g + 1].begin : pathOps.size();
        ops += end - group.begin;
        first = std::min(first, group.begin);
        last = std::max(last, end);
      }
      InFlightDiagnostic remark = emitRemark(pathOps[first]->getLoc())
                                  << "tg-pipeline-split: stage " << stage
                                  << " (pp device " << config.getDevice(stage)
                                  << ", chunk " << config.getChunk(stage)
                                  << "): " << ops << " ops of the batch path";
      if (firstLayer >= 0)
        remark << ", layers " << firstLayer << " to " << lastLayer;
      remark << ", modelled forward time "
             << llvm::formatv("{0:e3}", time).str() << " s";
    }
  }

  // The parameter-only ops join the stages of their users, copied once per
  // stage beyond the first (last ops first, so that a copy's operands see
  // its users).
  SmallVector<Operation *> rest;
  for (Operation &op : body.without_terminator())
    if (!stageOf.count(&op))
      rest.push_back(&op);
  OpBuilder builder(func.getContext());
  for (Operation *op : llvm::reverse(rest)) {
    llvm::SetVector<int64_t> userStages;
    for (Operation *user : op->getUsers())
      if (auto it = stageOf.find(user); it != stageOf.end())
        userStages.insert(it->second);
    if (userStages.empty()) {
      stageOf[op] = numStages - 1; // Only returned.
      continue;
    }
    llvm::SmallVector<int64_t> sorted(userStages.begin(), userStages.end());
    llvm::sort(sorted);
    stageOf[op] = sorted.front();
    builder.setInsertionPointAfter(op);
    for (int64_t stage : llvm::drop_begin(sorted)) {
      Operation *copy = builder.clone(*op);
      stageOf[copy] = stage;
      for (auto [from, to] : llvm::zip(op->getResults(), copy->getResults()))
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          auto it = stageOf.find(use.getOwner());
          return it != stageOf.end() && it->second == stage;
        });
    }
  }
  for (auto [op, stage] : stageOf)
    setStage(op, stage);
  func->setAttr(kPipelineAttrName, config.toAttr(func.getContext()));
  return success();
}

} // namespace
