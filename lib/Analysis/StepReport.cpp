//===- StepReport.cpp - what `tgc report` says about a step ---------------===//

#include "tgc/Analysis/StepReport.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/MemoryPlanner.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

int64_t MeshSummary::getNumDevices() const {
  int64_t devices = 1;
  for (int64_t size : axisSizes)
    devices *= size;
  return devices;
}

/// The grids of the module holding `function`, with their axis names.
static std::vector<MeshSummary> getMeshes(func::FuncOp function) {
  std::vector<MeshSummary> meshes;
  auto module = function->getParentOfType<ModuleOp>();
  if (!module)
    return meshes;
  for (auto grid : module.getOps<shard::GridOp>()) {
    MeshSummary mesh;
    mesh.name = grid.getSymName().str();
    llvm::append_range(mesh.axisSizes, grid.getShape());
    auto names = grid->getAttrOfType<ArrayAttr>(tg::kMeshAxesAttrName);
    for (auto [axis, size] : llvm::enumerate(mesh.axisSizes)) {
      auto name = names && axis < names.size()
                      ? dyn_cast<StringAttr>(names[axis])
                      : StringAttr();
      mesh.axisNames.push_back(name ? name.str()
                                    : "axis" + std::to_string(axis));
    }
    meshes.push_back(std::move(mesh));
  }
  return meshes;
}

FailureOr<StepReport> StepReport::compute(func::FuncOp function,
                                          const DeviceSpec &device,
                                          bool figuresOnly) {
  if (failed(verifyCollectivesModelled(function)))
    return failure();
  StepReport report;
  report.device = device;
  report.memory = MemorySimulation::run(function, &device);
  report.time = StepTimeEstimate::compute(function, device,
                                          StepStructure::compute(function));
  // A pipelined function's simulations agree on its devices.
  if (report.time.pipeline && report.memory.devices.size() !=
                                  report.time.pipelineTimeline.finish.size())
    return function.emitError()
           << "tgc report: the memory and time simulations disagree on the "
              "pp devices";
  if (figuresOnly)
    return report;
  report.arenaBytes = planArena(report.memory, /*alignment=*/256).arenaBytes;
  report.meshes = getMeshes(function);
  // The model's parameters: each `param` argument at its global shape (its
  // `tg.sharding` over the mesh); what one device holds, at its local one.
  for (BlockArgument arg : function.getArguments()) {
    if (tg::getArgumentRole(function, arg.getArgNumber()) != tg::Role::Param)
      continue;
    auto type = cast<ShapedType>(arg.getType());
    report.paramsPerDevice += type.getNumElements();
    std::optional<tg::Mesh> mesh;
    if (tg::ShardingAttr sharding =
            tg::getArgSharding(function, arg.getArgNumber())) {
      FailureOr<tg::Mesh> found =
          tg::Mesh::lookup(function, sharding.getMesh().getValue());
      if (failed(found))
        return failure();
      mesh = std::move(*found);
    }
    // ZeRO's padding is not the model's.
    FailureOr<SmallVector<int64_t>> shape = tg::getCallerArgShape(
        function, arg.getArgNumber(), mesh ? &*mesh : nullptr);
    if (failed(shape))
      return failure();
    report.params += ShapedType::getNumElements(*shape);
  }
  report.training = TrainingMemory::compute(function);
  return report;
}

