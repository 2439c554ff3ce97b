//===- Pipeline.h - the stages of the tgc pipeline --------------*- C++ -*-===//
//
// The named stage builders that turn a tg module into an optimized training
// step. `tgc compile`, `tgc report`, `tgc train`, `tgc-opt
// --tg-training-pipeline` and embedding compilers compose these builders and
// nothing else, so every figure tgc prints is one of the program it emits
// (docs/architecture.md). The sharding and code-generation stages join
// between planning's per-device passes and after them.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_PIPELINE_PIPELINE_H
#define TGC_PIPELINE_PIPELINE_H

#include "tgc/Pipeline/Options.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace tgc {

/// The training-step stage: mixed precision, autodiff, micro-batching, the
/// optimizer, the scaling-state update, canonicalization and CSE. The step
/// it leaves is what the interpreter trains (`tgc train`).
void buildTrainingStepStage(mlir::OpPassManager &pm,
                            const TrainingPipelineOptions &options);

/// The evaluation stage, in place of the training-step stage: the forward
/// graph's loss as a validation measures it (tg-evaluation: no dropout,
/// the loss alone), with the training step's LoRA adapters, mixed
/// precision and split projections, so that it computes the loss of the
/// training step's forward on the same values.
void buildEvaluationStage(mlir::OpPassManager &pm,
                          const TrainingPipelineOptions &options);

/// The sharding stage, with a mesh: the presets and the mesh
/// (tg-shard-annotate), a sharding for every value (tg-shard-propagate) and
/// the per-device program with its collectives (tg-partition). Nothing
/// without a mesh.
void buildShardingStage(mlir::OpPassManager &pm,
                        const TrainingPipelineOptions &options);

/// The planning stage, per device: recomputation, fusion, the schedule and
/// the memory plan, in that order (the order and the offsets are those of
/// the program emitted).
void buildPlanningStage(mlir::OpPassManager &pm,
                        const TrainingPipelineOptions &options);

/// The whole pipeline: the training-step stage, sharding, then planning. `pm`
/// must run on a `builtin.module`; the module is verified after every pass.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers the pipeline as `tg-training-pipeline`.
void registerTrainingPipeline();

} // namespace tgc

#endif // TGC_PIPELINE_PIPELINE_H
