//===- MemoryPlanner.cpp - static offsets in one arena --------------------===//

#include "tgc/Analysis/MemoryPlanner.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace tgc;

static bool overlapInTime(const LiveRange &a, const LiveRange &b) {
  return a.start <= b.end && b.start <= a.end;
}

static int64_t alignUp(int64_t bytes, int64_t alignment) {
  return static_cast<int64_t>(llvm::alignTo(bytes, alignment));
}

/// The peak of live aligned bytes over all ops.
static int64_t computeLowerBound(llvm::ArrayRef<LiveRange> ranges,
                                 int64_t alignment) {
  std::vector<std::pair<int64_t, int64_t>> events;
  for (const LiveRange &range : ranges) {
    if (range.bytes <= 0)
      continue;
    int64_t bytes = alignUp(range.bytes, alignment);
    events.push_back({range.start, bytes});
    events.push_back({range.end + 1, -bytes});
  }
  // Frees at an op boundary happen before the allocations there.
  llvm::sort(events);
  int64_t live = 0, peak = 0;
  for (auto [time, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

ArenaPlan tgc::planArena(llvm::ArrayRef<LiveRange> ranges, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(ranges.size(), 0);
  plan.lowerBound = computeLowerBound(ranges, alignment);

  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; among equals, the earliest and then the longest-lived.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const LiveRange &x = ranges[a], &y = ranges[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    if (x.start != y.start)
      return x.start < y.start;
    return x.end > y.end;
  });

  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> conflicts; // [offset, end)
  for (size_t index : order) {
    const LiveRange &range = ranges[index];
    int64_t bytes = alignUp(range.bytes, alignment);
    if (bytes == 0)
      continue; // empty buffers need no memory; offset 0
    conflicts.clear();
    for (size_t other : placed)
      if (overlapInTime(range, ranges[other]))
        conflicts.push_back(
            {plan.offsets[other],
             plan.offsets[other] + alignUp(ranges[other].bytes, alignment)});
    llvm::sort(conflicts);
    // Best fit: the smallest gap between conflicting buffers that holds it;
    // else the first offset past all of them.
    int64_t bestOffset = -1, bestGap = 0, cursor = 0;
    for (auto [begin, end] : conflicts) {
      if (begin > cursor) {
        int64_t gap = begin - cursor;
        if (gap >= bytes && (bestOffset < 0 || gap < bestGap)) {
          bestOffset = cursor;
          bestGap = gap;
        }
      }
      cursor = std::max(cursor, end);
    }
    if (bestOffset < 0)
      bestOffset = cursor;
    plan.offsets[index] = bestOffset;
    plan.arenaBytes = std::max(plan.arenaBytes, bestOffset + bytes);
    placed.push_back(index);
  }
  return plan;
}

bool tgc::verifyArenaPlan(llvm::ArrayRef<LiveRange> ranges,
                          const ArenaPlan &plan, int64_t alignment) {
  if (plan.offsets.size() != ranges.size())
    return false;
  for (size_t a = 0; a < ranges.size(); ++a) {
    int64_t aBytes = alignUp(ranges[a].bytes, alignment);
    if (aBytes == 0)
      continue;
    if (plan.offsets[a] % alignment || plan.offsets[a] < 0 ||
        plan.offsets[a] + aBytes > plan.arenaBytes)
      return false;
    for (size_t b = a + 1; b < ranges.size(); ++b) {
      int64_t bBytes = alignUp(ranges[b].bytes, alignment);
      if (!aBytes || !bBytes || !overlapInTime(ranges[a], ranges[b]))
        continue;
      if (plan.offsets[a] < plan.offsets[b] + bBytes &&
          plan.offsets[b] < plan.offsets[a] + aBytes)
        return false;
    }
  }
  return true;
}

ArenaPlan tgc::planArena(const MemorySimulation &simulation,
                         int64_t alignment) {
  std::vector<LiveRange> ranges;
  ranges.reserve(simulation.buffers.size());
  for (const Buffer &buffer : simulation.buffers)
    ranges.push_back({buffer.bytes, buffer.start, buffer.end});
  return planArena(ranges, alignment);
}
