//===- Pipeline.cpp - the stages of the tgc pipeline ----------------------===//
//
// The pass order of DESIGN.md. LoRA adapters come first, so that they are
// cast, differentiated and updated as every other parameter. Then mixed
// precision, so that the backward that tg-autodiff builds inherits each
// op's precision; its scaling state is updated last in the step stage, once
// the optimizer's updates exist to be skipped on overflow. Recomputation comes
// after CSE (which would merge the clones back) and before fusion, which reads
// the clones.
//
//===----------------------------------------------------------------------===//

#include "tgc/Pipeline/Pipeline.h"

#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "tgc/Transforms/Passes.h"

using namespace mlir;
using namespace tgc;

/// The forward's own passes, common to the training step and its
/// evaluation: LoRA adapters, then (after `evaluation`'s pass, when given)
/// mixed precision and tensor parallelism's split projections.
static void buildForwardPasses(OpPassManager &pm,
                               const TrainingPipelineOptions &options,
                               bool evaluation) {
  if (!evaluation)
    pm.addPass(createTGTrainingMode());
  if (options.lora > 0) {
    TGLoraOptions lora;
    lora.rank = options.lora;
    lora.alpha = options.loraAlpha;
    lora.targets.assign(options.loraTargets.begin(), options.loraTargets.end());
    pm.addPass(createTGLora(lora));
  }
  if (evaluation)
    pm.addPass(createTGEvaluation());
  bool lowPrecision = options.precision != PrecisionPolicy::FP32;
  if (lowPrecision) {
    TGMixedPrecisionOptions precision;
    precision.policy = stringifyPrecisionPolicy(options.precision).str();
    precision.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
    precision.keepFp32Params.assign(options.keepFp32Params.begin(),
                                    options.keepFp32Params.end());
    precision.initScale = options.initScale;
    precision.amaxHistory = options.amaxHistory;
    precision.margin = options.fp8Margin;
    pm.addPass(createTGMixedPrecision(precision));
  }
  // Tensor parallelism splits a fused projection by heads only once each
  // of its slices is a projection of its own (before differentiation, so
  // that gradients and optimizer state take the weight's new view).
  std::string meshError;
  FailureOr<tg::Mesh> mesh = tg::Mesh::parse(options.mesh, meshError);
  if (succeeded(mesh) && mesh->getAxisIndex("tp") &&
      mesh->getAxisSize("tp") > 1) {
    // An import's reshape chains (an expert stack flattened for its lookup
    // and back) hide the parameter behind its projection until folded.
    if (!options.noCanonicalize)
      pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createTGSplitFusedProjections());
  }
}

