//===- Compile.cpp - running the pipeline on a model ----------------------===//

#include "tgc/Driver/Compile.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/RecomputePlanner.h"
#include "tgc/Dialect/TG/TGDialect.h"
#include "tgc/Dialect/TG/TGSharding.h"
#include "tgc/Driver/Model.h"
#include "tgc/Pipeline/Pipeline.h"
#include "tgc/Pipeline/RunPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include <mutex>

using namespace mlir;
using namespace tgc;

bool tgc::isCompiledStep(ModuleOp module) {
  if (module->hasAttr(tg::TGDialect::kPipelineAttrName))
    return true;
  return llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
    return f->hasAttr(tg::TGDialect::kArenaSizeAttrName);
  });
}

namespace {
/// Records each function's costs just before tg-fuse forms its kernels.
class UnfusedCostObserver : public PassInstrumentation {
public:
  UnfusedCostObserver(CompileObservations &observations,
                      const DeviceSpec &device)
      : observations(observations), device(device) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    auto function = dyn_cast<func::FuncOp>(op);
    if (!function || function.isExternal() || pass->getArgument() != "tg-fuse")
      return;
    StepTimeEstimate estimate = StepTimeEstimate::compute(
        function, device, StepStructure::compute(function));
    std::lock_guard<std::mutex> lock(mutex);
    observations.unfused[function.getName()] = std::move(estimate);
  }

private:
  CompileObservations &observations;
  const DeviceSpec &device;
  std::mutex mutex;
};
} // namespace

/// Refuses a compiled step and records the device; returns it.
static FailureOr<DeviceSpec> prepareModule(ModuleOp module,
                                           const CompileRequest &request) {
  if (isCompiledStep(module))
    return reportError("the module is already a compiled step; give the "
                       "model it was compiled from (tgc report reports a "
                       "compiled step as it is)");
  if (request.device)
    setModuleDevice(module, *request.device);
  llvm::Expected<DeviceSpec> device = getDeviceOf(module);
  if (!device)
    return module.emitError() << llvm::toString(device.takeError());
  if (!module->hasAttr(tg::TGDialect::kDeviceAttrName))
    setModuleDevice(module, *device);
  return *device;
}

/// Runs `build`'s passes on `module`; returns the textual pipeline.
static FailureOr<std::string>
buildAndRunPasses(ModuleOp module, const CompileRequest &request,
                  const DeviceSpec &device,
                  function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  build(pm);
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  pm.printAsTextualPipeline(os);
  if (request.observations)
    pm.addInstrumentation(
        std::make_unique<UnfusedCostObserver>(*request.observations, device));
  if (failed(tgc::runPasses(pm, module)))
    return failure();
  return pipeline;
}

/// The largest simulated peak of `module`'s functions.
static int64_t getLargestPeak(ModuleOp module, const DeviceSpec &device) {
  int64_t peak = 0;
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      peak = std::max(peak, MemorySimulation::run(function, &device).peakBytes);
  return peak;
}

/// The cost model's step time of `module`'s functions, summed.
static double getStepTime(ModuleOp module, const DeviceSpec &device) {
  double time = 0;
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      time += StepTimeEstimate::compute(function, device,
                                        StepStructure::compute(function))
                  .stepTime;
  return time;
}

/// The peak tg-recompute predicts for `module`'s functions before it
/// recomputes anything (the largest).
static int64_t getPeakWithoutRecompute(ModuleOp module,
                                       const DeviceSpec &device) {
  int64_t peak = 0;
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      peak = std::max(
          peak, RecomputePlanner(function, device).getPeakWithoutRecompute());
  return peak;
}

/// The memory budget of `options` in bytes, if any and valid (tg-recompute
/// reports an invalid one).
static std::optional<int64_t>
getBudgetBytes(const TrainingPipelineOptions &options,
               const DeviceSpec &device) {
  if (options.memoryBudget.empty())
    return std::nullopt;
  if (options.memoryBudget == "auto")
    return getAutoBudget(device);
  FailureOr<int64_t> bytes = parseByteSize(options.memoryBudget);
  return succeeded(bytes) ? std::optional<int64_t>(*bytes) : std::nullopt;
}

