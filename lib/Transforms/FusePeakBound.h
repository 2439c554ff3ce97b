//===- FusePeakBound.h - tg-fuse's incremental peak check -------*- C++ -*-===//
//
// An upper bound of the live bytes at every op of a step while tg-fuse turns
// groups into regions one at a time, kept from the last full simulation
// (MemorySimulation) and updated per region with what can grow: each input's
// buffer extended to the region's position, the region's workspace there, and
// its outputs (their old buffers, or new ones where those stay held). What
// leaves the step (the members' own buffers and workspaces) is taken off. When
// the bounded peak stays at or under the allowed one, the simulated peak does
// too, so tg-fuse keeps the region without simulating; otherwise it simulates
// the step as before. Private to tg-fuse (lib/Transforms/Fuse.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TGC_LIB_TRANSFORMS_FUSEPEAKBOUND_H
#define TGC_LIB_TRANSFORMS_FUSEPEAKBOUND_H

#include "tgc/Analysis/MemorySimulator.h"
#include "tgc/Dialect/TG/TGOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <vector>

namespace tgc {

class FusePeakBound {
public:
  /// Starts from a full simulation of `function` in its current order.
  void reset(mlir::func::FuncOp function, const MemorySimulation &simulation);

  /// Before a group is materialized: its member ops (erased by it) and the
  /// clones it copies, while they are still in the block.
  void prepare(llvm::ArrayRef<mlir::Operation *> members,
               llvm::ArrayRef<mlir::Operation *> clones);
  /// After materializing `fusion`: whether the bound proves the step's peak
  /// stays at or under `limit`. The bound is updated tentatively: `commit`
  /// keeps it, `rollback` returns to the step before the region.
  bool
  fitsUnder(tg::FusionOp fusion,
            const llvm::DenseMap<mlir::Operation *, mlir::Operation *> &copyOf,
            int64_t limit);
  void commit();
  /// After the region was undone: its copies replace the members.
  void
  rollback(const llvm::DenseMap<mlir::Operation *, mlir::Operation *> &copyOf);

  unsigned getNumProved() const { return numProved; }

private:
  struct Tracked {
    int64_t bytes = 0, start = 0, end = 0;
    /// The values held (0 for workspaces).
    int64_t refs = 0;
  };
  void add(int64_t begin, int64_t end, int64_t delta);
  void addNode(size_t node, size_t lo, size_t hi, int64_t begin, int64_t end,
               int64_t delta);
  void setTracked(size_t index, Tracked value);
  size_t newTracked(Tracked value);
  bool
  apply(tg::FusionOp fusion,
        const llvm::DenseMap<mlir::Operation *, mlir::Operation *> &copyOf);

  mlir::func::FuncOp function;
  size_t numSlots = 0;
  /// Range add / max over the slots: max[node] = max of children + lazy.
  std::vector<int64_t> maxOf, lazy;
  std::vector<Tracked> tracked;
  llvm::DenseMap<mlir::Operation *, int64_t> slotOf;
  llvm::DenseMap<mlir::Value, size_t> bufferOf;
  llvm::DenseMap<mlir::Operation *, size_t> workspaceOf;
  /// Arguments that returned values update in place, and the result
  /// positions carrying tg.aliases.
  llvm::DenseSet<unsigned> aliasedArguments;
  llvm::SmallVector<std::pair<unsigned, int64_t>> aliasedResults;

  /// The group being checked, and the undo log of its tentative update.
  llvm::SmallVector<mlir::Operation *> members;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value, 1>>
      memberResults;
  llvm::SmallVector<mlir::Operation *> splatClones;
  int64_t slot = 0;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> addLog;
  std::vector<std::pair<size_t, Tracked>> trackedLog;
  size_t trackedSize = 0;
  llvm::SmallVector<std::pair<mlir::Value, size_t>> newBuffers;
  size_t fusionWorkspace = ~size_t(0);
  unsigned numProved = 0;
};

} // namespace tgc

#endif // TGC_LIB_TRANSFORMS_FUSEPEAKBOUND_H
