//===- ShardingPropagation.h - shardings of every value --------*- C++ -*-===//
//
// The fixed point of tg-shard-propagate: from the shardings of some values
// (user annotations and presets, each with a priority), a sharding of every
// value of a function, through each op's factor-based rule
// (ShardingRuleOpInterface). tg-partition reads the same per-op factor
// decisions back from the final layouts.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_ANALYSIS_SHARDINGPROPAGATION_H
#define TGC_ANALYSIS_SHARDINGPROPAGATION_H

#include "tgc/Dialect/TG/TGInterfaces.h"
#include "tgc/Dialect/TG/TGSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <string>

namespace tgc {

/// Mesh axes by index, major first.
using AxisList = llvm::SmallVector<unsigned, 2>;

/// A value's layout while propagating: the axes of each dimension, whether
/// propagation may still add axes to it, and the priority it came with
/// (lower is stronger; kUnsetPriority when nothing set it yet).
struct TensorLayout {
  static constexpr int64_t kUnsetPriority = INT64_MAX;

  llvm::SmallVector<AxisList> dims;
  llvm::SmallVector<bool> open;
  int64_t priority = kUnsetPriority;

  static TensorLayout getUnset(int64_t rank);
  static TensorLayout fromAttr(tg::ShardingAttr sharding, const tg::Mesh &mesh);
  tg::ShardingAttr toAttr(mlir::MLIRContext *context, const tg::Mesh &mesh,
                          llvm::ArrayRef<unsigned> unreduced = {},
                          bool withPriority = false) const;
  bool hasAxes() const;
  bool operator==(const TensorLayout &other) const {
    return dims == other.dims;
  }
};

/// Prints `{"dp"}, {}` style axes for messages.
std::string describeLayout(const TensorLayout &layout, const tg::Mesh &mesh);

/// Where a factor's axes came from, and what it overrode.
struct FactorChoice {
  AxisList axes;
  int64_t priority = TensorLayout::kUnsetPriority;
  /// The operand (>= 0) or result (-1 - index) that proposed the axes.
  int64_t source = 0;
};

/// A decision between two shardings of one factor: the winner, the loser and
/// why (priority, or the bytes the loser's side must move).
struct ShardingConflict {
  mlir::Operation *op = nullptr;
  std::string message;
};

/// The axes every factor of `rule` takes on `op`, from the layouts of its
/// operands and results whose priority is at most `maxPriority`: per factor
/// the strongest proposal (ties: the proposal of the larger tensor, whose
/// resharding would move more bytes), need-replication factors none, and
/// each axis in at most one factor. Conflicts, if `conflicts` is non-null.
llvm::SmallVector<FactorChoice>
resolveFactors(mlir::Operation *op, const tg::ShardingRule &rule,
               llvm::ArrayRef<const TensorLayout *> operands,
               llvm::ArrayRef<const TensorLayout *> results,
               int64_t maxPriority, const tg::Mesh &mesh,
               llvm::SmallVectorImpl<ShardingConflict> *conflicts);

/// The layout of a tensor whose dimensions are made of `dimFactors`, given
/// the factors' axes: each dimension the concatenation of its factors' axes,
/// up to the first factor that is not split completely.
TensorLayout
projectFactors(llvm::ArrayRef<llvm::SmallVector<int64_t, 1>> dimFactors,
               const tg::ShardingRule &rule,
               llvm::ArrayRef<FactorChoice> factors);

/// Factors whose sharding a partitioned op cannot take as the rule states it:
/// every factor of a constant (the same on every device), and what the op's
/// ShardingRuleOpInterface::restrictForPartitioning marks (a dropout's
/// global element index, a causal mask's positions, the rows of an
/// embedding table not marked tg.vocab_parallel, a mean over an
/// ignore_index). The partitioner and propagation treat them as
/// need-replication.
void restrictRuleForPartitioning(mlir::Operation *op, tg::ShardingRule &rule);

class ShardingPropagation {
public:
  ShardingPropagation(mlir::func::FuncOp function, const tg::Mesh &mesh);

  /// Seeds from `tg.sharding` on arguments and results and `tg.shardings`
  /// on ops (those with a priority are annotations; the function's results
  /// without one are replicated, aliased results take their argument's).
  mlir::LogicalResult seed();
  /// Fixes `value`'s layout (an annotation) and its priority.
  void annotate(mlir::Value value, TensorLayout layout);
  /// Runs to the fixed point, priority by priority.
  void run();
  /// Runs only the ops reachable from annotations added since the last run,
  /// at priorities up to `maxPriority` (the presets' incremental use).
  void runIncremental(int64_t maxPriority);

  /// Propagates through `op` and the ops before it only (null: all).
  void setLastOp(mlir::Operation *op) { lastOp = op; }

  const TensorLayout &getLayout(mlir::Value value);
  llvm::ArrayRef<ShardingConflict> getConflicts() const { return conflicts; }
  const tg::Mesh &getMesh() const { return mesh; }
  /// Writes `tg.shardings` on every op with tensor results.
  void writeShardings();

private:
  llvm::SmallVector<FactorChoice>
  resolveOpFactors(mlir::Operation *op, const tg::ShardingRule &rule,
                   int64_t maxPriority,
                   llvm::SmallVectorImpl<ShardingConflict> *conflicts);
  void processOp(mlir::Operation *op, int64_t maxPriority,
                 llvm::SmallVectorImpl<mlir::Operation *> &worklist);
  /// Adds the axes of `proposed` to the open, empty (or prefix) dimensions
  /// of `value`; whether it changed.
  bool update(mlir::Value value, const TensorLayout &proposed,
              int64_t priority);
  void pushNeighbors(mlir::Value value,
                     llvm::SmallVectorImpl<mlir::Operation *> &worklist);
  void runRound(int64_t maxPriority,
                llvm::SmallVectorImpl<mlir::Operation *> &worklist);

  mlir::func::FuncOp function;
  const tg::Mesh &mesh;
  mlir::Operation *lastOp = nullptr;
  llvm::DenseMap<mlir::Value, TensorLayout> layouts;
  llvm::DenseSet<mlir::Value> annotated;
  llvm::SmallVector<mlir::Value> pendingSeeds;
  llvm::SmallVector<ShardingConflict> conflicts;
  /// The layout each function result must have (argument's when aliased).
  llvm::SmallVector<TensorLayout> resultLayouts;
};

} // namespace tgc

#endif // TGC_ANALYSIS_SHARDINGPROPAGATION_H
