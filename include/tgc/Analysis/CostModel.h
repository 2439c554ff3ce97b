//===- CostModel.h - estimated time of a step on a device -------*- C++ -*-===//
//
// The one cost model every decision uses: an op that runs as a kernel takes
// max(matrix FLOPs / matrix peak + vector FLOPs / vector peak,
//     bytes moved / HBM bandwidth) + the launch overhead,
// with FLOPs and bytes from CostOpInterface (a fusion region is one kernel:
// its body's FLOPs, only its own inputs' and results' bytes). Ops that move
// nothing and compute nothing (views, constants) launch no kernel. A shard
// collective takes its alpha-beta time over the link its group uses
// (CollectiveCost.h). The step time is the critical path of two streams,
// kernels on one and collectives on the other, each in the step's order
// (StreamTimeline.h); the sum over the ops, communication included, is kept
// as the step time if nothing overlapped. A pipelined function's step time is
// the event simulation of its pp devices (PipelineTimeline): when the last
// one finishes.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_COSTMODEL_H
#define TGC_ANALYSIS_COSTMODEL_H

#include "tgc/Analysis/CollectiveCost.h"
#include "tgc/Analysis/Device.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Analysis/StreamTimeline.h"
#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include <nlohmann/json_fwd.hpp>

namespace tgc {

struct OpTime {
  double computeTime = 0;
  double memoryTime = 0;
  /// A collective's time on its link (its latency terms included).
  double communicationTime = 0;
  /// max(compute, memory) + launch overhead, or a collective's
  /// communication time; 0 for ops that launch nothing.
  double time = 0;
  bool launchesKernel = false;
};

/// The roofline time of one op with cost `cost` on `device`.
OpTime estimateOpTime(const tg::OpCost &cost, const DeviceSpec &device);

/// The cost of `op` as the compiled step runs it: none for an op the memory
/// plan places in place (isPlacedInPlace), else the op's own.
tg::OpCost getPlacedCost(tg::CostOpInterface op);
/// The same for an op (CostOpInterface), or a shard collective's time
/// (estimateCollectiveCost); other ops cost nothing.
OpTime estimateOpTime(mlir::Operation *op, const DeviceSpec &device);

/// Totals of a group of ops (one op kind, or one phase).
struct CostGroup {
  std::string name;
  int64_t ops = 0;
  int64_t kernels = 0;
  double time = 0;
  int64_t flops = 0;
  int64_t bytes = 0;
};

/// The collectives of one kind (or all of them) in a step.
struct CommunicationGroup {
  std::string name;
  int64_t count = 0;
  /// Of those, how many run over InfiniBand (their group spans nodes).
  int64_t overInfiniband = 0;
  /// Bytes each device sends.
  int64_t bytes = 0;
  double time = 0;
};

/// The communication of a step, per collective kind.
struct CommunicationEstimate {
  CommunicationGroup byKind[kNumCollectiveKinds];
  CommunicationGroup total;
  /// The communication time no computation hides as the step is ordered:
  /// what the compute stream waits for (StreamTimeline).
  double exposedTime = 0;
  /// The same if nothing overlapped: all of it.
  double getExposedTimeIfNoOverlap() const { return total.time; }

  CommunicationEstimate();
  void add(const CollectiveCost &cost);
  bool empty() const { return total.count == 0; }
  /// {"count", "over_infiniband", "bytes", "time_s", "exposed_time_s",
  ///  "by_kind": {"all_reduce": {...}, ...}}
  nlohmann::json toJson() const;
};

/// The estimated time of a step: per op kind, per phase, in total (the sum
/// of the ops' times, as if nothing overlapped), and the critical path of
/// the two streams (the step time).
struct StepTimeEstimate {
  std::string functionName;
  std::string deviceName;
  std::vector<CostGroup> byKind; // in order of first appearance
  CostGroup byPhase[3];          // forward, backward, optimizer
  CostGroup total;
  /// The step time: the critical path of the compute and communication
  /// streams in the step's order. total.time if nothing overlaps.
  double stepTime = 0;
  /// The shard collectives among the ops (their time is in the groups above
  /// as well).
  CommunicationEstimate communication;
  int64_t matrixFlops = 0;
  /// The peak the model FLOP utilization is measured against: the matrix
  /// peak of the type most matrix FLOPs run in.
  double peakFlops = 0;
  /// total.flops / (stepTime * peakFlops): what the estimate implies.
  double mfu = 0;
  /// The same at total.time (nothing overlapping).
  double mfuIfNoOverlap = 0;
  /// A pipelined function: its pipeline and the simulation of its pp
  /// devices, which gives stepTime (the ops, FLOPs and times above are all
  /// the stages'; mfu divides by the pp devices' peaks). The exposed
  /// communication is then the idle time of the busiest device: its bubble
  /// and the communication it waits for.
  std::optional<PipelineConfig> pipeline;
  PipelineTimeline pipelineTimeline;

  static StepTimeEstimate compute(mlir::func::FuncOp function,
                                  const DeviceSpec &device,
                                  const StepStructure &structure);
  void print(llvm::raw_ostream &os) const;
  nlohmann::json toJson() const;
};

} // namespace tgc

#endif // TGC_ANALYSIS_COSTMODEL_H
