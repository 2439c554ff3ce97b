//===- RecomputeBound.h - a lower bound on a recompute plan's peak -*- C++
//-*-===//
//
// The recompute planner judges a plan by the exact peak of the step rewritten
// with it and scheduled (a copy rewritten, ordered by tg-schedule's rules and
// simulated: about 80 ms on llama 70b). Most plans a budgeted solve looks at
// do not fit, and a bound proves it from the original step alone, so only
// the plans the bound cannot rule out are simulated; the solve's result is
// the same.
//
// The bound: while an op X runs, in any order that respects the data
// dependences, every buffer written by an op X depends on and read by X or
// by an op that depends on X is live, with the arguments, the dense
// constants, the GEMM workspace and X's own results and workspace. For a
// backward op X, the rewrite keeps every such buffer except those of the
// recomputed activations; of those, the clones X itself reads are live. A
// kept buffer whose readers neither depend on X nor precede it counts too
// when a chain of ops reading only it leads to a reader after X (the
// sigmoid, subtraction and products of a SiLU's backward, which need no
// gradient): in any order one buffer of that chain is live at X, at least
// the chain's smallest. The bound is the largest such sum over the non-view
// ops outside the forward.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_RECOMPUTEBOUND_H
#define TGC_ANALYSIS_RECOMPUTEBOUND_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace tgc {

struct DeviceSpec;

class RecomputePeakBound {
public:
  /// `candidates`: the forward ops a plan may recompute (the planner's
  /// candidates, activations whose buffers have no other root). `device`
  /// only adds its GEMM workspace, as in computeSchedule.
  RecomputePeakBound(mlir::func::FuncOp function,
                     llvm::ArrayRef<mlir::Operation *> candidates,
                     const DeviceSpec *device);

  /// A lower bound on the scheduled peak of `function` rewritten by
  /// applyRecompute with the candidates `recomputed` (indices).
  int64_t get(llvm::ArrayRef<unsigned> recomputed) const;
  /// Whether get(recomputed) > threshold, usually without computing it:
  /// the ops are tried by decreasing bound with nothing recomputed, the one
  /// that proved the last plan too large first.
  bool exceeds(llvm::ArrayRef<unsigned> recomputed, int64_t threshold);

private:
  /// The bound at op `at` (an index of `ops`) for `recomputed`.
  int64_t getAt(unsigned at, llvm::ArrayRef<unsigned> recomputed) const;

  /// Arguments, dense constants and the GEMM workspace.
  int64_t persistent = 0;
  /// Per op (block order), the bound with nothing recomputed; only the ops
  /// in `cuts` have one.
  std::vector<int64_t> full;
  /// The non-view ops outside the forward, by decreasing `full`.
  std::vector<unsigned> cuts;
  /// What recomputing a candidate takes off: per result, its bytes and the
  /// ops at which its buffer is counted in `full` but its clone is not
  /// (they do not read it).
  struct Part {
    int64_t bytes = 0;
    llvm::BitVector at;
  };
  std::vector<llvm::SmallVector<Part, 1>> parts;
  /// The cut that last exceeded a threshold.
  unsigned lastHit = 0;
};

} // namespace tgc

#endif // TGC_ANALYSIS_RECOMPUTEBOUND_H
