//===- CostModel.cpp - estimated time of a step on a device ---------------===//

#include "tgc/Analysis/CostModel.h"

#include "tgc/Analysis/StreamTimeline.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

OpTime tgc::estimateOpTime(const tg::OpCost &cost, const DeviceSpec &device) {
  OpTime time;
  time.launchesKernel = cost.flops > 0 || cost.bytesMoved() > 0;
  if (!time.launchesKernel)
    return time;
  double matrixPeak = cost.computeType ? device.getMatrixPeak(cost.computeType)
                                       : device.matrixFp32;
  int64_t vectorFlops = std::max<int64_t>(0, cost.flops - cost.matrixFlops);
  if (cost.matrixFlops > 0 && matrixPeak > 0)
    time.computeTime += cost.matrixFlops / matrixPeak;
  if (vectorFlops > 0 && device.vectorFp32 > 0)
    time.computeTime += vectorFlops / device.vectorFp32;
  if (cost.integerOps > 0 && device.vectorInt32 > 0)
    time.computeTime += cost.integerOps / device.vectorInt32;
  if (device.hbmBandwidth > 0)
    time.memoryTime = cost.bytesMoved() / device.hbmBandwidth;
  time.time =
      std::max(time.computeTime, time.memoryTime) + device.launchOverhead;
  return time;
}

/// A collective's time; an all-slice (a local copy of the device's part)
/// launches nothing the model charges.
static OpTime toOpTime(const CollectiveCost &cost) {
  OpTime time;
  time.communicationTime = cost.time;
  time.time = cost.time;
  time.launchesKernel = cost.time > 0;
  return time;
}

tg::OpCost tgc::getPlacedCost(tg::CostOpInterface op) {
  // A view the memory plan places in its operand, or a concat whose inputs
  // are written in place, launches nothing.
  return isPlacedInPlace(op) ? tg::OpCost() : op.getCost();
}

OpTime tgc::estimateOpTime(Operation *op, const DeviceSpec &device) {
  if (auto costed = dyn_cast<tg::CostOpInterface>(op))
    return estimateOpTime(getPlacedCost(costed), device);
  FailureOr<CollectiveCost> collective = estimateCollectiveCost(op, device);
  return succeeded(collective) ? toOpTime(*collective) : OpTime();
}

CommunicationEstimate::CommunicationEstimate() {
  for (unsigned kind = 0; kind < kNumCollectiveKinds; ++kind)
    byKind[kind].name = stringifyCollectiveKind(CollectiveKind(kind)).str();
  total.name = "total";
}

void CommunicationEstimate::add(const CollectiveCost &cost) {
  for (CommunicationGroup *group :
       {&byKind[static_cast<unsigned>(cost.kind)], &total}) {
    ++group->count;
    group->overInfiniband +=
        cost.link == LinkKind::InfiniBand && cost.bytesPerDevice > 0;
    group->bytes += cost.bytesPerDevice;
    group->time += cost.time;
  }
}

static void accumulate(CostGroup &group, const tg::OpCost &cost,
                       const OpTime &time) {
  ++group.ops;
  group.kernels += time.launchesKernel;
  group.time += time.time;
  group.flops += cost.flops;
  group.bytes += cost.bytesMoved();
}

