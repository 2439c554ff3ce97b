//===- Plan.h - tgc plan: choosing the parallel configuration ---*- C++ -*-===//
//
// The search behind `tgc plan`: every mesh (dp x pp x tp over the devices,
// tp in a node, pp dividing the layers), ZeRO stage, sequence parallelism,
// micro-batch size and count, pipeline schedule and virtual stages, and
// recompute to the device's memory, each priced by compiling the step as
// `tgc compile` would and reading the figures `tgc report` prints. Models of
// identical layers (the zoo's gpt2 and llama, recognised from their IR) are
// compiled with 1 and 2 layers and 2 and 4 micro-batches and extrapolated
// linearly; a pipeline is modelled from the same points, stage by stage
// (docs/plan.md); other models are compiled whole.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DRIVER_PLAN_H
#define TGC_DRIVER_PLAN_H

#include "tgc/Analysis/Device.h"
#include "tgc/Pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgc {

/// A model the planner can build at another batch (and, for models of
/// identical layers, with fewer layers).
class PlanModel {
public:
  virtual ~PlanModel();
  /// What the model is, for the plan's header.
  virtual std::string describe() const = 0;
  /// Layers of identical structure (1: not layered, compiled whole).
  virtual int64_t getLayers() const = 0;
  /// The sequence length and the batch of the model as given.
  virtual int64_t getSeq() const = 0;
  virtual int64_t getBatch() const = 0;
  /// Whether build() takes another batch or sequence length than the
  /// model's own.
  virtual bool canReshape() const = 0;
  /// The model with `layers` layers, a batch of `batch` and sequences of
  /// `seq` (the model's own unless canReshape()).
  virtual mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
  build(mlir::MLIRContext &context, int64_t layers, int64_t batch,
        int64_t seq) const = 0;
  /// The shell command that writes the whole model at `batch` and `seq` to
  /// `file`, or empty when the model file itself is that model.
  virtual std::string getWriteCommand(int64_t batch, int64_t seq,
                                      llvm::StringRef file) const = 0;
  /// Parameters (elements of the `param` arguments) of the whole model.
  virtual int64_t getParams() const = 0;
  /// The width of the activations between two layers (0: unknown), which a
  /// pipeline stage sends to the next.
  virtual int64_t getHidden() const { return 0; }
  /// The mixture-of-experts stacks (the matrices of `tg.expert_matmul`):
  /// their parameters' elements and experts, one entry per parameter.
  virtual llvm::ArrayRef<std::pair<int64_t, int64_t>> getExpertStacks() const {
    return {};
  }
  /// Parameters outside the layers that only the first pipeline stage holds
  /// (the embeddings) and that only the last holds (the final norm and an
  /// untied LM head); a tied embedding is held by both and counted in
  /// neither.
  virtual std::pair<int64_t, int64_t> getEdgeParams() const { return {0, 0}; }
};

/// The zoo model `module` is (rebuilt from the configuration read off its
/// IR, which must print identically), else the module as given.
std::unique_ptr<PlanModel> recognizePlanModel(mlir::ModuleOp module,
                                              llvm::StringRef modelFile);

/// One parallel configuration. The mesh's axes are listed outermost first
/// (the last one innermost, in a node), as `--mesh` takes them: dp, pp, tp.
struct ParallelConfig {
  int64_t dp = 1;
  int64_t tp = 1;
  unsigned zero = 0;
  bool sequenceParallel = false;
  /// `--expert-parallel`: the expert stacks split on their experts over dp.
  bool expertParallel = false;
  /// Sequences one device runs per micro-batch, and micro-batches per step.
  int64_t microBatchSize = 1;
  int64_t microBatches = 1;
  /// Recompute activations so that the peak fits the memory budget.
  bool recompute = false;
  /// Pipeline stages (the pp axis) and model chunks per device: 1 is 1F1B,
  /// more is interleaved 1F1B (docs/pipeline.md).
  int64_t pp = 1;
  int64_t virtualStages = 1;

  /// `dp=8,pp=4,tp=2` (axes of size 1 left out; empty: one device).
  std::string getMesh() const;
  /// `1f1b` or `interleaved` (empty without pp).
  std::string getSchedule() const;
  /// The `tgc compile` flags of this configuration, after `--train`.
  std::vector<std::string> getCompileFlags(const TrainingPipelineOptions &base,
                                           llvm::StringRef budget) const;
};

/// The figures of one configuration, per device.
struct PlanFigures {
  int64_t peakBytes = 0;
  double stepTime = 0;
  double mfu = 0;
  double exposedCommunication = 0;
  double flops = 0;
  /// Bytes kept across steps plus the activations kept for the backward.
  int64_t keptBytes = 0;
  /// Of those, the activations kept for the backward (one micro-batch's).
  int64_t activationBytes = 0;
  /// Pipelines: the share of the step the binding stage idles, the exposed
  /// point-to-point transfers, the stage whose peak is the plan's (0: the
  /// first, pp-1: the last), the micro-batches of activations in flight
  /// there and their bytes.
  double bubble = 0;
  double transferTime = 0;
  int64_t bindingStage = 0;
  double inFlight = 1;
  int64_t inFlightBytes = 0;
};

struct PlanCandidate {
  ParallelConfig config;
  PlanFigures figures;
  /// Compiled whole, with its micro-batches: the figures are exact.
  bool exact = false;
  /// Compiling it whole failed: its figures stay extrapolated.
  bool wholeFailed = false;
};

struct PlanRequest {
  int64_t devices = 1;
  DeviceSpec device;
  /// Whether --nodes-of changed the device's GPUs per node.
  bool nodeSizeChanged = false;
  /// Sequences per step; 0: the model's batch.
  int64_t globalBatch = 0;
  /// Sequence length; 0: the model's.
  int64_t seq = 0;
  PrecisionPolicy precision = PrecisionPolicy::BF16;
  OptimizerKind optimizer = OptimizerKind::AdamW;
  /// Pipeline stages forced by --pp (0: searched).
  int64_t pp = 0;
  unsigned top = 5;
  bool explain = false;
  bool json = false;
  std::string modelFile;
};

/// Searches the configurations of `module`'s model for `request` and prints
/// the table (or JSON) to `os`. Fails, with the reason printed, on bad
/// input and when no configuration fits.
mlir::LogicalResult planParallelism(mlir::ModuleOp module,
                                    const PlanRequest &request,
                                    llvm::raw_ostream &os);

} // namespace tgc

#endif // TGC_DRIVER_PLAN_H
