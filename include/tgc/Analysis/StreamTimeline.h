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
#include "llvm/ADT/SmallVector.h"

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

/// The event simulation of a pipelined function (docs/pipeline.md): each pp
/// device runs its stages' ops in block order on its own two streams, as
/// StreamTimeline does for one device; a shard.send occupies the sender's
/// communication stream for the message's time (latency plus bytes over the
/// link between the two devices), and its shard.recv ends no earlier than
/// the send. The step ends when the last device does; the bubble is the
/// idle fraction of the busiest device (busy: its compute stream's time).
struct PipelineTimeline {
  /// One op of the simulation: the device it runs on, how long it takes,
  /// the stream it takes, and the tasks (earlier in the list) whose ends it
  /// waits for.
  enum class Stream { None, Compute, Communication };
  struct Task {
    int64_t device = 0;
    double time = 0;
    Stream stream = Stream::Compute;
    llvm::SmallVector<size_t, 2> dependencies;
  };

  /// Per device: the sum of its compute stream's and communication
  /// stream's ops, and when its last op ends.
  std::vector<double> computeBusy;
  std::vector<double> communicationBusy;
  std::vector<double> finish;
  /// The end of each task, in input order.
  std::vector<double> ends;
  double stepTime = 0;
  /// The device with the most compute (the first of equals).
  int64_t busiestDevice = 0;

  /// 1 - busy / step time of the busiest device; 0 for an empty step.
  double getBubbleFraction() const;

  /// Simulates `tasks` (in an order where every task follows the tasks it
  /// waits for) on `devices` devices.
  static PipelineTimeline simulate(int64_t devices, llvm::ArrayRef<Task> tasks);
  /// The simulation of a pipelined function's top-level ops in block order
  /// on `stages` pp devices (the op's device: tg.stage mod stages).
  static PipelineTimeline compute(mlir::func::FuncOp function, int64_t stages,
                                  const DeviceSpec &device);
};

} // namespace tgc

#endif // TGC_ANALYSIS_STREAMTIMELINE_H
