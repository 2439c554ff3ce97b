//===- Pipeline.h - the tgc training pipeline -------------------*- C++ -*-===//
//
// The named pipeline that turns a tg module into an optimized training step,
// for `tgc compile`, `tgc-opt --tg-training-pipeline` and embedding compilers.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_PIPELINE_PIPELINE_H
#define TGC_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace tgc {

/// Options of the training pipeline. Each pass that joins the pipeline adds
/// its options here, so `tgc compile`, `tgc-opt` and embedders share them.
struct TrainingPipelineOptions
    : public mlir::PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Mixed precision: fp32, bf16, fp16 (with dynamic loss "
                     "scaling) or fp8 (tg-mixed-precision before autodiff, "
                     "tg-scaling-update after the optimizer)"),
      llvm::cl::init("fp32")};
  ListOption<std::string> keepFp32{
      *this, "keep-fp32",
      llvm::cl::desc("Op names that always run in f32 (mixed precision)")};
  ListOption<std::string> keepFp32Params{
      *this, "keep-fp32-params",
      llvm::cl::desc("Globs of parameter names whose ops run in f32")};
  Option<double> initScale{
      *this, "init-scale",
      llvm::cl::desc("fp16: the initial loss scale (default 65536)"),
      llvm::cl::init(65536.0)};
  Option<unsigned> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("fp16: clean steps before the loss scale doubles "
                     "(default 2000)"),
      llvm::cl::init(2000)};
  Option<unsigned> amaxHistory{
      *this, "amax-history",
      llvm::cl::desc("fp8: steps of amax history per tensor (default 16)"),
      llvm::cl::init(16)};
  Option<unsigned> fp8Margin{
      *this, "fp8-margin",
      llvm::cl::desc("fp8: scales leave 2^margin of headroom (default 0)"),
      llvm::cl::init(0)};
  Option<bool> autodiff{
      *this, "autodiff",
      llvm::cl::desc("Differentiate the loss: return the gradient of every "
                     "param (tg-autodiff)"),
      llvm::cl::init(false)};
  ListOption<std::string> frozen{
      *this, "frozen",
      llvm::cl::desc("Globs of parameter names that are not trained")};
  ListOption<std::string> trainable{
      *this, "trainable",
      llvm::cl::desc("Globs of the only parameter names that are trained")};
  Option<unsigned> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Accumulate gradients over this many micro-batches "
                     "(tg-microbatch; the graph is written for one)"),
      llvm::cl::init(1)};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("Update the params with this optimizer (sgd, adamw, "
                     "lamb, adafactor; implies autodiff; tg-optimizer with "
                     "its defaults and the lr below)"),
      llvm::cl::init("")};
  Option<double> lr{*this, "lr",
                    llvm::cl::desc("Default learning rate of the optimizer"),
                    llvm::cl::init(1e-3)};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("SGD momentum of the optimizer"),
                          llvm::cl::init(0.0)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("Weight decay of the optimizer"),
                             llvm::cl::init(0.0)};
  Option<double> clipNorm{
      *this, "clip-norm",
      llvm::cl::desc("Clip the global gradient norm (0: no clipping)"),
      llvm::cl::init(0.0)};
  Option<bool> canonicalize{
      *this, "canonicalize",
      llvm::cl::desc("Run canonicalization and CSE over the step"),
      llvm::cl::init(true)};
  Option<std::string> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Recompute activations so the simulated peak fits this "
                     "many bytes (suffixes KiB, MiB, GiB, KB, MB, GB...) or "
                     "`auto` (tg-recompute; empty: no budget)"),
      llvm::cl::init("")};
  Option<std::string> recompute{
      *this, "recompute",
      llvm::cl::desc("tg-recompute's strategy: dp (default; needs a budget), "
                     "none, full or sqrt"),
      llvm::cl::init("dp")};
  Option<bool> explainRecompute{
      *this, "explain-recompute",
      llvm::cl::desc("A remark per activation: kept or recomputed"),
      llvm::cl::init(false)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Group the ops into fusion regions, the kernels "
                     "emitted (tg-fuse)"),
      llvm::cl::init(true)};
  Option<bool> fuseOptimizer{
      *this, "fuse-optimizer",
      llvm::cl::desc("Group the optimizer updates (and master-weight casts) "
                     "into multi-tensor regions, buckets in the order the "
                     "gradients become ready that do not raise the "
                     "scheduled peak (tg-fuse without no-horizontal)"),
      llvm::cl::init(true)};
  Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Reorder the ops to lower the peak memory (tg-schedule)"),
      llvm::cl::init(true)};
  Option<bool> memoryPlan{
      *this, "memory-plan",
      llvm::cl::desc("Give every buffer an offset in one arena "
                     "(tg-memory-plan)"),
      llvm::cl::init(true)};
  Option<std::string> device{
      *this, "device",
      llvm::cl::desc("The device planned for: a built-in name or a device "
                     "JSON file (docs/cost-model.md)"),
      llvm::cl::init("H100-SXM")};
};

/// Adds the training pipeline to `pm`, which must run on a `builtin.module`.
/// The pipeline verifies the module after every pass.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers the pipeline as `tg-training-pipeline`.
void registerTrainingPipeline();

} // namespace tgc

#endif // TGC_PIPELINE_PIPELINE_H