LogicalResult tgc::compileModule(ModuleOp module,
                                 const TrainingPipelineOptions &options,
                                 const CompileRequest &request) {
  FailureOr<DeviceSpec> device = prepareModule(module, request);
  if (failed(device))
    return failure();
  // The stages up to sharding that this request runs; those it skips ran
  // before, and are only printed for tg.pipeline.
  auto runsStage = [&](CompileStage stage) {
    return request.first <= stage && stage <= request.last;
  };
  FailureOr<std::string> stepPipeline =
      buildAndRunPasses(module, request, *device, [&](OpPassManager &pm) {
        if (runsStage(CompileStage::TrainingStep))
          buildTrainingStepStage(pm, options);
        if (runsStage(CompileStage::Sharding))
          buildShardingStage(pm, options);
      });
  if (failed(stepPipeline))
    return failure();
  if (request.last != CompileStage::Planning)
    return success();
  if (request.first != CompileStage::TrainingStep) {
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    buildTrainingStepStage(pm, options);
    buildShardingStage(pm, options);
    std::string pipeline;
    llvm::raw_string_ostream os(pipeline);
    pm.printAsTextualPipeline(os);
    stepPipeline = pipeline;
  }
  // The recompute planner predicts the peak of the scheduled step, but
  // fusion, which runs after it, changes buffers. The budget holds for the
  // program emitted: planning runs again, on a fresh copy of the step, with
  // the planner's budget (its target) tightened by the overshoot. The
  // other way, a plan that recomputes and whose compiled step leaves more
  // than 0.1% of the budget free runs again with the target loosened by
  // what is free (at most to the peak the planner predicts without
  // recomputation), then halfway between a target that fit and one that
  // overshot; the fitting plan of the least modelled step time is kept.
  // A few plans at most.
  std::optional<int64_t> budget = getBudgetBytes(options, *device);
  TrainingPipelineOptions planning;
  planning.copyOptionValuesFrom(options);
  constexpr unsigned kMaxPlans = 4;
  int64_t target = budget.value_or(0);
  // Targets that fit and that overshot, and the peak without recomputation
  // (computed when a plan first fits).
  std::optional<int64_t> fitTarget, overTarget, unplannedPeak;
  // A plan: the planned step, what its passes said (the planner's remarks
  // under --explain) and observed, and its modelled step time. Only the
  // kept plan's diagnostics and observations reach the caller (or the
  // failing plan's diagnostics).
  struct Plan {
    OwningOpRef<ModuleOp> module;
    SmallVector<Diagnostic> diagnostics;
    CompileObservations observations;
    double time = 0;
  };
  std::optional<Plan> kept;
  std::string planningPipeline;
  MLIRContext *context = module.getContext();
  auto emitAll = [&](SmallVector<Diagnostic> &diagnostics) {
    for (Diagnostic &diagnostic : diagnostics)
      context->getDiagEngine().emit(std::move(diagnostic));
  };
  for (unsigned attempt = 0; attempt < kMaxPlans; ++attempt) {
    Plan plan;
    plan.module = module.clone();
    CompileRequest planRequest = request;
    if (request.observations)
      planRequest.observations = &plan.observations;
    FailureOr<std::string> pipeline = failure();
    {
      ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
        plan.diagnostics.push_back(std::move(diagnostic));
        return success();
      });
      pipeline = buildAndRunPasses(
          *plan.module, planRequest, *device,
          [&](OpPassManager &pm) { buildPlanningStage(pm, planning); });
    }
    if (failed(pipeline)) {
      // A loosened target does not fail where a tighter one succeeded;
      // should it, the fitting plan stands.
      if (kept)
        break;
      emitAll(plan.diagnostics);
      return failure();
    }
    if (attempt == 0)
      planningPipeline = *pipeline;
    if (!budget) {
      kept = std::move(plan);
      break;
    }
    int64_t peak = getLargestPeak(*plan.module, *device);
    if (peak > *budget) {
      overTarget = target;
      if (!fitTarget && attempt + 1 == kMaxPlans) {
        emitAll(plan.diagnostics);
        return module.emitError()
               << "the compiled step peaks at " << peak
               << " bytes, above the memory budget of " << *budget
               << " bytes, after " << kMaxPlans
               << " plans (the recompute planner's prediction is not exact "
                  "once tg-fuse has run; see docs/recompute.md)";
      }
      target = fitTarget ? *fitTarget + (*overTarget - *fitTarget) / 2
                         : target - (peak - *budget);
    } else {
      plan.time = getStepTime(*plan.module, *device);
      if (!kept || plan.time < kept->time)
        kept = std::move(plan);
      fitTarget = target;
      if (options.recompute != RecomputeStrategy::DP)
        break;
      if (!unplannedPeak)
        unplannedPeak = getPeakWithoutRecompute(module, *device);
      // Nothing recomputed, or too little free to gain from.
      if (target >= *unplannedPeak || *budget - peak <= *budget / 1000)
        break;
      target = overTarget ? target + (*overTarget - target) / 2
                          : std::min(*unplannedPeak, target + *budget - peak);
    }
    if (fitTarget && overTarget && *overTarget - *fitTarget <= *budget / 1000)
      break;
    planning.memoryBudget = std::to_string(target);
  }
  emitAll(kept->diagnostics);
  if (request.observations)
    for (auto &entry : kept->observations.unfused)
      request.observations->unfused[entry.getKey()] =
          std::move(entry.getValue());
  module.getBodyRegion().takeBody(kept->module->getBodyRegion());
  // Both stages as one textual pipeline: builtin.module(STEP, PLANNING).
  auto passesOf = [](StringRef pipeline) {
    return pipeline.drop_front(StringRef("builtin.module(").size()).drop_back();
  };
  StringRef step = passesOf(*stepPipeline), plan = passesOf(planningPipeline);
  std::string pipeline =
      ("builtin.module(" + step + (step.empty() || plan.empty() ? "" : ",") +
       plan + ")")
          .str();
  if (request.pipelineDump)
    *request.pipelineDump << pipeline << "\n";
  module->setAttr(tg::TGDialect::kPipelineAttrName,
                  StringAttr::get(module.getContext(), pipeline));
  return success();
}

