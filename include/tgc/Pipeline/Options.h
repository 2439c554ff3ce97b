//===- Options.h - the one options struct of the pipeline -------*- C++ -*-===//
//
// Every knob of the pipeline, declared once with one name. `tgc-opt
// --tg-training-pipeline='...'` parses it from text; the `tgc` subcommands
// expose the same names as flags (tools/tgc/PipelineFlags.cpp) and fill it
// once; the stage builders (Pipeline.h) read nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_PIPELINE_OPTIONS_H
#define TGC_PIPELINE_OPTIONS_H

#include "tgc/Analysis/RecomputePlanner.h"

#include "mlir/Pass/PassOptions.h"

namespace tgc {

/// Mixed-precision policies (tg-mixed-precision).
enum class PrecisionPolicy { FP32, BF16, FP16, FP8 };
/// Optimizers (tg-optimizer); None: no update.
enum class OptimizerKind { None, SGD, AdamW, LAMB, Adafactor };

llvm::StringRef stringifyPrecisionPolicy(PrecisionPolicy policy);
llvm::StringRef stringifyOptimizerKind(OptimizerKind kind);
llvm::StringRef stringifyRecomputeStrategy(RecomputeStrategy strategy);

/// The values each enum knob accepts, with their help text; the textual
/// pipeline and the `tgc` flags take the same.
llvm::cl::ValuesClass getPrecisionPolicyValues();
llvm::cl::ValuesClass getOptimizerKindValues();
llvm::cl::ValuesClass getRecomputeStrategyValues();

struct TrainingPipelineOptions
    : public mlir::PassPipelineOptions<TrainingPipelineOptions> {
  //===--- The training-step stage ----------------------------------------===//
  Option<unsigned> lora{
      *this, "lora",
      llvm::cl::desc("Add LoRA adapters of rank R to the matmul weights "
                     "matching lora-targets and freeze the base model "
                     "(tg-lora; default 0: none)"),
      llvm::cl::init(0)};
  Option<double> loraAlpha{
      *this, "lora-alpha",
      llvm::cl::desc("LoRA alpha: the adapters' output is scaled by "
                     "alpha / R (default 0: alpha = R, a scaling of 1)"),
      llvm::cl::init(0.0)};
  ListOption<std::string> loraTargets{
      *this, "lora-targets",
      llvm::cl::desc("With lora: globs of the weights' tg.name to adapt "
                     "(default: every parameter used only as a matmul "
                     "weight)")};
  Option<PrecisionPolicy> precision{
      *this, "precision",
      llvm::cl::desc("Mixed precision; parameters, gradients and optimizer "
                     "state stay f32 (tg-mixed-precision, tg-scaling-update)"),
      getPrecisionPolicyValues(), llvm::cl::init(PrecisionPolicy::FP32)};
  ListOption<std::string> keepFp32{
      *this, "keep-fp32",
      llvm::cl::desc("With a precision: op names that always run in f32 "
                     "(e.g. tg.attention)")};
  ListOption<std::string> keepFp32Params{
      *this, "keep-fp32-params",
      llvm::cl::desc("With a precision: the ops reading these parameters "
                     "(globs) run in f32")};
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
      llvm::cl::desc("Differentiate the loss: also return the gradient of "
                     "every trained param (tg-autodiff; implied by an "
                     "optimizer)"),
      llvm::cl::init(false)};
  ListOption<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("Do not train the parameters whose tg.name matches "
                     "(globs)")};
  ListOption<std::string> trainable{
      *this, "trainable",
      llvm::cl::desc("Train only the parameters whose tg.name matches "
                     "(globs)")};
  Option<unsigned> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Accumulate gradients over N micro-batches: the graph "
                     "is written for one (tg-microbatch; default 1)"),
      llvm::cl::init(1)};
  Option<OptimizerKind> optimizer{
      *this, "optimizer",
      llvm::cl::desc("Update the params with this optimizer (tg-optimizer; "
                     "implies autodiff)"),
      getOptimizerKindValues(), llvm::cl::init(OptimizerKind::None)};
  Option<double> lr{
      *this, "lr",
      llvm::cl::desc("Default learning rate of the optimizer (default 1e-3)"),
      llvm::cl::init(1e-3)};
  Option<double> momentum{
      *this, "momentum",
      llvm::cl::desc("SGD momentum of the optimizer (default 0)"),
      llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("SGD: Nesterov momentum (default off)"),
                        llvm::cl::init(false)};
  Option<double> beta1{
      *this, "beta1",
      llvm::cl::desc("AdamW/LAMB first-moment decay (default 0.9)"),
      llvm::cl::init(0.9)};
  Option<double> beta2{
      *this, "beta2",
      llvm::cl::desc("AdamW/LAMB second-moment decay (default 0.999)"),
      llvm::cl::init(0.999)};
  Option<double> eps{
      *this, "eps",
      llvm::cl::desc("AdamW/LAMB denominator epsilon (default 1e-8)"),
      llvm::cl::init(1e-8)};
  ListOption<std::string> noDecay{
      *this, "no-decay",
      llvm::cl::desc("Globs of parameter names without weight decay "
                     "(default: *bias,*norm*,*ln_*)")};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Weight decay of the optimizer (default 0)"),
      llvm::cl::init(0.0)};
  Option<double> clipNorm{
      *this, "clip-norm",
      llvm::cl::desc("Clip the global gradient norm to this value (default "
                     "0: no clipping)"),
      llvm::cl::init(0.0)};
  Option<bool> noCanonicalize{
      *this, "no-canonicalize",
      llvm::cl::desc("Skip canonicalization and CSE of the step"),
      llvm::cl::init(false)};

  //===--- The sharding stage ---------------------------------------------===//
  Option<std::string> mesh{
      *this, "mesh",
      llvm::cl::desc("Devices as a mesh of named axes, the last innermost "
                     "(dp=8,pp=2,tp=4): dp splits the batch, tp the layers "
                     "(Megatron), pp the model into pipeline stages; the step "
                     "becomes one device's program "
                     "(tg-shard-annotate, tg-shard-propagate, tg-partition)"),
      llvm::cl::init("")};
  Option<unsigned> zero{
      *this, "zero",
      llvm::cl::desc("ZeRO stage over the dp axis: 1 shards optimizer "
                     "state, 2 also gradients, 3 also parameters (default 0)"),
      llvm::cl::init(0)};
  Option<unsigned> gradBucketMB{
      *this, "grad-bucket-mb",
      llvm::cl::desc("Merge the gradient all-reduces of a partitioned step "
                     "into buckets of about this many MiB, in the order "
                     "gradients are computed (tg-bucket-collectives; 0: one "
                     "all-reduce per gradient; default 4)"),
      llvm::cl::init(4)};
  Option<std::string> scatterBuckets{
      *this, "scatter-buckets",
      llvm::cl::desc("ZeRO-2/3's gradient reduce-scatters in buckets too, "
                     "each gradient copied in: auto (when the step's "
                     "communication outweighs its kernels; the default), "
                     "always or never"),
      llvm::cl::init("auto")};
  Option<std::string> gatherBuckets{
      *this, "gather-buckets",
      llvm::cl::desc("ZeRO's parameter all-gathers in buckets, each "
                     "parameter copied out: auto (when the step's "
                     "communication outweighs its kernels; the default), "
                     "always or never"),
      llvm::cl::init("auto")};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("With a tp axis: split the norms' inputs (the residual "
                     "stream) on the sequence dimension over tp"),
      llvm::cl::init(false)};
  Option<bool> expertParallel{
      *this, "expert-parallel",
      llvm::cl::desc("With a dp axis: split every mixture-of-experts stack on "
                     "its experts over dp (expert parallelism)"),
      llvm::cl::init(false)};
  ListOption<std::string> shard{
      *this, "shard",
      llvm::cl::desc("User shardings of arguments, NAME_GLOB=AXES,AXES,... "
                     "(one entry per dimension; a+b for two axes, empty for "
                     "a whole dimension): they win over the presets")};
  Option<std::string> pipelineSchedule{
      *this, "pipeline-schedule",
      llvm::cl::desc("With a pp axis: the order of the pipeline's units, "
                     "gpipe, 1f1b or interleaved (default 1f1b; "
                     "tg-pipeline-split, tg-pipeline-schedule)"),
      llvm::cl::init("1f1b")};
  Option<unsigned> virtualStages{
      *this, "virtual-stages",
      llvm::cl::desc("With the interleaved schedule: model chunks per "
                     "pipeline device (default 2)"),
      llvm::cl::init(0)};
  Option<bool> explainSharding{
      *this, "explain-sharding",
      llvm::cl::desc("A remark per sharding conflict and per inserted "
                     "collective, and a table of the arguments' shardings"),
      llvm::cl::init(false)};

  //===--- The planning stage ---------------------------------------------===//
  Option<std::string> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("Recompute activations so the simulated peak fits BYTES "
                     "(suffixes KiB, MiB, GiB, KB, MB, GB) or `auto` (the "
                     "device's memory minus 5%) (tg-recompute)"),
      llvm::cl::init("")};
  Option<RecomputeStrategy> recompute{
      *this, "recompute",
      llvm::cl::desc("How tg-recompute chooses what to recompute; with a "
                     "memory budget, a fixed strategy must fit it"),
      getRecomputeStrategyValues(), llvm::cl::init(RecomputeStrategy::DP)};
  Option<bool> explain{
      *this, "explain",
      llvm::cl::desc("A remark per activation (kept or recomputed, bytes, "
                     "recompute time) and a summary of tg-recompute; with a "
                     "pp axis, a remark per pipeline stage"),
      llvm::cl::init(false)};
  Option<bool> noFuse{
      *this, "no-fuse",
      llvm::cl::desc("Do not group ops into fusion regions (skip tg-fuse)"),
      llvm::cl::init(false)};
  Option<bool> noFuseOptimizer{
      *this, "no-fuse-optimizer",
      llvm::cl::desc("Keep each optimizer update (and master-weight cast) "
                     "its own kernel instead of multi-tensor kernels grouped "
                     "by gradient readiness"),
      llvm::cl::init(false)};
  Option<bool> noSchedule{
      *this, "no-schedule",
      llvm::cl::desc("Keep the op order (skip tg-schedule, which reorders "
                     "ops to lower the peak memory)"),
      llvm::cl::init(false)};
  Option<bool> noOverlap{
      *this, "no-overlap",
      llvm::cl::desc("Schedule for memory only: collectives are not ordered "
                     "to overlap compute (tg-schedule's overlap=false)"),
      llvm::cl::init(false)};
  Option<bool> noMemoryPlan{
      *this, "no-memory-plan",
      llvm::cl::desc("Skip tg-memory-plan (no arena offsets on the ops)"),
      llvm::cl::init(false)};
  Option<std::string> device{
      *this, "device",
      llvm::cl::desc("The built-in device planned for (A100-40GB, A100-80GB, "
                     "H100-SXM, H200, B200; default: the module's tg.device, "
                     "else H100-SXM)"),
      llvm::cl::init("")};

  /// Whether the step stage differentiates (autodiff or an optimizer).
  bool differentiates() const {
    return autodiff || optimizer != OptimizerKind::None;
  }
  /// Whether the planning stage runs tg-recompute.
  bool recomputes() const {
    return !memoryBudget.empty() || recompute != RecomputeStrategy::DP;
  }
};

/// Every numeric knob against its range (lib/Pipeline/OptionLimits.cpp, one
/// table): an error naming the option (`--lr must be a finite number in
/// [0, 1e+06], got nan`) instead of a value silently taken or changed.
llvm::Error validatePipelineOptions(const TrainingPipelineOptions &options);

} // namespace tgc

#endif // TGC_PIPELINE_OPTIONS_H