void tgc::buildTrainingStepStage(OpPassManager &pm,
                                 const TrainingPipelineOptions &options) {
  buildForwardPasses(pm, options, /*evaluation=*/false);
  std::string meshError;
  FailureOr<tg::Mesh> mesh = tg::Mesh::parse(options.mesh, meshError);
  // Pipeline stages are cut in the forward, so that the backward, the
  // micro-batches and the optimizer update inherit them.
  if (succeeded(mesh) && mesh->getAxisIndex("pp") &&
      mesh->getAxisSize("pp") > 1) {
    TGPipelineSplitOptions split;
    split.stages = mesh->getAxisSize("pp");
    split.schedule = options.pipelineSchedule;
    split.virtualStages =
        options.virtualStages
            ? options.virtualStages
            : (options.pipelineSchedule == "interleaved" ? 2 : 1);
    split.microBatches = options.microBatches;
    split.device = options.device;
    split.explain = options.explain;
    pm.addPass(createTGPipelineSplit(split));
  }
  if (options.differentiates()) {
    TGAutodiffOptions autodiff;
    autodiff.frozen.assign(options.freeze.begin(), options.freeze.end());
    autodiff.trainable.assign(options.trainable.begin(),
                              options.trainable.end());
    pm.addPass(createTGAutodiff(autodiff));
    if (options.microBatches > 1) {
      TGMicrobatchOptions microbatch;
      microbatch.microBatches = options.microBatches;
      pm.addPass(createTGMicrobatch(microbatch));
    }
  }
  if (options.optimizer != OptimizerKind::None) {
    TGOptimizerOptions optimizer;
    optimizer.kind = stringifyOptimizerKind(options.optimizer).str();
    optimizer.lr = options.lr;
    optimizer.momentum = options.momentum;
    optimizer.weightDecay = options.weightDecay;
    optimizer.nesterov = options.nesterov;
    optimizer.beta1 = options.beta1;
    optimizer.beta2 = options.beta2;
    optimizer.epsilon = options.eps;
    optimizer.noDecay.assign(options.noDecay.begin(), options.noDecay.end());
    optimizer.clipNorm = options.clipNorm;
    pm.addPass(createTGOptimizer(optimizer));
  }
  if (options.differentiates() && options.precision != PrecisionPolicy::FP32) {
    TGScalingUpdateOptions scaling;
    scaling.growthInterval = options.growthInterval;
    pm.addPass(createTGScalingUpdate(scaling));
  }
  if (!options.noCanonicalize) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void tgc::buildEvaluationStage(OpPassManager &pm,
                               const TrainingPipelineOptions &options) {
  buildForwardPasses(pm, options, /*evaluation=*/true);
  if (!options.noCanonicalize) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void tgc::buildShardingStage(OpPassManager &pm,
                             const TrainingPipelineOptions &options) {
  if (options.mesh.empty() && options.zero == 0 && !options.sequenceParallel &&
      !options.expertParallel)
    return;
  TGShardAnnotateOptions annotate;
  annotate.meshSpec = options.mesh;
  annotate.zero = options.zero;
  annotate.sequenceParallel = options.sequenceParallel;
  annotate.expertParallel = options.expertParallel;
  annotate.shardings.assign(options.shard.begin(), options.shard.end());
  pm.addPass(createTGShardAnnotate(annotate));
  OpPassManager &function = pm.nest<func::FuncOp>();
  TGShardPropagateOptions propagate;
  propagate.explain = options.explainSharding;
  function.addPass(createTGShardPropagate(propagate));
  TGPartitionOptions partition;
  partition.explain = options.explainSharding;
  function.addPass(createTGPartition(partition));
  TGPipelineScheduleOptions pipeline;
  pipeline.device = options.device;
  function.addPass(createTGPipelineSchedule(pipeline));
}

void tgc::buildPlanningStage(OpPassManager &pm,
                             const TrainingPipelineOptions &options) {
  OpPassManager &function = pm.nest<func::FuncOp>();
  if (options.recomputes()) {
    TGRecomputeOptions recompute;
    recompute.budget = options.memoryBudget;
    recompute.strategy = stringifyRecomputeStrategy(options.recompute).str();
    recompute.device = options.device;
    recompute.explain = options.explain;
    function.addPass(createTGRecompute(recompute));
  }
  if (!options.noFuse) {
    TGFuseOptions fuse;
    fuse.device = options.device;
    fuse.noFuseOptimizer = options.noFuseOptimizer;
    function.addPass(createTGFuse(fuse));
  }
  // After fusion, so that no region takes in a bucket's concat or slices.
  if (!options.mesh.empty() && options.gradBucketMB > 0) {
    TGBucketCollectivesOptions buckets;
    buckets.bucketBytes = int64_t(options.gradBucketMB) << 20;
    buckets.scatter = options.scatterBuckets;
    buckets.gather = options.gatherBuckets;
    buckets.device = options.device;
    function.addPass(createTGBucketCollectives(buckets));
  }
  if (!options.noSchedule) {
    TGScheduleOptions schedule;
    schedule.overlap = !options.noOverlap;
    schedule.device = options.device;
    function.addPass(createTGSchedule(schedule));
  }
  if (!options.noMemoryPlan) {
    TGMemoryPlanOptions plan;
    plan.device = options.device;
    function.addPass(createTGMemoryPlan(plan));
  }
}

void tgc::buildTrainingPipeline(OpPassManager &pm,
                                const TrainingPipelineOptions &options) {
  buildTrainingStepStage(pm, options);
  buildShardingStage(pm, options);
  buildPlanningStage(pm, options);
}

void tgc::registerTrainingPipeline() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "tg-training-pipeline",
      "Turn a tg module into an optimized training step: the training-step "
      "stage, then planning",
      buildTrainingPipeline);
}
