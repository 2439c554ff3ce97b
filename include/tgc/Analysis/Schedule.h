//===- Schedule.h - the order tg-schedule gives a step ----------*- C++ -*-===//
//
// tg-schedule's ordering, usable without the pass: analyses and passes that
// must judge a change by the peak of the program as it will be scheduled (the
// recompute planner, tg-fuse's multi-tensor buckets) compute the order here
// without applying it.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_SCHEDULE_H
#define TGC_ANALYSIS_SCHEDULE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <vector>

namespace tgc {

struct DeviceSpec;

/// An order of a function's top-level ops (terminator excluded) and its
/// simulated peak and live-bytes area.
struct ScheduledOrder {
  std::vector<mlir::Operation *> order;
  int64_t peakBytes = 0;
  int64_t area = 0;
};

/// The order tg-schedule would give `function`'s top-level ops: the best by
/// (peak, area) of the greedy candidates and the current order. Deterministic
/// for a given block order; `function` is not changed. A pipelined function
/// (docs/pipeline.md) keeps its block order, the pipeline schedule, with
/// the largest device peak. The device only adds
/// its GEMM workspace to the peak (the same in every order).
ScheduledOrder computeSchedule(mlir::func::FuncOp function,
                               const DeviceSpec *device = nullptr);

/// `order` (a topological order of `function`'s top-level ops, terminator
/// excluded) changed so that communication overlaps compute on the two
/// streams of StreamTimeline: each gradient all-reduce or reduce-scatter is
/// issued right after the op that completes its gradient; an op that reads
/// a reduced gradient (the slice, the optimizer update or its bucket, the
/// all-gather of the updated parameter) runs where it need not wait for the
/// collective, else where a kept op needs it, else at the end; each layer's
/// parameter all-gathers (ZeRO-3; the layer is the parameter's name up to
/// its first number, "h.3") are issued just before the first use of the
/// previous layer's, in the forward and the backward; other collectives of
/// the step's arguments (the micro-batches' input gathers) first, and a
/// scalar's all-reduce (the loss) as a gradient's. Every other op keeps its
/// relative order, tensor-parallel collectives included. Deterministic. A
/// pipelined function's order is returned as it is.
std::vector<mlir::Operation *>
overlapCommunication(mlir::func::FuncOp function,
                     llvm::ArrayRef<mlir::Operation *> order,
                     const DeviceSpec &device);

} // namespace tgc

#endif // TGC_ANALYSIS_SCHEDULE_H
