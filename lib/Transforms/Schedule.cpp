//===- Schedule.cpp - reorder a step's ops to lower its peak memory -------===//
//
// Applies the order computeSchedule (tgc/Analysis/Schedule.h) finds and
// explains the change of the simulated peak.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/Schedule.h"
#include "tgc/Dialect/TG/TGDialect.h"

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
    ScheduledOrder best = computeSchedule(function);
    int64_t bestPeak = best.peakBytes;
    Operation *terminator = function.getBody().front().getTerminator();
    for (Operation *op : best.order)
      op->moveBefore(terminator);
    peakBefore = before;
    peakAfter = bestPeak;
    if (explain) {
      std::string change;
      llvm::raw_string_ostream(change) << llvm::format(
          "%+.2f%%", before ? 100.0 * (bestPeak - before) / before : 0.0);
      function.emitRemark()
          << "tg-schedule: simulated peak " << before << " -> " << bestPeak
          << " bytes (" << change << ")";
    }
  }
};
} // namespace
