//===- Schedule.cpp - reorder a step's ops for memory and overlap ---------===//
//
// Applies the order computeSchedule (tgc/Analysis/Schedule.h) finds, with
// its communication overlapping compute (overlapCommunication) where that
// shortens the modelled step, and explains the change of the simulated peak
// and of the modelled step time.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/Schedule.h"
#include "tgc/Analysis/StreamTimeline.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "llvm/Support/Format.h"

#define DEBUG_TYPE "tg-schedule"

namespace tgc {
#define GEN_PASS_DEF_TGSCHEDULE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {
struct TGSchedulePass : tgc::impl::TGScheduleBase<TGSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-schedule")))
      return signalPassFailure();
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    int64_t before = MemorySimulation::run(function).peakBytes;
    // A pipelined function's block order is its pipeline schedule
    // (docs/pipeline.md): not reordered.
    if (function->hasAttr(kPipelineAttrName)) {
      peakBefore = before;
      peakAfter = before;
      if (explain)
        function.emitRemark()
            << "tg-schedule: a pipelined function keeps its order (the "
               "pipeline schedule); simulated peak "
            << before << " bytes (the largest pp device's)";
      return;
    }
    ScheduledOrder best = computeSchedule(function);
    std::vector<Operation *> order = std::move(best.order);
    int64_t bestPeak = best.peakBytes;

    // Overlap only where it shortens the modelled step: one communication
    // stream serves tensor-parallel collectives too, and gradient
    // collectives issued early could queue ahead of them.
    std::optional<std::pair<double, double>> stepTimes, exposedTimes;
    bool communicates = llvm::any_of(
        order, [](Operation *op) { return getCollectiveKind(op).has_value(); });
    if (overlap && communicates) {
      llvm::Expected<DeviceSpec> spec = getDeviceOf(function, device);
      if (!spec) {
        function.emitError()
            << "tg-schedule: " << llvm::toString(spec.takeError());
        return signalPassFailure();
      }
      StreamTimeline kept = StreamTimeline::compute(function, order, *spec);
      std::vector<Operation *> overlapped =
          overlapCommunication(function, order, *spec);
      StreamTimeline changed =
          StreamTimeline::compute(function, overlapped, *spec);
      stepTimes = {kept.getStepTime(), kept.getStepTime()};
      exposedTimes = {kept.getExposedCommunication(),
                      kept.getExposedCommunication()};
      // Overlap holds buffers longer (prefetched parameters, gradients
      // until their collective ends): taken while the step still fits.
      int64_t overlappedPeak =
          MemorySimulation::peakOf(function, overlapped, &*spec);
      bool fits =
          overlappedPeak <= spec->hbmBytes ||
          overlappedPeak <= MemorySimulation::peakOf(function, order, &*spec);
      if (changed.getStepTime() < kept.getStepTime() && fits) {
        order = std::move(overlapped);
        stepTimes->second = changed.getStepTime();
        exposedTimes->second = changed.getExposedCommunication();
      }
    }

    Operation *terminator = function.getBody().front().getTerminator();
    for (Operation *op : order)
      op->moveBefore(terminator);
    if (exposedTimes && exposedTimes->second != exposedTimes->first)
      bestPeak = MemorySimulation::run(function).peakBytes;
    peakBefore = before;
    peakAfter = bestPeak;
    if (!explain)
      return;
    std::string change;
    llvm::raw_string_ostream(change) << llvm::format(
        "%+.2f%%", before ? 100.0 * (bestPeak - before) / before : 0.0);
    InFlightDiagnostic remark = function.emitRemark();
    remark << "tg-schedule: simulated peak " << before << " -> " << bestPeak
           << " bytes (" << change << ")";
    if (stepTimes) {
      std::string times;
      llvm::raw_string_ostream(times)
          << llvm::format("; overlapped: modelled step %.4g -> %.4g s, exposed "
                          "communication %.4g -> %.4g s",
                          stepTimes->first, stepTimes->second,
                          exposedTimes->first, exposedTimes->second);
      remark << times;
    }
  }
};
} // namespace
