//===- Pipeline.cpp - the tgc training pipeline ---------------------------===//
//
// The pass order of DESIGN.md; passes join here as they are implemented.
// Mixed precision comes first, so that the backward that tg-autodiff builds
// inherits each op's precision; its scaling state is updated last, once the
// optimizer's updates exist to be skipped on overflow.
//
//===----------------------------------------------------------------------===//

#include "tgc/Pipeline/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tgc/Transforms/Passes.h"

using namespace mlir;

void tgc::buildTrainingPipeline(OpPassManager &pm,
                                const TrainingPipelineOptions &options) {
  bool differentiates = options.autodiff || !options.optimizer.empty();
  if (options.precision != "fp32") {
    TGMixedPrecisionOptions precision;
    precision.policy = options.precision;
    precision.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
    precision.keepFp32Params.assign(options.keepFp32Params.begin(),
                                    options.keepFp32Params.end());
    precision.initScale = options.initScale;
    precision.amaxHistory = options.amaxHistory;
    precision.margin = options.fp8Margin;
    pm.addPass(createTGMixedPrecision(precision));
  }
  if (differentiates) {
    TGAutodiffOptions autodiff;
    autodiff.frozen.assign(options.frozen.begin(), options.frozen.end());
    autodiff.trainable.assign(options.trainable.begin(),
                              options.trainable.end());
    pm.addPass(createTGAutodiff(autodiff));
    if (options.microBatches > 1) {
      TGMicrobatchOptions microbatch;
      microbatch.microBatches = options.microBatches;
      pm.addPass(createTGMicrobatch(microbatch));
    }
  }
  if (!options.optimizer.empty()) {
    TGOptimizerOptions optimizer;
    optimizer.kind = options.optimizer;
    optimizer.lr = options.lr;
    optimizer.momentum = options.momentum;
    optimizer.weightDecay = options.weightDecay;
    optimizer.clipNorm = options.clipNorm;
    pm.addPass(createTGOptimizer(optimizer));
  }
  if (differentiates && options.precision != "fp32") {
    TGScalingUpdateOptions scaling;
    scaling.growthInterval = options.growthInterval;
    pm.addPass(createTGScalingUpdate(scaling));
  }
  if (options.canonicalize) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // After CSE, which would merge the recomputed clones back.
  if (!options.memoryBudget.empty() || options.recompute != "dp") {
    TGRecomputeOptions recompute;
    recompute.budget = options.memoryBudget;
    recompute.strategy = options.recompute;
    recompute.device = options.device;
    recompute.explain = options.explainRecompute;
    pm.addNestedPass<func::FuncOp>(createTGRecompute(recompute));
  }
  if (options.fuse) {
    TGFuseOptions fuse;
    fuse.device = options.device;
    fuse.noHorizontal = !options.fuseOptimizer;
    pm.addNestedPass<func::FuncOp>(createTGFuse(fuse));
  }
  // Last: the order and the offsets are those of the program emitted.
  if (options.schedule)
    pm.addNestedPass<func::FuncOp>(createTGSchedule());
  if (options.memoryPlan) {
    TGMemoryPlanOptions plan;
    plan.device = options.device;
    pm.addNestedPass<func::FuncOp>(createTGMemoryPlan(plan));
  }
}

void tgc::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "tg-training-pipeline",
      "Turn a tg module into an optimized training step",
      buildTrainingPipeline);
}
