//===- StepReport.cpp - what `tgc report` says about a step ---------------===//

#include "tgc/Analysis/StepReport.h"

#include "tgc/Analysis/MemoryPlanner.h"
#include "tgc/Dialect/TG/TGDialect.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

StepReport StepReport::compute(func::FuncOp function,
                               const DeviceSpec &device) {
  StepReport report;
  report.device = device;
  report.memory = MemorySimulation::run(function, &device);
  report.time = StepTimeEstimate::compute(function, device,
                                          StepStructure::compute(function));
  report.arenaBytes = planArena(report.memory, /*alignment=*/256).arenaBytes;
  for (BlockArgument arg : function.getArguments())
    if (tg::getArgumentRole(function, arg.getArgNumber()) == tg::Role::Param)
      report.params += cast<ShapedType>(arg.getType()).getNumElements();
  report.training = TrainingMemory::compute(function);
  return report;
}

void StepReport::print(raw_ostream &os) const {
  if (training.gradients.tensors)
    training.print(os);
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
      device.name.c_str(), static_cast<long long>(arenaBytes), time.total.time,
      static_cast<long long>(time.total.kernels),
      static_cast<long long>(time.total.flops),
      static_cast<long long>(time.total.bytes));
}

nlohmann::json StepReport::toJson() const {
  nlohmann::json memoryJson = memory.toJson();
  return {{"function", memory.functionName},
          {"device", device.name},
          {"device_memory_bytes", device.hbmBytes},
          {"params", params},
          {"bytes_per_param", getBytesPerParam()},
          {"peak_bytes", memory.peakBytes},
          {"peak_breakdown", memoryJson["peak_breakdown"]},
          {"arena_bytes", arenaBytes},
          {"step_time_s", time.total.time},
          {"flops", time.total.flops},
          {"hbm_bytes", time.total.bytes},
          {"kernels", time.total.kernels},
          {"mfu", time.mfu},
          {"training_memory", training.toJson()},
          {"memory", memoryJson},
          {"time", time.toJson()}};
}
