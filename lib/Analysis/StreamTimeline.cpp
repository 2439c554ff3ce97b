//===- StreamTimeline.cpp - a step's time on two streams ------------------===//

#include "tgc/Analysis/StreamTimeline.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/MemorySimulator.h"

using namespace mlir;
using namespace tgc;

StreamTimeline::StreamTimeline(func::FuncOp function, const DeviceSpec &device)
    : body(function.isExternal() ? nullptr : &function.getBody().front()),
      device(device) {}

StreamTimeline StreamTimeline::compute(func::FuncOp function,
                                       const DeviceSpec &device) {
  StreamTimeline timeline(function, device);
  if (timeline.body)
    for (Operation &op : timeline.body->without_terminator())
      timeline.append(&op);
  return timeline;
}

StreamTimeline StreamTimeline::compute(func::FuncOp function,
                                       ArrayRef<Operation *> order,
                                       const DeviceSpec &device) {
  StreamTimeline timeline(function, device);
  for (Operation *op : order)
    timeline.append(op);
  return timeline;
}

double StreamTimeline::getReadyTime(Operation *op) const {
  double ready = 0;
  if (body)
    forEachProducer(op, *body, [&](Operation *producer) {
      ready = std::max(ready, ends.lookup(producer));
    });
  return ready;
}

double StreamTimeline::append(Operation *op) {
  OpTime time = estimateOpTime(op, device);
  double start = getReadyTime(op);
  double end = start;
  if (time.communicationTime > 0) {
    // Issued where it stands: after the kernels before it (an event on the
    // compute stream), so that it never writes a buffer they still use.
    start = std::max({start, communicationFree, computeFree});
    end = start + time.time;
    communicationFree = end;
    communicationBusy += time.time;
  } else if (time.launchesKernel) {
    start = std::max(start, computeFree);
    end = start + time.time;
    computeFree = end;
    computeBusy += time.time;
  }
  ends[op] = end;
  stepTime = std::max(stepTime, end);
  return end;
}