LogicalResult tgc::buildTrainingStep(ModuleOp module,
                                     const TrainingPipelineOptions &options,
                                     const CompileRequest &request) {
  FailureOr<DeviceSpec> device = prepareModule(module, request);
  if (failed(device))
    return failure();
  FailureOr<std::string> pipeline =
      buildAndRunPasses(module, request, *device, [&](OpPassManager &pm) {
        buildTrainingStepStage(pm, options);
        buildShardingStage(pm, options);
      });
  if (failed(pipeline))
    return failure();
  if (request.pipelineDump)
    *request.pipelineDump << *pipeline << "\n";
  return success();
}

LogicalResult tgc::buildEvaluation(ModuleOp module,
                                   const TrainingPipelineOptions &options,
                                   bool plan, const CompileRequest &request) {
  // A pipelined step's evaluation is not cut into stages: it runs whole on
  // the mesh without the pipeline axis, the same on every stage's ranks
  // (the step's parameters gathered across the stages).
  TrainingPipelineOptions evaluation;
  evaluation.copyOptionValuesFrom(options);
  std::string meshError;
  FailureOr<tg::Mesh> mesh = tg::Mesh::parse(options.mesh, meshError);
  if (succeeded(mesh) && mesh->getAxisIndex("pp")) {
    evaluation.mesh = mesh->withoutAxis("pp").str();
    // Without an axis left, the options that shard over one go: the step
    // (built after) refuses them with the step's mesh in its message.
    if (evaluation.mesh.empty()) {
      evaluation.zero = 0;
      evaluation.sequenceParallel = false;
      evaluation.expertParallel = false;
    }
  }
  FailureOr<DeviceSpec> device = prepareModule(module, request);
  if (failed(device))
    return failure();
  TrainingPipelineOptions planning;
  planning.copyOptionValuesFrom(evaluation);
  planning.memoryBudget = "";
  planning.recompute = RecomputeStrategy::DP;
  FailureOr<std::string> pipeline =
      buildAndRunPasses(module, request, *device, [&](OpPassManager &pm) {
        buildEvaluationStage(pm, evaluation);
        buildShardingStage(pm, evaluation);
        if (plan)
          buildPlanningStage(pm, planning);
      });
  if (failed(pipeline))
    return failure();
  if (request.pipelineDump)
    *request.pipelineDump << *pipeline << "\n";
  if (plan)
    module->setAttr(tg::TGDialect::kPipelineAttrName,
                    StringAttr::get(module.getContext(), *pipeline));
  return success();
}
