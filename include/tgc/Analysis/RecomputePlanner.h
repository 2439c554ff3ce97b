//===- RecomputePlanner.h - keep or recompute each activation ---*- C++ -*-===//
//
// Which forward values the backward reads (the simulator's Activations) are
// kept and which are recomputed in the backward, so that a step fits a memory
// budget at the least extra time (docs/recompute.md). The forward is cut into
// a sequence of blocks at the points where at most one forward value crosses
// (a transformer layer's residual stream); each block's keep/recompute options
// are enumerated exactly (identical blocks once), and a dynamic program over
// the block sequence whose state is the kept memory (as Rotor's for chains)
// combines them. Every plan is checked on the exact simulated peak of the
// rewritten program; when the DP's memory model was optimistic its capacity
// is tightened by the overshoot and it solves again. Graphs with few
// candidates are solved by exhaustive search against the simulator.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_RECOMPUTEPLANNER_H
#define TGC_ANALYSIS_RECOMPUTEPLANNER_H

#include "tgc/Analysis/Device.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tgc {
namespace detail {
struct ActivationInfo;
} // namespace detail
class RecomputePeakBound;

/// Parses a byte count: an integer or decimal with an optional suffix
/// (B, KB/MB/GB/TB in powers of 1000, KiB/MiB/GiB/TiB in powers of 1024).
mlir::FailureOr<int64_t> parseByteSize(llvm::StringRef text);
/// The `auto` budget: the device's memory minus a reserve of 5% (the
/// allocator's fragmentation, the CUDA context and the communication
/// library's buffers).
int64_t getAutoBudget(const DeviceSpec &device);

/// A forward op whose results the backward reads and that may run again.
struct RecomputeCandidate {
  mlir::Operation *op = nullptr;
  /// Bytes of its results (what keeping it costs).
  int64_t bytes = 0;
  /// The cost model's time of the op alone.
  double time = 0;
};

enum class RecomputeStrategy { DP, None, Full, Sqrt, Selective };
mlir::FailureOr<RecomputeStrategy> parseRecomputeStrategy(llvm::StringRef name);

struct RecomputePlan {
  /// Indices into the planner's candidates that are recomputed.
  llvm::SmallVector<unsigned> recomputed;
  /// Extra time of the recomputation (the cost model's, every op cloned).
  double extraTime = 0;
  /// The simulated peak of the rewritten program.
  int64_t peakBytes = 0;
  /// Solver statistics.
  unsigned blocks = 0;
  unsigned distinctBlocks = 0;
  unsigned solves = 0;
  bool exhaustive = false;
  double solveSeconds = 0;
};

class RecomputePlanner {
public:
  RecomputePlanner(mlir::func::FuncOp function, const DeviceSpec &device);
  ~RecomputePlanner();

  llvm::ArrayRef<RecomputeCandidate> getCandidates() const {
    return candidates;
  }
  /// The simulated peak with nothing recomputed.
  int64_t getPeakWithoutRecompute() const { return peakBefore; }

  /// The cheapest plan whose simulated peak is at most `budget`, or failure
  /// with `minimumPeak` set to the smallest peak found.
  mlir::FailureOr<RecomputePlan> solve(int64_t budget, int64_t &minimumPeak);
  /// A baseline: none, full (keep only block inputs), sqrt (keep the
  /// inputs of every sqrt(n)-th block) or selective (Megatron's: recompute
  /// the attention core, see getAttentionCore).
  RecomputePlan baseline(RecomputeStrategy strategy);

  /// The memory/time frontier: one DP over the blocks with the model's peak
  /// in its state (solveFrontierDP) gives the cheapest plan for every
  /// capacity at once; those plans, the baselines and the checked solves at
  /// `points + 1` budgets (which refine the coarse model) are simulated, and
  /// the ones no other beats on both simulated peak and extra time are
  /// returned by increasing peak, at most `points + 1` of them (evenly
  /// thinned, both ends kept). Small steps: every subset.
  std::vector<RecomputePlan> computeFrontier(unsigned points);

  /// The forward ops that run again when `recomputed` (candidate indices)
  /// are recomputed: those and the non-kept forward ops they read.
  llvm::SmallVector<mlir::Operation *>
  getClosure(llvm::ArrayRef<unsigned> recomputed) const;
  /// The extra time of recomputing `recomputed`.
  double getExtraTime(llvm::ArrayRef<unsigned> recomputed) const;
  /// The simulated peak of the program rewritten with `recomputed`
  /// (rewrites a copy).
  int64_t simulatePeak(llvm::ArrayRef<unsigned> recomputed) const;

