//===- TGInterfaces.h - op interfaces of the tg dialect --------*- C++ -*-===//
//
// The data the tg op interfaces exchange (costs, sharding rules) and the
// generated interface declarations.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGINTERFACES_H
#define TGC_DIALECT_TG_TGINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "tgc/Dialect/TG/TGTraits.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>

namespace tgc::tg {

/// The cost of executing one op as one kernel.
struct OpCost {
  /// Floating-point operations (a multiply-add counts as two).
  int64_t flops = 0;
  /// Evaluations of exp, log, tanh, erf, sqrt... (also counted in `flops`).
  int64_t transcendentals = 0;
  /// 32-bit integer instructions on the vector units, not in `flops`: the
  /// Philox rounds that draw dropout masks and random numbers.
  int64_t integerOps = 0;
  /// The part of `flops` that runs on the matrix units (tensor cores): the
  /// products of matmuls and attention. The rest runs on the vector units.
  int64_t matrixFlops = 0;
  /// Bytes read from and written to device memory.
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// Scratch device memory the kernel needs while it runs, beyond its
  /// results (e.g. attention backward's f32 accumulator for dQ).
  int64_t workspaceBytes = 0;
  /// The element type the FLOPs run in (selects the peak rate), or null.
  mlir::Type computeType;

  int64_t bytesMoved() const { return bytesRead + bytesWritten; }

  OpCost &operator+=(const OpCost &other);
};

/// How sharding a factor of a `ShardingRule` affects the op.
enum class FactorKind {
  /// Sharded in the operands and results alike, with no communication.
  PassThrough,
  /// In operands but in no result: sharding it leaves the results as partial
  /// values that an all-reduce of the op's reduction (sum, max...) combines.
  Reduction,
  /// Sharding it needs more than a partial reduction (a softmax or norm
  /// along it, a slice of it, a contraction inside a softmax...): the
  /// partitioner replicates it, or applies an op-specific expansion.
  NeedReplication,
};

/// A factor-based sharding rule (Shardy's `OpShardingRule`): every operand
/// and result dimension is the product of some factors, major to minor, listed
/// by index into `factorSizes`. A dimension of size 1 has no factor.
struct ShardingRule {
  llvm::SmallVector<int64_t> factorSizes;
  llvm::SmallVector<FactorKind> factorKinds;
  /// For each operand, for each dimension, the factors it is made of.
  llvm::SmallVector<llvm::SmallVector<llvm::SmallVector<int64_t, 1>>>
      operandFactors;
  /// For each result, for each dimension, the factors it is made of.
  llvm::SmallVector<llvm::SmallVector<llvm::SmallVector<int64_t, 1>>>
      resultFactors;

  int64_t getNumFactors() const { return factorSizes.size(); }
  /// A factor of the operands that appears in no result: sharding it leaves
  /// partial sums.
  bool isReductionFactor(int64_t factor) const {
    return factorKinds[factor] == FactorKind::Reduction;
  }
  /// Whether `factor` is in some operand but not in result `result`: sharding
  /// it leaves that result partial (layer_norm_grad's batch factors are
  /// pass-through for the input gradient and reduced in the scale gradient).
  bool isReducedIn(unsigned result, int64_t factor) const;
  /// Shardy's notation: `([i, k], [k, j])->([i, j]) {i=8, j=16, k=4}
  /// reduction={k} need_replication={}`, with `[i, j]`-style groups for a
  /// dimension made of several factors.
  void print(llvm::raw_ostream &os) const;
  /// Checks the rule against `op`'s operand and result shapes (every
  /// dimension the product of its factors, every factor used), or emits an
  /// error on `op`.
  mlir::LogicalResult verify(mlir::Operation *op) const;
};

/// Builds a `ShardingRule` for an op, dimension by dimension.
class ShardingRuleBuilder {
public:
  explicit ShardingRuleBuilder(mlir::Operation *op);

