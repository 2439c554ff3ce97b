//===- Compile.h - running the pipeline on a model --------------*- C++ -*-===//
//
// `tgc compile`, `tgc report` and `tgc train` build their programs here, with
// the stage builders of lib/Pipeline and nothing else: the device is
// resolved once and recorded on the module (`tg.device`), the compiled step
// records the pipeline that made it (`tg.pipeline`), and a compiled step is
// never compiled again.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DRIVER_COMPILE_H
#define TGC_DRIVER_COMPILE_H

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace tgc {

/// Whether `module` is a step `tgc compile` (or the training pipeline) wrote:
/// it carries `tg.pipeline`, or a function carries the memory plan's
/// `tg.arena_size`.
bool isCompiledStep(mlir::ModuleOp module);

/// Where the program stood on its way through the pipeline, for the report.
struct CompileObservations {
  /// Per function: the kernels, bytes and time just before tg-fuse.
  llvm::StringMap<StepTimeEstimate> unfused;
};

/// The stages of the training pipeline, in order (lib/Pipeline).
enum class CompileStage { TrainingStep, Sharding, Planning };

struct CompileRequest {
  /// The device to plan for; none: the module's `tg.device`, else the
  /// default device.
  std::optional<DeviceSpec> device;
  /// Where to record the observations; null: none are made.
  CompileObservations *observations = nullptr;
  /// Where to print the pass pipeline before it runs; null: nowhere.
  llvm::raw_ostream *pipelineDump = nullptr;
  /// The stages compileModule runs, `first` to `last`: a caller that keeps
  /// the module between stages (tgc plan shares the training step among
  /// configurations) resumes it where it stopped. Only a run through
  /// Planning records `tg.pipeline` (with every stage's passes).
  CompileStage first = CompileStage::TrainingStep;
  CompileStage last = CompileStage::Planning;
};

/// Runs the whole training pipeline on `module` and records it as
/// `tg.pipeline`. With a memory budget, the budget holds for the program
/// emitted: when fusion made the planned step peak above it, planning runs
/// again on the training step with the budget tightened by the overshoot (a
/// few times at most, then an error). The module's functions are replaced
/// (look them up again by name). A compiled step is refused.
mlir::LogicalResult compileModule(mlir::ModuleOp module,
                                  const TrainingPipelineOptions &options,
                                  const CompileRequest &request = {});

/// Runs the training-step stage alone: the step the interpreter trains and
/// the recompute planner plans over. A compiled step is refused.
mlir::LogicalResult buildTrainingStep(mlir::ModuleOp module,
                                      const TrainingPipelineOptions &options,
                                      const CompileRequest &request = {});

/// Builds in `module` (a forward graph with a loss) its evaluation: the
/// evaluation stage and the sharding stage of `options`, and with `plan`
/// the planning stage (without recomputation: an evaluation keeps no
/// activations for a backward), recorded as `tg.pipeline`. On a pipelined
/// mesh the evaluation is built on the mesh without its pp axis, whole on
/// each stage's ranks. A compiled step is refused.
mlir::LogicalResult buildEvaluation(mlir::ModuleOp module,
                                    const TrainingPipelineOptions &options,
                                    bool plan,
                                    const CompileRequest &request = {});

} // namespace tgc

#endif // TGC_DRIVER_COMPILE_H
