//===- TGPipeline.h - the pipeline-parallel attributes ---------*- C++ -*-===//
//
// The attributes of docs/pipeline.md's IR contract: `tg.stage`,
// `tg.micro_batch` and `tg.backward` on ops, `tg.pipeline` (a dictionary) on
// a pipelined function, and how to read them.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_DIALECT_TG_TGPIPELINE_H
#define TGC_DIALECT_TG_TGPIPELINE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <algorithm>
#include <optional>
#include <string>

namespace tgc::tg {

/// The (virtual) stage an op belongs to, in [0, stages * virtual_stages).
inline constexpr llvm::StringLiteral kStageAttrName = "tg.stage";
/// The micro-batch an op belongs to (absent: shared by all of them).
inline constexpr llvm::StringLiteral kMicroBatchAttrName = "tg.micro_batch";
/// A unit attribute on the ops tg-autodiff built.
inline constexpr llvm::StringLiteral kBackwardAttrName = "tg.backward";
/// On a function (a dictionary): the function is pipelined. On the module it
/// is TGDialect::kPipelineAttrName, the pass pipeline (a string).
inline constexpr llvm::StringLiteral kFunctionPipelineAttrName = "tg.pipeline";

/// What a function's `tg.pipeline` dictionary says.
struct PipelineInfo {
  std::string axis = "pp";
  int64_t stages = 1;
  int64_t virtualStages = 1;
  int64_t microBatches = 1;
  std::string schedule = "1f1b";

  /// The pipeline of `function` (an op with a `tg.pipeline` dictionary), or
  /// nullopt when it is not pipelined.
  static std::optional<PipelineInfo> get(mlir::Operation *function) {
    auto dict = function->getAttrOfType<mlir::DictionaryAttr>(
        kFunctionPipelineAttrName);
    if (!dict)
      return std::nullopt;
    PipelineInfo info;
    auto getInt = [&](llvm::StringRef key, int64_t &field) {
      if (auto value = dict.getAs<mlir::IntegerAttr>(key))
        field = std::max<int64_t>(1, value.getInt());
    };
    getInt("stages", info.stages);
    getInt("virtual_stages", info.virtualStages);
    getInt("micro_batches", info.microBatches);
    if (auto value = dict.getAs<mlir::StringAttr>("axis"))
      info.axis = value.str();
    if (auto value = dict.getAs<mlir::StringAttr>("schedule"))
      info.schedule = value.str();
    return info;
  }

  /// The `pp` coordinate of the devices that run `op`: its stage mod the
  /// number of stages (0 for an op without a stage).
  int64_t getDevice(mlir::Operation *op) const {
    auto stage = op->getAttrOfType<mlir::IntegerAttr>(kStageAttrName);
    return stage ? stage.getInt() % stages : 0;
  }

  /// The bubble of the textbook formula: (P-1)/(M+P-1) for GPipe and 1F1B,
  /// (P-1)/(V*M+P-1) for interleaved 1F1B.
  double getFormulaBubble() const {
    int64_t chunks = schedule == "interleaved" ? virtualStages : 1;
    return static_cast<double>(stages - 1) /
           static_cast<double>(chunks * microBatches + stages - 1);
  }
};

} // namespace tgc::tg

#endif // TGC_DIALECT_TG_TGPIPELINE_H
