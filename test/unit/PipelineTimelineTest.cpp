//===- PipelineTimelineTest.cpp - the pipeline's event simulation ---------===//
//
// With uniform stage times and instant messages, the simulated bubble of
// the orders tg-pipeline-schedule gives the devices is the textbook one:
// (P-1)/(M+P-1) for GPipe and 1F1B, (P-1)/(V*M+P-1) for Megatron's
// interleaved 1F1B; and the micro-batches each device keeps in flight are
// the formulas'.
//
//===----------------------------------------------------------------------===//

#include "tgc/Analysis/StreamTimeline.h"
#include "tgc/Dialect/TG/TGPipeline.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <string>

using namespace tgc;

namespace {

/// One unit of a device's schedule: the forward or the backward of virtual
/// stage `stage` for micro-batch `microBatch`.
struct Work {
  bool backward = false;
  int64_t stage = 0;
  int64_t microBatch = 0;
};

/// Device `p`'s order: the one tg-pipeline-schedule gives the block.
std::vector<Work> getOrder(const PipelineConfig &config, int64_t p) {
  std::vector<Work> order;
  for (const PipelineUnit &unit : getPipelineOrder(config, p))
    order.push_back(
        {unit.backward, unit.chunk * config.stages + p, unit.microBatch});
  return order;
}

/// The tasks of the devices' orders, merged into one list in which each
/// device keeps its order and every task follows those it waits for: the
/// forward of virtual stage s waits for that of s-1, the backward for that
/// of s+1 (the last stage's for its forward). `forwardTime` and
/// `backwardTime` are one virtual stage's.
std::vector<PipelineTimeline::Task>
getTasks(const std::vector<std::vector<Work>> &orders, int64_t numVirtual,
         double forwardTime, double backwardTime) {
  std::vector<PipelineTimeline::Task> tasks;
  std::map<std::tuple<bool, int64_t, int64_t>, size_t> index;
  std::vector<std::deque<Work>> queues;
  for (const std::vector<Work> &order : orders)
    queues.emplace_back(order.begin(), order.end());
  auto getDependency =
      [&](const Work &w) -> std::tuple<bool, int64_t, int64_t> {
    if (!w.backward)
      return {false, w.stage - 1, w.microBatch};
    if (w.stage == numVirtual - 1)
      return {false, w.stage, w.microBatch};
    return {true, w.stage + 1, w.microBatch};
  };
  auto isFirst = [&](const Work &w) { return !w.backward && w.stage == 0; };
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (size_t device = 0; device < queues.size(); ++device) {
      while (!queues[device].empty()) {
        Work w = queues[device].front();
        auto dependency = getDependency(w);
        if (!isFirst(w) && !index.count(dependency))
          break;
        PipelineTimeline::Task task;
        task.device = device;
        task.time = w.backward ? backwardTime : forwardTime;
        if (!isFirst(w))
          task.dependencies.push_back(index[dependency]);
        index[{w.backward, w.stage, w.microBatch}] = tasks.size();
        tasks.push_back(task);
        queues[device].pop_front();
        progressed = true;
      }
    }
  }
  for (const std::deque<Work> &queue : queues)
    EXPECT_TRUE(queue.empty()) << "the orders deadlock";
  return tasks;
}

double simulateBubble(const std::string &schedule, int64_t numStages, int64_t v,
                      int64_t m, double forward, double backward) {
  PipelineConfig config;
  config.stages = numStages;
  config.virtualStages = v;
  config.microBatches = m;
  config.schedule = *symbolizePipelineScheduleKind(schedule);
  EXPECT_EQ(config.validate(), "");
  std::vector<std::vector<Work>> orders;
  for (int64_t p = 0; p < numStages; ++p)
    orders.push_back(getOrder(config, p));
  int64_t chunks = schedule == "interleaved" ? v : 1;
  std::vector<PipelineTimeline::Task> tasks =
      getTasks(orders, numStages * chunks, forward / chunks, backward / chunks);
  PipelineTimeline timeline = PipelineTimeline::simulate(numStages, tasks);
  // Every device works the same: M forwards and backwards of its stages.
  for (double busy : timeline.computeBusy)
    EXPECT_NEAR(busy, m * (forward + backward), 1e-9);
  return timeline.getBubbleFraction();
}

