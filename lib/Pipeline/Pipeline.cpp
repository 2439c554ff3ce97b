//===- Pipeline.cpp - the tgc training pipeline ---------------------------===//
//
// The pass order of DESIGN.md; passes join here as they are implemented.
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
  if (options.autodiff || !options.optimizer.empty()) {
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
  if (options.canonicalize) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
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
