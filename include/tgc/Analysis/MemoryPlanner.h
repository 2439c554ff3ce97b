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

/// A buffer to place: its size and the ops it is live during, inclusive.
struct LiveRange {
  int64_t bytes = 0;
  int64_t start = 0;
  int64_t end = 0;
};

struct ArenaPlan {
  /// One offset per range, in input order.
  std::vector<int64_t> offsets;
  int64_t arenaBytes = 0;
  /// The peak of live (aligned) bytes: no plan can use less.
  int64_t lowerBound = 0;
};

/// Places `ranges` (sizes rounded up to `alignment`, a power of two).
ArenaPlan planArena(llvm::ArrayRef<LiveRange> ranges, int64_t alignment);

/// Places the buffers of `simulation`; offsets are indexed like its buffers.
ArenaPlan planArena(const MemorySimulation &simulation, int64_t alignment);

/// Whether `plan` is valid for `ranges`: aligned offsets, and no two ranges
/// that are live at the same op overlap in memory.
bool verifyArenaPlan(llvm::ArrayRef<LiveRange> ranges, const ArenaPlan &plan,
                     int64_t alignment);

} // namespace tgc

#endif // TGC_ANALYSIS_MEMORYPLANNER_H