StepTimeEstimate StepTimeEstimate::compute(func::FuncOp function,
                                           const DeviceSpec &device,
                                           const StepStructure &structure) {
  StepTimeEstimate estimate;
  estimate.functionName = function.getName().str();
  estimate.deviceName = device.name;
  estimate.total.name = "total";
  for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer})
    estimate.byPhase[static_cast<unsigned>(phase)].name =
        stringifyPhase(phase).str();
  if (function.isExternal())
    return estimate;
  llvm::StringMap<size_t> kindIndex;
  // Matrix FLOPs per compute type, to pick the peak MFU is measured against.
  llvm::SmallVector<std::pair<Type, int64_t>> matrixByType;
  for (Operation &op : function.getBody().front().without_terminator()) {
    tg::OpCost cost;
    OpTime time;
    if (auto costed = dyn_cast<tg::CostOpInterface>(&op)) {
      cost = getPlacedCost(costed);
      time = estimateOpTime(cost, device);
    } else if (FailureOr<CollectiveCost> collective =
                   estimateCollectiveCost(&op, device);
               succeeded(collective)) {
      time = toOpTime(*collective);
      estimate.communication.add(*collective);
    } else {
      continue;
    }
    StringRef name = op.getName().getStringRef();
    auto [it, inserted] = kindIndex.try_emplace(name, estimate.byKind.size());
    if (inserted)
      estimate.byKind.push_back({name.str()});
    accumulate(estimate.byKind[it->second], cost, time);
    accumulate(estimate.byPhase[static_cast<unsigned>(structure.getPhase(&op))],
               cost, time);
    accumulate(estimate.total, cost, time);
    estimate.matrixFlops += cost.matrixFlops;
    if (cost.matrixFlops > 0 && cost.computeType) {
      auto entry = llvm::find_if(matrixByType, [&](auto &pair) {
        return pair.first == cost.computeType;
      });
      if (entry == matrixByType.end())
        matrixByType.push_back({cost.computeType, cost.matrixFlops});
      else
        entry->second += cost.matrixFlops;
    }
  }
  estimate.peakFlops =
      device.matrixBf16 > 0 ? device.matrixBf16 : device.matrixFp32;
  if (!matrixByType.empty()) {
    auto dominant = llvm::max_element(
        matrixByType, [](auto &a, auto &b) { return a.second < b.second; });
    estimate.peakFlops = device.getMatrixPeak(dominant->first);
  }
  int64_t devices = 1;
  estimate.pipeline = PipelineConfig::get(function);
  if (estimate.pipeline) {
    devices = estimate.pipeline->stages;
    estimate.pipelineTimeline =
        PipelineTimeline::compute(function, devices, device);
    const PipelineTimeline &timeline = estimate.pipelineTimeline;
    estimate.stepTime = timeline.stepTime;
    estimate.communication.exposedTime =
        timeline.stepTime - timeline.computeBusy[timeline.busiestDevice];
  } else {
    StreamTimeline timeline = StreamTimeline::compute(function, device);
    estimate.stepTime = timeline.getStepTime();
    estimate.communication.exposedTime = timeline.getExposedCommunication();
  }
  auto utilization = [&](double time) {
    return time > 0 && estimate.peakFlops > 0
               ? estimate.total.flops / (time * estimate.peakFlops)
               : 0.0;
  };
  estimate.mfu = utilization(estimate.stepTime) / devices;
  estimate.mfuIfNoOverlap = utilization(estimate.total.time);
  return estimate;
}

static std::string formatTime(double seconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (seconds >= 1)
    os << llvm::format("%.3f s", seconds);
  else if (seconds >= 1e-3)
    os << llvm::format("%.3f ms", seconds * 1e3);
  else
    os << llvm::format("%.2f us", seconds * 1e6);
  return text;
}