void StepReport::print(raw_ostream &os) const {
  for (const MeshSummary &mesh : meshes) {
    os << "mesh @" << mesh.name << ": " << mesh.getNumDevices() << " devices (";
    for (auto [index, name] : llvm::enumerate(mesh.axisNames))
      os << (index ? ", " : "") << name << "=" << mesh.axisSizes[index];
    os << "; the last axis innermost, " << device.gpusPerNode
       << " GPUs per node); figures per device, params of the model\n";
  }
  if (training.gradients.tensors)
    training.print(os, params);
  time.print(os);
  memory.print(os);
  os << llvm::format(
      "summary: %lld params, %.2f bytes/param (params, grads, "
      "optimizer state, param copies, scaling state), peak %lld bytes (%.1f%% "
      "of %s), "
      "arena %lld bytes, step %.6g s, %lld kernels, %lld FLOPs, %lld HBM "
      "bytes\n",
      static_cast<long long>(params), getBytesPerParam(),
      static_cast<long long>(memory.peakBytes),
      device.hbmBytes ? 100.0 * memory.peakBytes / device.hbmBytes : 0.0,
      device.name.c_str(), static_cast<long long>(arenaBytes), time.stepTime,
      static_cast<long long>(time.total.kernels),
      static_cast<long long>(time.total.flops),
      static_cast<long long>(time.total.bytes));
  if (time.pipeline) {
    const PipelineConfig &pipeline = *time.pipeline;
    const PipelineTimeline &timeline = time.pipelineTimeline;
    os << llvm::format("pipeline: %lld stages (%lld virtual), %lld "
                       "micro-batches, %s; bubble %.4f of the busiest device "
                       "(pp device %lld), %.4f by the formula\n",
                       static_cast<long long>(pipeline.stages),
                       static_cast<long long>(pipeline.virtualStages),
                       static_cast<long long>(pipeline.microBatches),
                       pipeline.getScheduleName().str().c_str(),
                       timeline.getBubbleFraction(),
                       static_cast<long long>(timeline.busiestDevice),
                       pipeline.getFormulaBubble());
    for (size_t device = 0; device < timeline.finish.size(); ++device)
      os << llvm::format(
          "  pp device %zu: peak %lld bytes, busy %.6g s, finishes at %.6g "
          "s\n",
          device,
          static_cast<long long>(device < memory.devices.size()
                                     ? memory.devices[device].peakBytes
                                     : 0),
          timeline.computeBusy[device], timeline.finish[device]);
  }
  if (meshes.empty() && time.communication.empty())
    return;
  os << llvm::format(
      "per device: %lld params, %lld bytes sent in %lld collectives, "
      "communication %.6g s, exposed %.6g s if nothing overlaps, %.6g s "
      "as scheduled; step %.6g s, %.6g s if nothing overlaps\n",
      static_cast<long long>(paramsPerDevice),
      static_cast<long long>(time.communication.total.bytes),
      static_cast<long long>(time.communication.total.count),
      time.communication.total.time,
      time.communication.getExposedTimeIfNoOverlap(),
      time.communication.exposedTime, time.stepTime, time.total.time);
}

nlohmann::json StepReport::getPipelineJson() const {
  if (!time.pipeline)
    return nullptr;
  const PipelineConfig &pipeline = *time.pipeline;
  const PipelineTimeline &timeline = time.pipelineTimeline;
  std::vector<int64_t> peaks;
  for (const MemorySimulation &device : memory.devices)
    peaks.push_back(device.peakBytes);
  return {{"axis", pipeline.axis},
          {"stages", pipeline.stages},
          {"virtual_stages", pipeline.virtualStages},
          {"micro_batches", pipeline.microBatches},
          {"schedule", pipeline.getScheduleName()},
          {"peak_bytes_per_device", peaks},
          {"peak_device", memory.peakDevice},
          {"busy_time_s_per_device", timeline.computeBusy},
          {"communication_time_s_per_device", timeline.communicationBusy},
          {"finish_time_s_per_device", timeline.finish},
          {"busiest_device", timeline.busiestDevice},
          {"bubble_fraction", timeline.getBubbleFraction()},
          {"formula_bubble_fraction", pipeline.getFormulaBubble()}};
}

nlohmann::json StepReport::toJson() const {
  nlohmann::json memoryJson = memory.toJson();
  // One grid: an object; none: null; several: a list.
  nlohmann::json meshesJson = nlohmann::json::array();
  for (const MeshSummary &mesh : meshes)
    meshesJson.push_back({{"name", mesh.name},
                          {"axes", mesh.axisNames},
                          {"shape", mesh.axisSizes},
                          {"devices", mesh.getNumDevices()},
                          {"gpus_per_node", device.gpusPerNode}});
  if (meshesJson.empty())
    meshesJson = nullptr;
  else if (meshesJson.size() == 1)
    meshesJson = meshesJson[0];
  nlohmann::json json = {
      {"function", memory.functionName},
      {"device", device.name},
      {"device_memory_bytes", device.hbmBytes},
      {"params", params},
      {"bytes_per_param", getBytesPerParam()},
      {"peak_bytes", memory.peakBytes},
      {"peak_breakdown", memoryJson["peak_breakdown"]},
      {"arena_bytes", arenaBytes},
      {"step_time_s", time.stepTime},
      {"step_time_no_overlap_s", time.total.time},
      {"flops", time.total.flops},
      {"hbm_bytes", time.total.bytes},
      {"kernels", time.total.kernels},
      {"mfu", time.mfu},
      {"mfu_no_overlap", time.mfuIfNoOverlap},
      {"params_per_device", paramsPerDevice},
      {"communication_bytes", time.communication.total.bytes},
      {"communication_time_s", time.communication.total.time},
      {"exposed_communication_s", time.communication.exposedTime},
      {"exposed_communication_no_overlap_s",
       time.communication.getExposedTimeIfNoOverlap()},
      {"communication", time.communication.toJson()},
      {"mesh", meshesJson},
      {"training_memory", training.toJson()},
      {"memory", memoryJson},
      {"time", time.toJson()}};
  if (time.pipeline)
    json["pipeline"] = getPipelineJson();
  return json;
}
