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

namespace tgc::tg {

/// The cost of executing one op as one kernel.
struct OpCost {
  /// Floating-point operations (a multiply-add counts as two).
  int64_t flops = 0;
  /// Evaluations of exp, log, tanh, erf, sqrt... (also counted in `flops`).
  int64_t transcendentals = 0;
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

/// A factor-based sharding rule (Shardy's model): every tensor dimension is
/// the product of some factors, listed by index into `factorSizes`.
struct ShardingRule {
  llvm::SmallVector<int64_t> factorSizes;
  /// For each operand, for each dimension, the factors it is made of.
  llvm::SmallVector<llvm::SmallVector<llvm::SmallVector<int64_t, 1>>>
      operandFactors;
  /// For each result, for each dimension, the factors it is made of.
  llvm::SmallVector<llvm::SmallVector<llvm::SmallVector<int64_t, 1>>>
      resultFactors;

  /// A factor of the operands that appears in no result: sharding it leaves
  /// partial sums.
  bool isReductionFactor(int64_t factor) const;
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
/// or negative. Checked arithmetic: never wraps.
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

} // namespace tgc::tg

#include "tgc/Dialect/TG/TGInterfaces.h.inc"

#endif // TGC_DIALECT_TG_TGINTERFACES_H