  /// A new factor of `size` (> 1); returns its index.
  int64_t addFactor(int64_t size, FactorKind kind = FactorKind::PassThrough);
  /// Appends `factor` to the factors of operand `operand`'s dimension `dim`.
  ShardingRuleBuilder &operandDim(unsigned operand, int64_t dim,
                                  int64_t factor);
  ShardingRuleBuilder &resultDim(unsigned result, int64_t dim, int64_t factor);
  /// One factor for dimension `dim` (of size `size`), shared by the listed
  /// operand and result dimensions; nothing when `size` is 1. Returns the
  /// factor, or -1.
  int64_t addShared(int64_t size,
                    llvm::ArrayRef<std::pair<unsigned, int64_t>> operands,
                    llvm::ArrayRef<std::pair<unsigned, int64_t>> results,
                    FactorKind kind = FactorKind::PassThrough);
  /// One pass-through factor per dimension shared by the listed operands and
  /// results, which all have the same shape (elementwise ops).
  ShardingRuleBuilder &addElementwise(llvm::ArrayRef<unsigned> operands,
                                      llvm::ArrayRef<unsigned> results);
  /// Factors only in an operand or result dimension get their kind from where
  /// they appear: in operands only, `Reduction`; otherwise as added.
  ShardingRule build();

private:
  mlir::Operation *op;
  ShardingRule rule;
};

/// The lowest precision an operand may be fed in (PrecisionOpInterface).
enum class OperandPrecision {
  /// Moved without arithmetic: any type, and the results follow it.
  Follow,
  /// bf16 or f16.
  Reduced,
  /// bf16, f16, or fp8 with a per-tensor scale.
  Fp8,
  /// f32 only.
  Full,
};

/// Bytes of one element of `elementType` in device memory (i1 is one byte).
int64_t getElementByteSize(mlir::Type elementType);
/// Bytes of a statically shaped tensor. Every tensor a tg op takes or
/// yields is within kMaxTensorBytes (the types' constraint), so the figures
/// built from it cannot overflow.
int64_t getTensorByteSize(mlir::Type type);

/// The most bytes one tg tensor may hold: 2^44 (16 TiB), far above any
/// device's memory, and low enough that the sums of sizes the memory
/// figures take stay inside int64.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 44;
/// The bytes of `type`, a statically shaped tensor, or nullopt when they
/// (or its element count) exceed kMaxTensorBytes or a dimension is dynamic
/// or negative. Zero dimensions count as one in the bound, so that strides
/// stay inside it too (tensor<0x9223372036854775807xf32> is refused).
/// Checked arithmetic: never wraps.
std::optional<int64_t> getBoundedTensorByteSize(mlir::Type type);
/// Whether `type` is a statically shaped tensor within kMaxTensorBytes.
inline bool isWithinTensorSizeLimit(mlir::Type type) {
  return getBoundedTensorByteSize(type).has_value();
}

/// Arithmetic on non-negative figures (FLOPs, bytes) that saturates at
/// kSaturatedFigure instead of wrapping; a figure at that value is "too
/// large to count", and the report says so rather than print it.
inline constexpr int64_t kSaturatedFigure = INT64_MAX;
int64_t addFigures(int64_t a, int64_t b);
int64_t multiplyFigures(int64_t a, int64_t b);

/// The cost of an elementwise op: `flopsPerElement` and
/// `transcendentalsPerElement` per result element, all operands read once and
/// the results written once.
OpCost getElementwiseCost(mlir::Operation *op, int64_t flopsPerElement,
                          int64_t transcendentalsPerElement);

/// The rule of an elementwise op: every operand and result has the same
/// shape, one pass-through factor per dimension.
ShardingRule getElementwiseShardingRule(mlir::Operation *op);

/// CounterRandomOpInterface's index levels of a result of `shape`, a block
/// of a tensor of `globalShape` (none: the whole tensor).
llvm::SmallVector<std::array<int64_t, 3>>
getCounterIndexLevels(llvm::ArrayRef<int64_t> shape,
                      std::optional<llvm::ArrayRef<int64_t>> globalShape);

/// CounterRandomOpInterface's checks: a non-negative stream and a global
/// shape (if any) of the result's rank, no smaller, counted in 64 bits.
mlir::LogicalResult verifyCounterRandomOp(mlir::Operation *op);

} // namespace tgc::tg

#include "tgc/Dialect/TG/TGInterfaces.h.inc"

#endif // TGC_DIALECT_TG_TGINTERFACES_H
