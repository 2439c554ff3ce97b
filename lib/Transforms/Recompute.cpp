//===- Recompute.cpp - keep or recompute activations under a budget -------===//
//
// Parse the options, plan (RecomputePlanner: blocks, DP, the simulator's
// check), rewrite (clone the recomputed ops into the backward), explain.
//
//===----------------------------------------------------------------------===//

#include "tgc/Transforms/Passes.h"

#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Dialect/TG/TGDialect.h"

#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "tg-recompute"

namespace tgc {
#define GEN_PASS_DEF_TGRECOMPUTE
#include "tgc/Transforms/Passes.h.inc"
} // namespace tgc

using namespace mlir;
using namespace tgc;

namespace {
struct TGRecomputePass : tgc::impl::TGRecomputeBase<TGRecomputePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkSingleBlockFunctions(getOperation(), "tg-recompute")))
      return signalPassFailure();
    func::FuncOp function = getOperation();
    if (function.isExternal())
      return;
    FailureOr<RecomputeStrategy> chosen = parseRecomputeStrategy(strategy);
    if (failed(chosen)) {
      function.emitError() << "tg-recompute: unknown strategy '" << strategy
                           << "' (expected dp, none, full, sqrt or selective)";
      return signalPassFailure();
    }
    llvm::Expected<DeviceSpec> spec = getDeviceOf(function, device);
    if (!spec) {
      function.emitError() << "tg-recompute: "
                           << llvm::toString(spec.takeError());
      return signalPassFailure();
    }
    std::optional<int64_t> budgetBytes;
    if (budget == "auto") {
      budgetBytes = getAutoBudget(*spec);
    } else if (!budget.empty()) {
      FailureOr<int64_t> parsed = parseByteSize(budget);
      if (failed(parsed)) {
        function.emitError()
            << "tg-recompute: invalid budget '" << budget
            << "' (expected bytes with an optional B, KB, MB, GB, TB, KiB, "
               "MiB, GiB or TiB suffix, or auto)";
        return signalPassFailure();
      }
      budgetBytes = *parsed;
    }

    RecomputePlanner planner(function, *spec);
    peakBefore = planner.getPeakWithoutRecompute();
    RecomputePlan plan;
    if (*chosen != RecomputeStrategy::DP) {
      plan = planner.baseline(*chosen);
      if (budgetBytes && plan.peakBytes > *budgetBytes) {
        function.emitError()
            << "tg-recompute: strategy " << strategy << " peaks at "
            << plan.peakBytes << " bytes, above the budget of " << *budgetBytes
            << " bytes (strategy dp finds the cheapest plan that fits)";
        return signalPassFailure();
      }
    } else if (budgetBytes) {
      int64_t minimumPeak = 0;
      FailureOr<RecomputePlan> solved =
          planner.solve(*budgetBytes, minimumPeak);
      if (failed(solved)) {
        function.emitError() << "tg-recompute: budget " << *budgetBytes
                             << " bytes is below the smallest feasible peak "
                             << minimumPeak << " bytes";
        return signalPassFailure();
      }
      plan = std::move(*solved);
    } else {
      plan = planner.baseline(RecomputeStrategy::None);
    }

    if (explain)
      explainPlan(function, planner, plan, budgetBytes);
    SmallVector<Operation *> recomputed;
    for (unsigned index : plan.recomputed)
      recomputed.push_back(planner.getCandidates()[index].op);
    applyRecompute(function, recomputed);
    peakAfter = plan.peakBytes;
    numRecomputed = plan.recomputed.size();
  }

  void explainPlan(func::FuncOp function, const RecomputePlanner &planner,
                   const RecomputePlan &plan, std::optional<int64_t> budget) {
    ArrayRef<RecomputeCandidate> candidates = planner.getCandidates();
    for (auto [index, candidate] : llvm::enumerate(candidates)) {
      bool isRecomputed = llvm::is_contained(plan.recomputed, index);
      candidate.op->emitRemark()
          << "tg-recompute: " << (isRecomputed ? "recomputed" : "kept") << ", "
          << candidate.bytes << " bytes, recompute time "
          << llvm::formatv("{0:e2}", candidate.time).str() << " s";
    }
    InFlightDiagnostic remark = function.emitRemark();
    remark << "tg-recompute: ";
    if (budget)
      remark << "budget " << *budget << " bytes, ";
    remark << "peak " << planner.getPeakWithoutRecompute() << " -> "
           << plan.peakBytes << " bytes, " << plan.recomputed.size() << " of "
           << candidates.size() << " activations recomputed, extra time "
           << llvm::formatv("{0:e2}", plan.extraTime).str() << " s ("
           << plan.blocks << " blocks, " << plan.distinctBlocks << " distinct)";
    if (plan.solves)
      remark << ", " << plan.solves << " plans simulated";
  }
};
} // namespace
