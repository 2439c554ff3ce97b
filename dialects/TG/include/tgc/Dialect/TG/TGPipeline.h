//===- TGPipeline.h - pipeline stages and schedules -------------*- C++ -*-===//
//
// The vocabulary of pipeline parallelism (docs/pipeline.md): the attributes
// that place an op in a stage, a micro-batch and a direction, the function's
// `tg.pipeline_stages` dictionary, and the order in which each pipeline device
// runs its (micro-batch, model chunk, direction) units under GPipe, 1F1B and
// Megatron's interleaved 1F1B.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGPIPELINE_H
#define TGC_DIALECT_TG_TGPIPELINE_H

#include "tgc/Dialect/TG/TGDialect.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace tgc {

/// The attributes of docs/pipeline.md.
inline constexpr llvm::StringLiteral kStageAttrName =
    tg::TGDialect::kStageAttrName;
inline constexpr llvm::StringLiteral kMicroBatchAttrName =
    tg::TGDialect::kMicroBatchAttrName;
inline constexpr llvm::StringLiteral kBackwardAttrName =
    tg::TGDialect::kBackwardAttrName;
/// The function attribute of a pipelined step (PipelineConfig).
inline constexpr llvm::StringLiteral kPipelineAttrName =
    tg::TGDialect::kPipelineStagesAttrName;

enum class PipelineScheduleKind { GPipe, OneFOneB, Interleaved };

llvm::StringRef stringifyPipelineScheduleKind(PipelineScheduleKind kind);
std::optional<PipelineScheduleKind>
symbolizePipelineScheduleKind(llvm::StringRef name);

/// A function's `tg.pipeline_stages`: {axis, stages, virtual_stages,
/// micro_batches, schedule}.
struct PipelineConfig {
  std::string axis = "pp";
  /// Devices along the pipeline axis (P).
  int64_t stages = 1;
  /// Model chunks per device (V; 1 unless interleaved).
  int64_t virtualStages = 1;
  /// Micro-batches per step (M).
  int64_t microBatches = 1;
  PipelineScheduleKind schedule = PipelineScheduleKind::OneFOneB;

  int64_t getNumStages() const { return stages * virtualStages; }
  /// The pipeline device (pp coordinate) of virtual stage `stage`.
  int64_t getDevice(int64_t stage) const { return stage % stages; }
  /// The model chunk of virtual stage `stage` on its device.
  int64_t getChunk(int64_t stage) const { return stage / stages; }

  /// The pp coordinate of the devices that run `op`: its stage's device (0
  /// for an op without a stage).
  int64_t getDeviceOf(mlir::Operation *op) const;
  /// The bubble of the textbook formula: (P-1)/(M+P-1) for GPipe and 1F1B,
  /// (P-1)/(V*M+P-1) for interleaved 1F1B.
  double getFormulaBubble() const;
  llvm::StringRef getScheduleName() const {
    return stringifyPipelineScheduleKind(schedule);
  }

  /// Why these numbers make no schedule (empty: they do).
  std::string validate() const;
  mlir::DictionaryAttr toAttr(mlir::MLIRContext *context) const;
  /// The config of `function`'s `tg.pipeline_stages`: nullopt when it has none,
  /// a located error when it is malformed.
  static mlir::FailureOr<std::optional<PipelineConfig>>
  lookup(mlir::FunctionOpInterface function);
  /// The same for the analyses, without diagnostics: nullopt when
  /// `function` is not pipelined or its dictionary is malformed.
  static std::optional<PipelineConfig> get(mlir::Operation *function);
};

/// One unit of pipeline work: a micro-batch through one model chunk, forward
/// or backward.
struct PipelineUnit {
  int64_t microBatch = 0;
  int64_t chunk = 0;
  bool backward = false;
};

/// The order in which pipeline device `device` runs its units: GPipe (every
/// forward, then every backward), 1F1B (P-1-p warm-up forwards, then one
/// forward one backward, then the remaining backwards) or Megatron's
/// interleaved 1F1B over V chunks (M a multiple of P).
llvm::SmallVector<PipelineUnit> getPipelineOrder(const PipelineConfig &config,
                                                 int64_t device);

/// How many units of forward activations device `device` holds at most under
/// its order (forwards run, backwards not yet).
int64_t getMaxUnitsInFlight(const PipelineConfig &config, int64_t device);

/// The stage / micro-batch / direction attributes of `op`.
std::optional<int64_t> getStage(mlir::Operation *op);
std::optional<int64_t> getMicroBatch(mlir::Operation *op);
bool isBackward(mlir::Operation *op);
void setStage(mlir::Operation *op, int64_t stage);
/// Copies tg.stage, tg.micro_batch and tg.backward from `from` to `to`.
void copyPipelineAttrs(mlir::Operation *from, mlir::Operation *to);

} // namespace tgc

#endif // TGC_DIALECT_TG_TGPIPELINE_H
