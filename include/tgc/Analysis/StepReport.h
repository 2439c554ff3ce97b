//===- StepReport.h - what `tgc report` says about a step -------*- C++ -*-===//
//
// The plan report of one function on one device: parameter count, model-state
// bytes per parameter, the simulated peak and its breakdown, the estimated
// step time and what it is made of. Of a partitioned step (a function on a
// `shard.grid`), every figure is one device's, except the parameter count,
// which is the model's. Its JSON form is the report contract
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

/// The device grid a partitioned step runs on.
struct MeshSummary {
  std::string name;
  /// The axes' names (`tg.mesh_axes` on the grid), or axis0, axis1, ...
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;
  int64_t getNumDevices() const;
};

struct StepReport {
  DeviceSpec device;
  MemorySimulation memory;
  StepTimeEstimate time;
  /// The model's parameters: elements of the `param` arguments, each at its
  /// global shape under a mesh (its `tg.sharding`).
  int64_t params = 0;
  /// The elements of the `param` arguments one device holds.
  int64_t paramsPerDevice = 0;
  /// The grids of the module (empty: one device).
  std::vector<MeshSummary> meshes;
  /// The arena `tg-memory-plan` would allocate for this order (256-byte
  /// alignment).
  int64_t arenaBytes = 0;
  /// What the step keeps across steps: params, gradients, optimizer state,
  /// low-precision param copies and scaling state (the training-memory
  /// table; `bytes_per_param` is its total per parameter of the model, so
  /// under a mesh one device's bytes over the model's parameters).
  TrainingMemory training;
  double getBytesPerParam() const {
    return params ? static_cast<double>(training.getTotalBytes()) / params
                  : 0.0;
  }

  /// Fails, with a located error, on a shard op whose time the cost model
  /// cannot give (verifyCollectivesModelled). `figuresOnly`: the memory
  /// simulation and the step time alone (what tgc plan reads), without the
  /// arena, the parameters, the meshes and the training-memory table.
  static mlir::FailureOr<StepReport> compute(mlir::func::FuncOp function,
                                             const DeviceSpec &device,
                                             bool figuresOnly = false);
  void print(llvm::raw_ostream &os) const;
  /// The report contract's keys, plus "memory" and "time" in detail, and
  /// for a pipelined function "pipeline": its stages, virtual stages,
  /// micro-batches and schedule, each pp device's peak bytes and busy time,
  /// the simulated bubble and the formula's.
  nlohmann::json toJson() const;
  /// The "pipeline" section, or null for a function that is not pipelined.
  nlohmann::json getPipelineJson() const;
};

} // namespace tgc

#endif // TGC_ANALYSIS_STEPREPORT_H
