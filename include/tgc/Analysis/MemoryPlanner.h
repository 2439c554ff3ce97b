//===- MemoryPlanner.h - static offsets in one arena ------------*- C++ -*-===//
//
// Offline dynamic storage allocation: every buffer of a MemorySimulation
// gets a byte offset in one arena so that buffers whose lifetimes overlap
// never overlap in memory. The heuristic is "greedy by size" with best fit
// (Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
// Inference", 2020): largest buffers first, each into the smallest gap left
// by the already placed buffers it conflicts with. The arena can never be
// smaller than the peak of live bytes, the lower bound it is measured
// against.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_MEMORYPLANNER_H
#define TGC_ANALYSIS_MEMORYPLANNER_H

#include "tgc/Analysis/MemorySimulator.h"

namespace tgc {

/// A buffer to place: its size and the ops it is live during, inclusive,
/// on the device that holds it. Buffers of different devices (the pp
/// devices of a pipelined function, each with its own op indices) never
/// interfere; a buffer of device kAllDevices conflicts with every buffer
/// live at the same index, whatever its device.
struct LiveRange {
  int64_t bytes = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t device = 0;
};
constexpr int64_t kAllDevices = -1;

struct ArenaPlan {
  /// One offset per range, in input order.
  std::vector<int64_t> offsets;
  int64_t arenaBytes = 0;
  /// The peak of live (aligned) bytes, the largest over the devices: no plan
  /// can use less.
  int64_t lowerBound = 0;
};

/// Places `ranges` (sizes rounded up to `alignment`, a power of two).
ArenaPlan planArena(llvm::ArrayRef<LiveRange> ranges, int64_t alignment);

/// Places the buffers of `simulation`; offsets are indexed like its buffers.
/// A pipelined simulation places each pp device's buffers apart (they are
/// on different GPUs: the arena is the largest device's), and offsets are
/// indexed by the devices' buffers in turn (getPlanBufferBase). An argument
/// several devices hold and the GEMM library's workspace take one offset
/// on all of them (one attribute records it), placed against every
/// device's buffers.
ArenaPlan planArena(const MemorySimulation &simulation, int64_t alignment);

/// Where the buffers of pp device `device` of a pipelined simulation start
/// in planArena's offsets (0 for one that is not pipelined).
size_t getPlanBufferBase(const MemorySimulation &simulation, size_t device);

/// Whether `plan` is valid for `ranges`: aligned offsets, and no two ranges
/// that are live at the same op overlap in memory.
bool verifyArenaPlan(llvm::ArrayRef<LiveRange> ranges, const ArenaPlan &plan,
                     int64_t alignment);

} // namespace tgc

#endif // TGC_ANALYSIS_MEMORYPLANNER_H