TEST(PipelineTimelineTest, GPipeAnd1F1BBubbleIsTheFormula) {
  for (const char *schedule : {"gpipe", "1f1b"})
    for (int64_t p : {1, 2, 3, 4, 8})
      for (int64_t m : {1, 2, 4, 5, 8, 16})
        for (auto [forward, backward] :
             {std::pair{1.0, 1.0}, std::pair{1.0, 2.0}}) {
          double expected = double(p - 1) / double(m + p - 1);
          EXPECT_NEAR(simulateBubble(schedule, p, 1, m, forward, backward),
                      expected, 1e-12)
              << schedule << " P=" << p << " M=" << m
              << " b/f=" << backward / forward;
        }
}

TEST(PipelineTimelineTest, InterleavedBubbleIsTheFormula) {
  for (int64_t p : {2, 4})
    for (int64_t v : {2, 3})
      for (int64_t m : {p, 2 * p, 4 * p})
        for (auto [forward, backward] :
             {std::pair{1.0, 1.0}, std::pair{1.0, 2.0}}) {
          double expected = double(p - 1) / double(v * m + p - 1);
          EXPECT_NEAR(simulateBubble("interleaved", p, v, m, forward, backward),
                      expected, 1e-12)
              << "P=" << p << " V=" << v << " M=" << m
              << " b/f=" << backward / forward;
        }
}

// The activations each device keeps: GPipe all M micro-batches, 1F1B at
// most P - p on device p (P on the first), interleaved 1F1B Megatron's
// warm-up count of chunks plus one, (P-p-1)*2 + (V-1)*P + 1 (all M*V
// when M = P).
TEST(PipelineTimelineTest, MicroBatchesInFlightAreTheFormula) {
  for (int64_t p : {1, 2, 3, 4, 8})
    for (int64_t m : {1, 2, 4, 5, 8, 16})
      for (int64_t device = 0; device < p; ++device) {
        PipelineConfig config;
        config.stages = p;
        config.microBatches = m;
        config.schedule = PipelineScheduleKind::GPipe;
        EXPECT_EQ(getMaxUnitsInFlight(config, device), m);
        config.schedule = PipelineScheduleKind::OneFOneB;
        EXPECT_EQ(getMaxUnitsInFlight(config, device), std::min(p - device, m))
            << "P=" << p << " M=" << m << " p=" << device;
        // Every unit once, each micro-batch's forward before its backward.
        std::vector<Work> order = getOrder(config, device);
        EXPECT_EQ(order.size(), size_t(2 * m));
      }
  for (int64_t p : {2, 4})
    for (int64_t v : {2, 3})
      for (int64_t m : {p, 2 * p, 4 * p})
        for (int64_t device = 0; device < p; ++device) {
          PipelineConfig config;
          config.stages = p;
          config.virtualStages = v;
          config.microBatches = m;
          config.schedule = PipelineScheduleKind::Interleaved;
          int64_t expected =
              m == p ? m * v
                     : std::min((p - device - 1) * 2 + (v - 1) * p + 1, m * v);
          EXPECT_EQ(getMaxUnitsInFlight(config, device), expected)
              << "P=" << p << " V=" << v << " M=" << m << " p=" << device;
        }
}

// A message's time delays the receiver: two devices, one micro-batch, the
// forward's send taking 0.5 on the sender's communication stream.
TEST(PipelineTimelineTest, RecvWaitsForTheSend) {
  using Stream = PipelineTimeline::Stream;
  std::vector<PipelineTimeline::Task> tasks = {
      {0, 1.0, Stream::Compute, {}},        // 0: forward on device 0
      {0, 0.5, Stream::Communication, {0}}, // 1: send
      {1, 0.0, Stream::Communication, {1}}, // 2: recv
      {1, 2.0, Stream::Compute, {2}},       // 3: forward on device 1
  };
  PipelineTimeline timeline = PipelineTimeline::simulate(2, tasks);
  EXPECT_DOUBLE_EQ(timeline.ends[2], 1.5);
  EXPECT_DOUBLE_EQ(timeline.stepTime, 3.5);
  EXPECT_EQ(timeline.busiestDevice, 1);
  EXPECT_DOUBLE_EQ(timeline.finish[0], 1.5);
  EXPECT_DOUBLE_EQ(timeline.communicationBusy[0], 0.5);
  EXPECT_DOUBLE_EQ(timeline.getBubbleFraction(), 1 - 2.0 / 3.5);
}

} // namespace
