//===- StreamTimeline.cpp - a step's time on two streams ------------------===//

#include "tgc/Analysis/StreamTimeline.h"

#include "tgc/Analysis/CostModel.h"
#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

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

double PipelineTimeline::getBubbleFraction() const {
  if (stepTime <= 0 || computeBusy.empty())
    return 0;
  return 1 - computeBusy[busiestDevice] / stepTime;
}

PipelineTimeline PipelineTimeline::simulate(int64_t devices,
                                            ArrayRef<Task> tasks) {
  PipelineTimeline timeline;
  devices = std::max<int64_t>(1, devices);
  timeline.computeBusy.assign(devices, 0);
  timeline.communicationBusy.assign(devices, 0);
  timeline.finish.assign(devices, 0);
  std::vector<double> computeFree(devices, 0), communicationFree(devices, 0);
  timeline.ends.reserve(tasks.size());
  for (const Task &task : tasks) {
    int64_t device = std::clamp<int64_t>(task.device, 0, devices - 1);
    double start = 0;
    for (size_t dependency : task.dependencies)
      if (dependency < timeline.ends.size())
        start = std::max(start, timeline.ends[dependency]);
    double end = start;
    if (task.stream == Stream::Communication) {
      // Issued where it stands, as on one device (StreamTimeline::append).
      start = std::max({start, communicationFree[device], computeFree[device]});
      end = start + task.time;
      communicationFree[device] = end;
      timeline.communicationBusy[device] += task.time;
    } else if (task.stream == Stream::Compute) {
      start = std::max(start, computeFree[device]);
      end = start + task.time;
      computeFree[device] = end;
      timeline.computeBusy[device] += task.time;
    }
    timeline.ends.push_back(end);
    timeline.finish[device] = std::max(timeline.finish[device], end);
    timeline.stepTime = std::max(timeline.stepTime, end);
  }
  for (int64_t device = 1; device < devices; ++device)
    if (timeline.computeBusy[device] >
        timeline.computeBusy[timeline.busiestDevice])
      timeline.busiestDevice = device;
  return timeline;
}

PipelineTimeline PipelineTimeline::compute(func::FuncOp function,
                                           int64_t stages,
                                           const DeviceSpec &device) {
  std::vector<Task> tasks;
  if (function.isExternal())
    return simulate(stages, tasks);
  PipelineConfig info;
  info.stages = std::max<int64_t>(1, stages);
  Block &body = function.getBody().front();
  DenseMap<Operation *, size_t> index;
  for (Operation &op : body.without_terminator()) {
    Task task;
    task.device = info.getDeviceOf(&op);
    OpTime time = estimateOpTime(&op, device);
    task.time = time.time;
    if (isa<shard::RecvOp>(&op)) {
      // The message's time is the send's: the recv ends when the send has
      // (or when the receiver gets to it).
      task.time = 0;
      task.stream = Stream::Communication;
    } else if (time.communicationTime > 0 || isa<shard::SendOp>(&op)) {
      task.stream = Stream::Communication;
    } else if (time.launchesKernel) {
      task.stream = Stream::Compute;
    } else {
      task.stream = Stream::None;
    }
    forEachProducer(&op, body, [&](Operation *producer) {
      auto it = index.find(producer);
      if (it != index.end())
        task.dependencies.push_back(it->second);
    });
    index[&op] = tasks.size();
    tasks.push_back(std::move(task));
  }
  return simulate(info.stages, tasks);
}