void StepTimeEstimate::print(raw_ostream &os) const {
  os << "estimated time of @" << functionName << " on " << deviceName
     << " (roofline + launch overhead per kernel)\n";
  os << llvm::format("  %-24s %7s %8s %12s %8s\n", "op", "count", "kernels",
                     "time", "share");
  auto row = [&](const CostGroup &group) {
    os << llvm::format("  %-24s %7lld %8lld %12s %7.1f%%\n", group.name.c_str(),
                       static_cast<long long>(group.ops),
                       static_cast<long long>(group.kernels),
                       formatTime(group.time).c_str(),
                       total.time > 0 ? 100.0 * group.time / total.time : 0.0);
  };
  std::vector<CostGroup> kinds = byKind;
  llvm::stable_sort(kinds, [](const CostGroup &a, const CostGroup &b) {
    return a.time > b.time;
  });
  for (const CostGroup &group : kinds)
    row(group);
  os << "  by phase:\n";
  for (const CostGroup &group : byPhase)
    if (group.ops)
      row(group);
  row(total);
  os << llvm::format("  step time %s, %lld kernels, model FLOP utilization "
                     "%.1f%% of %.1f TFLOP/s\n",
                     formatTime(stepTime).c_str(),
                     static_cast<long long>(total.kernels), 100.0 * mfu,
                     peakFlops / 1e12);
  if (communication.empty())
    return;
  os << "communication of @" << functionName
     << " per device (ring collectives, alpha-beta per link)\n";
  os << llvm::format("  %-16s %7s %10s %16s %12s %8s\n", "collective", "count",
                     "over IB", "bytes sent", "time", "share");
  auto commRow = [&](const CommunicationGroup &group) {
    os << llvm::format("  %-16s %7lld %10lld %16lld %12s %7.1f%%\n",
                       group.name.c_str(), static_cast<long long>(group.count),
                       static_cast<long long>(group.overInfiniband),
                       static_cast<long long>(group.bytes),
                       formatTime(group.time).c_str(),
                       total.time > 0 ? 100.0 * group.time / total.time : 0.0);
  };
  for (const CommunicationGroup &group : communication.byKind)
    if (group.count)
      commRow(group);
  commRow(communication.total);
  os << llvm::format(
      "  communication %s, exposed %s if nothing overlaps "
      "(%.1f%% of the step)\n",
      formatTime(communication.total.time).c_str(),
      formatTime(communication.getExposedTimeIfNoOverlap()).c_str(),
      total.time > 0
          ? 100.0 * communication.getExposedTimeIfNoOverlap() / total.time
          : 0.0);
  os << llvm::format(
      "  overlapped as scheduled (collectives on their own stream): exposed "
      "%s (%.1f%% of the step), step time %s against %s if nothing "
      "overlaps, model FLOP utilization %.1f%% against %.1f%%\n",
      formatTime(communication.exposedTime).c_str(),
      stepTime > 0 ? 100.0 * communication.exposedTime / stepTime : 0.0,
      formatTime(stepTime).c_str(), formatTime(total.time).c_str(), 100.0 * mfu,
      100.0 * mfuIfNoOverlap);
}

static nlohmann::json groupToJson(const CostGroup &group) {
  return {{"name", group.name},       {"ops", group.ops},
          {"kernels", group.kernels}, {"time_s", group.time},
          {"flops", group.flops},     {"hbm_bytes", group.bytes}};
}

static nlohmann::json communicationToJson(const CommunicationGroup &group) {
  return {{"count", group.count},
          {"over_infiniband", group.overInfiniband},
          {"bytes", group.bytes},
          {"time_s", group.time}};
}

nlohmann::json CommunicationEstimate::toJson() const {
  nlohmann::json kinds = nlohmann::json::object();
  for (auto [kind, group] : llvm::enumerate(byKind)) {
    // A pipeline's sends and recvs are listed where the step has any.
    bool pointToPoint = CollectiveKind(kind) == CollectiveKind::Send ||
                        CollectiveKind(kind) == CollectiveKind::Recv;
    if (!pointToPoint || group.count)
      kinds[group.name] = communicationToJson(group);
  }
  nlohmann::json json = communicationToJson(total);
  json["by_kind"] = std::move(kinds);
  json["exposed_time_s"] = exposedTime;
  json["exposed_time_no_overlap_s"] = getExposedTimeIfNoOverlap();
  return json;
}

nlohmann::json StepTimeEstimate::toJson() const {
  nlohmann::json kinds = nlohmann::json::array();
  for (const CostGroup &group : byKind)
    kinds.push_back(groupToJson(group));
  nlohmann::json phases = nlohmann::json::object();
  for (const CostGroup &group : byPhase)
    phases[group.name] = groupToJson(group);
  return {{"function", functionName},
          {"device", deviceName},
          {"step_time_s", stepTime},
          {"step_time_no_overlap_s", total.time},
          {"mfu_no_overlap", mfuIfNoOverlap},
          {"flops", total.flops},
          {"matrix_flops", matrixFlops},
          {"hbm_bytes", total.bytes},
          {"kernels", total.kernels},
          {"mfu", mfu},
          {"mfu_peak_flops", peakFlops},
          {"by_op", kinds},
          {"by_phase", phases},
          {"communication", communication.toJson()}};
}
