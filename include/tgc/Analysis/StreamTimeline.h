//===- StreamTimeline.h - a step's time on two streams ----------*- C++ -*-===//
//
// The step time when communication overlaps compute: the kernels run on a
// compute stream and the shard collectives on a communication stream, each
// in the order of the step's ops. An op starts when its stream is free and
// every value it reads is ready; a collective is issued where it stands in
// the order, so it also waits for the kernels before it (the compute
// stream's event at that point, as DDP's hooks record), and its consumers
// wait for its end. Ops that launch nothing (views, constants, an
// all-slice) take no stream: their result is ready when their operands
// are. The critical path of the two streams is the step time; what the
// compute stream spends waiting is the communication left exposed.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_STREAMTIMELINE_H
#define TGC_ANALYSIS_STREAMTIMELINE_H

#include "tgc/Analysis/Device.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace tgc {

/// The two-stream timeline of one order of a function's top-level ops.
class StreamTimeline {
public:
  /// The timeline of `function`'s ops in block order.
  static StreamTimeline compute(mlir::func::FuncOp function,
                                const DeviceSpec &device);
  /// The timeline of `order`, a topological order of `function`'s
  /// top-level ops (terminator excluded).
  static StreamTimeline compute(mlir::func::FuncOp function,
                                llvm::ArrayRef<mlir::Operation *> order,
                                const DeviceSpec &device);

  /// Appends `op` (whose producers must have been appended) and returns its
  /// end. Lets a scheduler build an order and its timeline together.
  double append(mlir::Operation *op);
  /// When the values `op` reads are ready (0 for arguments).
  double getReadyTime(mlir::Operation *op) const;
  /// The end of an appended op.
  double getEnd(mlir::Operation *op) const { return ends.lookup(op); }
  /// When each stream is next free.
  double getComputeFree() const { return computeFree; }
  double getCommunicationFree() const { return communicationFree; }

  /// The end of the last op on either stream.
  double getStepTime() const { return stepTime; }
  /// The busy time of each stream (the sums of their ops' times).
  double getComputeTime() const { return computeBusy; }
  double getCommunicationTime() const { return communicationBusy; }
  /// The time the compute stream is not busy before the step ends: the
  /// communication no computation hides.
  double getExposedCommunication() const { return stepTime - computeBusy; }

  StreamTimeline(mlir::func::FuncOp function, const DeviceSpec &device);

private:
  mlir::Block *body;
  DeviceSpec device;
  llvm::DenseMap<mlir::Operation *, double> ends;
  double computeFree = 0, communicationFree = 0;
  double computeBusy = 0, communicationBusy = 0;
  double stepTime = 0;
};

} // namespace tgc

#endif // TGC_ANALYSIS_STREAMTIMELINE_H
