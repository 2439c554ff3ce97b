//===- Report.cpp - what `tgc report` prints ------------------------------===//

#include "tgc/Driver/Report.h"

#include "tgc/Analysis/OpCostSummary.h"
#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Analysis/StepReport.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Driver/Model.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace tgc;

/// Kernels, bytes moved and step time without and with fusion regions.
static void printFusionComparison(raw_ostream &os,
                                  const StepTimeEstimate &unfused,
                                  const StepTimeEstimate &fused) {
  auto row = [&](StringRef name, const CostGroup &group) {
    os << llvm::format("  %-10s %8lld kernels %12.3f MB moved %10.3f ms\n",
                       name.str().c_str(), (long long)group.kernels,
                       group.bytes / 1e6, group.time * 1e3);
  };
  os << "\nfusion (tg-fuse; --no-fuse skips it):\n";
  row("unfused", unfused.total);
  row("fused", fused.total);
  static const char *phaseNames[] = {"forward", "backward", "optimizer"};
  for (unsigned phase = 0; phase < 3; ++phase)
    if (unfused.byPhase[phase].kernels > 0)
      os << llvm::format("  %-10s %8lld -> %lld kernels\n", phaseNames[phase],
                         (long long)unfused.byPhase[phase].kernels,
                         (long long)fused.byPhase[phase].kernels);
}

/// What the step trains and keeps for training against full fine-tuning.
static void printFineTuningComparison(raw_ostream &os,
                                      const TrainingMemory &step,
                                      const TrainingMemory &full) {
  auto row = [&](StringRef name, int64_t value, int64_t fullValue) {
    os << llvm::format("  %-22s %15lld %17lld %9.4f%%\n", name.str().c_str(),
                       (long long)value, (long long)fullValue,
                       fullValue ? 100.0 * value / fullValue : 0.0);
  };
  os << "\nagainst full fine-tuning (every parameter trained):\n";
  os << llvm::format("  %-22s %15s %17s %10s\n", "", "this step",
                     "full fine-tuning", "share");
  row("trainable parameters", step.trainable.elements, full.trainable.elements);
  row("gradient bytes", step.gradients.bytes, full.gradients.bytes);
  row("optimizer state bytes", step.optimizerState.bytes,
      full.optimizerState.bytes);
}

LogicalResult tgc::reportStep(ModuleOp module, func::FuncOp function,
                              const ReportRequest &request, raw_ostream &os) {
  DeviceSpec device;
  if (request.device) {
    device = *request.device;
  } else {
    llvm::Expected<DeviceSpec> recorded = getDeviceOf(module);
    if (!recorded)
      return module.emitError() << llvm::toString(recorded.takeError());
    device = *recorded;
  }
  std::vector<FunctionCostSummary> summaries = summarizeModuleCosts(module);
  FailureOr<StepReport> computed = StepReport::compute(function, device);
  if (failed(computed))
    return failure();
  StepReport &report = *computed;
  // The memory plan's arena is the report's: the same simulation and
  // planner on the same device.
  if (auto arena = function->getAttrOfType<IntegerAttr>(
          tg::TGDialect::kArenaSizeAttrName);
      arena && !request.device && arena.getInt() != report.arenaBytes)
    return function.emitError()
           << "the step's tg.arena_size " << arena.getInt()
           << " bytes is not the arena of its own memory plan ("
           << report.arenaBytes
           << " bytes): the step was changed after tg-memory-plan, or "
              "planned with another alignment";
  if (!request.memoryTimelineFile.empty() &&
      failed(writeOutputFile(request.memoryTimelineFile, [&](raw_ostream &svg) {
        report.memory.writeTimelineSvg(svg);
      })))
    return failure();
  if (request.json) {
    nlohmann::json json = report.toJson();
    json["ops"] = costSummariesToJson(summaries)["functions"];
    if (request.unfused)
      json["unfused"] = {{"kernels", request.unfused->total.kernels},
                         {"hbm_bytes", request.unfused->total.bytes},
                         {"step_time_s", request.unfused->total.time},
                         {"time", request.unfused->toJson()}};
    if (request.fullFineTuning)
      json["full_fine_tuning"] = request.fullFineTuning->toJson();
    os << json.dump(2) << "\n";
    return success();
  }
  printCostTables(os, summaries);
  report.print(os);
  if (request.unfused)
    printFusionComparison(os, *request.unfused, report.time);
  if (request.fullFineTuning)
    printFineTuningComparison(os, report.training, *request.fullFineTuning);
  return success();
}

LogicalResult tgc::reportRecomputeFrontier(func::FuncOp step, unsigned points,
                                           StringRef svgFile, raw_ostream &os) {
  llvm::Expected<DeviceSpec> device = getDeviceOf(step);
  if (!device)
    return step.emitError() << llvm::toString(device.takeError());
  RecomputePlanner planner(step, *device);
  std::vector<RecomputePlan> frontier = planner.computeFrontier(points);
  os << "recompute frontier of @" << step.getSymName() << " on " << device->name
     << " (" << planner.getCandidates().size() << " activations)\n";
  os << llvm::format("  %16s %14s %11s\n", "peak_bytes", "extra_time_s",
                     "recomputed");
  for (const RecomputePlan &plan : frontier)
    os << llvm::format("  %16lld %14.6e %11zu\n",
                       static_cast<long long>(plan.peakBytes), plan.extraTime,
                       plan.recomputed.size());
  if (svgFile.empty())
    return success();
  return writeOutputFile(svgFile, [&](raw_ostream &svg) {
    writeRecomputeFrontierSvg(svg, step.getSymName(), device->name, frontier,
                              planner.getPeakWithoutRecompute(),
                              planner.getCandidates().size());
  });
}
