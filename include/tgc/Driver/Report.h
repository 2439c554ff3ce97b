//===- Report.h - what `tgc report` prints ----------------------*- C++ -*-===//
//
// The report of a compiled step, read off the step as it is: cost per op,
// estimated step time, the training-memory table, the simulated peak and
// the arena (which equals the step's `tg.arena_size`); and the recompute
// frontier of a training step.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DRIVER_REPORT_H
#define TGC_DRIVER_REPORT_H

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/TrainingMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace tgc {

struct ReportRequest {
  /// The device the costs are for; none: the module's `tg.device`, else the
  /// default device.
  std::optional<DeviceSpec> device;
  bool json = false;
  /// Draw live memory over the ops as an SVG file; empty: no drawing.
  std::string memoryTimelineFile;
  /// The figures of the same step before tg-fuse, shown beside the fused.
  std::optional<StepTimeEstimate> unfused;
  /// The persistent training memory of the same model with every parameter
  /// trained, shown against the step's (LoRA against full fine-tuning).
  std::optional<TrainingMemory> fullFineTuning;
};

/// Prints the report of `function` in `module`, a step as it is (no pass
/// runs), to `os`.
mlir::LogicalResult reportStep(mlir::ModuleOp module,
                               mlir::func::FuncOp function,
                               const ReportRequest &request,
                               llvm::raw_ostream &os);

/// Prints the recompute frontier of `step` (a training step before the
/// planning stage) with `points + 1` points and, when `svgFile` is not
/// empty, draws it.
mlir::LogicalResult reportRecomputeFrontier(mlir::func::FuncOp step,
                                            unsigned points,
                                            llvm::StringRef svgFile,
                                            llvm::raw_ostream &os);

} // namespace tgc

#endif // TGC_DRIVER_REPORT_H