  /// Exhaustive search when there are at most this many candidates.
  unsigned exhaustiveLimit = 12;
  /// Blocks are merged up to this many candidates, all subsets enumerated.
  unsigned blockLimit = 10;
  /// Whether solve skips the plans a lower bound of the peak rules out
  /// (RecomputePeakBound) instead of simulating them; the result is the
  /// same, and so is the smallest peak reported on failure.
  bool useBound = true;
  /// The lower bound solve uses (built on first use).
  RecomputePeakBound &getBound();

private:
  struct Option {
    int64_t kept = 0; // bytes of the block's kept candidates
    /// Bytes the recomputation holds during the block's backward: the
    /// largest value recomputed (optimistic), or all recomputed activations
    /// and the largest transient (cautious).
    int64_t extra = 0;
    int64_t extraAll = 0;
    double time = 0;
    llvm::SmallVector<unsigned> recomputed; // local indices in the block
  };
  struct Block {
    llvm::SmallVector<unsigned> candidates;
    /// Index of the first block with the same structure.
    unsigned representative = 0;
    /// Candidates that are the block's inputs (values crossing a cut).
    llvm::SmallVector<unsigned> inputs;
  };

  void decompose();
  /// The candidates Megatron's selective recomputation recomputes
  /// (Korthikanti et al. 2022): per forward softmax, the ops between it and
  /// the matmul of its scores (scale, mask) with that matmul, the softmax,
  /// and what follows it up to the matmul with the values (dropout of the
  /// probabilities); and each fused tg.attention (whose output and
  /// logsumexp are then recomputed from q, k and v).
  llvm::SmallVector<unsigned> getAttentionCore() const;
  /// The blocks that start a layer: blocks repeat with a period over their
  /// longest periodic stretch (attention and MLP halves of a transformer
  /// layer: period 2); blocks outside it are layers of their own.
  llvm::SmallVector<unsigned> getLayerStarts() const;
  /// Recompute everything but the inputs of the blocks `starts` (every one,
  /// or every ceil(sqrt(n))-th with `sqrtStride`).
  llvm::SmallVector<unsigned> getCheckpointPlan(llvm::ArrayRef<unsigned> starts,
                                                bool sqrtStride) const;
  /// The candidates a baseline recomputes.
  llvm::SmallVector<unsigned> getBaselineSet(RecomputeStrategy strategy) const;
  /// The plans solve chooses from and the frontier is made of, independent
  /// of the budget, cheapest first: every subset of a small step; else the
  /// model's staircases (solveFrontierDP, both models), the baselines and
  /// checkpoints at every (and every sqrt(n)-th) block's input. Never the
  /// empty plan.
  llvm::ArrayRef<llvm::SmallVector<unsigned>> getPlanPool();
  std::vector<Option> enumerateOptions(const Block &block) const;
  mlir::FailureOr<llvm::SmallVector<unsigned>> solveDP(int64_t capacity,
                                                       bool cautious);
  /// The model's frontier: for every capacity (in 256 units of the largest
  /// peak the model can reach) the cheapest plan whose model peak fits,
  /// one plan per step of the staircase.
  std::vector<llvm::SmallVector<unsigned>> solveFrontierDP(bool cautious);
  /// The candidates a DP's choices recompute, from its final state `end`
  /// (choice[b][state]: the option of block b and the state before).
  llvm::SmallVector<unsigned>
  backtrack(llvm::ArrayRef<std::vector<std::pair<int32_t, int32_t>>> choice,
            int64_t end) const;
  RecomputePlan finish(llvm::SmallVector<unsigned> recomputed) const;
  double getOpTime(mlir::Operation *op) const;

  mlir::func::FuncOp function;
  const DeviceSpec &device;
  std::unique_ptr<detail::ActivationInfo> activations;
  std::vector<mlir::Operation *> ops; // top-level ops in block order
  llvm::DenseMap<mlir::Operation *, unsigned> opIndex;
  std::vector<RecomputeCandidate> candidates;
  llvm::DenseMap<mlir::Operation *, unsigned> candidateOf;
  /// Forward ops that may run again (candidates and transients alike).
  llvm::DenseSet<mlir::Operation *> recomputable;
  std::vector<Block> blocks;
  std::vector<std::vector<Option>> optionsOf; // per representative block
  int64_t peakBefore = 0;
  std::optional<std::vector<llvm::SmallVector<unsigned>>> planPool;
  std::unique_ptr<RecomputePeakBound> bound;
  /// The cost model's time of each op (getOpTime).
  mutable llvm::DenseMap<mlir::Operation *, double> opTimes;
  /// simulatePeak's results, by sorted candidate set.
  mutable std::map<llvm::SmallVector<unsigned>, int64_t> simulatedPeaks;
};

/// Writes `frontier` (plans by increasing peak, as computeFrontier returns
/// them) as an SVG chart of extra time against simulated peak.
void writeRecomputeFrontierSvg(llvm::raw_ostream &os,
                               llvm::StringRef functionName,
                               llvm::StringRef deviceName,
                               llvm::ArrayRef<RecomputePlan> frontier,
                               int64_t peakWithoutRecompute,
                               size_t numCandidates);

/// Rewrites `function`: each forward op of `recomputed`, the non-kept
/// forward ops it reads and the views of them the backward reads are cloned
/// just before their first backward use, and the backward reads the clones.
/// `recomputed` must be recomputable (see RecomputePlanner).
void applyRecompute(mlir::func::FuncOp function,
                    llvm::ArrayRef<mlir::Operation *> recomputed);

} // namespace tgc

#endif // TGC_ANALYSIS_RECOMPUTEPLANNER_H
