//===- MemoryPlanner.cpp - static offsets in one arena --------------------===//

#include "tgc/Analysis/MemoryPlanner.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace tgc;

static bool overlapInTime(const LiveRange &a, const LiveRange &b) {
  bool sameDevice = a.device == b.device || a.device == kAllDevices ||
                    b.device == kAllDevices;
  return sameDevice && a.start <= b.end && b.start <= a.end;
}

static int64_t alignUp(int64_t bytes, int64_t alignment) {
  return static_cast<int64_t>(llvm::alignTo(bytes, alignment));
}

/// The peak of live aligned bytes over all ops, the largest over the
/// devices.
static int64_t computeLowerBound(llvm::ArrayRef<LiveRange> ranges,
                                 int64_t alignment) {
  std::vector<int64_t> devices;
  for (const LiveRange &range : ranges)
    if (range.device != kAllDevices &&
        !llvm::is_contained(devices, range.device))
      devices.push_back(range.device);
  if (devices.size() > 1) {
    int64_t peak = 0;
    std::vector<LiveRange> own;
    for (int64_t device : devices) {
      own.clear();
      for (const LiveRange &range : ranges)
        if (range.device == device || range.device == kAllDevices)
          own.push_back({range.bytes, range.start, range.end, 0});
      peak = std::max(peak, computeLowerBound(own, alignment));
    }
    return peak;
  }
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

/// Best fit in the given order of the ranges: each at the smallest gap
/// between the buffers already placed that overlap it in time that holds
/// it, else past all of them.
static ArenaPlan placeInOrder(llvm::ArrayRef<LiveRange> ranges,
                              llvm::ArrayRef<size_t> order, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(ranges.size(), 0);
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

ArenaPlan tgc::planArena(llvm::ArrayRef<LiveRange> ranges, int64_t alignment) {
  // Two orders are tried, as XLA's heap simulator tries several, and the
  // smaller arena kept (the first on a tie): largest first (among equals,
  // the earliest and then the longest-lived), and in order of allocation
  // (among equals, largest first), which keeps buffers that live across
  // many frees (a gradient bucket held during part of the backward) from
  // splitting the gaps the large ones leave.
  std::vector<size_t> bySize(ranges.size());
  std::iota(bySize.begin(), bySize.end(), 0);
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    const LiveRange &x = ranges[a], &y = ranges[b];
    if (x.bytes != y.bytes)
      return x.bytes > y.bytes;
    if (x.start != y.start)
      return x.start < y.start;
    return x.end > y.end;
  });
  std::vector<size_t> byStart = bySize;
  std::stable_sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) {
    return ranges[a].start < ranges[b].start;
  });
  ArenaPlan plan = placeInOrder(ranges, bySize, alignment);
  ArenaPlan other = placeInOrder(ranges, byStart, alignment);
  if (other.arenaBytes < plan.arenaBytes)
    plan = std::move(other);
  plan.lowerBound = computeLowerBound(ranges, alignment);
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

size_t tgc::getPlanBufferBase(const MemorySimulation &simulation,
                              size_t device) {
  size_t base = 0;
  for (size_t index = 0; index < device && index < simulation.devices.size();
       ++index)
    base += simulation.devices[index].buffers.size();
  return base;
}

/// The plan of a pipelined simulation: every device's buffers, each range on
/// its device, except the shared ones (arguments, the GEMM workspace),
/// placed once on all devices for the step.
static ArenaPlan planPipelinedArena(const MemorySimulation &simulation,
                                    int64_t alignment) {
  std::vector<LiveRange> ranges;
  // The range that places each shared buffer, and the copies that take its
  // offset.
  std::map<int64_t, size_t> sharedRange;
  std::vector<std::pair<size_t, size_t>> copies;
  int64_t lastIndex = 0;
  for (const MemorySimulation &device : simulation.devices)
    lastIndex = std::max<int64_t>(lastIndex, device.ops.size());
  for (auto [index, device] : llvm::enumerate(simulation.devices)) {
    for (const Buffer &buffer : device.buffers) {
      bool gemmWorkspace =
          buffer.kind == MemoryKind::Workspace && !buffer.workspaceOf;
      if (buffer.argument < 0 && !gemmWorkspace) {
        ranges.push_back({buffer.bytes, buffer.start, buffer.end,
                          static_cast<int64_t>(index)});
        continue;
      }
      int64_t key = gemmWorkspace ? -1 : buffer.argument;
      auto [it, inserted] = sharedRange.try_emplace(key, ranges.size());
      if (inserted) {
        ranges.push_back({buffer.bytes, 0, lastIndex, kAllDevices});
      } else {
        copies.push_back({ranges.size(), it->second});
        ranges.push_back({0, 0, 0, static_cast<int64_t>(index)});
      }
    }
  }
  ArenaPlan plan = planArena(ranges, alignment);
  for (auto [copy, original] : copies)
    plan.offsets[copy] = plan.offsets[original];
  return plan;
}

ArenaPlan tgc::planArena(const MemorySimulation &simulation,
                         int64_t alignment) {
  if (!simulation.devices.empty())
    return planPipelinedArena(simulation, alignment);
  std::vector<LiveRange> ranges;
  ranges.reserve(simulation.buffers.size());
  for (const Buffer &buffer : simulation.buffers)
    ranges.push_back({buffer.bytes, buffer.start, buffer.end});
  return planArena(ranges, alignment);
}
