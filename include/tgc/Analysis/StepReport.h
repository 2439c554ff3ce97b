//===- StepReport.h - what `tgc report` says about a step -------*- C++ -*-===//
//
// The plan report of one function on one device: parameter count, model-state
// bytes per parameter, the simulated peak and its breakdown, the estimated
// step time and what it is made of. Its JSON form is the report contract
// (docs/tools.md): `params`, `bytes_per_param`, `peak_bytes`,
// `peak_breakdown`, `step_time_s`, `flops`, `hbm_bytes`, `kernels`, ...
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_STEPREPORT_H
#define TGC_ANALYSIS_STEPREPORT_H

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/TrainingMemory.h"

namespace tgc {

struct StepReport {
  DeviceSpec device;
  MemorySimulation memory;
  StepTimeEstimate time;
  /// Elements of the `param` arguments.
  int64_t params = 0;
  /// The arena `tg-memory-plan` would allocate for this order (256-byte
  /// alignment).
  int64_t arenaBytes = 0;
  /// What the step keeps across steps: params, gradients, optimizer state,
  /// low-precision param copies and scaling state (the training-memory
  /// table; `bytes_per_param` is its total per parameter).
  TrainingMemory training;
  double getBytesPerParam() const {
    return params ? static_cast<double>(training.getTotalBytes()) / params
                  : 0.0;
  }

  static StepReport compute(mlir::func::FuncOp function,
                            const DeviceSpec &device);
  void print(llvm::raw_ostream &os) const;
  /// The report contract's keys, plus "memory" and "time" in detail.
  nlohmann::json toJson() const;
};

} // namespace tgc

#endif // TGC_ANALYSIS_STEPREPORT_H
